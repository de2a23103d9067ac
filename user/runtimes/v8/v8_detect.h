/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run V8: an object (node, or a libnode.so) that exports
 * V8's layout as v8dbg_* symbols (v8_offsets.h).  Each distinct layout is
 * kept once for the session (v8_layout), as the processes' runtime_procs
 * entries name it by index.  Found by runtime_detect.c.
 */
#ifndef CFIPROF_V8_DETECT_H
#define CFIPROF_V8_DETECT_H

#include <stdint.h>

#include "user/runtimes/runtime_detect.h"
#include "user/runtimes/v8/v8_offsets.h"

_Static_assert(sizeof(struct v8_offsets) <= DETECT_INFO_BYTES, "detect info too small");

extern const struct detect_ops v8_detect_ops;

/* The layout a runtime_procs entry's layout index names; NULL when none. */
const struct v8_offsets *v8_layout(uint16_t index);

#endif
