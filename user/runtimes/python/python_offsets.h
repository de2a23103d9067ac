/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CPython versions cfiprof reads frames of, and where each keeps what the
 * walk and the naming need: one entry per version (python_offsets.c).
 * Supporting a version is adding its entry.
 */
#ifndef CFIPROF_PYTHON_OFFSETS_H
#define CFIPROF_PYTHON_OFFSETS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

/* How the evaluation loop's native frames and the interpreter frames correspond. */
enum python_entry_kind {
	/* 3.11: a frame with is_entry set is the first one its _PyEval_EvalFrameDefault ran */
	PY_ENTRY_IS_ENTRY = 1,
	/* 3.12 on: each _PyEval_EvalFrameDefault pushes a shim frame owned by the C stack */
	PY_ENTRY_SHIM_FRAME = 2,
	/* 3.10 and older: each PyFrameObject is run by a call of its own */
	PY_ENTRY_EVERY_FRAME = 3,
};

/* What a frame's instr is (struct cfi_interp_frame) and how its line is found. */
enum python_code_kind {
	/* 3.11 on: the instruction pointer less the code object, a location table */
	PY_CODE_LOCATIONS = 0,
	/* 3.10: f_lasti in code units, co_linetable of (bytes, line delta) pairs */
	PY_CODE_LINETABLE_310,
	/* 3.8, 3.9: f_lasti in bytes, co_lnotab of (bytes, line delta) pairs */
	PY_CODE_LNOTAB,
};

struct python_offsets {
	uint16_t version; /* major << 8 | minor */
	const char *name; /* "3.11" */
	/* what the kernel reads: copied into the python_procs map (runtime filled per process) */
	struct cfi_python_proc bpf;
	enum python_entry_kind entry;
	enum python_code_kind code_kind;
	uint8_t owner_generator; /* frame owner value of a generator's frame */
	uint8_t owner_cstack;	 /* ... of a shim frame (PY_ENTRY_SHIM_FRAME) */
	/* PyCodeObject */
	uint16_t code_type;	/* ob_type (a code object's type is the same for all) */
	uint16_t code_bytecode; /* co_code_adaptive: the instructions, 2 bytes each (3.11 on) */
	uint16_t code_code;	/* co_code, a bytes object (3.10 and older), else PY_OFF_NONE */
	uint16_t code_read;	/* bytes of a code object read: every field above in them */
	uint16_t code_firstlineno;
	uint16_t code_firsttraceable; /* _co_firsttraceable: frames before it are incomplete */
	uint16_t code_filename, code_qualname, code_linetable;
	/* PyUnicodeObject (compact) and PyBytesObject */
	uint16_t str_length, str_state, str_ascii_data, str_compact_data;
	bool str_ready_bit; /* state's bit 7 is "ready" (set on every str), not 3.12's static */
	uint16_t bytes_size, bytes_data;
};

/* The entry of version (major << 8 | minor), NULL when it is not supported. */
const struct python_offsets *python_offsets_find(uint16_t version);
/* Every entry, for tests and the README's list. */
const struct python_offsets *python_offsets_all(unsigned int *n);

#endif
