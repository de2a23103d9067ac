// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * First-fit allocator for ranges of the rows array.  Objects come and go as
 * processes do; freed ranges coalesce so that a large library can load again.
 */
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
			memmove(&ra->free[i], &ra->free[i + 1], (ra->nr_free - i - 1) * sizeof(*ra->free));
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
