/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one way an array grows: doubled when full, so n appends cost O(n). */
#ifndef CFIPROF_VEC_H
#define CFIPROF_VEC_H

#include <stdint.h>
#include <stdlib.h>

/*
 * Room for element nr of array v (elem bytes each, *cap allocated): when
 * full, doubles it (first elements the first time).  Returns the array to use
 * from now on, or NULL when memory runs out or the size would overflow; then
 * v and *cap are unchanged and still valid.
 */
static inline void *vec_grow(void *v, size_t elem, uint64_t nr, uint64_t *cap, uint64_t first)
{
	uint64_t ncap;
	void *n;

	if (nr < *cap)
		return v;
	ncap = *cap ? *cap * 2 : first;
	if (ncap <= nr || ncap > SIZE_MAX / elem)
		return NULL;
	n = realloc(v, ncap * elem);
	if (n)
		*cap = ncap;
	return n;
}

/* vec_grow on array lvalue v in place: 0, or -1 with v unchanged. */
#define VEC_RESERVE(v, nr, cap, first)                                                             \
	({                                                                                         \
		__typeof__(v) vec_n_ = vec_grow((v), sizeof(*(v)), (nr), &(cap), (first));        \
		if (vec_n_)                                                                        \
			(v) = vec_n_;                                                              \
		vec_n_ ? 0 : -1;                                                                   \
	})

#endif
