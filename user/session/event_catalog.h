/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The events this machine offers, by name, for `cfiprof list PATTERN` (as
 * `perf list PATTERN` and `bpftrace -l PATTERN`): perf events, the kernel's
 * tracepoints and the kernel functions a kprobe can attach to.
 */
#ifndef CFIPROF_SESSION_EVENT_CATALOG_H
#define CFIPROF_SESSION_EVENT_CATALOG_H

#include <stdio.h>

/*
 * Prints every event whose name matches the glob pattern, one a line, as -e
 * takes it: "cpu-clock", "tracepoint:sched:sched_switch", "kprobe:vfs_write",
 * "kretprobe:vfs_write".  A pattern without ':' also matches the name after
 * the last ':'.  Returns how many matched, or -1 (why in err) when the
 * kernel's BTF cannot be read.
 */
long event_catalog_print(FILE *f, const char *pattern, char *err, size_t errlen);

#endif
