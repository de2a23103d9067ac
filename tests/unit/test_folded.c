// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The folded writer: one line per distinct named stack, root first, comm and
 * frame names that would break the format made safe, sorted by count.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/agg_samples.h"
#include "user/output/folded.h"
#include "user/symbolize/kallsyms.h"
#include "user/profile/frame_names.h"

static uint64_t folded_count(struct parsed_line *l, int n, const char *text)
{
	int i;

	for (i = 0; i < n; i++) {
		if (streq(l[i].text, text))
			return l[i].count;
	}
	return 0;
}

static void test_folded(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	static const uint64_t u1[] = {0x401000, 0x402000};
	static const uint64_t u2[] = {0x401234, 0x402345};
	struct parsed_line l[32];
	struct frame_namer fn;
	struct aggregator a;
	char *buf = NULL, *copy;
	size_t len = 0;
	int n, i, malformed, r;
	FILE *f;

	agg_init(&a, 7);
	/* A and B differ only in PCs that name the same frames: one folded line */
	add_n(&a, 5, FAKE_PID1, "my;app x", STOP_COMPLETE, 2, k1, 2, u1);
	add_n(&a, 2, FAKE_PID1, "my;app x", STOP_COMPLETE, 2, k1, 2, u2);
	add_n(&a, 3, FAKE_PID2, "worker", STOP_NO_RULE, 0, NULL, 1, u1);
	add_n(&a, 4, FAKE_PID3, "kworker/0:1", STOP_NO_USER, 1, k1 + 1, 0, NULL);
	add_n(&a, 1, FAKE_PID3, "", STOP_COMPLETE, 0, NULL, 1, u1);
	add_n(&a, 6, FAKE_PID2, "tr", STOP_TRUNCATED, 0, NULL, 2, u1);
	add_n(&a, 8, FAKE_PID2, "nl\nname", STOP_COMPLETE, 0, NULL, 1, u1);
	/* the table is full now: two more distinct stacks overflow */
	add_n(&a, 1, FAKE_PID2, "late", STOP_COMPLETE, 0, NULL, 1, u2);
	add_n(&a, 1, FAKE_PID2, "late2", STOP_COMPLETE, 0, NULL, 1, u2);
	CHECK(a.nr_stacks == 7 && a.overflow == 2, "setup: %" PRIu64 " stacks, overflow %" PRIu64,
	      a.nr_stacks, a.overflow);

	frame_namer_init(&fn, NULL, NULL);
	f = open_memstream(&buf, &len);
	r = folded_write(f, &a, &fn);
	fclose(f);
	CHECK(r == 0, "folded_write = %d", r);
	copy = strdup(buf ? buf : "");
	n = parse_folded(buf, l, 32, &malformed);
	if (malformed || n != 7)
		fprintf(stderr, "folded output:\n%s", copy);
	free(copy);
	CHECK(!malformed, "%d lines without a count (a comm or frame broke the format)", malformed);
	/* profile.h: the overflow is one sample, comm "[overflow]", sorted like any other */
	CHECK(n == 7, "%d lines, want 6 stacks + overflow", n);
	CHECK(folded_count(l, n,
			   "my_app_x;[unknown];[unknown];0xffffffff81000020_[k];"
			   "0xffffffff81000010_[k]") == 7,
	      "comm sanitized, root first, kernel frames leaf last, identical lines merged");
	CHECK(folded_count(l, n, "worker;[incomplete: no-rule];[unknown]") == 3,
	      "incomplete frame under the comm");
	CHECK(folded_count(l, n, "tr;[incomplete: truncated];[unknown];[unknown]") == 6,
	      "truncated stack");
	CHECK(folded_count(l, n, "kworker/0:1;0xffffffff81000020_[k]") == 4,
	      "kernel thread: no incomplete frame");
	CHECK(folded_count(l, n, "[unknown];[unknown]") == 1, "empty comm");
	CHECK(folded_count(l, n, "[overflow];[overflow: stack table full]") == 2,
	      "overflow sample");
	for (i = 1; i < n; i++)
		CHECK(l[i - 1].count >= l[i].count, "sorted by count at line %d", i);
	CHECK(folded_count(l, n, "nl_name;[unknown]") == 8 ||
		  folded_count(l, n, "nl name;[unknown]") == 8,
	      "comm with a newline stays on one line");
	frame_namer_free(&fn);
	free(buf);
	agg_free(&a);
}

/* Kernel names come from a kallsyms file here, so a ';' can reach the folded writer. */
static void test_folded_frame_names(void)
{
	static const uint64_t k[] = {0xffffffff81001010ull, 0xffffffff81000010ull};
	char path[] = "/tmp/cfiprof-kallsyms-XXXXXX", err[256] = "";
	struct parsed_line l[8];
	struct frame_namer fn;
	struct aggregator a;
	struct ksyms *ks;
	char *buf = NULL;
	size_t len = 0;
	int fd, n, malformed;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs("ffffffff81000000 T ns;evil\nffffffff81001000 T plain_func\n"
	      "ffffffff81002000 T end_marker\n",
	      f);
	fclose(f);
	ks = ksyms_load(path, err, sizeof(err));
	unlink(path);
	CHECK(ks, "ksyms_load: %s", err);
	if (!ks)
		return;
	agg_init(&a, 10);
	add_n(&a, 2, FAKE_PID1, "c", STOP_NO_USER, 2, k, 0, NULL);
	frame_namer_init(&fn, NULL, ks);
	f = open_memstream(&buf, &len);
	folded_write(f, &a, &fn);
	fclose(f);
	n = parse_folded(buf, l, 8, &malformed);
	CHECK(n == 1 && !malformed && streq(l[0].text, "c;ns:evil_[k];plain_func_[k]") &&
		  l[0].count == 2,
	      "';' in a frame name becomes ':' (got '%s')", n ? l[0].text : "");
	frame_namer_free(&fn);
	ksyms_free(ks);
	free(buf);
	agg_free(&a);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_folded);
	RUN_TEST(test_folded_frame_names);
	return HARNESS_DONE();
}
