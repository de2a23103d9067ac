// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How often each key occurs: the compaction steps that fold what recurs
 * (gaps into holes, neighbouring rows into pairs) count their candidates
 * here first, then fold those counted often enough to pay for a rule.
 */
#include <stdlib.h>

#include "tables/internal.h"

/* The key's slot: its own, or the empty one it would take. */
uint64_t key_counts_slot(const struct key_counts *c, uint64_t key)
{
	uint64_t h = key + 1;

	h *= 0x9e3779b97f4a7c15ull;
	h = (h ^ h >> 29) & c->mask;
	while (c->keys[h] && c->keys[h] != key + 1)
		h = (h + 1) & c->mask;
	return h;
}

static int grow(struct key_counts *c)
{
	struct key_counts n = {.mask = c->mask ? c->mask * 2 + 1 : 4095, .nr = c->nr};

	n.keys = calloc(n.mask + 1, sizeof(*n.keys));
	n.counts = calloc(n.mask + 1, sizeof(*n.counts));
	if (!n.keys || !n.counts) {
		key_counts_free(&n);
		return CFI_ERR_NOMEM;
	}
	for (uint64_t i = 0; c->keys && i <= c->mask; i++) {
		if (c->keys[i]) {
			uint64_t h = key_counts_slot(&n, c->keys[i] - 1);

			n.keys[h] = c->keys[i];
			n.counts[h] = c->counts[i];
		}
	}
	key_counts_free(c);
	*c = n;
	return 0;
}

int key_counts_add(struct key_counts *c, uint64_t key)
{
	uint64_t h;
	int err;

	if ((c->nr + 1) * 2 > c->mask + 1) {
		err = grow(c);
		if (err)
			return err;
	}
	h = key_counts_slot(c, key);
	if (!c->keys[h]) {
		c->keys[h] = key + 1;
		c->nr++;
	}
	c->counts[h]++;
	return 0;
}

uint32_t key_counts_get(const struct key_counts *c, uint64_t key)
{
	uint64_t h;

	if (!c->keys)
		return 0;
	h = key_counts_slot(c, key);
	return c->keys[h] ? c->counts[h] : 0;
}

void key_counts_free(struct key_counts *c)
{
	free(c->keys);
	free(c->counts);
	c->keys = NULL;
	c->counts = NULL;
	c->nr = c->mask = 0;
}
