/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * on_exit_maps' object (bpf/exit_maps.bpf.c), loaded after the sampling
 * programs' object and handed its maps.  Neither load reads the kernel's
 * whole BTF: the kfuncs' ids are found here (exit_maps_abi.h).
 */
#ifndef CFIPROF_EXIT_MAPS_LOAD_H
#define CFIPROF_EXIT_MAPS_LOAD_H

#include <stdint.h>

#include "bpf/exit_maps_abi.h"

struct bpf_object;
struct bpf_program;
struct exit_maps_bpf;

/*
 * The kernel's BTF ids of on_exit_maps' kfuncs: 0, or -ENOENT where the
 * kernel lacks one (no VMA iterator before 6.7), or -errno.
 */
int exit_maps_kfunc_ids(int32_t ids[EXIT_KFUNC_MAX]);
/*
 * Makes each call of a made-up helper number in prog (exit_maps_abi.h) the
 * kfunc call of its id: 0 or -errno.  Before the object's load.
 */
int exit_maps_patch_kfuncs(struct bpf_program *prog, const int32_t ids[EXIT_KFUNC_MAX]);
/*
 * Opens the object, hands it the maps of shared (loaded) that it declares,
 * and loads it with the cached kernel types of core_path (NULL: none).  NULL
 * and errno set on failure.
 */
struct exit_maps_bpf *exit_maps_load(const struct bpf_object *shared, const char *core_path,
				     const int32_t ids[EXIT_KFUNC_MAX]);

#endif
