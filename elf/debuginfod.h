/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fetching debug files by build-id from debuginfod servers (libdebuginfod:
 * $DEBUGINFOD_URLS, its cache in $DEBUGINFOD_CACHE_PATH or
 * ~/.cache/debuginfod_client), off the caller's thread: a request is queued
 * and never waits; worker threads fetch, each fetch bounded in time (from its
 * start to its last byte, retries included) and in size, and hand the result
 * to the request's callback.  What arrives is untrusted: the callback checks
 * it (debug_file_take, elf/debug_file.h) before reading it.
 */
#ifndef CFIPROF_ELF_DEBUGINFOD_H
#define CFIPROF_ELF_DEBUGINFOD_H

#include <stdbool.h>
#include <stdint.h>

#define DBGD_TIMEOUT_DEFAULT   (10ull * 1000 * 1000 * 1000)
#define DBGD_MAX_BYTES_DEFAULT (512ull << 20)
#define DBGD_WORKERS_DEFAULT   2
#define DBGD_QUEUE_DEFAULT     256

struct dbgd_opts {
	uint64_t timeout_ns; /* one fetch (0: DBGD_TIMEOUT_DEFAULT) */
	uint64_t max_bytes;  /* one file (0: DBGD_MAX_BYTES_DEFAULT) */
	uint32_t workers;    /* fetches at once (0: DBGD_WORKERS_DEFAULT) */
	uint32_t max_queue;  /* requests waiting (0: DBGD_QUEUE_DEFAULT) */
};

enum dbgd_outcome {
	DBGD_FETCHED,	/* downloaded */
	DBGD_CACHED,	/* from libdebuginfod's cache */
	DBGD_NOT_FOUND, /* no server has it */
	DBGD_TIMED_OUT,
	DBGD_TOO_LARGE,
	DBGD_FAILED,	/* any other error (server down, refused connection) */
	DBGD_CANCELLED, /* stopped before or while it ran */
	DBGD_OUTCOME_MAX,
};

/*
 * Called once per request on a worker thread (or, for requests cancelled
 * while queued, by dbgd_free): @fd >= 0 (the callee's to close) and @path
 * with outcome FETCHED or CACHED, else fd -1.
 */
typedef void (*dbgd_done_fn)(void *ctx, const char *build_id, enum dbgd_outcome outcome, int fd,
			     const char *path);

struct dbgd;

/* Starts the workers. NULL on failure (errno). */
struct dbgd *dbgd_new(const struct dbgd_opts *o);
/* Queues a fetch of @build_id (hex). 0, -EAGAIN when the queue is full, -EINVAL, -ENOMEM. */
int dbgd_request(struct dbgd *d, const char *build_id, dbgd_done_fn fn, void *ctx);
/* Waits until no fetch is queued or running, or until @deadline_ns (mono clock); true if idle. */
bool dbgd_wait(struct dbgd *d, uint64_t deadline_ns);
/* Cancels what is queued or running (each callback still called once), joins the workers. */
void dbgd_free(struct dbgd *d);

struct dbgd_stats {
	uint64_t outcomes[DBGD_OUTCOME_MAX];
	uint64_t queue_full; /* requests refused */
	uint64_t bytes;	     /* of the files fetched or taken from the cache */
	uint64_t busy_ns;    /* time the workers spent fetching */
};
void dbgd_get_stats(struct dbgd *d, struct dbgd_stats *out);
const char *dbgd_outcome_name(enum dbgd_outcome o);

#endif
