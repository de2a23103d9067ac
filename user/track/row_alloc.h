/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Allocation of index ranges in the global BPF rows array.  A freed range is
 * quarantined for grace_ns before it can be handed out again: a walk on
 * another CPU may still read it after the page index entries leading to it
 * were deleted.
 */
#ifndef CFIPROF_ROW_ALLOC_H
#define CFIPROF_ROW_ALLOC_H

#include <stddef.h>
#include <stdint.h>

struct row_range {
	uint32_t start, len;
};

struct row_quarantined {
	uint32_t start, len;
	uint64_t due_ns; /* CLOCK_MONOTONIC: free from then on */
};

struct row_alloc {
	uint32_t total;
	uint32_t used;	      /* handed out: neither free nor quarantined */
	uint32_t quarantined; /* retired less than grace_ns ago */
	uint64_t grace_ns;
	struct row_range *free; /* sorted by start, coalesced */
	size_t nr_free, cap_free;
	struct row_quarantined *q; /* oldest first */
	size_t q_head, nr_q, cap_q;
};

int row_alloc_init(struct row_alloc *ra, uint32_t total);
void row_alloc_destroy(struct row_alloc *ra);
/* First fit; returns the start index or -1 when no free range is large enough. */
int64_t row_alloc_get(struct row_alloc *ra, uint32_t len);
/* Frees a range at once (nothing can read it any more). */
void row_alloc_put(struct row_alloc *ra, uint32_t start, uint32_t len);
/* Frees a range after the grace period (now_ns: CLOCK_MONOTONIC); 0 on success. */
int row_alloc_retire(struct row_alloc *ra, uint32_t start, uint32_t len, uint64_t now_ns);
/* Frees the quarantined ranges whose grace period has passed by now_ns. */
void row_alloc_expire(struct row_alloc *ra, uint64_t now_ns);
/*
 * When freeing every quarantined range would leave a free range of len rows:
 * the time the last of them is due; 0 when the quarantine would not help.
 */
uint64_t row_alloc_fits_after(const struct row_alloc *ra, uint32_t len);

#endif
