/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of Java frames: a compiled frame's nmethod, found by BPF at the
 * sample with its compile id, is read for its Method* only while it is
 * still that compile (else the frame is stale, counted, not named); an
 * interpreted frame's Method* as BPF read it from the frame; each read
 * once (code_names.c, hotspot_scopes.h) as "Class.method", a compiled
 * one with its nmethod's debug info: at its pc, the line in its source
 * file and the methods inlined into it there, shown as inline frames
 * above it ("Busy.fib (Busy.java:16)").  Each frame names the native frame
 * it runs in (struct interp_namer's by_pc): the code cache's
 * "[anon]+0x..." becomes "Busy.fib".
 */
#ifndef CFIPROF_HOTSPOT_NAMES_H
#define CFIPROF_HOTSPOT_NAMES_H

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

/* How HotSpot's frames are named (code_names.h): ctx is the runtime's struct runtime_parts. */
extern const struct code_names_ops hotspot_name_ops;

/*
 * Frames not named: a compiled one's nmethod another compile when read, an
 * interpreted one's Method another method's.
 */
uint64_t hotspot_names_stale(void);
/* One more, found apart (a deferred sample's frame: hotspot_deferred.c). */
void hotspot_names_count_stale(void);

/* What the profile names the frames with (names NULL: "[jvm]"). */
void hotspot_names_namer(struct code_names *names, struct interp_namer *out);

#endif
