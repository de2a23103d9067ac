/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interpreter frames as a recording keeps them (recording.h, "pyframe"
 * lines and the other runtimes' TAG "frame" lines): how record showed each
 * distinct frame (struct cfi_interp_frame of a runtime, process and mapping
 * generation): its role at the evaluation loop, name, file and line, and
 * the levels a JIT inlined into it there (SAVED_INLINED_MAX at most).
 * `report` shows a recording's interpreter frames from here: the code they
 * name lived in a process that is gone.  The writer uses the same table to
 * save each frame once.
 */
#ifndef CFIPROF_SAVED_INTERP_H
#define CFIPROF_SAVED_INTERP_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/runtime_units.h"

struct saved_interp;

/* inline levels kept of one frame, at most (a JIT's: HotSpot's depth bound is 31) */
#define SAVED_INLINED_MAX 64

struct saved_interp *saved_interp_new(void);
void saved_interp_free(struct saved_interp *sp);

/* Keeps how frame f of runtime rt's (pid, gen) is shown: 1 when new, 0 when kept already, -1 out of
 * memory. */
int saved_interp_add(struct saved_interp *sp, uint8_t rt, uint32_t pid, uint32_t gen,
		     const struct cfi_interp_frame *f, const struct interp_frame_shown *how);

/* How frame f of (pid, gen) is shown; NULL when not kept.  Lives as long as sp. */
const struct interp_frame_shown *saved_interp_find(const struct saved_interp *sp, uint8_t rt,
						   uint32_t pid, uint32_t gen,
						   const struct cfi_interp_frame *f);

#endif
