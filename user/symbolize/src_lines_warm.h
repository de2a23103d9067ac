/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DWARF opened before its first lookup.  record names its frames only when
 * the command has ended, and the first lookup in an object opens its DWARF
 * and lists its compile units: for `record -- xz`, libc's debug file took 48
 * of the 50 ms the profile took to build, all of it after the command.  A
 * thread opens each object's DWARF as it is attached (src_lines_prepare),
 * while the command runs; the first lookup stops it (after the object it is
 * opening), and what it did not reach opens then, as before.  Private to sym_cache.c.
 */
#ifndef CFIPROF_SRC_LINES_WARM_H
#define CFIPROF_SRC_LINES_WARM_H

#include "user/symbolize/src_lines.h"

struct src_lines_warm;

/* NULL when the thread cannot start: lookups then open everything themselves. */
struct src_lines_warm *src_lines_warm_start(struct src_lines_ctx *ctx);
/* Queues @sl to be opened; nothing once stopped. */
void src_lines_warm_add(struct src_lines_warm *w, struct src_lines *sl);
/* src_lines_free(@sl), never while the thread opens it. */
void src_lines_warm_free(struct src_lines_warm *w, struct src_lines *sl);
/*
 * Ends the thread (after the object it is opening, if any); then the caller
 * alone uses the ctx again.  Idempotent; @w stays valid until _destroy.
 */
void src_lines_warm_stop(struct src_lines_warm *w);
void src_lines_warm_destroy(struct src_lines_warm *w);
/* Objects it opened so far. */
uint64_t src_lines_warm_opened(struct src_lines_warm *w);
/* Whether it is opening one now. */
bool src_lines_warm_busy(struct src_lines_warm *w);

#endif
