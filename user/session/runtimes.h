/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The language runtimes a session runs (user/runtimes/runtime.h): made at
 * its start, told of its samples, asked to name them, to wait for what they
 * read, to sum up.  runtimes.c is the one list of them.
 */
#ifndef CFIPROF_SESSION_RUNTIMES_H
#define CFIPROF_SESSION_RUNTIMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/cfiprof_abi.h"
#include "user/runtimes/runtime.h"

struct frame_namer;

/* One runtime of a session, by enum cfi_runtime (ops NULL: not listed). */
struct session_runtime {
	const struct runtime_ops *ops;
	void *rt;		    /* its instance */
	struct interp_namer namer;  /* its frames' namer (ops->namer) */
	struct runtime_hooks hooks; /* what the tracker calls */
};

struct session_runtimes {
	struct session_runtime by_id[RT_MAX];
	/* the hooks of every runtime, for the tracker (struct proc_tracker_opts), and the first
	 * process's (session_runtimes_on_first_proc), last */
	struct runtime_hooks hooks[RT_MAX + 1];
	uint32_t nr_hooks;
	int procs_fd;
	void (*first_proc)(void *ctx);
	void *first_ctx;
	bool first_seen; /* first_proc was called (atomic: the load thread and the start) */
};

/*
 * Each listed runtime's instance but those of off (a bit each, 1 << id),
 * procs_fd its runtime_procs map: 0, or -1 out of memory.
 */
int session_runtimes_start(struct session_runtimes *sr, int procs_fd, uint32_t off);
/*
 * --runtimes's list (names as runtime_table.h lists them, comma-separated;
 * "all", "none") into *off, the runtimes not read: 0, or -1 and why in err.
 */
int session_runtimes_parse(const char *list, uint32_t *off, char *err, size_t errlen);
/* The runtimes' names, comma-separated, for help texts. */
extern const char *const session_runtime_names;
void session_runtimes_free(struct session_runtimes *sr);
/*
 * fn(ctx), once, on the tracker's thread, when a load finds the first process
 * a runtime's detector claims (its runtime_procs entry written by the hooks
 * before this one's).  Before the tracker is made: its hooks are a copy.
 */
void session_runtimes_on_first_proc(struct session_runtimes *sr, void (*fn)(void *ctx), void *ctx);
/* Whether that first process was found (fn called), from any thread. */
bool session_runtimes_first_seen(const struct session_runtimes *sr);
/* The consumer saw sample r (size bytes, checked): its runtime's note. */
void session_runtimes_note(struct session_runtimes *sr, const struct cfi_sample_record *r,
			   size_t size);
/* A deferred sample r, finished under another generation than taken_gen: its runtime's carry. */
void session_runtimes_carry(struct session_runtimes *sr, const struct cfi_sample_record *r,
			    size_t size, uint32_t taken_gen);
/* Waits (timeout seconds in all, at most) for what the runtimes read for their samples. */
/* deferred_units_fn for the session's deferred queue (ctx: the session_runtimes) */
size_t session_runtimes_deferred_units(void *ctx, struct cfi_sample_record *out, size_t size,
				       const struct deferred_view *v, const __u64 *bps);
void session_runtimes_wait(struct session_runtimes *sr, double timeout);
void session_runtimes_sweep(struct session_runtimes *sr);
void session_runtimes_summary(struct session_runtimes *sr, const uint64_t *counters, FILE *f);
void session_runtimes_metrics(struct session_runtimes *sr, const uint64_t *counters, FILE *f);
/*
 * Each runtime's namer and label decoder into fn (and names, when not NULL,
 * for a recording's writer).  sr NULL: a recording's, read without the
 * processes (report): frames are named as the recording kept them.
 */
void session_runtimes_namers(struct session_runtimes *sr, struct frame_namer *fn,
			     const struct interp_namer **names);

#endif
