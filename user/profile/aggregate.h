/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counting identical stacks: (pid, comm, stop reason, event, deferred or
 * not, off-CPU sum's cause, kernel PCs, user PCs, Python frames) -> count and
 * weight.
 */
#ifndef CFIPROF_AGGREGATE_H
#define CFIPROF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct agg_stack {
	struct agg_stack *next;
	uint64_t count;
	uint64_t weight; /* the records' weights summed (periods, hits, off-CPU ns) */
	uint32_t event;	 /* which of the session's events: part of the key */
	uint64_t hash;
	uint32_t pid, tid;
	uint64_t cgroup_id;
	uint32_t generation; /* which of the pid's mapping sets the PCs belong to */
	char comm[COMM_LEN];
	uint8_t reason, flags;
	uint16_t nr_kernel, nr_user;
	uint16_t nr_rt; /* the runtime's units after the PCs (struct cfi_sample_record's) */
	uint8_t rt_status, runtime;
	uint64_t pcs[]; /* kernel PCs leaf first, then user PCs leaf first, then runtime units */
};

struct aggregator {
	struct agg_stack **buckets;
	uint32_t nr_buckets;
	uint64_t nr_stacks, max_stacks;
	uint64_t samples;		   /* records accepted (counted or overflowed) */
	uint64_t overflow;		   /* samples of new stacks beyond max_stacks */
	uint64_t overflow_weight;	   /* ... their weights */
	uint64_t malformed;		   /* records shorter than they claim */
	uint64_t late;			   /* taken before the previous interval's end (agent) */
	uint64_t waited;		   /* arrived while this interval's end waited (agent) */
	uint64_t by_reason[STOP_REASON_MAX];
	uint64_t unknown_reason; /* samples whose reason CFI_STOP_REASONS does not list */
	uint64_t user_frames, user_samples; /* for frames per sample */
	uint64_t in_kernel;
	/* bit per event index (< 32): its samples' weights estimate hits past a budget */
	uint32_t estimated_events;
};

int agg_init(struct aggregator *a, uint64_t max_stacks);
void agg_free(struct aggregator *a);
/* Adds one ring-buffer sample record of size bytes; returns 0 or -1 if malformed. */
int agg_add(struct aggregator *a, const struct cfi_sample_record *r, size_t size);
/* The same stack seen count times, weighing r->weight together (re-reading a saved recording). */
int agg_add_n(struct aggregator *a, const struct cfi_sample_record *r, size_t size, uint64_t count);
/* All stacks, most samples first; the array is malloc'd, the stacks stay owned by a. */
struct agg_stack **agg_sorted(struct aggregator *a, uint64_t *nr);

#endif
