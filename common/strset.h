/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one string interning set: each distinct string kept once, its copy
 * valid until the set is freed, so names can be compared by pointer and a
 * profile of many frames holds each file and function name once.
 */
#ifndef CFIPROF_STRSET_H
#define CFIPROF_STRSET_H

#include <stddef.h>
#include <stdint.h>

struct strset_slot {
	uint64_t hash;
	const char *s; /* NULL: free */
};

struct strset_block;

struct strset {
	struct strset_slot *slots; /* open addressing, cap a power of two */
	uint64_t nr, cap;
	struct strset_block *blocks; /* the copies, freed together */
	uint64_t bytes;		     /* of the copies and the slots */
};

/* The set's copy of s (made on its first call), or NULL when memory runs out. */
const char *strset_intern(struct strset *set, const char *s);
/* Forgets every string; the set may be used again. */
void strset_free(struct strset *set);

#endif
