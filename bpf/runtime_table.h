/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The registration table of the language runtimes whose own data a sample
 * carries after its PCs (one runtime per process, its units RT_UNIT_BYTES
 * each, at most RT_RECORD_BYTES): the one place a runtime is listed.
 *
 * A runtime NAME is its user-space folder user/runtimes/NAME/ (which
 * defines `const struct runtime_ops NAME_runtime`), its part of the ABI in
 * bpf/NAME_abi.h, its BPF file bpf/NAME.bpf.h (which defines NAME_append(),
 * NAME_items() and NAME_thread_exit()), and one line in each of the three lists below;
 * bpf/runtimes.bpf.h and user/session/runtimes.c take the rest from them.
 */
#ifndef CFIPROF_RUNTIME_TABLE_H
#define CFIPROF_RUNTIME_TABLE_H

#include "python_abi.h"
#include "go_abi.h"
#include "php_abi.h"
#include "perl_abi.h"
#include "ruby_abi.h"
#include "v8_abi.h"
#include "hotspot_abi.h"

/*
 * X(ID, VALUE, NAME, TAG, FRAMES, FRAME_TYPE): NAME as the summary and
 * metrics show it, and the stem of its files and functions; TAG what a
 * recording's lines of its frames start with ("pyframe", " py LIST");
 * FRAMES, when its units are struct cfi_interp_frame (an interpreter's
 * frames), the most a sample holds (a chain that long was cut at its root
 * side), 0 when they are its own; FRAME_TYPE its frames' profile.frame.type
 * (OpenTelemetry's names).  VALUE is what recordings store: never reused.
 */
#define CFI_RUNTIMES(X)                                                                            \
	/* the thread's Python frames */                                                           \
	X(RT_PYTHON, 1, python, "py", PY_MAX_FRAMES, "cpython")                                    \
	/* the goroutine's profiler labels */                                                      \
	X(RT_GO, 2, go, "go", 0, NULL)                                                             \
	/* the thread's PHP frames */                                                              \
	X(RT_PHP, 3, php, "php", PHP_MAX_FRAMES, "php")                                            \
	/* the thread's Perl subroutine frames */                                                  \
	X(RT_PERL, 4, perl, "pl", PERL_MAX_FRAMES, "perl")                                         \
	/* the thread's Ruby frames */                                                             \
	X(RT_RUBY, 5, ruby, "rb", RUBY_MAX_FRAMES, "ruby")                                         \
	/* the thread's JavaScript frames, each naming a native frame */                           \
	X(RT_V8, 6, v8, "v8", V8_MAX_FRAMES, "v8js")                                               \
	/* the thread's compiled Java frames, each naming a native frame */                        \
	X(RT_HOTSPOT, 7, hotspot, "jvm", HOTSPOT_MAX_FRAMES, "jvm")                                \
	/* the list's end: each row above ends in a backslash, so adding one adds a line */

#endif

/* The runtimes' BPF files: bpf/runtimes.bpf.h's, once its helpers are defined. */
#if defined(RUNTIME_TABLE_BPF_FILES) && !defined(CFIPROF_RUNTIME_TABLE_BPF_FILES)
#define CFIPROF_RUNTIME_TABLE_BPF_FILES
#include "python.bpf.h"
#include "go.bpf.h"
#include "php.bpf.h"
#include "perl.bpf.h"
#include "ruby.bpf.h"
#include "v8.bpf.h"
#include "hotspot.bpf.h"
#endif
