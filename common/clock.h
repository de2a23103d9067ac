/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The clocks cfiprof reads, in one place.  CLOCK_MONOTONIC is the clock of
 * bpf_ktime_get_ns(), which stamps samples and events, so user-space
 * deadlines and ages compare with sample times directly; CLOCK_REALTIME only
 * names things for people (profile times, log lines, file names).
 */
#ifndef CFIPROF_CLOCK_H
#define CFIPROF_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* CLOCK_MONOTONIC in seconds, for deadlines and rates. */
static inline double mono_sec(void)
{
	return (double)mono_ns() / 1e9;
}

/* CLOCK_MONOTONIC in ms, for durations people read. */
static inline double mono_ms(void)
{
	return (double)mono_ns() / 1e6;
}

/* CLOCK_REALTIME in ns since the epoch. */
static inline uint64_t unix_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* A CLOCK_REALTIME deadline @ms from now, for pthread_cond_timedwait. */
static inline struct timespec realtime_after_ms(uint64_t ms)
{
	uint64_t t = unix_ns() + ms * 1000000ull;

	return (struct timespec){.tv_sec = (time_t)(t / 1000000000ull),
				 .tv_nsec = (long)(t % 1000000000ull)};
}

/* Sleeps until CLOCK_MONOTONIC reaches ns (signals do not cut it short). */
static inline void mono_sleep_until(uint64_t ns)
{
	struct timespec t = {.tv_sec = (time_t)(ns / 1000000000ull),
			     .tv_nsec = (long)(ns % 1000000000ull)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

#endif
