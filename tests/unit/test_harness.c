// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The harness itself (tests/lib/harness.h): what a suite's exit status and
 * its "[ ok ]" / "[FAIL]" lines say, read from a child suite (this binary
 * again, told by CFIPROF_HARNESS_CASE which suite to be).
 *  - pass: one passing CHECK: [ ok ], exit 0;
 *  - fail: one failing CHECK: [FAIL] with its condition, exit 1;
 *  - empty: a test that ran no CHECK fails (it passed whatever the code did:
 *    how a test whose loop found no input once hid a broken feature);
 *  - crash: a test that dies fails, with the signal named;
 * and misses_allowed, the noise bound of share checks; and tests/run.sh,
 * which repeats a failed suite's first failed checks at the end of its
 * output (a CI log's tail says why, not only which).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/harness.h"

/* The child suites. */
static int child_suite(const char *which, int argc, char **argv)
{
	harness_init(argc, argv);
	if (!strcmp(which, "pass"))
		RUN_TEST_AS("one", CHECK(1 + 1 == 2, "arithmetic"));
	else if (!strcmp(which, "fail"))
		RUN_TEST_AS("one", CHECK(1 + 1 == 3, "arithmetic"));
	else if (!strcmp(which, "empty"))
		RUN_TEST_AS("one", {});
	else if (!strcmp(which, "crash"))
		RUN_TEST_AS("one", {
			CHECK(1, "before");
			raise(SIGSEGV);
		});
	return HARNESS_DONE();
}

/*
 * Runs this binary as the suite `which` (through runner, a command it is
 * given to, when not NULL): its exit status, its output into out.
 */
static int run_child(const char *which, const char *runner, char *out, size_t size)
{
	char cmd[512];
	FILE *p;
	size_t n = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "CFIPROF_HARNESS_CASE=%s %s%s/proc/%d/exe 2>&1", which,
		 runner ? runner : "", runner ? " " : "", getpid());
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < size && fgets(out + n, (int)(size - n), p))
		n += strlen(out + n);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void expect(const char *which, int status, const char *line, const char *also)
{
	char out[4096];
	int rc = run_child(which, NULL, out, sizeof(out));

	CHECK(rc == status && strstr(out, line) && (!also || strstr(out, also)),
	      "%s: exit %d (want %d), output wants '%s'%s%s:\n%s", which, rc, status, line,
	      also ? " and " : "", also ? also : "", out);
}

static void test_pass(void)
{
	expect("pass", 0, "[ ok ] one: 1 passed, 0 failed", "1 passed, 0 failed");
}

static void test_fail(void)
{
	expect("fail", 1, "[FAIL] one: 0 passed, 1 failed", "1 + 1 == 3");
}

static void test_empty(void)
{
	expect("empty", 1, "[FAIL] one: 0 passed, 1 failed", "no CHECK ran");
}

static void test_crash(void)
{
	expect("crash", 1, "[FAIL] one: 1 passed, 1 failed", "killed by signal 11");
}

/* run.sh's last lines: the failed check itself, then which suite to run again */
static void test_run_sh(void)
{
	char out[8192];
	int rc = run_child("fail", "tests/run.sh", out, sizeof(out));
	const char *why = strstr(out, "failed checks (the first 3 of each suite):\n"
				      "  exe: FAIL tests/unit/test_harness.c:");
	const char *which = strstr(out, "failed (run one again with tests/run.sh NAME:TEST):\n"
					"  exe:one\n");

	CHECK(rc == 1 && why && strstr(why, "1 + 1 == 3") && which && which > why &&
		  strstr(which, "0 passed, 1 failed"),
	      "run.sh of a failing suite: exit %d, output:\n%s", rc, out);
	rc = run_child("pass", "tests/run.sh", out, sizeof(out));
	CHECK(rc == 0 && !strstr(out, "failed checks") && strstr(out, "1 passed, 0 failed"),
	      "run.sh of a passing suite: exit %d, output:\n%s", rc, out);
}

/* misses_allowed: the binomial mean plus two standard deviations, worked by hand */
static void test_misses(void)
{
	CHECK(misses_allowed(604, 1000) == 2 && misses_allowed(194, 10000) == 3 &&
		  misses_allowed(4000, 10000) == 52 && misses_allowed(100000, 1000) == 120,
	      "misses allowed: %lu %lu %lu %lu", (unsigned long)misses_allowed(604, 1000),
	      (unsigned long)misses_allowed(194, 10000), (unsigned long)misses_allowed(4000, 10000),
	      (unsigned long)misses_allowed(100000, 1000));
}

int main(int argc, char **argv)
{
	const char *which = getenv("CFIPROF_HARNESS_CASE");

	if (which)
		return child_suite(which, argc, argv);
	harness_init(argc, argv);
	RUN_TEST(test_pass);
	RUN_TEST(test_fail);
	RUN_TEST(test_empty);
	RUN_TEST(test_crash);
	RUN_TEST(test_misses);
	RUN_TEST(test_run_sh);
	return HARNESS_DONE();
}
