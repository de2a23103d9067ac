/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ruby frames: what crosses the kernel/user boundary for this runtime alone
 * (bpf/ruby.bpf.h, user/runtimes/ruby/).  Included through bpf/runtime_table.h
 * after cfiprof_abi.h's runtime-generic part.
 */
#ifndef CFIPROF_RUBY_ABI_H
#define CFIPROF_RUBY_ABI_H

#define RUBY_MAX_FRAMES 128
/* bytes of a control frame read at once: pc, sp, iseq, self, ep */
#define RUBY_CFP_READ 40
/* struct cfi_interp_frame.owner of Ruby's frames */
#define RUBY_FRAME_ISEQ	 1 /* a Ruby-level frame: code is its iseq, instr its pc's low 32 bits */
#define RUBY_FRAME_CFUNC 2 /* a C method's frame: code is its method entry */

enum cfi_ruby_status {
	RUBY_STATUS_NONE = 0,	    /* not a process with a supported Ruby */
	RUBY_STATUS_OK = 1,	    /* the control frames were read to the stack's end */
	RUBY_STATUS_NO_THREAD = 2,  /* no execution context in this thread (not a Ruby thread) */
	RUBY_STATUS_TRUNCATED = 3,  /* more than RUBY_MAX_FRAMES: the innermost kept */
	RUBY_STATUS_UNREADABLE = 4, /* a pointer on the way could not be read */
	RUBY_STATUS_MAX,
};

/*
 * A process running a supported libruby, keyed by tgid: where the thread's
 * execution context is (ruby_current_ec, thread-local in libruby's TLS
 * block, struct cfi_tls_var) and its
 * version's field offsets (user/runtimes/ruby/ruby_offsets.c).
 */
struct cfi_ruby_proc {
	struct cfi_tls_var tls; /* ruby_current_ec */
	__u16 version;		/* major << 8 | minor (3.1: 0x0301) */
	__u16 ec_vm_stack;	/* rb_execution_context_t.vm_stack */
	__u16 ec_vm_stack_size; /* .vm_stack_size, in VALUEs */
	__u16 ec_cfp;		/* .cfp: the innermost control frame */
	__u16 cfp_size;		/* sizeof(rb_control_frame_t) */
	__u16 cfp_pc;		/* .pc */
	__u16 cfp_iseq;		/* .iseq */
	__u16 cfp_ep;		/* .ep: ep[0] holds the frame's flags */
	__u32 frame_cframe;	/* VM_FRAME_FLAG_CFRAME: not a Ruby-level frame */
	__u32 frame_finish;	/* VM_FRAME_FLAG_FINISH: a vm_exec call began with it */
	__u32 frame_magic_mask; /* VM_FRAME_MAGIC_MASK: a frame's kind in its flags */
	__u32 frame_cfunc;	/* VM_FRAME_MAGIC_CFUNC: a C method's frame */
	__u64 maps_read_ns;	/* as every runtime's: struct cfi_runtime_proc */
	/* user space's: where libruby's symbol table (global_symbols) is, 0: not found */
	__u64 global_symbols;
};

#endif
