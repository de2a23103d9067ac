// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The global rule dictionary: reference-counted ids, unused ones reused
 * oldest first once their quarantine has passed.  Each table's rules are
 * remapped into it so rows stay 4 bytes (16-bit ids).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/global_rules.h"

static uint32_t hash_rule(const struct cfi_rule *r)
{
	uint64_t a, b, c;

	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	memcpy(&c, (const char *)r + 16, 8);
	a = (a ^ ((b ^ c) * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(a >> 32);
}

int global_rules_init(struct global_rules *gr, struct cfi_rule *rules, uint32_t max)
{
	memset(gr, 0, sizeof(*gr));
	gr->rules = rules;
	gr->max = max;
	gr->nr_slots = 1;
	while (gr->nr_slots < max * 2)
		gr->nr_slots <<= 1;
	gr->slots = calloc(gr->nr_slots, sizeof(*gr->slots));
	gr->refs = calloc(max, sizeof(*gr->refs));
	gr->freed_ns = calloc(max, sizeof(*gr->freed_ns));
	gr->prev = calloc(max, sizeof(*gr->prev));
	gr->next = calloc(max, sizeof(*gr->next));
	if (!max || !gr->slots || !gr->refs || !gr->freed_ns || !gr->prev || !gr->next) {
		global_rules_destroy(gr);
		return -ENOMEM;
	}
	gr->unused_head = gr->unused_tail = GLOBAL_RULE_NONE;
	/* id 0 is "no information", as in every table, and never goes */
	memset(&rules[0], 0, sizeof(rules[0]));
	gr->slots[hash_rule(&rules[0]) & (gr->nr_slots - 1)] = 1;
	gr->refs[0] = 1;
	gr->nr = gr->live = 1;
	return 0;
}

void global_rules_destroy(struct global_rules *gr)
{
	free(gr->slots);
	free(gr->refs);
	free(gr->freed_ns);
	free(gr->prev);
	free(gr->next);
	memset(gr, 0, sizeof(*gr));
}

/* The slot holding r, or the empty slot where it would go. */
static uint32_t slot_of(const struct global_rules *gr, const struct cfi_rule *r)
{
	uint32_t mask = gr->nr_slots - 1, h;

	for (h = hash_rule(r) & mask; gr->slots[h]; h = (h + 1) & mask) {
		if (!memcmp(&gr->rules[gr->slots[h] - 1], r, sizeof(*r)))
			break;
	}
	return h;
}

uint32_t global_rules_find(const struct global_rules *gr, const struct cfi_rule *r)
{
	uint32_t h = slot_of(gr, r);

	return gr->slots[h] ? gr->slots[h] - 1 : GLOBAL_RULE_NONE;
}

uint32_t global_rules_room(const struct global_rules *gr)
{
	return gr->max - gr->nr + gr->nr_unused;
}

static void unused_unlink(struct global_rules *gr, uint32_t id)
{
	if (gr->prev[id] != GLOBAL_RULE_NONE)
		gr->next[gr->prev[id]] = gr->next[id];
	else
		gr->unused_head = gr->next[id];
	if (gr->next[id] != GLOBAL_RULE_NONE)
		gr->prev[gr->next[id]] = gr->prev[id];
	else
		gr->unused_tail = gr->prev[id];
	gr->nr_unused--;
}

void global_rules_ref(struct global_rules *gr, uint32_t id)
{
	if (gr->refs[id]++)
		return;
	/* taken back while unused: its id never changed meaning */
	unused_unlink(gr, id);
	gr->live++;
}

void global_rules_unref(struct global_rules *gr, uint32_t id, uint64_t now_ns)
{
	if (!id || !gr->refs[id] || --gr->refs[id])
		return;
	gr->live--;
	gr->freed_ns[id] = now_ns;
	gr->prev[id] = gr->unused_tail;
	gr->next[id] = GLOBAL_RULE_NONE;
	if (gr->unused_tail != GLOBAL_RULE_NONE)
		gr->next[gr->unused_tail] = id;
	else
		gr->unused_head = id;
	gr->unused_tail = id;
	gr->nr_unused++;
}

/* Takes id's rule out of the hash: backward-shift deletion keeps every probe chain whole. */
static void unhash(struct global_rules *gr, uint32_t id)
{
	uint32_t mask = gr->nr_slots - 1, i = slot_of(gr, &gr->rules[id]), j = i, k;

	for (;;) {
		j = (j + 1) & mask;
		if (!gr->slots[j])
			break;
		k = hash_rule(&gr->rules[gr->slots[j] - 1]) & mask;
		/* the entry at j may move to i only if its home k is not in (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			gr->slots[i] = gr->slots[j];
			i = j;
		}
	}
	gr->slots[i] = 0;
}

uint32_t global_rules_add(struct global_rules *gr, const struct cfi_rule *r, uint64_t now_ns,
			  uint64_t *wait_until_ns)
{
	uint32_t id;

	*wait_until_ns = 0;
	if (gr->nr < gr->max) {
		id = gr->nr++;
	} else if (gr->unused_head != GLOBAL_RULE_NONE) {
		id = gr->unused_head;
		if (now_ns - gr->freed_ns[id] < gr->grace_ns) {
			*wait_until_ns = gr->freed_ns[id] + gr->grace_ns;
			return GLOBAL_RULE_NONE;
		}
		unused_unlink(gr, id);
		unhash(gr, id);
		gr->reused++;
	} else {
		return GLOBAL_RULE_NONE;
	}
	gr->rules[id] = *r;
	gr->slots[slot_of(gr, r)] = id + 1;
	gr->refs[id] = 1;
	gr->live++;
	return id;
}
