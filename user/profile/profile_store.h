/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profile's own store, private to user/profile: the indexes that name
 * every distinct location and mapping once, and the pool their lines and
 * labels live in until the profile is freed.
 */
#ifndef CFIPROF_PROFILE_STORE_H
#define CFIPROF_PROFILE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/strset.h"

struct prof_key {
	uint64_t a, b, c;
};

/* Open addressing, a power of two of slots, at most half full. */
struct prof_index {
	struct prof_key *keys;
	uint32_t *vals; /* value + 1; 0 = empty */
	uint32_t cap, nr;
};

struct pool_block {
	struct pool_block *next;
	size_t used, size;
	char data[];
};

/* struct profile's priv */
struct priv {
	struct prof_index locs, maps;
	struct strset strs;
	struct pool_block *pool;
	size_t cap_locs, cap_maps, cap_samples;
};

/* The value slot for k (*slot 0 if new), grown first so the slot stays valid; NULL: no memory. */
uint32_t *profile_index_get(struct prof_index *t, const struct prof_key *k);
void profile_index_free(struct prof_index *t);

/* len bytes aligned for structures, freed with the pool; NULL: no memory. */
void *profile_pool_alloc(struct priv *pv, size_t len);
void profile_pool_free(struct priv *pv);

#endif
