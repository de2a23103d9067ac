/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython frames: what crosses the kernel/user boundary for this runtime alone
 * (bpf/python.bpf.h, user/runtimes/python/).  Included through bpf/runtime_table.h
 * after cfiprof_abi.h's runtime-generic part.
 */
#ifndef CFIPROF_PYTHON_ABI_H
#define CFIPROF_PYTHON_ABI_H

#define PY_MAX_FRAMES 128
/* bytes of an interpreter frame read at once: every field the walk needs lies in them */
#define PY_FRAME_READ 80
/* field offsets of PY_OFF_NONE: the version has no such field */
#define PY_OFF_NONE 0xffff

#define PY_RECORD_BYTES (PY_MAX_FRAMES * sizeof(struct cfi_interp_frame))

enum cfi_python_status {
	PY_STATUS_NONE = 0,	  /* not a process with a supported interpreter */
	PY_STATUS_OK = 1,	  /* the thread's frame chain was read to its end */
	PY_STATUS_NO_THREAD = 2,  /* no thread state for this thread (not a Python thread) */
	PY_STATUS_TRUNCATED = 3,  /* more than PY_MAX_FRAMES frames: the innermost kept */
	PY_STATUS_UNREADABLE = 4, /* a pointer of the chain could not be read */
	PY_STATUS_MAX,
};

enum cfi_python_flags {
	/* current frame: tstate->cframe->current_frame (3.11, 3.12), else tstate->current_frame */
	PY_FLAG_CFRAME = 1 << 0,
	/*
	 * 3.10 and older: a chain of PyFrameObjects (f_back), each run by a
	 * call of its own of the evaluation loop, its instruction an int index
	 * (f_lasti) out of the bytes read at once
	 */
	PY_FLAG_FRAME_OBJECT = 1 << 1,
	/* the thread state's id is pthread_self() (thread_id, 3.10 and older): the fs base */
	PY_FLAG_PTHREAD_ID = 1 << 2,
};

/*
 * A process running a supported CPython, keyed by tgid: where its runtime
 * state is and the field offsets of its version (user/runtimes/python/python_offsets.c).
 */
struct cfi_python_proc {
	__u64 runtime;		    /* address of _PyRuntime */
	__u16 version;		    /* major << 8 | minor */
	__u16 flags;		    /* enum cfi_python_flags */
	__u16 runtime_interp_head;  /* _PyRuntime.interpreters.head */
	__u16 interp_next;	    /* PyInterpreterState.next */
	__u16 interp_threads_head;  /* PyInterpreterState.threads.head */
	__u16 tstate_next;	    /* PyThreadState.next */
	__u16 tstate_native_tid;    /* PyThreadState.native_thread_id */
	__u16 tstate_frame;	    /* PyThreadState.cframe, or .current_frame */
	__u16 cframe_current_frame; /* _PyCFrame.current_frame */
	__u16 frame_code;	    /* _PyInterpreterFrame.f_code (f_executable) */
	__u16 frame_previous;
	__u16 frame_instr;    /* .prev_instr (instr_ptr) */
	__u16 frame_is_entry; /* PY_OFF_NONE from 3.12 on (shim frames instead) */
	__u16 frame_owner;
	__u16 frame_globals; /* .f_globals: struct cfi_interp_frame's scope */
	__u16 pad;
	/*
	 * Its PID namespace, /proc/PID/ns/pid's inode and device (the kernel's
	 * dev_t: major << 20 | minor), for its threads' ids as it sees them
	 * (bpf_get_ns_current_pid_tgid); 0: the global ids.
	 */
	__u64 pidns_dev;
	__u64 pidns_ino;
	/*
	 * When user space read the mappings this was found in (bpf clock): an
	 * exec of the process after it (pid_times PT_EXEC) makes it the old
	 * image's, whatever a load finishing late wrote.
	 */
	__u64 maps_read_ns;
};

#endif
