/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the BPF programs read differently on x86-64 and arm64, outside the
 * walker (bpf/walker.h has its own accessors): the saved user registers of
 * struct pt_regs, the syscall ABI the lifecycle hooks decode, and the layout
 * of a perf event program's context.  Chosen by __TARGET_ARCH_*, as
 * libbpf's bpf_tracing.h is.
 */
#ifndef CFIPROF_ARCH_BPF_H
#define CFIPROF_ARCH_BPF_H

#if defined(__TARGET_ARCH_arm64)

#define ARCH_PC(r) ((r)->pc)
#define ARCH_SP(r) ((r)->sp)
#define ARCH_FP(r) ((r)->regs[29])
/* x30: the first frame's return address until its prologue saves it */
#define ARCH_LR(r)	   ((r)->regs[30])
/* a raw tracepoint's pt_regs is read, not followed: lifecycle.bpf.h */
#define ARCH_SYSCALL_NR(r) BPF_CORE_READ(r, syscallno)
/* x0 is the return value at sys_exit: the first argument is kept in orig_x0 */
#define ARCH_SYSCALL_ARG(r, i) ((i) == 0 ? BPF_CORE_READ(r, orig_x0) : BPF_CORE_READ(r, regs[i]))
/* include/uapi/asm-generic/unistd.h */
#define NR_MUNMAP   215
#define NR_MMAP	    222
#define NR_MPROTECT 226
/* struct bpf_perf_event_data: struct user_pt_regs (regs[31], sp, pc, pstate) */
#define PERF_CTX_REGS 34
#define PERF_CTX_IP   32
/* TLS variant I: tcbhead_t at the thread pointer starts with the DTV pointer */
#define ARCH_TP_DTV 0

/* the sample's registers by DWARF number (x0..x15), for a CFA in one of them at the leaf */
#define ARCH_LEAF_REGS(st, r)                                                                      \
	do {                                                                                       \
		for (int i_ = 0; i_ < CFI_DW_NR_REGS; i_++)                                        \
			(st)->leaf[i_] = (r).regs[i_];                                             \
	} while (0)

/* HotSpot's interpreter keeps its bcp in x22, which the walk does not keep: no leaf line */
#define ARCH_INTERP_BCP(st) 0ull

#else /* x86-64 */

/* the sample's r13 (DWARF 13): HotSpot's template interpreter keeps its bcp there */
#define ARCH_INTERP_BCP(st) ((st)->leaf[13])

#define ARCH_PC(r)	       ((r)->ip)
#define ARCH_SP(r)	       ((r)->sp)
#define ARCH_FP(r)	       ((r)->bp)
#define ARCH_LR(r)	       0
/* a raw tracepoint's pt_regs is read, not followed: lifecycle.bpf.h */
#define ARCH_SYSCALL_NR(r)     BPF_CORE_READ(r, orig_ax)
/* the syscall arguments' registers: di, si, dx */
#define ARCH_SYSCALL_ARG(r, i)                                                                     \
	((i) == 0 ? BPF_CORE_READ(r, di) : (i) == 1 ? BPF_CORE_READ(r, si) : BPF_CORE_READ(r, dx))
#define NR_MMAP		       9
#define NR_MPROTECT	       10
#define NR_MUNMAP	       11
/* struct bpf_perf_event_data: struct pt_regs, r15..r8, ax, cx, dx, si, di, orig_ax, then ip */
#define PERF_CTX_REGS	       21
#define PERF_CTX_IP	       16
/* TLS variant II: tcbhead_t at the thread pointer is {tcb (itself), dtv, ...} */
#define ARCH_TP_DTV	       8

/* the sample's registers by DWARF number: rax rdx rcx rbx rsi rdi (rbp rsp) r8..r15 */
#define ARCH_LEAF_REGS(st, r)                                                                      \
	do {                                                                                       \
		(st)->leaf[0] = (r).ax;                                                            \
		(st)->leaf[1] = (r).dx;                                                            \
		(st)->leaf[2] = (r).cx;                                                            \
		(st)->leaf[3] = (r).bx;                                                            \
		(st)->leaf[4] = (r).si;                                                            \
		(st)->leaf[5] = (r).di;                                                            \
		(st)->leaf[8] = (r).r8;                                                            \
		(st)->leaf[9] = (r).r9;                                                            \
		(st)->leaf[10] = (r).r10;                                                          \
		(st)->leaf[11] = (r).r11;                                                          \
		(st)->leaf[12] = (r).r12;                                                          \
		(st)->leaf[13] = (r).r13;                                                          \
		(st)->leaf[14] = (r).r14;                                                          \
		(st)->leaf[15] = (r).r15;                                                          \
	} while (0)

#endif

/* Start a walk at the user registers r (a struct pt_regs *). */
#define ARCH_WALKER_INIT(st, tgid, r)                                                              \
	do {                                                                                       \
		walker_init(st, tgid, ARCH_PC(r), ARCH_SP(r), ARCH_FP(r));                         \
		if (WALKER_HAS_LR)                                                                 \
			walker_link_register(st, ARCH_LR(r));                                      \
	} while (0)

#endif /* CFIPROF_ARCH_BPF_H */
