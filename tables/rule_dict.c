// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rule dictionary: distinct rules are few (hundreds even for libLLVM),
 * so rows store a 16-bit id and each rule is stored once.
 */
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tables/internal.h"

static uint32_t rule_hash(const struct cfi_rule *r)
{
	uint64_t a, b, c;

	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	memcpy(&c, (const char *)r + 16, 8);
	a = (a ^ ((b ^ c) * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(a >> 32);
}

static int grow_slots(struct rule_dict *d, uint32_t nr_slots)
{
	uint32_t *slots = calloc(nr_slots, sizeof(*slots)), i;

	if (!slots)
		return CFI_ERR_NOMEM;
	for (i = 0; i < d->nr; i++) {
		uint32_t h = rule_hash(&d->rules[i]) & (nr_slots - 1);

		while (slots[h])
			h = (h + 1) & (nr_slots - 1);
		slots[h] = i + 1;
	}
	free(d->slots);
	d->slots = slots;
	d->nr_slots = nr_slots;
	return 0;
}

int rule_dict_init(struct rule_dict *d)
{
	struct cfi_rule none;

	memset(d, 0, sizeof(*d));
	memset(&none, 0, sizeof(none));
	none.cfa_kind = CFI_CFA_NONE;
	/* id 0 must be "no information", whatever the table holds */
	return rule_dict_intern(d, &none) == CFI_RULE_NONE ? 0 : CFI_ERR_NOMEM;
}

int rule_dict_intern(struct rule_dict *d, const struct cfi_rule *r)
{
	uint32_t h;
	int err;

	if ((d->nr + 1) * 2 > d->nr_slots) {
		err = grow_slots(d, d->nr_slots ? d->nr_slots * 2 : 256);
		if (err)
			return err;
	}
	for (h = rule_hash(r) & (d->nr_slots - 1); d->slots[h]; h = (h + 1) & (d->nr_slots - 1)) {
		if (!memcmp(&d->rules[d->slots[h] - 1], r, sizeof(*r)))
			return (int)d->slots[h] - 1;
	}
	if (d->nr > 0xffff)
		return CFI_ERR_TOO_BIG;
	if (VEC_RESERVE(d->rules, d->nr, d->cap, 64))
		return CFI_ERR_NOMEM;
	d->rules[d->nr] = *r;
	d->slots[h] = ++d->nr;
	return (int)d->nr - 1;
}

void rule_dict_free(struct rule_dict *d)
{
	free(d->rules);
	free(d->slots);
	memset(d, 0, sizeof(*d));
}
