// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "common/strset.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* blocks grow from the first to the largest: a set of a few names stays small */
#define STRSET_FIRST_BLOCK 1024
#define STRSET_BLOCK	   65536

struct strset_block {
	struct strset_block *next;
	size_t size, used;
	char data[];
};

/* Room for len bytes of copies: the newest block, or a new one (a long string gets its own). */
static char *copy_room(struct strset *set, size_t len)
{
	struct strset_block *b = set->blocks;
	char *p;

	if (!b || b->size - b->used < len) {
		size_t size = !b			   ? STRSET_FIRST_BLOCK
			      : b->size < STRSET_BLOCK / 2 ? b->size * 2
							   : STRSET_BLOCK;

		size = len > size ? len : size;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = set->blocks;
		set->blocks = b;
		set->bytes += sizeof(*b) + size;
	}
	p = b->data + b->used;
	b->used += len;
	return p;
}

/* s's slot, or the free one where it goes */
static struct strset_slot *find(const struct strset *set, uint64_t hash, const char *s)
{
	uint64_t mask = set->cap - 1, i;

	for (i = hash & mask; set->slots[i].s; i = (i + 1) & mask)
		if (set->slots[i].hash == hash && !strcmp(set->slots[i].s, s))
			break;
	return &set->slots[i];
}

/* Doubles the slots when they are half full, so a probe stays short. */
static int grow(struct strset *set)
{
	uint64_t cap = set->cap ? set->cap * 2 : 256, k;
	struct strset_slot *n;

	if ((set->nr + 1) * 2 <= set->cap)
		return 0;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -1;
	for (k = 0; k < set->cap; k++) {
		struct strset_slot *old = &set->slots[k];
		uint64_t i;

		if (!old->s)
			continue;
		for (i = old->hash & (cap - 1); n[i].s; i = (i + 1) & (cap - 1))
			;
		n[i] = *old;
	}
	free(set->slots);
	set->bytes += (cap - set->cap) * sizeof(*n);
	set->slots = n;
	set->cap = cap;
	return 0;
}

const char *strset_intern(struct strset *set, const char *s)
{
	uint64_t hash;
	struct strset_slot *slot;
	size_t len;
	char *copy;

	if (!s || grow(set))
		return NULL;
	hash = hash_str(s);
	slot = find(set, hash, s);
	if (slot->s)
		return slot->s;
	len = strlen(s) + 1;
	copy = copy_room(set, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	slot->hash = hash;
	slot->s = copy;
	set->nr++;
	return copy;
}

void strset_free(struct strset *set)
{
	struct strset_block *b = set->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	free(set->slots);
	memset(set, 0, sizeof(*set));
}
