/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What src_lines.c (lookups) and src_lines_opener.c (the agent's opener
 * thread) share: a DWARF handle per object and the opener's queue.  Private
 * to those two files.
 */
#ifndef CFIPROF_SRC_LINES_INTERNAL_H
#define CFIPROF_SRC_LINES_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/strset.h"
#include "user/symbolize/src_lines.h"

struct cu_range {
	uint64_t start, end;
	uint32_t cu;
};

struct cu_info {
	Dwarf_Off unit_off, die_off; /* its header's, its first DIE's */
	uint64_t bytes; /* the unit's; its line program's added at its first lookup (sized) */
	bool sized, in_aranges;
	struct fn_index *fns; /* built on the unit's first lookup; counted in the handle's cost */
};

struct answer {
	uint64_t vaddr;
	uint32_t first, n; /* into frames */
	bool used;
};

struct src_lines {
	int fd;
	Elf *elf;
	char *path;
	/*
	 * fd is the inflated copy in the cache (src_lines_cache.h): private,
	 * mapped, not read; else the cache's name for it, written at the first
	 * open (NULL: none to write)
	 */
	bool inflated;
	char *cache_name;
	bool cache_written; /* by the last open, not counted yet */
	/* the last open's units, by where their ranges came from (not counted yet) */
	uint32_t units_aranges, units_die;
	uint64_t section_bytes; /* debug sections, inflated */
	bool refused;		/* too big: never opened */
	uint64_t epoch;		/* ctx->epoch when last looked up in */
	/*
	 * Periods its handle may stay unused before it is closed (0: 1), doubled
	 * up to SRC_IDLE_MAX each time it is opened again soon after an idle
	 * close: an object a host's odd sample needs now and then (libc) costs its
	 * memory, not a read of its DWARF, every period.
	 */
	uint8_t idle_limit;
	uint64_t idle_closed; /* ctx->epoch + 1 when last closed idle; 0: never */
	/* open libdw handle and what came of listing its units */
	Dwarf *dw;
	uint64_t cost;
	struct src_lines *prev, *next; /* ctx->lru */
	struct cu_info *cus;
	uint64_t nr_cus, cap_cus;
	struct cu_range *ranges;
	uint64_t nr_ranges, cap_ranges;
	/* answers, kept across handle closes */
	struct answer *ans;
	uint64_t nr_ans, cap_ans; /* cap_ans: a power of two */
	struct src_frame *frames;
	uint64_t nr_frames, cap_frames;
	struct strset strs;	     /* the frames' names and files */
	bool held;		     /* the handle is open and charged: the lookups' side only */
	uint8_t open_state;	     /* enum open_state, under the opener's lock */
	struct src_lines *open_next; /* the opener's queue, or its ready list */
	uint64_t ready_epoch;	     /* the opener's epoch when it became ready */
};

/*
 * An object's way through the opener: queued, opened there (its handle
 * fields are the opener's alone until then), then taken by a lookup.
 */
enum open_state {
	OPEN_NONE,
	OPEN_QUEUED,
	OPEN_RUNNING,
	OPEN_READY,   /* dw, elf, units listed: not charged, not in the lru yet */
	OPEN_FAILED,  /* no DWARF after all */
	OPEN_REFUSED, /* over a limit */
};

/*
 * Handles it read and no lookup took yet are not charged to max_open_bytes:
 * together they stay under a quarter of it (one at least, so a big object
 * is opened too), and one not taken within the interval after the one it
 * was read in is dropped (its process gone, say).
 */
struct src_opener {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* work queued; an open done; a ready one taken or dropped */
	pthread_t thread;
	bool stopping;
	struct src_lines *head, *tail;
	struct src_lines *ready; /* OPEN_READY, not taken */
	uint64_t ready_bytes, max_ready_bytes, max_object_bytes;
	uint64_t epoch; /* src_lines_close_idle calls, for the ready ones' age */
};

/* The handle's memory, whoever opened it. */
void src_lines_handle_drop(struct src_lines *sl);

/*
 * Reads the sections, opens libdw and lists the units into sl's handle,
 * touching nothing of the ctx (the opener runs it beside the lookups).
 */
enum open_state src_lines_handle_read(struct src_lines *sl, uint64_t max_object_bytes);

/* A handle read (here or by the opener) becomes an open one: counted, charged, in the lru. */
void src_lines_handle_adopt(struct src_lines_ctx *ctx, struct src_lines *sl);

/*
 * The lookup side of an object without an open handle: 0 when the opener
 * has its handle ready (taken now), 1 while it is queued or being opened
 * (queued now if it was not), -1 when it could not be opened.
 */
int src_opener_take(struct src_lines_ctx *ctx, struct src_lines *sl);

/* sl leaves the opener's queue, after the open under way if it is sl's. */
void src_opener_forget(struct src_opener *op, struct src_lines *sl);

/* An interval's end: ready handles no lookup took since the last one are dropped (how many). */
uint64_t src_opener_age(struct src_opener *op);

#endif
