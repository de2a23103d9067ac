/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), which stamps samples and events. */
#ifndef CFIPROF_CLOCK_H
#define CFIPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
