/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Perl frames: what crosses the kernel/user boundary for this runtime alone
 * (bpf/perl.bpf.h, user/runtimes/perl/).  Included through bpf/runtime_table.h
 * after cfiprof_abi.h's runtime-generic part.
 */
#ifndef CFIPROF_PERL_ABI_H
#define CFIPROF_PERL_ABI_H

#define PERL_MAX_FRAMES 128
/* bytes of a PERL_CONTEXT read at once: its type, its caller's COP, its sub's CV */
#define PERL_CX_READ 80
/* bytes of a PERL_SI read at once: its contexts, their index, the stack below it */
#define PERL_SI_READ 40
/* struct cfi_interp_frame.owner of Perl's frames */
#define PERL_FRAME_SUB	1 /* a subroutine's call (CXt_SUB): code is its CV */
#define PERL_FRAME_MAIN 2 /* the program's main code: code is the COP it runs */

enum cfi_perl_status {
	PERL_STATUS_NONE = 0,	    /* not a process with a supported perl */
	PERL_STATUS_OK = 1,	    /* the context stacks were read to the main program */
	PERL_STATUS_NO_THREAD = 2,  /* no interpreter in this thread (not running Perl) */
	PERL_STATUS_TRUNCATED = 3,  /* more than PERL_MAX_FRAMES: the innermost kept */
	PERL_STATUS_UNREADABLE = 4, /* a pointer on the way could not be read */
	PERL_STATUS_MAX,
};

/*
 * A process running a supported perl (built with MULTIPLICITY, as
 * Debian's), keyed by tgid: where the thread's interpreter is
 * (PL_current_context, thread-local in the executable's TLS block, at
 * tls_context from the thread pointer) and its version's field offsets
 * (user/runtimes/perl/perl_offsets.c).
 */
struct cfi_perl_proc {
	__s32 tls_context;	   /* PL_current_context's offset from the thread pointer */
	__u16 version;		   /* major << 8 | minor (5.36: 0x0524) */
	__u16 interp_curstackinfo; /* PerlInterpreter.Icurstackinfo */
	__u16 interp_curcop;	   /* .Icurcop */
	__u16 si_cxstack;	   /* PERL_SI.si_cxstack */
	__u16 si_cxix;		   /* .si_cxix: the innermost context's index */
	__u16 si_prev;		   /* .si_prev */
	__u16 cx_size;		   /* sizeof(PERL_CONTEXT) */
	__u16 cx_oldcop;	   /* .blk_oldcop: the COP the context was entered from */
	__u16 cx_sub_cv;	   /* .blk_sub.cv */
	__u16 cop_line;		   /* COP.cop_line */
	__u16 cxt_sub;		   /* CXt_SUB: a context's type (& CXTYPEMASK) for a sub's call */
	__u16 interp_phase;	   /* .Iphase: the interpreter's phase, an int */
	__u16 phase_run;	   /* PERL_PHASE_RUN: the main code runs (not compiles, not ends) */
	__u16 pad;
	__u64 maps_read_ns; /* as every runtime's: struct cfi_runtime_proc */
};

#endif
