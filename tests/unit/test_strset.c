// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * common/strset: one copy per distinct string, stable across growth (the
 * profile and the source-line answers keep the pointers), long strings and
 * the empty string kept, and a freed set usable again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strset.h"
#include "tests/lib/harness.h"

#define N 20000

static void test_once_each(void)
{
	static const char *first[N];
	struct strset set = {0};
	char buf[64];
	int i, bad = 0;

	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "name%d", i);
		first[i] = strset_intern(&set, buf);
		bad += !first[i] || strcmp(first[i], buf) || first[i] == buf;
	}
	CHECK(bad == 0, "%d of %d strings not copied", bad, N);
	CHECK(set.nr == N, "%lu strings kept for %d distinct", (unsigned long)set.nr, N);
	/* after the slots doubled many times, the same pointers come back */
	for (i = bad = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "name%d", i);
		bad += strset_intern(&set, buf) != first[i];
	}
	CHECK(bad == 0, "%d of %d strings interned twice", bad, N);
	CHECK(set.nr == N, "%lu strings after interning them again", (unsigned long)set.nr);
	CHECK(set.bytes >= N * 6, "%lu bytes counted for %d copies", (unsigned long)set.bytes, N);
	strset_free(&set);
	CHECK(set.nr == 0 && set.cap == 0 && set.bytes == 0, "a freed set keeps %lu strings",
	      (unsigned long)set.nr);
}

static void test_edges(void)
{
	struct strset set = {0};
	size_t len = 200000;
	char *big = malloc(len + 1);
	const char *a, *b, *e;

	if (!big) {
		CHECK(0, "out of memory");
		return;
	}
	memset(big, 'x', len);
	big[len] = 0;
	CHECK(strset_intern(&set, NULL) == NULL, "NULL interned");
	e = strset_intern(&set, "");
	CHECK(e && !*e && strset_intern(&set, "") == e, "the empty string not kept once");
	/* longer than a block: a block of its own, the next string still fits after it */
	a = strset_intern(&set, big);
	b = strset_intern(&set, "after");
	CHECK(a && strlen(a) == len && b && !strcmp(b, "after"), "a long string not kept");
	CHECK(strset_intern(&set, big) == a, "a long string interned twice");
	strset_free(&set);
	/* usable again */
	a = strset_intern(&set, "again");
	CHECK(a && !strcmp(a, "again") && set.nr == 1, "a freed set cannot be used again");
	strset_free(&set);
	free(big);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_once_each);
	RUN_TEST(test_edges);
	return HARNESS_DONE();
}
