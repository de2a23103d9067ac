/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pprof output: a gzip-compressed profile.proto (github.com/google/pprof),
 * readable by `go tool pprof`.  Two sample types, samples/count and
 * cpu/nanoseconds; every sample carries num labels "pid" and "tid", a string
 * label "comm", and, for incomplete stacks, a string label "stop_reason".
 */
#ifndef CFIPROF_PPROF_H
#define CFIPROF_PPROF_H

#include <stdio.h>

#include "user/profile/profile.h"

/* Returns 0, or -1 on allocation, compression or write failure. */
int pprof_write(FILE *f, const struct profile *p);

#endif
