/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A `perf report`-like text summary: header, top functions by self and by
 * total (inclusive) samples, and a top-down call tree from each comm with
 * branches below 0.5% of all samples pruned.  Functions are keyed by
 * (name, object basename); percentages are of all samples.
 */
#ifndef CFIPROF_TEXT_REPORT_H
#define CFIPROF_TEXT_REPORT_H

#include <stdio.h>

#include "user/profile/profile.h"

/* max_rows limits each function table; <= 0 lists every function.  Returns 0 or -1. */
int text_report_write(FILE *f, const struct profile *p, int max_rows);

#endif
