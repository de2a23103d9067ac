/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF objects' made-up kfunc calls and type ids (bpf/kfunc_abi.h) made
 * the running kernel's, before each load.
 */
#ifndef CFIPROF_KFUNCS_H
#define CFIPROF_KFUNCS_H

#include <stdint.h>

#include "bpf/kfunc_abi.h"

struct bpf_object;
struct bpf_program;

struct kfunc_ids {
	int32_t func[KFUNC_MAX]; /* 0: the kernel has no such kfunc */
	int32_t type[KTYPE_MAX]; /* 0: no such type */
};

/* The running kernel's ids, read from its BTF at the first call (any thread). */
const struct kfunc_ids *kfunc_ids(void);
/*
 * Makes each made-up call in prog the kfunc call of its id, each made-up
 * type id the type's.  Where the kernel lacks bpf_rdonly_cast (before 6.2),
 * its call becomes a copy of its first argument (the pointer stays trusted).
 * 0; -ENOENT where it lacks another kfunc prog calls; -errno.  Before the
 * object's load.
 */
int kfuncs_patch(struct bpf_program *prog, const struct kfunc_ids *ids);
/* kfuncs_patch of every program of obj to be loaded that makes such calls. */
int kfuncs_patch_object(struct bpf_object *obj);

#endif
