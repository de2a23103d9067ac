// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The row allocator against a bitmap model: first fit, the free list always the
 * maximal free runs, in order.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "tests/lib/xorshift.h"
#include "user/track/row_alloc.h"

#define RA_TOTAL 4096

/* The free list must be exactly the maximal free runs of the model, in order. */
static bool ra_consistent(const struct row_alloc *ra, const bool *used, uint32_t total)
{
	uint32_t a = 0, nr_used = 0;
	size_t k = 0;

	for (a = 0; a < total; a++)
		nr_used += used[a];
	if (ra->used != nr_used)
		return false;
	a = 0;
	while (a < total) {
		uint32_t s;

		while (a < total && used[a])
			a++;
		if (a == total)
			break;
		s = a;
		while (a < total && !used[a])
			a++;
		if (k >= ra->nr_free || ra->free[k].start != s || ra->free[k].len != a - s)
			return false;
		k++;
	}
	return k == ra->nr_free;
}

static int64_t model_first_fit(const bool *used, uint32_t total, uint32_t len)
{
	uint32_t a = 0;

	while (a < total) {
		uint32_t s;

		while (a < total && used[a])
			a++;
		s = a;
		while (a < total && !used[a])
			a++;
		if (a > s && a - s >= len)
			return s;
	}
	return -1;
}

static void test_row_alloc(void)
{
	static bool used[RA_TOTAL];
	static struct row_range live[RA_TOTAL];
	struct row_alloc ra;
	int nlive = 0, op, bad_overlap = 0, bad_fit = 0, bad_state = 0, gets = 0, fails = 0;
	uint32_t a;

	CHECK(row_alloc_init(&ra, RA_TOTAL) == 0, "init");
	CHECK(row_alloc_get(&ra, 0) == -1, "get(0) must fail");
	CHECK(row_alloc_get(&ra, RA_TOTAL + 1) == -1, "get(total+1) must fail");
	CHECK(ra.used == 0 && ra.nr_free == 1, "failed gets changed state: used %u nr_free %zu",
	      ra.used, ra.nr_free);

	for (op = 0; op < 6000; op++) {
		bool do_get = nlive == 0 || (rnd_below(100) < 55 && nlive < RA_TOTAL);

		if (do_get) {
			uint32_t len =
			    (uint32_t)(rnd_below(4) ? 1 + rnd_below(16) : 1 + rnd_below(900));
			int64_t want = model_first_fit(used, RA_TOTAL, len);
			int64_t got = row_alloc_get(&ra, len);

			if (got != want && !bad_fit++)
				fprintf(stderr,
					"row_alloc op %d: get(%u) = %" PRId64
					", first fit is %" PRId64 "\n",
					op, len, got, want);
			if (got >= 0) {
				gets++;
				if ((uint64_t)got + len > RA_TOTAL) {
					bad_overlap++;
				} else {
					for (a = (uint32_t)got; a < (uint32_t)got + len; a++) {
						if (used[a])
							bad_overlap++;
						used[a] = true;
					}
					live[nlive++] = (struct row_range){(uint32_t)got, len};
				}
			} else {
				fails++;
			}
		} else {
			int k = (int)rnd_below((uint64_t)nlive);
			struct row_range r = live[k];

			live[k] = live[--nlive];
			for (a = r.start; a < r.start + r.len; a++)
				used[a] = false;
			row_alloc_put(&ra, r.start, r.len);
		}
		if (!ra_consistent(&ra, used, RA_TOTAL) && !bad_state++)
			fprintf(stderr, "row_alloc op %d: used %u, free list differs from model\n",
				op, ra.used);
	}
	CHECK(!bad_overlap, "%d overlapping rows", bad_overlap);
	CHECK(!bad_fit, "%d results differ from first fit", bad_fit);
	CHECK(!bad_state, "%d states differ from the model", bad_state);
	CHECK(gets > 1000 && fails > 10,
	      "the sequence must exercise both outcomes: %d gets, %d fails", gets, fails);

	while (nlive) {
		int k = (int)rnd_below((uint64_t)nlive);

		row_alloc_put(&ra, live[k].start, live[k].len);
		live[k] = live[--nlive];
	}
	CHECK(ra.used == 0 && ra.nr_free == 1, "after freeing all: used %u nr_free %zu", ra.used,
	      ra.nr_free);
	CHECK(row_alloc_get(&ra, RA_TOTAL) == 0, "all rows in one piece after coalescing");
	CHECK(ra.used == RA_TOTAL && ra.nr_free == 0 && row_alloc_get(&ra, 1) == -1,
	      "full: used %u nr_free %zu", ra.used, ra.nr_free);
	row_alloc_put(&ra, 0, RA_TOTAL);
	CHECK(ra.used == 0 && ra.nr_free == 1 && ra.free[0].len == RA_TOTAL, "empty again");
	row_alloc_destroy(&ra);

	CHECK(row_alloc_init(&ra, 0) == 0 && row_alloc_get(&ra, 1) == -1, "total 0");
	row_alloc_destroy(&ra);
}

/* Retired ranges wait out their grace period before anyone gets them again. */
static void test_row_alloc_quarantine(void)
{
	const uint64_t grace = 100, t = 1000;
	struct row_alloc ra;

	CHECK(row_alloc_init(&ra, 100) == 0, "init");
	ra.grace_ns = grace;
	CHECK(row_alloc_get(&ra, 40) == 0 && row_alloc_get(&ra, 40) == 40 &&
		  row_alloc_get(&ra, 20) == 80,
	      "three ranges");
	CHECK(row_alloc_retire(&ra, 0, 40, t) == 0 && ra.used == 60 && ra.quarantined == 40,
	      "retired: used %u, quarantined %u", ra.used, ra.quarantined);
	row_alloc_expire(&ra, t + grace - 1);
	CHECK(row_alloc_get(&ra, 1) == -1 && ra.quarantined == 40,
	      "not handed out before the grace period");
	CHECK(row_alloc_fits_after(&ra, 40) == t + grace && row_alloc_fits_after(&ra, 41) == 0,
	      "the quarantine would make room for 40 rows at %" PRIu64 ", not for 41",
	      row_alloc_fits_after(&ra, 40));
	CHECK(row_alloc_retire(&ra, 40, 40, t + 50) == 0 &&
		  row_alloc_fits_after(&ra, 80) == t + 50 + grace,
	      "two quarantined neighbours coalesce: due when the younger is");
	row_alloc_expire(&ra, t + grace);
	CHECK(ra.quarantined == 40 && row_alloc_get(&ra, 40) == 0 && row_alloc_get(&ra, 1) == -1,
	      "the older one is free once due, the younger not yet");
	row_alloc_expire(&ra, t + 50 + grace);
	CHECK(ra.quarantined == 0 && ra.used == 60 && row_alloc_get(&ra, 40) == 40,
	      "both due: used %u", ra.used);
	/* grace 0: free at once */
	ra.grace_ns = 0;
	CHECK(row_alloc_retire(&ra, 0, 40, t) == 0 && ra.quarantined == 0 &&
		  row_alloc_get(&ra, 40) == 0,
	      "no grace period: reused at once");
	row_alloc_destroy(&ra);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_row_alloc);
	RUN_TEST(test_row_alloc_quarantine);
	return HARNESS_DONE();
}
