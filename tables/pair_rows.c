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

/* Whether rows x and y (y right after x in one page) can be one row; its key. */
static bool pair_key(const struct rule_dict *d, const struct cfi_row *x, const struct cfi_row *y,
		     uint64_t *key)
{
	const struct cfi_rule *a = &d->rules[x->rule], *b = &d->rules[y->rule];
	uint32_t at = (uint32_t)y->off - x->off;

	if (x->rule == CFI_RULE_NONE || at == 0 || at > 0xff || a->hole_len || a->next_at ||
	    b->next_at)
		return false;
	*key = (uint64_t)x->rule << 24 | (uint64_t)at << 16 | y->rule;
	return true;
}

/* The pairs each page's rows would make, taken from its first row on. */
static int count_pairs(const struct cfi_table *t, const struct rule_dict *d, struct key_counts *c)
{
	uint64_t key;
	int err;

	for (uint32_t p = 0; p < t->nr_pages; p++) {
		const struct cfi_row *rows = t->rows + t->pages[p].first_row;
		uint32_t n = t->pages[p].nr_rows;

		for (uint32_t i = 0; i + 1 < n; i++) {
			if (!pair_key(d, &rows[i], &rows[i + 1], &key))
				continue;
			err = key_counts_add(c, key);
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
static int pair_rule(struct key_counts *c, uint16_t *ids, struct rule_dict *d,
		     const struct cfi_row *x, const struct cfi_row *y)
{
	struct cfi_rule r;
	uint64_t key, h;
	int id;

	if (!c->keys || !pair_key(d, x, y, &key))
		return 0;
	h = key_counts_slot(c, key);
	if (!c->keys[h] || c->counts[h] < PAIR_MIN_USES)
		return 0;
	if (ids[h])
		return ids[h];
	r = d->rules[x->rule];
	r.next_at = (uint8_t)(y->off - x->off);
	r.next_rule = y->rule;
	id = rule_dict_intern(d, &r);
	if (id == CFI_ERR_TOO_BIG) {
		c->counts[h] = 0;
		return 0;
	}
	if (id > 0)
		ids[h] = (uint16_t)id;
	return id;
}

int pair_rows(struct cfi_table *t, struct rule_dict *d)
{
	struct key_counts c = {0};
	/* each pair's rule once interned, by its slot in c; 0: not yet (rule 0 is no pair) */
	uint16_t *ids = NULL;
	uint32_t w = 0;
	int err, id;

	err = count_pairs(t, d, &c);
	if (!err && c.keys && !(ids = calloc(c.mask + 1, sizeof(*ids))))
		err = CFI_ERR_NOMEM;
	for (uint32_t p = 0; p < t->nr_pages && !err; p++) {
		struct cfi_page *pg = &t->pages[p];
		uint32_t first = pg->first_row, n = pg->nr_rows;

		pg->first_row = w;
		for (uint32_t i = 0; i < n; i++) {
			struct cfi_row row = t->rows[first + i];

			id = i + 1 < n ? pair_rule(&c, ids, d, &row, &t->rows[first + i + 1]) : 0;
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
	key_counts_free(&c);
	free(ids);
	return err;
}
