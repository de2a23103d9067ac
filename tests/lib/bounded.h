/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One step under test in a forked child bounded in memory and time: its
 * address space may grow by a given number of MB past what it holds when the
 * step starts (RLIMIT_AS), and an alarm kills it after a given time.  The
 * child reports a struct outcome, with its peak RSS (the kernel's VmHWM)
 * above its RSS at the start: an oracle independent of the code measured.
 * BUDGETS_UNBOUNDED=1 in the environment lifts both bounds (5 minutes
 * instead), to measure what an input costs.
 *
 * Under ASan the bound holds as well (its shadow is reserved before the
 * limit is set; its heap is mapped as it grows), given a small quarantine (freed
 * memory it holds counts) and malloc returning NULL instead of aborting: a
 * test including this header gets those ASan options.
 */
#ifndef CFIPROF_TESTS_BOUNDED_H
#define CFIPROF_TESTS_BOUNDED_H

#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"

/* read by ASan's runtime when the test is linked with it, never called otherwise */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16:allocator_may_return_null=1";
}

/* ---- one bounded run ---- */

/* What a case reports from its child. */
struct outcome {
	int rc;		 /* the case's return code (a cfi_err, a count, ...) */
	uint64_t val[4]; /* counters the case wants checked */
	double ms;	 /* time of the step under test */
	long peak_kb;	 /* peak RSS above what the child started with */
	bool timeout;	 /* killed by the alarm */
	bool crashed;	 /* died otherwise */
};

typedef void (*case_fn)(void *arg, struct outcome *o);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A "Name:   N kB" line of /proc/self/status, or -1. */
static long status_kb(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * Runs @fn in a child whose address space may grow by @as_mb beyond what it
 * holds when @fn starts (after @fn's own set-up, which it does before calling
 * bound_start) and which is killed after @secs seconds.
 */
static size_t cur_as_mb;

static void bound_start(void)
{
	struct rlimit rl;
	long vm = status_kb("VmSize");

	if (vm < 0 || getenv("BUDGETS_UNBOUNDED"))
		return;
	rl.rlim_cur = rl.rlim_max = ((rlim_t)vm << 10) + ((rlim_t)cur_as_mb << 20);
	if (setrlimit(RLIMIT_AS, &rl))
		perror("setrlimit");
}

static struct outcome run_bounded(const char *name, case_fn fn, void *arg, size_t as_mb,
				  unsigned int secs)
{
	struct outcome o = {0};
	int fds[2], status;
	pid_t pid;

	fflush(NULL);
	if (pipe(fds)) {
		perror("pipe");
		exit(2);
	}
	cur_as_mb = as_mb;
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		long rss0;

		/* what the parent freed stays resident: give it back so the peak is this case's */
		malloc_trim(0);
		rss0 = status_kb("VmRSS");

		close(fds[0]);
		alarm(getenv("BUDGETS_UNBOUNDED") ? 300 : secs);
		fn(arg, &o);
		o.peak_kb = status_kb("VmHWM") - rss0;
		if (write(fds[1], &o, sizeof(o)) != sizeof(o))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &o, sizeof(o)) != sizeof(o))
		memset(&o, 0, sizeof(o));
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		o.timeout = true;
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		o.crashed = true;
	printf(
	    "budgets: %s: %s, rc %d, %.1f ms, peak +%ld MB, counters %llu %llu %llu %llu\n", name,
	    o.timeout	? "TIMEOUT"
	    : o.crashed ? "CRASHED"
			: "done",
	    o.rc, o.ms, o.peak_kb >> 10, (unsigned long long)o.val[0], (unsigned long long)o.val[1],
	    (unsigned long long)o.val[2], (unsigned long long)o.val[3]);
	CHECK(!o.timeout, "%s: over %u s", name, secs);
	CHECK(!o.crashed, "%s: the child died (status 0x%x)", name, status);
	return o;
}

#endif
