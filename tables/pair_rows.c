// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pairing rows: the last step of compaction.  Most rows are a prologue's or
 * an epilogue's pushes and pops, a few bytes apart, and the same two rules a
 * few bytes apart recur all over an object (push r15 then push r14, ...).
 * Such a pair becomes one row whose rule names its successor and where it
 * starts (next_at, next_rule in struct cfi_rule): a row of 4 bytes saved per
 * use for a dictionary entry of 24, so only pairs used often enough are made.
 */
#include <stdlib.h>

#include "tables/internal.h"

/* A rule costs six rows: a pair pays for its entry from its seventh use on. */
#define PAIR_MIN_USES 8

struct pair_counts {
	uint64_t *keys; /* (a << 24 | at << 16 | b) + 1; 0 = empty */
	uint32_t *counts;
	uint16_t *ids; /* the pair's rule once interned; 0: not yet (rule 0 is no pair) */
	uint64_t nr, mask;
};

/* Whether rows x and y (y right after x in one page) can be one row; its key. */
static bool pair_key(const struct rule_dict *d, const struct cfi_row *x, const struct cfi_row *y,
		     uint64_t *key)
{
	const struct cfi_rule *a = &d->rules[x->rule], *b = &d->rules[y->rule];
	uint32_t at = (uint32_t)y->off - x->off;

	if (x->rule == CFI_RULE_NONE || at == 0 || at > 0xff || a->hole_len || a->next_at ||
	    b->next_at)
		return false;
	*key = ((uint64_t)x->rule << 24 | (uint64_t)at << 16 | y->rule) + 1;
	return true;
}

static uint64_t key_hash(uint64_t key)
{
	key *= 0x9e3779b97f4a7c15ull;
	return key ^ key >> 29;
}

/* The key's slot: its own, or the empty one it would take. */
static uint64_t slot_of(const struct pair_counts *c, uint64_t key)
{
	uint64_t h = key_hash(key) & c->mask;

	while (c->keys[h] && c->keys[h] != key)
		h = (h + 1) & c->mask;
	return h;
}

static int counts_grow(struct pair_counts *c)
{
	struct pair_counts n = {.mask = c->mask ? c->mask * 2 + 1 : 4095, .nr = c->nr};

	n.keys = calloc(n.mask + 1, sizeof(*n.keys));
	n.counts = calloc(n.mask + 1, sizeof(*n.counts));
	n.ids = calloc(n.mask + 1, sizeof(*n.ids));
	if (!n.keys || !n.counts || !n.ids) {
		free(n.keys);
		free(n.counts);
		free(n.ids);
		return CFI_ERR_NOMEM;
	}
	for (uint64_t i = 0; c->keys && i <= c->mask; i++) {
		if (c->keys[i]) {
			uint64_t h = slot_of(&n, c->keys[i]);

			n.keys[h] = c->keys[i];
			n.counts[h] = c->counts[i];
		}
	}
	free(c->keys);
	free(c->counts);
	free(c->ids);
	*c = n;
	return 0;
}

static int count_add(struct pair_counts *c, uint64_t key)
{
	uint64_t h;
	int err;

	if ((c->nr + 1) * 2 > c->mask + 1) {
		err = counts_grow(c);
		if (err)
			return err;
	}
	h = slot_of(c, key);
	if (!c->keys[h]) {
		c->keys[h] = key;
		c->nr++;
	}
	c->counts[h]++;
	return 0;
}

/* The pairs each page's rows would make, taken from its first row on. */
static int count_pairs(const struct cfi_table *t, const struct rule_dict *d, struct pair_counts *c)
{
	uint64_t key;
	int err;

	for (uint32_t p = 0; p < t->nr_pages; p++) {
		const struct cfi_row *rows = t->rows + t->pages[p].first_row;
		uint32_t n = t->pages[p].nr_rows;

		for (uint32_t i = 0; i + 1 < n; i++) {
			if (!pair_key(d, &rows[i], &rows[i + 1], &key))
				continue;
			err = count_add(c, key);
			if (err)
				return err;
			i++;
		}
	}
	return 0;
}

/*
 * The rule of row x with row y folded in, if their pair recurs: its id, 0
 * (none: too rare, or the dictionary full: ids are 16 bits) or a negative
 * cfi_err.  y's rule is older in the dictionary than the pair's: next_rule
 * is always the lower id.
 */
static int pair_rule(struct pair_counts *c, struct rule_dict *d, const struct cfi_row *x,
		     const struct cfi_row *y)
{
	struct cfi_rule r;
	uint64_t key, h;
	int id;

	if (!c->keys || !pair_key(d, x, y, &key))
		return 0;
	h = slot_of(c, key);
	if (!c->keys[h] || c->counts[h] < PAIR_MIN_USES)
		return 0;
	if (c->ids[h])
		return c->ids[h];
	r = d->rules[x->rule];
	r.next_at = (uint8_t)(y->off - x->off);
	r.next_rule = y->rule;
	id = rule_dict_intern(d, &r);
	if (id == CFI_ERR_TOO_BIG) {
		c->counts[h] = 0;
		return 0;
	}
	if (id > 0)
		c->ids[h] = (uint16_t)id;
	return id;
}

int pair_rows(struct cfi_table *t, struct rule_dict *d)
{
	struct pair_counts c = {0};
	uint32_t w = 0;
	int err, id;

	err = count_pairs(t, d, &c);
	for (uint32_t p = 0; p < t->nr_pages && !err; p++) {
		struct cfi_page *pg = &t->pages[p];
		uint32_t first = pg->first_row, n = pg->nr_rows;

		pg->first_row = w;
		for (uint32_t i = 0; i < n; i++) {
			struct cfi_row row = t->rows[first + i];

			id = i + 1 < n ? pair_rule(&c, d, &row, &t->rows[first + i + 1]) : 0;
			if (id > 0) {
				row.rule = (uint16_t)id;
				i++;
			} else if (id < 0) {
				err = id;
			}
			t->rows[w++] = row;
		}
		pg->nr_rows = w - pg->first_row;
	}
	if (!err)
		t->nr_rows = w;
	free(c.keys);
	free(c.counts);
	free(c.ids);
	return err;
}
