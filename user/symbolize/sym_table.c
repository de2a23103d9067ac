// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sorted, binary-searched address ranges shared by every symbol source. */
#include "user/symbolize/sym_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sym_table_reserve(struct sym_table *t, size_t n, size_t str_bytes)
{
	t->r = malloc((n ? n : 1) * sizeof(*t->r));
	t->str = malloc(str_bytes ? str_bytes : 1);
	if (!t->r || !t->str) {
		free(t->r);
		free(t->str);
		t->r = NULL;
		t->str = NULL;
		return -1;
	}
	t->cap = n ? n : 1;
	t->str_cap = str_bytes ? str_bytes : 1;
	return 0;
}

/* The new capacity for @need within @limit: doubled when it fits, else what is left. */
static size_t grown(size_t cap, size_t need, size_t first, size_t limit)
{
	size_t want = cap ? 2 * cap : first;

	if (want < need)
		want = need;
	return want > limit ? limit : want;
}

int sym_table_room(struct sym_table *t, size_t str_bytes, size_t max_bytes)
{
	size_t need = t->str_len + str_bytes, cap;
	void *p;

	if (t->n == t->cap) {
		/* ranges leave names the room their average so far asks for */
		size_t avg = (need + t->n) / (t->n + 1), limit;

		if (max_bytes < t->str_cap + (t->n + 1) * sizeof(*t->r))
			return 0;
		limit = (max_bytes - t->str_cap) / sizeof(*t->r);
		if (limit > max_bytes / (sizeof(*t->r) + avg))
			limit = max_bytes / (sizeof(*t->r) + avg);
		cap = grown(t->cap, t->n + 1, 256, limit < t->n + 1 ? t->n + 1 : limit);
		p = realloc(t->r, cap * sizeof(*t->r));
		if (!p)
			return -1;
		t->r = p;
		t->cap = cap;
	}
	if (need > t->str_cap) {
		size_t ranges = t->cap * sizeof(*t->r);

		if (max_bytes < ranges + need)
			return 0;
		cap = grown(t->str_cap, need, 4096, max_bytes - ranges);
		p = realloc(t->str, cap);
		if (!p)
			return -1;
		t->str = p;
		t->str_cap = cap;
	}
	return 1;
}

int64_t sym_table_intern(struct sym_table *t, const char *s, size_t len)
{
	size_t off = t->str_len;

	/* Offsets are 32-bit to keep sym_range at 32 bytes. */
	if (len >= UINT32_MAX - off) {
		errno = E2BIG;
		return -1;
	}
	if (off + len + 1 > t->str_cap) {
		size_t cap = t->str_cap ? t->str_cap : 4096;
		char *p;

		while (cap < off + len + 1)
			cap *= 2;
		p = realloc(t->str, cap);
		if (!p)
			return -1;
		t->str = p;
		t->str_cap = cap;
	}
	memcpy(t->str + off, s, len);
	t->str[off + len] = '\0';
	t->str_len = off + len + 1;
	return (int64_t)off;
}

int sym_table_add(struct sym_table *t, uint64_t start, uint64_t end, uint32_t name, uint32_t rank)
{
	if (end <= start)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct sym_range *p = realloc(t->r, cap * sizeof(*p));

		if (!p)
			return -1;
		t->r = p;
		t->cap = cap;
	}
	t->r[t->n++] = (struct sym_range){.start = start, .end = end, .name = name, .rank = rank};
	return 0;
}

int sym_range_cmp(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* Total order so equal keys sort the same on every run. */
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static void sift_down(struct sym_range *r, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		struct sym_range tmp;

		if (child >= n)
			return;
		if (child + 1 < n && sym_range_cmp(&r[child], &r[child + 1]) < 0)
			child++;
		if (sym_range_cmp(&r[root], &r[child]) >= 0)
			return;
		tmp = r[root];
		r[root] = r[child];
		r[child] = tmp;
		root = child;
	}
}

/*
 * In place, no scratch: glibc's qsort takes a copy of the array, and a
 * perf-PID.map's table is as large as its byte bound lets it be.
 */
static void heap_sort(struct sym_range *r, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift_down(r, i, n);
	while (n > 1) {
		struct sym_range tmp = r[0];

		r[0] = r[--n];
		r[n] = tmp;
		sift_down(r, 0, n);
	}
}

/*
 * r[0, sorted) is in order, the rest is not: symbols added after a sorted
 * source, such as the BPF programs' names after kallsyms.  Sorting the tail
 * and merging it costs O(n + m log m) instead of a whole sort of kallsyms'
 * 122k symbols.
 */
static void sort_tail(struct sym_table *t, size_t sorted)
{
	size_t m = t->n - sorted, a = sorted, b = m, w = t->n;
	struct sym_range *tail;

	if (m > SYM_SORT_SCRATCH_MAX) {
		heap_sort(t->r, t->n);
		return;
	}
	qsort(t->r + sorted, m, sizeof(*t->r), sym_range_cmp);
	tail = malloc(m * sizeof(*tail));
	if (!tail) {
		heap_sort(t->r, t->n);
		return;
	}
	memcpy(tail, t->r + sorted, m * sizeof(*tail));
	/* from the end: the slots written are those the tail left or already merged */
	while (b) {
		if (a && sym_range_cmp(&t->r[a - 1], &tail[b - 1]) > 0)
			t->r[--w] = t->r[--a];
		else
			t->r[--w] = tail[--b];
	}
	free(tail);
}

void sym_table_finish(struct sym_table *t)
{
	uint64_t max_end = 0;
	size_t i, w = 0;

	/* kallsyms (122k symbols) and most symbol tables come sorted: a check is O(n) */
	for (i = 1; i < t->n && sym_range_cmp(&t->r[i - 1], &t->r[i]) <= 0; i++)
		;
	if (i < t->n)
		sort_tail(t, i);
	/*
	 * Same start: the first (lowest rank) wins, the others could never be
	 * returned.  Entries already in place are not written again: a table
	 * finished a second time (kallsyms and then the BPF programs' names) sits
	 * in pages shared copy-on-write with the command's child, and each write
	 * to one is a page fault, 17-34 ms for kallsyms' 4 MB on this VM kind.
	 */
	for (i = 0; i < t->n; i++) {
		if (w && t->r[w - 1].start == t->r[i].start)
			continue;
		if (w != i)
			t->r[w] = t->r[i];
		w++;
	}
	t->n = w;
	for (i = 0; i < t->n; i++) {
		if (t->r[i].end > max_end)
			max_end = t->r[i].end;
		if (t->r[i].max_end != max_end)
			t->r[i].max_end = max_end;
	}
}

long sym_table_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	long i, best = -1;

	/* Last range starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Walk back only while some earlier range still reaches addr; for
	 * non-overlapping symbols this is a single step.
	 */
	for (i = (long)lo - 1; i >= 0 && t->r[i].max_end > addr; i--) {
		if (t->r[i].end <= addr)
			continue;
		if (!t->ranked)
			return i;
		if (best < 0 || t->r[i].rank < t->r[best].rank)
			best = i;
	}
	return best;
}

void sym_table_release(struct sym_table *t)
{
	free(t->r);
	free(t->str);
	memset(t, 0, sizeof(*t));
}
