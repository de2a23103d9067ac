// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The profile's indexes and pool (profile_store.h): a profile of a long
 * agent interval names ~10^5 locations, each looked up once per frame of
 * every stack, so the index is a flat table with no allocation per entry.
 */
#include <stdlib.h>
#include <string.h>

#include "user/profile/profile_store.h"

static uint64_t key_hash(const struct prof_key *k)
{
	uint64_t h = k->a * 0x9e3779b97f4a7c15ull;

	h ^= (k->b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (k->c + 0x85ebca6b) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static uint32_t *index_slot(struct prof_index *t, const struct prof_key *k)
{
	uint32_t i = (uint32_t)key_hash(k) & (t->cap - 1);

	while (t->vals[i] && memcmp(&t->keys[i], k, sizeof(*k)))
		i = (i + 1) & (t->cap - 1);
	t->keys[i] = *k;
	return &t->vals[i];
}

static int index_grow(struct prof_index *t)
{
	struct prof_index n = {.cap = t->cap ? t->cap * 2 : 1024, .nr = t->nr};
	uint32_t i;

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (i = 0; i < t->cap; i++) {
		if (t->vals[i])
			*index_slot(&n, &t->keys[i]) = t->vals[i];
	}
	free(t->keys);
	free(t->vals);
	*t = n;
	return 0;
}

uint32_t *profile_index_get(struct prof_index *t, const struct prof_key *k)
{
	if ((t->nr + 1) * 2 > t->cap && index_grow(t))
		return NULL;
	return index_slot(t, k);
}

void profile_index_free(struct prof_index *t)
{
	free(t->keys);
	free(t->vals);
}

static char *pool_take(struct priv *pv, size_t len)
{
	struct pool_block *b = pv->pool;
	char *s;

	if (!b || b->size - b->used < len) {
		size_t size = len > 65536 ? len : 65536;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = pv->pool;
		pv->pool = b;
	}
	s = b->data + b->used;
	b->used += len;
	return s;
}

/* a new block starts aligned */
void *profile_pool_alloc(struct priv *pv, size_t len)
{
	struct pool_block *b = pv->pool;
	size_t pad = b ? (8 - (b->used & 7)) & 7 : 0;

	if (b)
		b->used = b->size - b->used >= pad ? b->used + pad : b->size;
	return pool_take(pv, len);
}

void profile_pool_free(struct priv *pv)
{
	struct pool_block *b = pv->pool, *n;

	for (; b; b = n) {
		n = b->next;
		free(b);
	}
	pv->pool = NULL;
}
