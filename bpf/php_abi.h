/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * PHP frames: what crosses the kernel/user boundary for this runtime alone
 * (bpf/php.bpf.h, user/runtimes/php/).  Included through bpf/runtime_table.h
 * after cfiprof_abi.h's runtime-generic part.
 */
#ifndef CFIPROF_PHP_ABI_H
#define CFIPROF_PHP_ABI_H

#define PHP_MAX_FRAMES	 128
#define PHP_RECORD_BYTES (PHP_MAX_FRAMES * sizeof(struct cfi_interp_frame))
/* bytes of a zend_execute_data read at once: opline, func, This, prev_execute_data */
#define PHP_FRAME_READ 56
/* bytes of a zend_function read at once: its type and what tells one compile from another */
#define PHP_FUNC_READ 96

enum cfi_php_status {
	PHP_STATUS_NONE = 0,	   /* not a process with a supported PHP */
	PHP_STATUS_OK = 1,	   /* the executor's frame chain was read to its end */
	PHP_STATUS_IDLE = 2,	   /* no PHP code running (between requests, or starting up) */
	PHP_STATUS_TRUNCATED = 3,  /* more than PHP_MAX_FRAMES frames: the innermost kept */
	PHP_STATUS_UNREADABLE = 4, /* a pointer of the chain could not be read */
	PHP_STATUS_MAX,
};

/*
 * A process running a supported PHP (non-thread-safe build), keyed by
 * tgid: where its executor globals are and its version's field offsets
 * (user/runtimes/php/php_offsets.c).
 */
struct cfi_php_proc {
	__u64 executor_globals;	       /* address of executor_globals */
	__u16 version;		       /* major << 8 | minor */
	__u16 eg_current_execute_data; /* zend_executor_globals.current_execute_data */
	__u16 ed_opline;	       /* zend_execute_data.opline */
	__u16 ed_func;		       /* .func */
	__u16 ed_call_info;	       /* .This.u1.type_info: the call's ZEND_CALL_* flags */
	__u16 ed_prev;		       /* .prev_execute_data */
	__u16 op_lineno;	       /* zend_op.lineno */
	__u16 func_opcodes;	       /* zend_op_array.opcodes: one compile's, not another's */
	__u32 call_top;		       /* ZEND_CALL_TOP: the frame an executor call began with */
	__u32 pad;
	__u64 maps_read_ns; /* as every runtime's: struct cfi_runtime_proc */
};

#endif
