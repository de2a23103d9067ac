/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kfuncs the BPF objects call, and the kernel type ids they pass, shared
 * with the loader.  Declared as __ksym externs (or found with
 * bpf_core_type_id_kernel), they made libbpf read and parse all of the
 * kernel's BTF (~5 MB) at every start, beside the verifier.  The objects call
 * them as helpers of made-up numbers and pass made-up type ids, and the loader
 * turns each such call into a kfunc call of the id the kernel's BTF gives the
 * name, each made-up type id into the type's (user/session/kfuncs.c).
 */
#ifndef CFIPROF_KFUNC_ABI_H
#define CFIPROF_KFUNC_ABI_H

/* far above the kernel's helper numbers, so that a call left unpatched is refused */
#define KFUNC_CALL_BASE 0x7fff0000

/*
 * bpf_rdonly_cast (6.2 on; on older kernels the loader makes its call a copy
 * of its first argument): a trusted pointer made untrusted, whose fields the
 * verifier lets a program read without proving them trusted.
 */
#define KFUNCS(X)                                                                                  \
	X(ITER_TASK_VMA_NEW, bpf_iter_task_vma_new)                                                \
	X(ITER_TASK_VMA_NEXT, bpf_iter_task_vma_next)                                              \
	X(ITER_TASK_VMA_DESTROY, bpf_iter_task_vma_destroy)                                        \
	X(RDONLY_CAST, bpf_rdonly_cast)

enum kfunc_id {
#define KFUNC_ID(id, name) KFUNC_##id,
	KFUNCS(KFUNC_ID)
#undef KFUNC_ID
	    KFUNC_MAX
};

/* a made-up type id: the immediate of the move that sets up the argument, patched */
#define KTYPE_ID_BASE 0x7ffe0000

#define KTYPES(X) X(TASK_STRUCT, task_struct)

enum ktype_id {
#define KTYPE_ID(id, name) KTYPE_##id,
	KTYPES(KTYPE_ID)
#undef KTYPE_ID
	    KTYPE_MAX
};

#endif
