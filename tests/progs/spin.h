/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the test programs: spin until argv[1] seconds (default 30) have
 * passed, then let the whole chain return so the program exits 0.  The clock
 * is read rarely so that nearly every sample lands in the leaf itself.
 * "0.5c" is 0.5 s of the process's own CPU time, not of the wall: a test
 * then knows how many cpu-clock samples to expect however busy the machine.
 */
#ifndef SPIN_H
#define SPIN_H

#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone, used))

static double spin_deadline;
static clockid_t spin_clock = CLOCK_MONOTONIC;

static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(spin_clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The seconds of arg ("0.5", or "0.5c" for the process's CPU time: the clock then spins on it). */
static double spin_secs(const char *arg)
{
	char *end = NULL;
	double secs = strtod(arg, &end);

	if (end && *end == 'c')
		spin_clock = CLOCK_PROCESS_CPUTIME_ID;
	return secs;
}

static void spin_init(int argc, char **argv)
{
	/* the clock first: spin_now must read the one the deadline is on */
	double secs = argc > 1 ? spin_secs(argv[1]) : 30.0;

	spin_deadline = spin_now() + secs;
}

/* Not inlined, so the leaf's own loop is the hot code. */
static NOINLINE int spin_done(void)
{
	return spin_now() >= spin_deadline;
}

/* The body of every leaf: a volatile counter, checked against the clock now and then. */
#define SPIN_LOOP(counter)                                                                         \
	do {                                                                                       \
		for (;;) {                                                                         \
			for (unsigned long spin_i = 0; spin_i < (1ul << 22); spin_i++)             \
				(counter)++;                                                       \
			if (spin_done())                                                           \
				break;                                                             \
		}                                                                                  \
	} while (0)

#endif
