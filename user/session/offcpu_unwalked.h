/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Off-CPU time without a stack (bpf/events.bpf.h, offcpu_unwalked): blocks
 * refused by the event budget, those of threads past the pending samples'
 * room, those the ring buffer had no room for.  The BPF side sums their
 * nanoseconds per process and cause and never resets a sum; this takes each
 * sum's growth since it last looked and adds it to the profile as a stack of
 * no frames (flags SAMPLE_UNWALKED_MASK: "[not walked: event budget]" under
 * the process), so the profile's total stays the time its threads blocked.
 */
#ifndef CFIPROF_OFFCPU_UNWALKED_H
#define CFIPROF_OFFCPU_UNWALKED_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct unwalked_seen;

struct offcpu_unwalked {
	int fd;			    /* the map; -1: no off-CPU profile */
	uint32_t event;		    /* the off-CPU event's index in the session's events */
	struct unwalked_seen *seen; /* each entry's sums when last taken, by key */
	uint64_t nr_seen, cap_seen;
	/* taken so far, by cause (read by other threads: __atomic) */
	uint64_t ns[UNWALKED_MAX], blocks[UNWALKED_MAX];
};

/* The samples taken: add one with count blocks (r->weight their nanoseconds). */
typedef void (*unwalked_add_fn)(void *ctx, const struct cfi_sample_record *r, uint64_t count);

/* fd < 0: nothing to take.  Makes tgid 0's entry of each cause (where a full map sums). */
int offcpu_unwalked_init(struct offcpu_unwalked *u, int fd, uint32_t event);
/*
 * Adds every sum's growth since the last call as a sample stamped now_ns;
 * forgets (in the map too) the entries of processes that are gone and did
 * not grow.  One thread at a time.  0, or -1 (out of memory: taken next time).
 */
int offcpu_unwalked_take(struct offcpu_unwalked *u, uint64_t now_ns, unwalked_add_fn add,
			 void *ctx);
void offcpu_unwalked_totals(const struct offcpu_unwalked *u, uint64_t ns[UNWALKED_MAX],
			    uint64_t blocks[UNWALKED_MAX]);
void offcpu_unwalked_free(struct offcpu_unwalked *u);

#endif
