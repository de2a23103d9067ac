// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * First-fit allocator for ranges of the rows array.  Objects come and go as
 * processes do; freed ranges coalesce so that a large library can load again.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/row_alloc.h"

int row_alloc_init(struct row_alloc *ra, uint32_t total)
{
	memset(ra, 0, sizeof(*ra));
	ra->total = total;
	ra->free = malloc(sizeof(*ra->free) * 16);
	if (!ra->free)
		return -1;
	ra->cap_free = 16;
	if (total) {
		ra->free[0] = (struct row_range){0, total};
		ra->nr_free = 1;
	}
	return 0;
}

void row_alloc_destroy(struct row_alloc *ra)
{
	free(ra->free);
	free(ra->q);
	memset(ra, 0, sizeof(*ra));
}

int64_t row_alloc_get(struct row_alloc *ra, uint32_t len)
{
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < ra->nr_free; i++) {
		struct row_range *r = &ra->free[i];
		uint32_t start = r->start;

		if (r->len < len)
			continue;
		r->start += len;
		r->len -= len;
		if (!r->len) {
			memmove(r, r + 1, (ra->nr_free - i - 1) * sizeof(*r));
			ra->nr_free--;
		}
		ra->used += len;
		return start;
	}
	return -1;
}

void row_alloc_put(struct row_alloc *ra, uint32_t start, uint32_t len)
{
	size_t i = 0;

	if (!len)
		return;
	while (i < ra->nr_free && ra->free[i].start < start)
		i++;
	ra->used -= len;
	/* merge with the neighbour before and/or after */
	if (i > 0 && ra->free[i - 1].start + ra->free[i - 1].len == start) {
		ra->free[i - 1].len += len;
		if (i < ra->nr_free && start + len == ra->free[i].start) {
			ra->free[i - 1].len += ra->free[i].len;
			memmove(&ra->free[i], &ra->free[i + 1],
				(ra->nr_free - i - 1) * sizeof(*ra->free));
			ra->nr_free--;
		}
		return;
	}
	if (i < ra->nr_free && start + len == ra->free[i].start) {
		ra->free[i].start = start;
		ra->free[i].len += len;
		return;
	}
	if (ra->nr_free == ra->cap_free) {
		size_t ncap = ra->cap_free * 2;
		struct row_range *n = realloc(ra->free, ncap * sizeof(*n));

		if (!n)
			return; /* the range leaks rather than corrupting the list */
		ra->free = n;
		ra->cap_free = ncap;
	}
	memmove(&ra->free[i + 1], &ra->free[i], (ra->nr_free - i) * sizeof(*ra->free));
	ra->free[i] = (struct row_range){start, len};
	ra->nr_free++;
}

int row_alloc_retire(struct row_alloc *ra, uint32_t start, uint32_t len, uint64_t now_ns)
{
	if (!len)
		return 0;
	if (!ra->grace_ns) {
		row_alloc_put(ra, start, len);
		return 0;
	}
	if (ra->nr_q == ra->cap_q) {
		size_t ncap = ra->cap_q ? ra->cap_q * 2 : 16, i;
		struct row_quarantined *n = malloc(ncap * sizeof(*n));

		if (!n)
			return -ENOMEM; /* the range leaks rather than being reused too early */
		for (i = 0; i < ra->nr_q; i++)
			n[i] = ra->q[(ra->q_head + i) % ra->cap_q];
		free(ra->q);
		ra->q = n;
		ra->cap_q = ncap;
		ra->q_head = 0;
	}
	ra->q[(ra->q_head + ra->nr_q) % ra->cap_q] =
	    (struct row_quarantined){start, len, now_ns + ra->grace_ns};
	ra->nr_q++;
	ra->used -= len;
	ra->quarantined += len;
	return 0;
}

void row_alloc_expire(struct row_alloc *ra, uint64_t now_ns)
{
	/* retired in time order with one grace period: the due times are in order too */
	while (ra->nr_q && ra->q[ra->q_head].due_ns <= now_ns) {
		struct row_quarantined r = ra->q[ra->q_head];

		ra->q_head = (ra->q_head + 1) % ra->cap_q;
		ra->nr_q--;
		ra->quarantined -= r.len;
		ra->used += r.len; /* row_alloc_put takes it off used */
		row_alloc_put(ra, r.start, r.len);
	}
}

static int by_range_start(const void *a, const void *b)
{
	const struct row_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

uint64_t row_alloc_fits_after(const struct row_alloc *ra, uint32_t len)
{
	size_t n = ra->nr_free + ra->nr_q, i;
	struct row_range *all;
	uint64_t run = 0, end = 0, due = 0;
	bool fits = false;

	if (!ra->nr_q || !len || len > ra->total)
		return 0;
	all = malloc(n * sizeof(*all));
	if (!all)
		return 0;
	memcpy(all, ra->free, ra->nr_free * sizeof(*all));
	for (i = 0; i < ra->nr_q; i++) {
		const struct row_quarantined *r = &ra->q[(ra->q_head + i) % ra->cap_q];

		all[ra->nr_free + i] = (struct row_range){r->start, r->len};
		due = r->due_ns > due ? r->due_ns : due;
	}
	qsort(all, n, sizeof(*all), by_range_start);
	for (i = 0; i < n && !fits; i++) {
		run = all[i].start == end && i ? run + all[i].len : all[i].len;
		end = (uint64_t)all[i].start + all[i].len;
		fits = run >= len;
	}
	free(all);
	return fits ? due : 0;
}
