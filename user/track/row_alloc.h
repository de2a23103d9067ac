/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Allocation of index ranges in the global BPF rows array. */
#ifndef CFIPROF_ROW_ALLOC_H
#define CFIPROF_ROW_ALLOC_H

#include <stddef.h>
#include <stdint.h>

struct row_range {
	uint32_t start, len;
};

struct row_alloc {
	uint32_t total;
	uint32_t used;
	struct row_range *free; /* sorted by start, coalesced */
	size_t nr_free, cap_free;
};

int row_alloc_init(struct row_alloc *ra, uint32_t total);
void row_alloc_destroy(struct row_alloc *ra);
/* First fit; returns the start index or -1 when no free range is large enough. */
int64_t row_alloc_get(struct row_alloc *ra, uint32_t len);
void row_alloc_put(struct row_alloc *ra, uint32_t start, uint32_t len);

#endif
