/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * on_exit_maps' kfuncs (the VMA iterator), shared with the loader.  Declared
 * as __ksym externs, they made libbpf read and parse all of the kernel's BTF
 * (~5 MB) at every start, beside the verifier.  bpf/exit_maps.bpf.c calls
 * them as helpers of made-up numbers, and the loader turns each such call
 * into a kfunc call of the id the kernel's BTF gives the name
 * (user/session/exit_maps_load.c).
 */
#ifndef CFIPROF_EXIT_MAPS_ABI_H
#define CFIPROF_EXIT_MAPS_ABI_H

/* far above the kernel's helper numbers, so that a call left unpatched is refused */
#define EXIT_MAPS_KFUNC_BASE 0x7fff0000

#define EXIT_MAPS_KFUNCS(X)                                                                        \
	X(ITER_TASK_VMA_NEW, bpf_iter_task_vma_new)                                                \
	X(ITER_TASK_VMA_NEXT, bpf_iter_task_vma_next)                                              \
	X(ITER_TASK_VMA_DESTROY, bpf_iter_task_vma_destroy)

enum exit_maps_kfunc {
#define EXIT_MAPS_KFUNC_ID(id, name) EXIT_KFUNC_##id,
	EXIT_MAPS_KFUNCS(EXIT_MAPS_KFUNC_ID)
#undef EXIT_MAPS_KFUNC_ID
	    EXIT_KFUNC_MAX
};

#endif
