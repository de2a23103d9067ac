// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Field offsets of the supported CPython versions (x86-64).  Debian's
 * python3.11 has no debug information, so they cannot be read from the
 * binary: they are CPython's own headers' (Include/internal/pycore_*.h),
 * checked against offsetof() over the installed headers by
 * tests/unit/test_python.c.  3.13 also publishes them at run time in
 * _Py_DebugOffsets (_PyRuntime.debug_offsets); a 3.12 or 3.13 entry is
 * another element here plus its PY_ENTRY_SHIM_FRAME / PY_FLAG_CFRAME choice.
 */
#include <stddef.h>

#include "user/runtimes/python/python_offsets.h"
#include "user/runtimes/runtime_versions.h"

/* 3.8 to 3.10: PyFrameObjects, thread states known by pthread_self() */
#define PY_FRAME_OBJECT_BPF(v, lasti)                                                              \
	{                                                                                          \
		.version = (v), .flags = PY_FLAG_FRAME_OBJECT | PY_FLAG_PTHREAD_ID,                \
		.runtime_interp_head = 32,    /* _PyRuntimeState.interpreters.head */              \
		    .interp_next = 0,	      /* PyInterpreterState.next */                        \
		    .interp_threads_head = 8, /* .tstate_head */                                   \
		    .tstate_next = 8,	      /* PyThreadState.next */                             \
		    .tstate_native_tid = 176, /* .thread_id: pthread_self() */                     \
		    .tstate_frame = 24,	      /* .frame */                                         \
		    .cframe_current_frame = PY_OFF_NONE,                                           \
		.frame_code = 32,	    /* PyFrameObject.f_code */                             \
		    .frame_previous = 24,   /* .f_back */                                          \
		    .frame_instr = (lasti), /* .f_lasti */                                         \
		    .frame_is_entry = PY_OFF_NONE, .frame_owner = PY_OFF_NONE,                     \
		.frame_globals = 48, /* .f_globals */                                              \
	}

/* The code object's fields from 3.8 to 3.10, and their str and bytes objects */
#define PY_FRAME_OBJECT_CODE                                                                       \
	.entry = PY_ENTRY_EVERY_FRAME, .owner_generator = 0xff, .owner_cstack = 0xff,              \
	.code_type = 8, .code_bytecode = PY_OFF_NONE, .code_code = 48, .code_read = 128,           \
	.code_firstlineno = 40, .code_firsttraceable = PY_OFF_NONE, .code_filename = 104,          \
	.code_qualname = 112 /* co_name: no co_qualname */, .code_linetable = 120,                 \
	.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,           \
	.str_ready_bit = true, .bytes_size = 16, .bytes_data = 32

static const struct python_offsets versions[] = {
    {.version = 0x0308,
     .name = "3.8",
     .bpf = PY_FRAME_OBJECT_BPF(0x0308, 104),
     .code_kind = PY_CODE_LNOTAB,
     PY_FRAME_OBJECT_CODE},
    {.version = 0x0309,
     .name = "3.9",
     .bpf = PY_FRAME_OBJECT_BPF(0x0309, 104),
     .code_kind = PY_CODE_LNOTAB,
     PY_FRAME_OBJECT_CODE},
    {.version = 0x030a,
     .name = "3.10",
     .bpf = PY_FRAME_OBJECT_BPF(0x030a, 96),
     .code_kind = PY_CODE_LINETABLE_310,
     PY_FRAME_OBJECT_CODE},
    {
	.version = 0x030b,
	.name = "3.11",
	.bpf =
	    {
		.version = 0x030b,
		.flags = PY_FLAG_CFRAME,
		.runtime_interp_head = 40, /* _PyRuntimeState.interpreters.head */
		.interp_next = 0,	   /* PyInterpreterState.next */
		.interp_threads_head = 16, /* .threads.head */
		.tstate_next = 8,	   /* PyThreadState.next */
		.tstate_native_tid = 160,  /* .native_thread_id */
		.tstate_frame = 56,	   /* .cframe */
		.cframe_current_frame = 8, /* _PyCFrame.current_frame */
		.frame_code = 32,	   /* _PyInterpreterFrame.f_code */
		.frame_previous = 48,	   /* .previous */
		.frame_instr = 56,	   /* .prev_instr */
		.frame_is_entry = 68,	   /* .is_entry */
		.frame_owner = 69,	   /* .owner */
		.frame_globals = 8,	   /* .f_globals */
	    },
	.entry = PY_ENTRY_IS_ENTRY,
	.owner_generator = 1, /* FRAME_OWNED_BY_GENERATOR */
	.owner_cstack = 0xff, /* none in 3.11 */
	.code_type = 8,
	.code_bytecode = 184,
	.code_code = PY_OFF_NONE,
	.code_read = 184,
	.code_firstlineno = 72,
	.code_firsttraceable = 168,
	.code_filename = 112,
	.code_qualname = 128,
	.code_linetable = 136,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,	/* sizeof(PyASCIIObject) */
	.str_compact_data = 72, /* sizeof(PyCompactUnicodeObject) */
	.str_ready_bit = true,
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.version = 0x030c,
	.name = "3.12",
	.bpf =
	    {
		.version = 0x030c,
		.flags = PY_FLAG_CFRAME,
		.runtime_interp_head = 40, /* _PyRuntimeState.interpreters.head */
		.interp_next = 0,	   /* PyInterpreterState.next */
		.interp_threads_head = 72, /* .threads.head */
		.tstate_next = 8,	   /* PyThreadState.next */
		.tstate_native_tid = 144,  /* .native_thread_id */
		.tstate_frame = 56,	   /* .cframe */
		.cframe_current_frame = 0, /* _PyCFrame.current_frame */
		.frame_code = 0,	   /* _PyInterpreterFrame.f_code */
		.frame_previous = 8,	   /* .previous */
		.frame_instr = 56,	   /* .prev_instr */
		.frame_is_entry = PY_OFF_NONE,
		.frame_owner = 70,   /* .owner */
		.frame_globals = 24, /* .f_globals */
	    },
	.entry = PY_ENTRY_SHIM_FRAME,
	.owner_generator = 1, /* FRAME_OWNED_BY_GENERATOR */
	.owner_cstack = 3,    /* FRAME_OWNED_BY_CSTACK */
	.code_type = 8,
	.code_bytecode = 192,
	.code_code = PY_OFF_NONE,
	.code_read = 192,
	.code_firstlineno = 68,
	.code_firsttraceable = 176,
	.code_filename = 112,
	.code_qualname = 128,
	.code_linetable = 136,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 40,	/* sizeof(PyASCIIObject): no wstr since 3.12 */
	.str_compact_data = 56, /* sizeof(PyCompactUnicodeObject) */
	.bytes_size = 16,
	.bytes_data = 32,
    },
    {
	.version = 0x030d,
	.name = "3.13",
	.bpf =
	    {
		.version = 0x030d,
		.flags = 0,		     /* no _PyCFrame: the thread state holds the frame */
		.runtime_interp_head = 632,  /* _PyRuntimeState.interpreters.head */
		.interp_next = 7264,	     /* PyInterpreterState.next */
		.interp_threads_head = 7344, /* .threads.head */
		.tstate_next = 8,	     /* PyThreadState.next */
		.tstate_native_tid = 160,    /* .native_thread_id */
		.tstate_frame = 72,	     /* .current_frame */
		.cframe_current_frame = PY_OFF_NONE,
		.frame_code = 0,     /* _PyInterpreterFrame.f_executable */
		.frame_previous = 8, /* .previous */
		.frame_instr = 56,   /* .instr_ptr */
		.frame_is_entry = PY_OFF_NONE,
		.frame_owner = 70,   /* .owner */
		.frame_globals = 24, /* .f_globals */
	    },
	.entry = PY_ENTRY_SHIM_FRAME,
	.owner_generator = 1, /* FRAME_OWNED_BY_GENERATOR */
	.owner_cstack = 3,    /* FRAME_OWNED_BY_CSTACK */
	.code_type = 8,
	.code_bytecode = 200,
	.code_code = PY_OFF_NONE,
	.code_read = 200,
	.code_firstlineno = 68,
	.code_firsttraceable = 184,
	.code_filename = 112,
	.code_qualname = 128,
	.code_linetable = 136,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 40,
	.str_compact_data = 56,
	.bytes_size = 16,
	.bytes_data = 32,
    },
};

const struct python_offsets *python_offsets_find(uint16_t version)
{
	return RUNTIME_VERSION_FIND(versions, version);
}

const struct python_offsets *python_offsets_all(unsigned int *n)
{
	*n = sizeof(versions) / sizeof(versions[0]);
	return versions;
}
