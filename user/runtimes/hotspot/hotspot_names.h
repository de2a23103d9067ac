/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of compiled Java frames: each Method* a sample's frames hold (the
 * nmethod's, read by BPF at the sample), read from the process once
 * (code_names.c, hotspot_method_name) as "Class.method".  Each frame names
 * the native frame it runs in (struct interp_namer's by_pc): the code
 * cache's "[anon]+0x..." becomes "Busy.fib".
 */
#ifndef CFIPROF_HOTSPOT_NAMES_H
#define CFIPROF_HOTSPOT_NAMES_H

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

/* How HotSpot's frames are named (code_names.h): ctx is the runtime's struct runtime_parts. */
extern const struct code_names_ops hotspot_name_ops;

/* What the profile names the frames with (names NULL: "[jvm]"). */
void hotspot_names_namer(struct code_names *names, struct interp_namer *out);

#endif
