// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Known waits and known calls, for tests/e2e/test_events.c:
 *   events_wait sleep      runs 200 ms of CPU time in burn_cpu, then blocks 300 ms in
 *                          block_long, 150 ms in block_short, 300 ms in block_long
 *   events_wait malloc N [MS [HOLD]]  calls malloc N times from alloc_leaf <- alloc_mid <- main
 *                          (after sleeping MS milliseconds; alive HOLD ms after)
 *   events_wait mallocfor MS   the same calls for MS milliseconds of wall time, then prints
 *                          on stderr how many and how long: "mallocfor: N calls in NS ns"
 *   events_wait open N     opens /dev/null N times from open_leaf <- main
 *   events_wait usdt N     fires the USDT probe cfiprof_test:tick N times from usdt_leaf <- main
 *   events_wait faults N   runs 200 ms of CPU time in burn_cpu, then touches N fresh pages
 *                          from fault_leaf (N page faults); prints "faults: NS ns on-CPU",
 *                          the process's CPU time
 *   events_wait churn N    blocks 300 ms in block_long, then N times ~100-150 us in block_tiny, and
 *                          prints on stderr how long it was off the CPU meanwhile (wall time
 *                          less its CPU time) and how many blocks took 100 ms or more,
 *                          with their waits for a CPU and without (schedstat's):
 *                          "churn: off-CPU NS ns in N blocks, L of 100 ms or more, S of
 *                          them without their waits for a CPU; block_long off-CPU NS ns"
 *   events_wait unseen FILE block|exit   prints "unseen: ready PID" on stderr, runs on the
 *                          CPU until FILE exists (no syscall that blocks), then blocks
 *                          150 ms in block_short (block) or exits (exit), and prints how long
 *                          it was off the CPU from the ready line: "unseen: off-CPU NS ns
 *                          before the block, NS ns in it, NS ns of them waiting for a CPU"
 *                          (its schedstat; -1 unreadable) (exit: before the exit call)
 * The sleep mode prints what it measured the same way: "sleep: burn_cpu NS ns on-CPU,
 * block_long NS ns off-CPU, block_short NS ns off-CPU; waiting for a CPU: block_long NS ns,
 * block_short NS ns" (of the off-CPU times, its schedstat's; -1 unreadable).
 * No function ends in a tail call, so each frame stays on the stack.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
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

__attribute__((noinline)) void block_tiny(void)
{
	struct timespec ts = {0, 100000};

	nanosleep(&ts, NULL);
	sink++;
}

static long long ns_of(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/*
 * Off the CPU during stmt: the wall time less the thread's CPU time (blocked,
 * then waiting for a CPU).  A macro, not a function: an inlined one is a
 * frame of its own in the stacks (DWARF inline info), between the caller
 * and the block.
 */
/* this thread's time waiting for a CPU so far in ns (the kernel's schedstat), -1 unreadable */
static long long cpu_wait_ns(void)
{
	long long run = -1, wait = -1;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (f && fscanf(f, "%lld %lld", &run, &wait) != 2)
		wait = -1;
	if (f)
		fclose(f);
	return wait;
}

#define OFF_CPU_NS(stmt, out)                                                                      \
	do {                                                                                       \
		long long w_ = ns_of(CLOCK_MONOTONIC), c_ = ns_of(CLOCK_THREAD_CPUTIME_ID);        \
		stmt;                                                                              \
		(out) = ns_of(CLOCK_MONOTONIC) - w_ - (ns_of(CLOCK_THREAD_CPUTIME_ID) - c_);       \
	} while (0)

/* OFF_CPU_NS, and the time of it waiting for a CPU (read outside it) added to wait */
#define OFF_CPU_WAIT_NS(stmt, out, wait)                                                           \
	do {                                                                                       \
		long long q_ = cpu_wait_ns(), off_;                                                \
		OFF_CPU_NS(stmt, off_);                                                            \
		(out) += off_;                                                                     \
		(wait) += cpu_wait_ns() - q_;                                                      \
	} while (0)

/*
 * A block's off-CPU time as measured here holds any preemption around it,
 * which is no block: one is surely 100 ms or more only if it is without any
 * wait for a CPU (schedstat's, read outside the measure, so that count is low).
 */
static void count_long(long long off, long long wait, bool waits_read, int *maybe, int *surely)
{
	*maybe += off >= 100000000LL;
	*surely += waits_read && off - wait >= 100000000LL;
}

__attribute__((noinline)) static void churn(int n)
{
	long long wall = ns_of(CLOCK_MONOTONIC), cpu = ns_of(CLOCK_THREAD_CPUTIME_ID);
	long long off, off_long = 0, wait;
	int i, maybe = 0, surely = 0;
	bool waits_read = cpu_wait_ns() >= 0;

	/* the whole time off the CPU, preemptions between the blocks too; each block's apart */
	wait = 0;
	OFF_CPU_WAIT_NS(block_long(), off_long, wait);
	count_long(off_long, wait, waits_read, &maybe, &surely);
	for (i = 0; i < n; i++) {
		off = wait = 0;
		OFF_CPU_WAIT_NS(block_tiny(), off, wait);
		count_long(off, wait, waits_read, &maybe, &surely);
	}
	wall = ns_of(CLOCK_MONOTONIC) - wall;
	cpu = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu;
	fprintf(stderr,
		"churn: off-CPU %lld ns in %d blocks, %d of 100 ms or more, %d of them without "
		"their waits for a CPU; block_long off-CPU %lld ns\n",
		wall - cpu, n + 1, maybe, surely, off_long);
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

/* Each page written once: a fault each (anonymous memory, not populated by mmap). */
__attribute__((noinline)) void fault_leaf(long pages)
{
	long i, psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (i = 0; i < pages; i++)
		p[i * psz] = 1;
	munmap(p, (size_t)(pages * psz));
	sink++;
}

__attribute__((noinline)) void usdt_leaf(int i)
{
	/* no semaphore: the probe fires in every process, as -a attaches it */
	DTRACE_PROBE1(cfiprof_test, tick, i);
	sink++;
}

static long long non_negative(long long v)
{
	return v < 0 ? 0 : v;
}

/*
 * A thread a test can catch running: the test writes a block into its
 * off-CPU entry meanwhile, as if the block's switch-in had reached no
 * program (tests/e2e/test_events.c offcpu_end_unseen).
 */
__attribute__((noinline)) static void unseen(const char *file, bool block)
{
	long long w0, c0, w1, c1, w2, c2, q1, q2;

	fprintf(stderr, "unseen: ready %d\n", (int)getpid());
	w0 = ns_of(CLOCK_MONOTONIC);
	c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	while (access(file, F_OK))
		sink++;
	/* the waits for a CPU around the block's measure (read outside it) */
	q1 = cpu_wait_ns();
	/* one pair of reads ends the spin's measure and starts the block's: nothing between (a
	 * difference under the clocks' resolution can be below 0: printed as 0) */
	w1 = ns_of(CLOCK_MONOTONIC);
	c1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	if (!block) {
		fprintf(stderr, "unseen: off-CPU %lld ns before the exit\n",
			non_negative(w1 - w0 - (c1 - c0)));
		_exit(0);
	}
	block_short();
	w2 = ns_of(CLOCK_MONOTONIC);
	c2 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	q2 = cpu_wait_ns();
	fprintf(stderr,
		"unseen: off-CPU %lld ns before the block, %lld ns in it, %lld ns of them "
		"waiting for a CPU\n",
		non_negative(w1 - w0 - (c1 - c0)), non_negative(w2 - w1 - (c2 - c1)),
		q1 < 0 || q2 < 0 ? -1 : q2 - q1);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 100, i;

	if (argc > 1 && !strcmp(argv[1], "malloc")) {
		if (argc > 3)
			block_for(atol(argv[3]));
		alloc_mid(n);
		/* alive for HOLD ms more: its samples finished while it still runs */
		if (argc > 4)
			block_for(atol(argv[4]));
	} else if (argc > 1 && !strcmp(argv[1], "mallocfor")) {
		/*
		 * Bounded by time, not calls: a probe hit costs several times more on some
		 * machines than others, and the test bounds the share by the run time.
		 */
		long long t0 = ns_of(CLOCK_MONOTONIC), ns;
		long calls = 0;

		do {
			alloc_mid(1000);
			calls += 1000;
			ns = ns_of(CLOCK_MONOTONIC) - t0;
		} while (ns < n * 1000000LL);
		fprintf(stderr, "mallocfor: %ld calls in %lld ns\n", calls, ns);
	} else if (argc > 1 && !strcmp(argv[1], "usdt")) {
		for (i = 0; i < n; i++)
			usdt_leaf(i);
	} else if (argc > 3 && !strcmp(argv[1], "unseen")) {
		unseen(argv[2], !strcmp(argv[3], "block"));
	} else if (argc > 1 && !strcmp(argv[1], "churn")) {
		churn(n);
	} else if (argc > 1 && !strcmp(argv[1], "faults")) {
		burn_cpu(200);
		fault_leaf(n);
		/* how long the faults took is the machine's: the test's bound is this */
		fprintf(stderr, "faults: %lld ns on-CPU\n", ns_of(CLOCK_PROCESS_CPUTIME_ID));
	} else if (argc > 1 && !strcmp(argv[1], "open")) {
		for (i = 0; i < n; i++)
			open_leaf();
	} else {
		long long cpu = ns_of(CLOCK_THREAD_CPUTIME_ID), off_long = 0, off_short = 0;
		long long wait_long = 0, wait_short = 0;

		burn_cpu(200);
		cpu = ns_of(CLOCK_THREAD_CPUTIME_ID) - cpu;
		OFF_CPU_WAIT_NS(block_long(), off_long, wait_long);
		OFF_CPU_WAIT_NS(block_short(), off_short, wait_short);
		OFF_CPU_WAIT_NS(block_long(), off_long, wait_long);
		fprintf(stderr,
			"sleep: burn_cpu %lld ns on-CPU, block_long %lld ns off-CPU, block_short "
			"%lld ns off-CPU; waiting for a CPU: block_long %lld ns, block_short %lld "
			"ns\n",
			cpu, off_long, off_short, cpu_wait_ns() < 0 ? -1 : wait_long,
			cpu_wait_ns() < 0 ? -1 : wait_short);
	}
	sink++;
	return 0;
}
