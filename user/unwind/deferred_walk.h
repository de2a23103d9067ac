/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Finishing in user space a walk the kernel stopped for lack of tables: the
 * kernel sent its walker state and a copy of the user stack
 * (RECORD_DEFERRED); once the process's tables are loaded, bpf/walker.h
 * built as ordinary C carries on from there over that copy.
 */
#ifndef CFIPROF_DEFERRED_WALK_H
#define CFIPROF_DEFERRED_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/unwind/walk_maps.h"

/* A RECORD_DEFERRED taken apart; the pointers are into the record. */
struct deferred_view {
	const struct cfi_deferred_record *d;
	const __u8 *stack;		     /* d->stack_len bytes from d->stack_base */
	const struct cfi_sample_record *rec; /* the sample as far as the kernel walked it */
	size_t rec_size;
	uint32_t leaf_flags; /* deferred_walk's: the leaf's mapping's CFI_MAPPING_* (0: none) */
	uint32_t leaf_run;   /* deferred_walk's: user frames from the leaf in the leaf's object */
};

/* Checks a RECORD_DEFERRED of size bytes; false when it is malformed. */
bool deferred_parse(const void *data, size_t size, struct deferred_view *v);

/* Bytes of the finished sample record: room for every pc a walk may emit. */
#define DEFERRED_RECORD_MAX                                                                        \
	(sizeof(struct cfi_sample_record) +                                                        \
	 (MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT) * sizeof(__u64) + RT_RECORD_BYTES)

enum deferred_outcome {
	DEFERRED_FINISHED, /* out holds the whole sample */
	DEFERRED_WAIT,	   /* the tables the walk needs are still pending: try again later */
};

/*
 * Carries on the walk of v with the tables in m, up to max_frames user frames,
 * into out (DEFERRED_RECORD_MAX bytes, 8-byte aligned): kernel pcs, the user
 * pcs the kernel walked, then the rest, then the Python frames the kernel
 * read.  The finished sample is flagged SAMPLE_DEFERRED and names its pcs
 * (and Python frames) with the process's current generation.  missing_pc
 * (NULL: not wanted): the address a walk ending at no mapping looked up, else 0.
 * final: no later tables will come (out of time, or the end): JIT code
 * without rows (CFI_MAPPING_JIT) is walked by frame pointers, not waited for.
 */
enum deferred_outcome deferred_walk(const struct walk_maps *m, struct deferred_view *v,
				    __u32 max_frames, bool final, struct cfi_sample_record *out,
				    size_t *out_size, __u64 *missing_pc);

/*
 * The rbp of each user frame of this thread's last deferred_walk (0 where
 * not known), indexed as out's user pcs: those past the kernel's
 * (v->rec->nr_user on) are its walk's own.
 */
const __u64 *deferred_walk_bps(void);

/* len bytes at addr of v's stack copy into dst: false outside it or in a chunk it lacks. */
bool deferred_copy_read(const struct deferred_view *v, __u64 addr, void *dst, size_t len);

#endif
