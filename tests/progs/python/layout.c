// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython's layout as its own headers give it, printed as "field value" per
 * line with the names of struct python_offsets (user/runtimes/python/python_offsets.h):
 * test_python builds this against each interpreter's installed headers
 * (cc -I PREFIX/include/python3.N) and compares with the table's entry.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#else
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#else
#include <internal/pycore_pystate.h>
#endif
#endif
#include <stddef.h>
#include <stdio.h>

#define P(name, expr) printf("%s %zu\n", name, (size_t)(expr))

int main(void)
{
	P("version", PY_VERSION_HEX >> 16);
	P("bpf.runtime_interp_head", offsetof(_PyRuntimeState, interpreters.head));
	P("bpf.interp_next", offsetof(PyInterpreterState, next));
	P("bpf.tstate_next", offsetof(PyThreadState, next));
#if PY_VERSION_HEX >= 0x030b0000
	P("bpf.interp_threads_head", offsetof(PyInterpreterState, threads.head));
	P("bpf.tstate_native_tid", offsetof(PyThreadState, native_thread_id));
#if PY_VERSION_HEX >= 0x030d0000
	/* no _PyCFrame: the thread state points at the frame */
	P("bpf.tstate_frame", offsetof(PyThreadState, current_frame));
	P("bpf.frame_code", offsetof(_PyInterpreterFrame, f_executable));
	P("bpf.frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#else
	P("bpf.tstate_frame", offsetof(PyThreadState, cframe));
	P("bpf.cframe_current_frame", offsetof(_PyCFrame, current_frame));
	P("bpf.frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("bpf.frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#endif
#if PY_VERSION_HEX < 0x030c0000
	P("bpf.frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
	P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#endif
	P("bpf.frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("bpf.frame_owner", offsetof(_PyInterpreterFrame, owner));
	P("bpf.frame_globals", offsetof(_PyInterpreterFrame, f_globals));
	P("owner_generator", FRAME_OWNED_BY_GENERATOR);
	P("code_bytecode", offsetof(PyCodeObject, co_code_adaptive));
	P("code_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	P("bytes_size", offsetof(PyVarObject, ob_size));
#else
	/* PyFrameObjects: thread_id is pthread_self(), f_lasti an index */
	P("bpf.interp_threads_head", offsetof(PyInterpreterState, tstate_head));
	P("bpf.tstate_native_tid", offsetof(PyThreadState, thread_id));
	P("bpf.tstate_frame", offsetof(PyThreadState, frame));
	P("bpf.frame_code", offsetof(PyFrameObject, f_code));
	P("bpf.frame_instr", offsetof(PyFrameObject, f_lasti));
	P("bpf.frame_previous", offsetof(PyFrameObject, f_back));
	P("bpf.frame_globals", offsetof(PyFrameObject, f_globals));
	P("code_code", offsetof(PyCodeObject, co_code));
	P("code_qualname", offsetof(PyCodeObject, co_name)); /* no co_qualname before 3.11 */
#if PY_VERSION_HEX >= 0x030a0000
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
#else
	P("code_linetable", offsetof(PyCodeObject, co_lnotab));
#endif
	P("bytes_size", offsetof(PyVarObject, ob_size));
#endif
	P("code_type", offsetof(PyObject, ob_type));
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("str_length", offsetof(PyASCIIObject, length));
	P("str_state", offsetof(PyASCIIObject, state));
	P("str_ascii_data", sizeof(PyASCIIObject));
	P("str_compact_data", sizeof(PyCompactUnicodeObject));
	P("bytes_data", offsetof(PyBytesObject, ob_sval));
#if PY_VERSION_HEX < 0x030c0000
	P("str_ready_bit", 1); /* 3.12 dropped PyASCIIObject.state.ready */
#else
	P("str_ready_bit", 0);
#endif
	return 0;
}
