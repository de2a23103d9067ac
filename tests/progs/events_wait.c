// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Known waits and known calls, for tests/e2e/test_events.c:
 *   events_wait sleep      runs 200 ms of CPU time in burn_cpu, then blocks 300 ms in
 *                          block_long, 150 ms in block_short, 300 ms in block_long
 *   events_wait malloc N [MS]  calls malloc N times from alloc_leaf <- alloc_mid <- main
 *                          (after sleeping MS milliseconds)
 *   events_wait open N     opens /dev/null N times from open_leaf <- main
 *   events_wait usdt N     fires the USDT probe cfiprof_test:tick N times from usdt_leaf <- main
 * No function ends in a tail call, so each frame stays on the stack.
 */
#include <fcntl.h>
#include <sys/sdt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void block_for(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) void block_long(void)
{
	block_for(300);
	sink++;
}

__attribute__((noinline)) void block_short(void)
{
	block_for(150);
	sink++;
}

__attribute__((noinline)) void burn_cpu(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		sink++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

__attribute__((noinline)) void alloc_leaf(void)
{
	char *p = malloc(64);

	sink += (long)(p != NULL);
	free(p);
}

__attribute__((noinline)) void alloc_mid(int n)
{
	int i;

	for (i = 0; i < n; i++)
		alloc_leaf();
	sink++;
}

__attribute__((noinline)) void open_leaf(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0)
		close(fd);
	sink++;
}

__attribute__((noinline)) void usdt_leaf(int i)
{
	/* no semaphore: the probe fires in every process, as -a attaches it */
	DTRACE_PROBE1(cfiprof_test, tick, i);
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 100, i;

	if (argc > 1 && !strcmp(argv[1], "malloc")) {
		if (argc > 3)
			block_for(atol(argv[3]));
		alloc_mid(n);
	} else if (argc > 1 && !strcmp(argv[1], "usdt")) {
		for (i = 0; i < n; i++)
			usdt_leaf(i);
	} else if (argc > 1 && !strcmp(argv[1], "open")) {
		for (i = 0; i < n; i++)
			open_leaf();
	} else {
		burn_cpu(200);
		block_long();
		block_short();
		block_long();
	}
	sink++;
	return 0;
}
