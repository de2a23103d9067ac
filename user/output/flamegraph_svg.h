/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Self-contained interactive flame graph (SVG with inline JavaScript): hover
 * details, click to zoom, regex search (Ctrl-F).  Root frame "all", then the
 * comm, then the stack root to leaf; kernel frames suffixed _[k] as in folded.
 */
#ifndef CFIPROF_FLAMEGRAPH_SVG_H
#define CFIPROF_FLAMEGRAPH_SVG_H

#include <stdio.h>

#include "user/profile/profile.h"

/* title may be NULL.  Returns 0, or -1 on allocation or write failure or a malformed profile. */
int svg_write(FILE *f, const struct profile *p, const char *title);

#endif
