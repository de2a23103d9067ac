/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind rows for HotSpot's code cache: the blobs a walk of it finds
 * (hotspot_codecache.h) turned into an ordinary cfi_table (tables/
 * cfi_table.h), whose addresses are the process's own (bias 0).  The rules
 * and how the table is keyed and replaced: hotspot_rows.c.
 */
#ifndef CFIPROF_HOTSPOT_ROWS_H
#define CFIPROF_HOTSPOT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "tables/cfi_table.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"

/* What the rows of one blob are, by what the blob says of its frame. */
enum hotspot_frame_kind {
	HOTSPOT_FRAME_NONE = 0, /* no row: its frame is not known (frame size -1 or 0) */
	HOTSPOT_FRAME_SIZED,	/* frame size words, from the frame-complete offset on */
	HOTSPOT_FRAME_FP,	/* rbp is its frame pointer (the template interpreter) */
};

enum hotspot_frame_kind hotspot_frame_kind(const struct hotspot_blob *b);

/* The blobs of one walk of a process's code cache, in the walk's (address) order. */
struct hotspot_code {
	struct hotspot_blob *blob;
	size_t n, cap;
};

/*
 * A hotspot_blob_fn for hotspot_blobs_walk(): appends blob to the
 * struct hotspot_code arg; non-zero (ending the walk) when out of memory.
 */
int hotspot_code_add(const struct hotspot_blob *blob, void *arg);
void hotspot_code_free(struct hotspot_code *c);

/*
 * Whether the code of a walk changed from another's, as the rows see it:
 * a digest of every blob's code range, frame, compile id and state.
 */
uint64_t hotspot_code_digest(const struct hotspot_code *c);

struct hotspot_rows_stats {
	uint32_t sized; /* blobs with frame-size rows (nmethods, runtime stubs) */
	uint32_t fp;	/* ... with the frame-pointer rule */
	uint32_t none;	/* blobs left without rows: frame not known */
	uint32_t bad;	/* refused: a range or frame no rule can hold */
};

/*
 * The rows of blobs[0, n) (disjoint, as one walk gives them) as a table of
 * absolute addresses: 0 with *out set (a table with no rows when no blob
 * has any), or a negative cfi_err (CFI_ERR_BUDGET past budget, which may be
 * NULL: the defaults).  *stats and diag may be NULL.
 */
int hotspot_rows_build(const struct hotspot_blob *blobs, size_t n, const struct cfi_budget *budget,
		       struct cfi_table **out, struct hotspot_rows_stats *stats,
		       struct cfi_diag *diag);

#endif
