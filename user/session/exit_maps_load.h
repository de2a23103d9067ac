/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * on_exit_maps' object (bpf/exit_maps.bpf.c), loaded after the sampling
 * programs' object and handed its maps.  Neither load reads the kernel's
 * whole BTF: the kfuncs' ids are found by user/session/kfuncs.h.
 */
#ifndef CFIPROF_EXIT_MAPS_LOAD_H
#define CFIPROF_EXIT_MAPS_LOAD_H

#include <stdbool.h>

struct bpf_object;
struct exit_maps_bpf;

/* Whether the running kernel has the VMA iterator the program needs (6.7 on). */
bool exit_maps_supported(void);
/*
 * Opens the object, hands it the maps of shared (loaded) that it declares,
 * and loads it with the cached kernel types of core_path (NULL: none).  NULL
 * and errno set on failure.
 */
struct exit_maps_bpf *exit_maps_load(const struct bpf_object *shared, const char *core_path);

#endif
