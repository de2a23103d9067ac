/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of JavaScript frames: each SharedFunctionInfo a sample's frames
 * point at, read from the process once (code_names.c, v8_sfi.c): the
 * function's name as V8 gives it, its script and the line it starts on.
 * Each frame names the native frame it runs in (struct interp_namer's
 * by_pc): the JIT code's "[anon]+0x..." becomes "fib".
 */
#ifndef CFIPROF_V8_NAMES_H
#define CFIPROF_V8_NAMES_H

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

/* How V8's frames are named (code_names.h): the reader's ctx is the runtime's struct runtime_parts.
 */
extern const struct code_names_ops v8_name_ops;

/* What the profile names the frames with (names NULL: "[v8]"). */
void v8_names_namer(struct code_names *names, struct interp_namer *out);

#endif
