/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * V8 (Node.js) frames: what crosses the kernel/user boundary for this
 * runtime alone (bpf/v8.bpf.h, user/runtimes/v8/).  Included through
 * bpf/runtime_table.h after cfiprof_abi.h's runtime-generic part.
 *
 * Unlike an interpreter's, V8's frames are native frames: JIT code and
 * builtins that keep frame pointers.  Each JavaScript frame's unit names
 * one native frame of the sample, the one whose PC's low 32 bits it holds.
 */
#ifndef CFIPROF_V8_ABI_H
#define CFIPROF_V8_ABI_H

#define V8_MAX_FRAMES 64

/* struct cfi_interp_frame of a JavaScript frame: code is its SharedFunctionInfo (tagged) */
#define V8_FRAME_JS 1

enum cfi_v8_status {
	V8_STATUS_NONE = 0,	  /* not a process with a V8 cfiprof reads */
	V8_STATUS_OK = 1,	  /* the frame-pointer chain was read to its end */
	V8_STATUS_NO_JS = 2,	  /* no JavaScript frame on it */
	V8_STATUS_TRUNCATED = 3,  /* more than V8_MAX_FRAMES JavaScript frames: the innermost */
	V8_STATUS_UNREADABLE = 4, /* the chain ended at a frame that could not be read */
	V8_STATUS_MAX,
};

/*
 * A process running a V8 whose layout its binary exports (v8dbg_*
 * symbols, as Node.js's do), keyed by tgid: what BPF needs to tell a
 * JavaScript frame and read its function's SharedFunctionInfo.
 */
struct cfi_v8_proc {
	__s16 fp_function;	  /* v8dbg_off_fp_function: the frame's JSFunction from fp */
	__u16 heap_object_map;	  /* HeapObject.map */
	__u16 map_instance_type;  /* Map.instance_type, a u16 */
	__u16 js_function_type;	  /* JS_FUNCTION_TYPE: the first of JSFunction's types */
	__u16 js_function_last;	  /* ... the last (its subclasses: class constructors...) */
	__u16 js_function_shared; /* JSFunction.shared */
	__u16 layout;		  /* user space's index of the process's layout (v8_offsets) */
	__u16 pad;
	/*
	 * The embedded builtins' code (the interpreter, bytecode handlers, the
	 * trampolines): absolute in the process's entry, ELF addresses in the
	 * object's layout; 0 when unknown.  With JIT code (memory of no file)
	 * it is where a JavaScript frame's pc is: a frame of other code whose
	 * function slot holds a stale JSFunction is none.
	 */
	__u64 builtins_lo, builtins_hi;
	__u64 maps_read_ns; /* as every runtime's: struct cfi_runtime_proc */
};

#endif
