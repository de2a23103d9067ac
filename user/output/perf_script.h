/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perf script` text: what stackcollapse-perf.pl, inferno and the Firefox
 * Profiler's and speedscope's perf importers read.  One block per sample:
 *
 *   comm pid/tid seconds.micros: period event:
 *   \t         addr symbol (dso)        leaf first, one line per frame
 *   (blank line)
 */
#ifndef CFIPROF_PERF_SCRIPT_H
#define CFIPROF_PERF_SCRIPT_H

#include <stdio.h>

#include "user/profile/profile.h"

int perf_script_write(FILE *f, const struct profile *p);

#endif
