/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one string hash (FNV-1a, 64-bit): hash tables of names, and colors that
 * must stay the same for a name from one graph to the next.  Not for data an
 * attacker can choose to collide where that would cost more than a slower
 * probe: every table using it is bounded.
 */
#ifndef CFIPROF_HASH_H
#define CFIPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET 0xcbf29ce484222325ull
#define HASH_FNV_PRIME	0x100000001b3ull

/* Continues hash @h over @len bytes of @p; start with HASH_FNV_OFFSET. */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;

	while (len--)
		h = (h ^ *s++) * HASH_FNV_PRIME;
	return h;
}

static inline uint64_t hash_str(const char *s)
{
	uint64_t h = HASH_FNV_OFFSET;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_FNV_PRIME;
	return h;
}

#endif
