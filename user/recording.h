/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Saved recordings (record --save): the aggregated raw stacks plus every
 * mapping needed to symbolize them later, in a line-based text format:
 *
 *   # cfiprof recording v1
 *   map PID START END OFFSET BIAS FLAGS BUILD-ID PATH
 *   stack COUNT PID TID REASON FLAGS COMM k PC,PC,.. u PC,PC,..
 *
 * Numbers are hex except COUNT, PID, TID, REASON, FLAGS; an empty list is "-";
 * COMM has spaces replaced by '_'.  PCs are leaf first, as the walker emits them.
 */
#ifndef CFIPROF_RECORDING_H
#define CFIPROF_RECORDING_H

#include <stdio.h>

#include "aggregate.h"
#include "proc_tracker.h"

int recording_write(FILE *f, struct aggregator *a, struct proc_tracker *pt);

#endif
