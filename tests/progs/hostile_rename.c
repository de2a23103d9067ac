// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that picks its own service name (tests/e2e/test_hostile_agent.c):
 *   hostile_rename SECONDS
 *       its thread renames itself (PR_SET_NAME) 1,000 times a second, a new
 *       name each time, spinning in between: every sample a new comm.
 *   hostile_rename SECONDS NAME
 *       names itself NAME once (a system service's, "nginx") and spins.
 * Prints "ready" on stdout once running.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10), next = now();
	volatile unsigned long spin = 0;
	unsigned long n = 0;
	char name[16];

	if (argc > 2 && prctl(PR_SET_NAME, argv[2]))
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (now() < end) {
		for (int i = 0; i < 1000; i++)
			spin++;
		if (argc > 2 || now() < next)
			continue;
		/* on a schedule, not a count: the rate holds whatever the CPU's speed */
		next += 0.001;
		snprintf(name, sizeof(name), "rn%lu", n++);
		prctl(PR_SET_NAME, name);
	}
	return 0;
}
