/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening files whose paths come from outside (recordings, /proc/PID/maps,
 * /tmp/perf-PID.map, debug links): a FIFO or device planted there must not
 * block or feed the profiler, so only regular files are opened.
 */
#ifndef CFIPROF_SAFE_OPEN_H
#define CFIPROF_SAFE_OPEN_H

#include <stdio.h>

/* Read-only fd of a regular file, or -errno (-EINVAL for anything else); never blocks. */
int open_regular(const char *path);
/* The same as a FILE (mode "re"), NULL + errno on failure. */
FILE *fopen_regular(const char *path);

#endif
