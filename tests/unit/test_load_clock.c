// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A load's time budget (user/track/load_clock.h): the time its thread waited
 * for a CPU is not the load's.  The oracle for that wait is the kernel's own
 * count, read here from /proc/self/task/TID/schedstat.
 *  - shared_cpu: this thread and a busy thread pinned to one CPU; the budget
 *    is past only once the wall time less the wait is over it (before, the
 *    wall time alone cut every load of a loader that shared its CPU), and
 *    never later than the cap of LOAD_CLOCK_STRETCH_MAX budgets.
 *  - blocked: time asleep (a file that stalls its reads) is the load's own:
 *    past at once after sleeping twice the budget.
 *  - no_fds: a count that could not be read at the start (no descriptor
 *    left) moves nothing once read: it holds the thread's older waits.
 *  - adopted: a build worker's copy keeps its load's deadline and cap.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/lib/harness.h"
#include "user/track/load_clock.h"

#define BUDGET_NS (100ull * 1000 * 1000)

static atomic_bool stop;

/* this thread's wait for a CPU in ns, as the kernel counts it (-1: unreadable) */
static int64_t kernel_wait_ns(void)
{
	char path[64];
	unsigned long long run, wait;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	return ok ? (int64_t)wait : -1;
}

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *busy(void *arg)
{
	volatile uint64_t n = 0;

	pin_to((int)(intptr_t)arg);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		n++;
	return NULL;
}

/* spins in steps of about 100 us of work until the clock is past; the wall ns it took */
static uint64_t spin_until_past(struct load_clock *c)
{
	uint64_t t0 = mono_ns();
	volatile uint64_t n = 0;

	while (!load_clock_past(c))
		for (int i = 0; i < 20000; i++)
			n++;
	return mono_ns() - t0;
}

static void test_shared_cpu(void)
{
	int cpu = sched_getcpu();
	struct load_clock c;
	pthread_t hog;
	int64_t w0, w1;
	uint64_t wall;

	CHECK(cpu >= 0 && pin_to(cpu) == 0, "pinned to CPU %d", cpu);
	atomic_store(&stop, false);
	CHECK(pthread_create(&hog, NULL, busy, (void *)(intptr_t)cpu) == 0, "a busy thread");
	/* the busy thread running first: each of the two then waits while the other runs */
	usleep(20000);
	w0 = kernel_wait_ns();
	load_clock_start(&c, BUDGET_NS);
	load_clock_rebase(&c);
	wall = spin_until_past(&c);
	w1 = kernel_wait_ns();
	atomic_store(&stop, true);
	pthread_join(hog, NULL);
	printf("  budget %.0f ms: past after %.0f ms of the wall, %.0f ms of it waiting for a "
	       "CPU\n",
	       BUDGET_NS / 1e6, wall / 1e6, (double)(w1 - w0) / 1e6);
	/* half of one CPU at best: the wait is of the order of the budget; a quarter is a loose floor */
	CHECK(w0 >= 0 && w1 - w0 >= (int64_t)(BUDGET_NS / 4),
	      "waited %.0f ms for a CPU beside a busy thread (the kernel keeps no schedstat?)",
	      (double)(w1 - w0) / 1e6);
	/*
	 * wall - wait is the time this thread ran (or slept): at least the
	 * budget, unless the cap came first (a share of the CPU under 1/8)
	 */
	CHECK(wall >= (uint64_t)(w1 - w0) + BUDGET_NS ||
		  wall >= LOAD_CLOCK_STRETCH_MAX * BUDGET_NS,
	      "past after %.0f ms of the wall, %.0f ms of them waiting: %.0f ms of its own "
	      "(budget %.0f)",
	      wall / 1e6, (double)(w1 - w0) / 1e6, (double)(wall - (uint64_t)(w1 - w0)) / 1e6,
	      BUDGET_NS / 1e6);
	/* the deadline moves on by the waits, never past the cap */
	CHECK(c.deadline <= c.latest && c.latest - c.deadline <= LOAD_CLOCK_STRETCH_MAX * BUDGET_NS,
	      "deadline %llu past its cap %llu", (unsigned long long)c.deadline,
	      (unsigned long long)c.latest);
}

static void test_blocked(void)
{
	struct load_clock c;

	load_clock_start(&c, BUDGET_NS);
	load_clock_rebase(&c);
	CHECK(!load_clock_past(&c), "past at its start");
	usleep(2 * BUDGET_NS / 1000);
	CHECK(load_clock_past(&c), "not past after sleeping twice its budget");
}

/* shares its CPU with a busy thread until the kernel counts ns more of waiting */
static bool wait_for_cpu(int64_t ns)
{
	int cpu = sched_getcpu();
	int64_t w0 = kernel_wait_ns(), w = w0;
	double t0 = mono_sec();
	pthread_t hog;
	volatile uint64_t n = 0;

	if (cpu < 0 || pin_to(cpu) || w0 < 0)
		return false;
	atomic_store(&stop, false);
	if (pthread_create(&hog, NULL, busy, (void *)(intptr_t)cpu))
		return false;
	while (w >= 0 && w - w0 < ns && mono_sec() - t0 < 60)
		for (int i = 0; i < 20000; i++, w = i == 19999 ? kernel_wait_ns() : w)
			n++;
	atomic_store(&stop, true);
	pthread_join(hog, NULL);
	return w - w0 >= ns;
}

/*
 * No file descriptor left when the load began (a process mapping thousands
 * of files; the agent at its limit): the kernel's count is read only later,
 * and holds all this thread waited before the load.  It must move nothing:
 * past after sleeping twice the budget.  (It once moved the deadline by the
 * thread's whole history of waits: a load went on past its time.)
 */
static void test_no_fds(void)
{
	struct rlimit old, low;
	struct load_clock c;
	int fds[64], n = 0;

	CHECK(wait_for_cpu(4 * (int64_t)BUDGET_NS), "this thread never waited for a CPU");
	CHECK(!getrlimit(RLIMIT_NOFILE, &old), "getrlimit");
	low = old;
	low.rlim_cur = 64;
	CHECK(!setrlimit(RLIMIT_NOFILE, &low), "setrlimit");
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	CHECK(fds[n < 64 ? n : 63] < 0 || n == 64, "no descriptor left");
	load_clock_start(&c, BUDGET_NS);
	load_clock_rebase(&c);
	CHECK(!c.wait_known, "the count read with no descriptor left");
	while (n > 0)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &old);
	usleep(2 * BUDGET_NS / 1000);
	CHECK(load_clock_past(&c), "not past after sleeping twice its budget (deadline %.0f ms on)",
	      ((double)c.deadline - (double)mono_ns()) / 1e6);
}

static void test_adopted(void)
{
	struct load_clock c, w;

	load_clock_start(&c, BUDGET_NS);
	load_clock_rebase(&c);
	load_clock_adopt(&w, &c);
	CHECK(w.deadline == c.deadline && w.latest == c.latest && w.waited == 0 && w.wait_known,
	      "a worker's copy: deadline %+lld ns, cap %+lld ns, waited %llu",
	      (long long)(w.deadline - c.deadline), (long long)(w.latest - c.latest),
	      (unsigned long long)w.waited);
	CHECK(c.latest - c.deadline == (LOAD_CLOCK_STRETCH_MAX - 1) * BUDGET_NS,
	      "the cap %llu ns past the deadline", (unsigned long long)(c.latest - c.deadline));
}

int main(void)
{
	RUN_TEST(test_blocked);
	RUN_TEST(test_adopted);
	RUN_TEST(test_shared_cpu);
	RUN_TEST(test_no_fds);
	return HARNESS_DONE();
}
