// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The history's habit (issue 27): every commit since it began has a subject
 * of at most 72 characters of the form "area: what changed", so that git log
 * --oneline reads as a list of changes.  Merges are not checked (git names
 * them).  .gitmessage is the template; `git config commit.template
 * .gitmessage` uses it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

/* the last commit before the habit: its subjects were evidence, not a list */
#define HABIT_BASE  "0f807c4"
#define SUBJECT_MAX 72

/* "area: what": an area of path-like words, then ": " and the change */
static bool subject_ok(const char *s)
{
	size_t area =
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,+- ");

	return strlen(s) <= SUBJECT_MAX && area > 0 && s[area] == ':' && s[area + 1] == ' ' &&
	       s[area + 2] && s[area + 2] != ' ';
}

static void test_subjects(void)
{
	char line[4096];
	int n = 0, bad = 0;
	FILE *p;

	if (system("git rev-parse --is-inside-work-tree >/dev/null 2>&1") != 0) {
		/* a tarball has no history to hold to the habit */
		printf("history: not a git checkout, no subjects to check\n");
		return;
	}
	if (system("git cat-file -e " HABIT_BASE "^{commit} 2>/dev/null") != 0) {
		/* a shallow clone: which of its commits came after the base cannot be told */
		printf("history: %s is not in this clone, no subjects to check\n", HABIT_BASE);
		return;
	}
	p = popen("git log --no-merges --format=%s " HABIT_BASE "..HEAD", "r");
	CHECK(p != NULL, "git log");
	while (p && fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		n++;
		if (!subject_ok(line) && bad++ < 5)
			CHECK(
			    0,
			    "commit subject not 'area: what changed' in <= %d characters (%zu): %s",
			    SUBJECT_MAX, strlen(line), line);
	}
	if (p)
		CHECK(pclose(p) == 0, "git log failed");
	printf("history: %d subjects since %s, %d not 'area: what' within %d characters\n", n,
	       HABIT_BASE, bad, SUBJECT_MAX);
	CHECK(bad == 0, "%d subjects break the habit", bad);
}

/* The rule itself, on subjects it must take and refuse. */
static void test_rule(void)
{
	CHECK(subject_ok("track, bpf: recover the unlanded stop"), "two areas");
	CHECK(subject_ok("tests/run.sh: unit suites side by side"), "a path");
	CHECK(!subject_ok("Review: test_deferred_queue's two no-mapping cases share "
			  "add_before_mapped (a sample queued and run at a load)"),
	      "over 72 characters");
	CHECK(!subject_ok("Resumed loads run only when no other work is queued"), "no area");
	CHECK(!subject_ok("docs:no space"), "no space after the colon");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_rule);
	RUN_TEST(test_subjects);
	return HARNESS_DONE();
}
