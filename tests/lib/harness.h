/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The test harness: CHECKs grouped into named tests, each run in a process of
 * its own, and one line at the end, "N passed, M failed", that tests/run.sh sums.
 *
 *   CHECK(cond, fmt, ...)     a check; on failure prints "FAIL file:line: cond: message"
 *   RUN_TEST(test_foo)        runs test_foo() as the test named "foo"
 *   RUN_TEST_AS(name, stmt)   runs any statement as the test NAME (a runtime string)
 *   harness_init(argc, argv)  reads the test names to run (globs) and --list from argv
 *   harness_shared(size)      zeroed memory a test can write and main (or a later test) read
 *   return HARNESS_DONE();    prints the counts; non-zero exit status on any failure
 *
 * What counts: a CHECK site (file:line) once per named test, passed if every
 * evaluation passed, failed if any failed, so a CHECK in a loop over 780 files
 * is one check; its first HARNESS_SHOWN failure messages are printed, the rest
 * counted.  CHECKs outside any named test count as the test "main".
 *
 * Each named test runs in a forked child, so setup that later tests need stays
 * in main, before them; what a test computes for main or a later test goes
 * through harness_shared().  The child reports its sites through shared memory:
 * a crash, a signal, an early exit or the timeout (CFIPROF_TEST_TIMEOUT seconds,
 * default 900) is one more failure of that test, and the next test runs.  In a
 * process a test forks itself, CHECKs print but do not count (as before).
 *
 * Environment: CFIPROF_TESTS (names or globs, comma or space separated) selects
 * tests like argv does; CFIPROF_TEST_NOFORK=1 runs the tests in-process (for a
 * debugger).  harness_passed / harness_failed count evaluations in this process,
 * with the tests' added once they end: "if (!harness_failed)" still means "all
 * went well so far".
 */
#ifndef CFIPROF_HARNESS_H
#define CFIPROF_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * ASan's, when the test is linked with it: a test's object is compiled
 * without the sanitizers (the Makefile links it to the ASan tree as it is),
 * so whether they are there is asked at run time, of these weak references.
 */
void __asan_init(void) __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* linked with AddressSanitizer (make test's NAME[asan] builds) */
static inline bool harness_under_asan(void)
{
	return __asan_init != NULL;
}

#include "common/clock.h"

static int harness_passed, harness_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			harness_pass(__FILE__, __LINE__);                                          \
		} else if (harness_fail(__FILE__, __LINE__, #cond)) {                              \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define RUN_TEST_AS(name, stmt)                                                                    \
	do {                                                                                       \
		if (harness_begin(name)) {                                                         \
			stmt;                                                                      \
			harness_end();                                                             \
		}                                                                                  \
	} while (0)

#define RUN_TEST(fn) RUN_TEST_AS(harness_short_name(#fn), fn())

#define HARNESS_DONE() harness_done()

/* failure messages printed per site and test; the others are only counted */
/*
 * The fewest samples a share check ("95% of the samples are X") is judged
 * on, whatever the machine's speed gave: at a working run's share of 99.5%
 * the chance that 50 samples show under 95% (3 or more misses) is 0.2%; a
 * broken feature's share is near 0 at any count.  A count the run could not reach on
 * a loaded machine (">= 300") is a check of the machine, not of cfiprof.
 */
#define ENOUGH_TO_JUDGE 50

/*
 * The most misses n samples may show of a feature whose miss rate is
 * per_million / 10^6: the binomial count's mean plus two standard
 * deviations (its variance is about its mean), floored.  A share checked
 * as a fixed fraction of few samples fails the product at its own target
 * (99.9% of 604 samples allows no miss, 0.6 expected: 1 run in 8 shows 2);
 * a regression to ten times the rate still fails (6 misses expected of 604).
 */
static inline uint64_t misses_allowed(uint64_t n, uint64_t per_million)
{
	uint64_t mean_x1m = n * per_million, sd = 0;

	/* sqrt(mean + 1), floored, for the noise */
	while ((sd + 1) * (sd + 1) <= mean_x1m / 1000000 + 1)
		sd++;
	return mean_x1m / 1000000 + 2 * sd;
}

#define HARNESS_SHOWN	    5
#define HARNESS_SITES	    4096 /* distinct CHECK sites per test: a power of two */
#define HARNESS_MAX_FILTERS 32

struct harness_site {
	const char *file; /* __FILE__: the same address in every forked process */
	int line;
	unsigned long passed, failed;
};

/* One test's sites, in memory shared with the test's process. */
struct harness_results {
	struct harness_site sites[HARNESS_SITES]; /* open addressing on (file, line) */
	int nr_sites;
	unsigned long dropped; /* evaluations past a full table */
	const char *last_file; /* the last check, for a crash report */
	int last_line;
	bool finished; /* the test returned */
};

static struct {
	bool ready, list, nofork;
	int list_fd;
	double timeout;
	const char *filters[HARNESS_MAX_FILTERS];
	bool filter_hit[HARNESS_MAX_FILTERS];
	int nr_filters;
	struct harness_results *main_res; /* checks outside any named test */
	struct harness_results *test_res; /* the running test's */
	struct harness_results *res;	  /* where checks go now; NULL: not counted */
	int depth;			  /* nested named tests run inline */
	bool in_child;
	char test[128];
	double t0;
	unsigned long sites_passed, sites_failed;
	volatile int lock;
} harness;

/* String equality for checks: NULL equals nothing. */
static inline bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* Zeroed memory that stays shared with the tests forked after this call. */
static inline void *harness_shared(size_t size)
{
	void *p =
	    mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("harness: mmap");
		abort();
	}
	return p;
}

/* In a process a test forks for itself, checks print as before but count nowhere. */
static inline void harness_forked(void)
{
	harness.res = NULL;
	harness.lock = 0;
}

static inline void harness_add_filters(char *list)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (harness.nr_filters == HARNESS_MAX_FILTERS) {
			fprintf(stderr, "harness: more than %d test names\n", HARNESS_MAX_FILTERS);
			exit(2);
		}
		harness.filters[harness.nr_filters++] = tok;
	}
}

static inline void harness_setup(void)
{
	const char *env;

	if (harness.ready)
		return;
	harness.ready = true;
	harness.timeout = 900;
	env = getenv("CFIPROF_TEST_TIMEOUT");
	if (env && atof(env) > 0)
		harness.timeout = atof(env);
	env = getenv("CFIPROF_TEST_NOFORK");
	harness.nofork = env && *env && strcmp(env, "0");
	env = getenv("CFIPROF_TESTS");
	if (env && *env)
		harness_add_filters(strdup(env));
	harness.main_res = harness_shared(sizeof(*harness.main_res));
	harness.test_res = harness_shared(sizeof(*harness.test_res));
	harness.res = harness.main_res;
	pthread_atfork(NULL, NULL, harness_forked);
	/*
	 * Signals the tests send are not ignored in what they start, whatever the
	 * suite was started under (nohup ignores SIGHUP; a shell's background job
	 * SIGINT): an ignored disposition is inherited across exec.
	 */
	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	/* a crash must not swallow the progress printed before it */
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/*
 * Test names (or globs) to run, and --list: every name, nothing run (main's own
 * setup still runs).  Binaries that read argv themselves do not call this;
 * CFIPROF_TESTS selects their tests.
 */
static inline void harness_init(int argc, char **argv)
{
	harness_setup();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list")) {
			/* the names alone on stdout: what main prints goes to /dev/null */
			int null = open("/dev/null", O_WRONLY);

			fflush(stdout);
			harness.list_fd = dup(1);
			if (null < 0 || harness.list_fd < 0 || dup2(null, 1) < 0) {
				perror("harness: --list");
				exit(2);
			}
			close(null);
			harness.list = true;
		} else if (argv[i][0] == '-') {
			fprintf(stderr,
				"usage: %s [--list] [TEST...]\n"
				"  TEST: a test name or glob (see --list); none: every test\n",
				argv[0]);
			exit(2);
		} else {
			harness_add_filters(argv[i]);
		}
	}
}

/* False when test names were given: a check over every test's results cannot hold. */
static inline bool harness_running_all(void)
{
	harness_setup();
	return !harness.nr_filters && !harness.list;
}

static inline const char *harness_short_name(const char *fn)
{
	if (!strncmp(fn, "test_", 5))
		return fn + 5;
	if (!strncmp(fn, "check_", 6))
		return fn + 6;
	return fn;
}

static inline struct harness_site *harness_site(const char *file, int line)
{
	struct harness_results *r = harness.res;
	uintptr_t h = ((uintptr_t)file >> 3) * 31 + (uintptr_t)line * 2654435761u;

	for (unsigned int i = 0; i < HARNESS_SITES; i++) {
		struct harness_site *s = &r->sites[(h + i) & (HARNESS_SITES - 1)];

		if (s->file == file && s->line == line)
			return s;
		if (!s->file) {
			if (r->nr_sites == HARNESS_SITES - 1)
				return NULL;
			s->file = file;
			s->line = line;
			r->nr_sites++;
			return s;
		}
	}
	return NULL;
}

/* Records one evaluation; returns how many times the site has failed so far. */
static inline unsigned long harness_record(const char *file, int line, bool ok)
{
	struct harness_site *s;
	unsigned long failed = 0;

	if (!harness.ready)
		harness_setup();
	if (!harness.res)
		return ok ? 0 : 1;
	while (__atomic_test_and_set(&harness.lock, __ATOMIC_ACQUIRE))
		;
	s = harness_site(file, line);
	harness.res->last_file = file;
	harness.res->last_line = line;
	if (!s)
		harness.res->dropped++;
	else if (ok)
		s->passed++;
	else
		failed = ++s->failed;
	__atomic_clear(&harness.lock, __ATOMIC_RELEASE);
	return s ? failed : (ok ? 0 : 1);
}

static inline void harness_pass(const char *file, int line)
{
	harness_passed++;
	harness_record(file, line, true);
}

/* True when the failure is to be printed: the site's first HARNESS_SHOWN. */
static inline bool harness_fail(const char *file, int line, const char *cond)
{
	harness_failed++;
	if (harness_record(file, line, false) > HARNESS_SHOWN)
		return false;
	fprintf(stderr, "FAIL %s:%d: %s: ", file, line, cond);
	return true;
}

/* Folds the sites of r into the totals and prints the test's line; extra: crash failures. */
static inline void harness_tally(const char *name, struct harness_results *r, double secs,
				 int extra, const char *why)
{
	unsigned long passed = 0, failed = (unsigned long)extra;

	for (int i = 0; i < HARNESS_SITES; i++) {
		const struct harness_site *s = &r->sites[i];

		if (!s->file)
			continue;
		if (!s->failed) {
			passed++;
			continue;
		}
		failed++;
		if (s->failed > HARNESS_SHOWN)
			fprintf(stderr, "FAIL %s:%d: %lu more failures not shown (%lu passed)\n",
				s->file, s->line, s->failed - HARNESS_SHOWN, s->passed);
	}
	if (r->dropped) {
		fprintf(stderr, "harness: %s: more than %d CHECK sites, %lu checks not counted\n",
			name, HARNESS_SITES - 1, r->dropped);
		failed++;
	}
	/* a test that checked nothing passes whatever the code does */
	if (!passed && !failed) {
		fprintf(stderr, "harness: %s: no CHECK ran\n", name);
		failed++;
	}
	harness.sites_passed += passed;
	harness.sites_failed += failed;
	printf("[%s] %s: %lu passed, %lu failed (%.2f s)%s%s\n", failed ? "FAIL" : " ok ", name,
	       passed, failed, secs, why ? ": " : "", why ? why : "");
	fflush(stdout);
}

static inline bool harness_selected(const char *name)
{
	bool hit = !harness.nr_filters;

	for (int i = 0; i < harness.nr_filters; i++) {
		if (!fnmatch(harness.filters[i], name, 0)) {
			harness.filter_hit[i] = true;
			hit = true;
		}
	}
	return hit;
}

/* Waits for the test's process, killing it past the timeout; a wait status, or -1. */
static inline int harness_wait(pid_t pid, bool *timed_out)
{
	double deadline = mono_sec() + harness.timeout;
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	useconds_t nap = 1000;
	int status;

	*timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		double left = deadline - mono_sec();

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (left <= 0) {
			*timed_out = true;
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		/* a pidfd wakes us when the test ends; without one (before 5.3), poll */
		if (pfd >= 0) {
			poll(&(struct pollfd){.fd = pfd, .events = POLLIN}, 1,
			     left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
		} else {
			usleep(nap);
			if (nap < 50000)
				nap *= 2;
		}
	}
	if (pfd >= 0)
		close(pfd);
	return status;
}

/*
 * Starts the test NAME: true where its body is to run (the forked child, or
 * in-process), false in main once the child is done or when NAME is not selected.
 */
static inline bool harness_begin(const char *name)
{
	char why[256] = "";
	bool timed_out;
	int status, subreaper = 0;
	pid_t pid;

	harness_setup();
	if (harness.depth) {
		/* a named test inside a named test: part of the outer one */
		harness.depth++;
		return true;
	}
	if (harness.list) {
		dprintf(harness.list_fd, "%s\n", name);
		return false;
	}
	if (!harness_selected(name))
		return false;
	snprintf(harness.test, sizeof(harness.test), "%s", name);
	memset(harness.test_res, 0, sizeof(*harness.test_res));
	harness.t0 = mono_sec();
	harness.depth = 1;
	fflush(stdout);
	fflush(stderr);
	pid = harness.nofork ? 0 : fork();
	if (pid == 0 || pid < 0) {
		if (pid < 0)
			fprintf(stderr, "harness: fork: %s: %s runs in-process\n", strerror(errno),
				name);
		harness.in_child = !harness.nofork && pid == 0;
		if (harness.in_child) {
			/* the orphans of what the test starts come back to it, as they did to main
			 */
			if (!prctl(PR_GET_CHILD_SUBREAPER, &subreaper) && subreaper)
				prctl(PR_SET_CHILD_SUBREAPER, 1);
		}
		harness.res = harness.test_res;
		harness.lock = 0;
		return true;
	}
	status = harness_wait(pid, &timed_out);
	harness.depth = 0;
	if (timed_out)
		snprintf(why, sizeof(why), "killed after the %.0f s timeout", harness.timeout);
	else if (status == -1)
		snprintf(why, sizeof(why), "lost: %s", strerror(errno));
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) || !harness.test_res->finished)
		snprintf(why, sizeof(why), "exit status %d before its end", WEXITSTATUS(status));
	if (why[0] && harness.test_res->last_file)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; last check %s:%d",
			 harness.test_res->last_file, harness.test_res->last_line);
	for (int i = 0; i < HARNESS_SITES; i++) {
		harness_passed += (int)harness.test_res->sites[i].passed;
		harness_failed += (int)harness.test_res->sites[i].failed;
	}
	harness_failed += why[0] != 0;
	harness_tally(name, harness.test_res, mono_sec() - harness.t0, why[0] != 0,
		      why[0] ? why : NULL);
	return false;
}

/* Ends the running test: its process exits, or (in-process) main takes over again. */
static inline void harness_end(void)
{
	if (--harness.depth)
		return;
	/* the child leaves with _exit: LeakSanitizer looks at what this test left */
	if (harness.in_child && __lsan_do_recoverable_leak_check &&
	    __lsan_do_recoverable_leak_check())
		CHECK(0, "LeakSanitizer: %s leaked memory (report above)", harness.test);
	harness.test_res->finished = true;
	fflush(stdout);
	fflush(stderr);
	if (harness.in_child)
		_exit(0); /* not exit(): main's atexit handlers are main's */
	harness.res = harness.main_res;
	harness_tally(harness.test, harness.test_res, mono_sec() - harness.t0, 0, NULL);
}

/* The last line: distinct sites of every test (and main), plus crashes. */
static inline int harness_done(void)
{
	harness_setup();
	if (harness.list)
		return 0;
	for (int i = 0; i < harness.nr_filters; i++) {
		if (!harness.filter_hit[i]) {
			fprintf(stderr, "FAIL no test named '%s' here (see --list)\n",
				harness.filters[i]);
			harness.sites_failed++;
			harness_failed++;
		}
	}
	if (harness.main_res->nr_sites || harness.main_res->dropped)
		harness_tally("main", harness.main_res, 0, 0, NULL);
	printf("%lu passed, %lu failed\n", harness.sites_passed, harness.sites_failed);
	fflush(stdout);
	return harness.sites_failed ? 1 : 0;
}

#endif
