/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of walker.h: what the walker reads of the architecture it walks, the
 * signal frame the kernel pushes, the register carried through a walk, the
 * bits of a return address that are its address.  Only constants: the walk
 * itself is walker.h's, one implementation for both architectures.
 */
#ifndef CFIPROF_WALKER_ARCH_H
#define CFIPROF_WALKER_ARCH_H

#include "cfiprof_abi.h" /* CFI_DW_RBX */

/*
 * The architecture: the BPF target's (__TARGET_ARCH_arm64), the C compiler's,
 * or WALKER_ARCH_ARM64 defined by an includer that replays arm64 stacks on
 * another host.
 */
#if defined(__TARGET_ARCH_arm64) || (!defined(__bpf__) && !defined(__BPF__) && defined(__aarch64__))
#ifndef WALKER_ARCH_ARM64
#define WALKER_ARCH_ARM64 1
#endif
#endif

#ifdef WALKER_ARCH_ARM64
/*
 * struct rt_sigframe as arch/arm64/kernel/signal.c pushes it, at the sp the
 * sigreturn trampoline runs on: siginfo (128), then struct ucontext whose
 * uc_mcontext (16-aligned: offset 176) is struct sigcontext: fault_address,
 * regs[31], sp, pc.
 */
#define WALKER_SIG_REGS (128 + 176 + 8)
#define WALKER_SIG_FP	(WALKER_SIG_REGS + 29 * 8)
#define WALKER_SIG_LR	(WALKER_SIG_REGS + 30 * 8)
#define WALKER_SIG_SP	(WALKER_SIG_REGS + 31 * 8)
#define WALKER_SIG_PC	(WALKER_SIG_REGS + 32 * 8)
/* no register is carried through an arm64 walk: a CFA-in-register rule is the leaf's */
#define WALKER_CARRIED_REG (-1)
/*
 * User addresses are below 2^48 (the kernels cfiprof supports configure 48-bit
 * user VAs); above, a return address signed by pointer authentication holds
 * its PAC (and a top-byte tag): stripped from every return address read.
 */
#define WALKER_RA_MASK ((1ull << 48) - 1)
#define WALKER_HAS_LR  1
#else
/*
 * Offsets into the struct ucontext the kernel pushes for a signal (x86-64
 * struct rt_sigframe minus pretcode, which the handler's ret already popped):
 * uc_flags 8 + uc_link 8 + uc_stack 24 = 40, then struct sigcontext_64 whose
 * bp, sp and ip are its 11th, 16th and 17th u64.
 */
#define WALKER_UC_MCONTEXT 40
#define WALKER_SIG_FP	   (WALKER_UC_MCONTEXT + 10 * 8)
#define WALKER_SIG_RBX	   (WALKER_UC_MCONTEXT + 11 * 8)
#define WALKER_SIG_SP	   (WALKER_UC_MCONTEXT + 15 * 8)
#define WALKER_SIG_PC	   (WALKER_UC_MCONTEXT + 16 * 8)
/* rbx: the lazy-binding trampoline's CFA (CFI_CFA_REG on rbx) may be in any frame */
#define WALKER_CARRIED_REG CFI_DW_RBX
#define WALKER_RA_MASK	   (~0ull)
#define WALKER_HAS_LR	   0
#endif

/* arm64's sigreturn trampoline, found by its code (walker_at_sigreturn) */
#define WALKER_A64_SIGRETURN_MOV 0xd2801168u /* mov x8, #139 */
#define WALKER_A64_SIGRETURN_SVC 0xd4000001u /* svc #0 */

#endif
