/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the test programs: spin until argv[1] seconds (default 30) have
 * passed, then let the whole chain return so the program exits 0.  The clock
 * is read rarely so that nearly every sample lands in the leaf itself.
 */
#ifndef SPIN_H
#define SPIN_H

#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone, used))

static double spin_deadline;

static double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_init(int argc, char **argv)
{
	spin_deadline = spin_now() + (argc > 1 ? atof(argv[1]) : 30.0);
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
