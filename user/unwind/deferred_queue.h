/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Samples waiting for their tables: RECORD_DEFERRED records held (bounded in
 * bytes) until the process's mappings have been read after they last changed
 * before the sample (its exec, the mmap of a library), then finished with
 * deferred_walk() and handed on as if the kernel had walked them.  A walk
 * that ends at no mapping is repeated after a later load maps the pc it
 * stopped at (a few times, until the timeout), and meanwhile asks for loads:
 * the load may have read the maps while the library was briefly unmapped.
 * Those that cannot be finished (the process is gone, its tables never
 * came, the queue is full) are handed on as the kernel left them,
 * tables-pending, and counted by cause.  Nothing is dropped.
 */
#ifndef CFIPROF_DEFERRED_QUEUE_H
#define CFIPROF_DEFERRED_QUEUE_H

#include <stdint.h>

#include "user/unwind/deferred_walk.h"

struct deferred_stats {
	uint64_t received; /* RECORD_DEFERRED records */
	uint64_t finished; /* walks finished with tables loaded after the sample */
	uint64_t by_reason[STOP_REASON_MAX]; /* how every handed-on sample's walk ended */
	uint64_t gave_up_gone;		     /* process gone before its mappings were read */
	uint64_t gave_up_timeout;	     /* mappings read, tables not ready in time */
	uint64_t gave_up_full;		     /* queue over its byte bound */
	uint64_t malformed;
	uint64_t rewalked;	 /* walks at no mapping, repeated once a later load maps the pc */
	uint64_t waiting, bytes; /* now */
	uint64_t oldest_ns;	 /* when the oldest still waiting was taken, after a run (UINT64_MAX: none) */
	uint64_t bytes_peak;
	uint64_t latency_ns_max; /* sample taken -> finished */
};

/*
 * A sample handed on: finished (r is the queue's own copy) or given up (r is
 * the kernel's sample).  taken: the sample as the kernel sent it (r itself
 * when given up), whose generation its Python frames were named under.
 */
typedef void (*deferred_emit_fn)(void *ctx, const struct cfi_sample_record *r, size_t size,
				 const struct cfi_sample_record *taken);
/* A walk of pid waits for its maps to be read again (now_ns: bpf clock); the callee bounds it. */
typedef void (*deferred_reload_fn)(void *ctx, uint32_t pid, uint64_t now_ns);
/*
 * A walk finished into out (size bytes, DEFERRED_RECORD_MAX of room), the
 * kernel's part of it in v, each user frame's rbp in bps: the sample's
 * runtime may append its units for the frames past the kernel's (read from
 * the stack copy v holds).  Returns out's size.
 */
typedef size_t (*deferred_units_fn)(void *ctx, struct cfi_sample_record *out, size_t size,
				    const struct deferred_view *v, const __u64 *bps);

struct deferred_item;

struct deferred_queue {
	struct deferred_item *head, **tailp;
	struct walk_maps maps;
	uint32_t max_frames;
	uint64_t max_bytes;
	uint64_t timeout_ns;
	deferred_emit_fn emit;
	void *emit_ctx;
	deferred_reload_fn reload; /* NULL: none asked for */
	void *reload_ctx;
	deferred_units_fn units; /* NULL: none added */
	void *units_ctx;
	struct cfi_sample_record *out; /* DEFERRED_RECORD_MAX bytes */
	struct deferred_stats stats;
};

int deferred_queue_init(struct deferred_queue *q, const struct walk_maps *m, uint32_t max_frames,
			uint64_t max_bytes, uint64_t timeout_ns, deferred_emit_fn emit, void *ctx);
/* Who reads a process's mappings again for a walk waiting at no mapping. */
void deferred_queue_set_reload(struct deferred_queue *q, deferred_reload_fn fn, void *ctx);
/* Who adds a runtime's units for the frames a finished walk found. */
void deferred_queue_set_units(struct deferred_queue *q, deferred_units_fn fn, void *ctx);
/* Frees; call deferred_queue_run(final) first to hand everything on. */
void deferred_queue_free(struct deferred_queue *q);
/* A RECORD_DEFERRED of size bytes from the ring buffer (copied). */
void deferred_queue_add(struct deferred_queue *q, const void *data, size_t size);
/*
 * Finishes the queued samples whose process's mappings were read after they
 * last changed before the sample; gives up on those older than the timeout (now_ns: bpf clock),
 * or on all that cannot be finished now when final.
 */
void deferred_queue_run(struct deferred_queue *q, uint64_t now_ns, bool final);

#endif
