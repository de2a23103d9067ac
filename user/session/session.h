/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A profiling session: the BPF side loaded and attached, the process tracker
 * and its table load thread, and the ring-buffer consumer on its own thread
 * feeding the aggregator.  `record`, `top` (and later the agent) are front
 * ends over it.
 */
#ifndef CFIPROF_SESSION_H
#define CFIPROF_SESSION_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "common/clock.h"
#include "user/profile/aggregate.h"
#include "user/session/bpf_program.h"
#include "user/session/event_spec.h"
#include "user/session/offcpu_unwalked.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/ksym_events.h"
#include "user/symbolize/sym_fetch.h"
#include "user/track/proc_tracker.h"
#include "user/session/runtimes.h"
#include "user/unwind/deferred_queue.h"
#include "user/track/table_store.h"

#define SESSION_MAX_PIDS 256
/* seconds the tables of an object no process maps stay loaded (record, top; agent default) */
#define SESSION_TABLE_IDLE_TTL 30.0

/* Stack bytes a tables-pending sample carries by default: deep C++ (clang) needs ~64 KiB. */
#define SESSION_DEFER_STACK (64 * 1024)
/* Table cache bound: libLLVM's tables take ~3.5 MB, a distribution's libraries ~100 MB. */
#define SESSION_TABLE_CACHE_BYTES (256ull << 20)

/* probe / tracepoint / off-CPU hits one process may have sampled per second */
#define SESSION_EVENT_BUDGET 1000
/* event_budget: every hit sampled, no budget (record's default: exact counts) */
#define SESSION_EVENT_EXACT UINT32_MAX

struct session_opts {
	uint32_t pids[SESSION_MAX_PIDS];
	int nr_pids;
	bool all;
	char cgroup[PATH_MAX]; /* resolved cgroup v2 directory ("" = none) */
	char **cmd;
	/* the command's stderr when cfiprof's own is held back (record -q); <= 2: inherit it */
	int cmd_stderr;
	uint32_t freq;
	uint32_t max_frames;
	bool kernel;
	bool tail_calls;
	/* runtimes whose frames are not read, a bit each (1 << id): --runtimes (0: all read) */
	uint32_t runtimes_off;
	bool runtime_walks_first; /* --runtimes-at-start */
	bool cycles;
	/* -e, --off-cpu, --on-and-off-cpu (empty: cpu-clock, or cycles) */
	struct event_list events;
	bool explicit_events; /* -e was given */
	uint64_t period;      /* perf events: every this many events (0: -F) */
	uint64_t min_block_ns;
	uint32_t
	    event_budget; /* hits per process per second (0: SESSION_EVENT_BUDGET; or _EXACT) */
	uint32_t rows_max;
	uint64_t max_table_bytes; /* 0: the rows map bounds the tables */
	double table_idle_ttl;	  /* seconds an unused object's tables stay loaded */
	uint32_t max_procs;	  /* 0: the procs map bounds the processes */
	uint64_t max_stacks;
	uint32_t ringbuf_bytes; /* 0: the default (8 MiB) */
	uint32_t defer_stack;	/* stack bytes a tables-pending sample carries (0: off) */
	uint64_t defer_budget;	/* bytes of those per second (0: from the rate, see session.c) */
	char table_cache[PATH_MAX]; /* compiled tables kept here ("": no cache) */
	uint64_t table_cache_bytes; /* its bound (0: SESSION_TABLE_CACHE_BYTES) */
	uint32_t build_workers;	    /* tables one load builds at once (0: CPUs, at most 4) */
	/* stripped objects' debug files fetched from debuginfod ($DEBUGINFOD_URLS), bounded */
	bool debuginfod;
	struct sym_fetch_opts fetch;
	bool no_inherit; /* -p / COMMAND only, not the processes they fork */
	bool lines;	 /* objects keep their DWARF: source lines and inline frames */
	bool warm_lines; /* open DWARF while sampling: lookups come only at the end (record) */
	bool verbose;
};

struct session {
	struct session_opts opts;
	struct loader ld;
	struct map_early early_maps; /* the largest maps, created beside the start */
	struct table_store ts;
	bool ts_ready;
	struct sym_cache *syms;
	struct sym_fetch *fetch; /* NULL: no debuginfod */
	struct proc_tracker *pt;
	struct session_runtimes runtimes; /* the language runtimes (runtimes.c lists them) */
	/* the consumer thread adds; readers (top, the end of record) swap or lock */
	pthread_mutex_t agg_lock;
	struct aggregator agg;
	struct ring_buffer *rb;
	struct walk_maps_bpf walk_fds;
	struct cfi_table_cache *table_cache;
	/* kernel symbols, read on a thread while the BPF programs load (kernel stacks only) */
	pthread_t ksyms_thread;
	bool ksyms_started;
	struct ksyms *ksyms;
	char ksyms_err[256];
	struct ksym_events *ksym_events; /* code loaded after kallsyms was read */
	/*
	 * Samples taken before last_boundary_ns (bpf clock, the last interval's
	 * end) that arrive while late_agg is set (the agent, between that end
	 * and the interval's flush) join that interval; under agg_lock.  Those
	 * that arrive after it was flushed are counted in the next one's late.
	 */
	struct aggregator *late_agg;
	uint64_t last_boundary_ns;
	/*
	 * Where the consumer's time went, for a run whose records waited (ring
	 * full, deferred samples too late): its longest pass's parts, each the
	 * longest seen (ns); consumer thread only until it is joined.
	 */
	struct {
		uint64_t records_ns;  /* handling the records of one pass (not waiting for them) */
		uint64_t snapshot_ns; /* one process's mappings read at its first deferred sample */
		uint64_t deferred_ns; /* one deferred_queue_run */
		uint64_t unwalked_ns; /* one session_take_unwalked */
		uint64_t pass_records_ns; /* the pass under way's, so far */
	} consumer_longest;
	/* published by the consumer after each pass: its count, and the oldest deferred sample */
	uint64_t consumer_passes;
	uint64_t deferred_oldest_ns;
	struct deferred_queue deferred; /* consumer thread only (until it is joined) */
	struct offcpu_unwalked unwalked; /* consumer thread only (until it is joined) */
	uint64_t unwalked_taken_ns;
	bool deferred_ready;
	pthread_t consumer;
	bool consumer_started;
	volatile bool consumer_stop;
	uint64_t records, events;
	pid_t child;
	int go_fd;
	struct rlimit nofile_orig; /* RLIMIT_NOFILE before cfiprof raised it: the command's */
	int cgroup_fd;
	bool child_done;
	bool exec_failed;
	bool child_held; /* it stops after its exec (ptrace was not refused it) */
	int child_status;
	double start; /* monotonic seconds */
	uint64_t start_unix_ns;
};

extern volatile sig_atomic_t session_stop_requested;

/* Loads, attaches and starts everything; the command (if any) starts running. */
int session_start(struct session *s, const struct session_opts *o);
/*
 * Waits until Ctrl-C / SIGTERM, the deadline (monotonic seconds, 0 = none),
 * the command's exit or every -p process's, calling tick about once a second.
 */
void session_wait(struct session *s, double deadline, void (*tick)(struct session *, void *),
		  void *ctx);
/* Detaches the perf events and drains everything that was sampled. */
void session_stop(struct session *s);
/* How much of the run the summary says: nothing, what a user acts on, or all of it (-v). */
enum summary_level { SUMMARY_QUIET, SUMMARY_SHORT, SUMMARY_FULL };

void session_print_summary(struct session *s, FILE *f, enum summary_level level);
/*
 * The kernel symbols the session started reading at its start (NULL, and why
 * in err, when they are unavailable or kernel stacks are off); the caller
 * owns them.  Waits for the read if it is still going.
 */
struct ksyms *session_kernel_symbols(struct session *s, char *err, size_t errlen);
/* Names in k the kernel code (other tools' BPF programs) loaded since the last call. */
void session_kernel_symbols_update(struct session *s, struct ksyms *k);
/* The BPF counters, walks finished in user space (deferred) counted under their final reason. */
void session_read_counters(struct session *s, uint64_t c[CNT_MAX]);
void session_free(struct session *s);
/*
 * The end of an interval for a caller that swaps aggregators (the agent): in
 * one step, the current aggregator goes to *closing and *fresh takes its
 * place, and the samples taken before now go to *closing as they arrive (the
 * ring buffer's backlog and the deferred samples finished late alike) until
 * session_interval_close.  Returns the boundary as CLOCK_REALTIME ns.
 */
uint64_t session_interval_swap(struct session *s, struct aggregator *fresh,
			       struct aggregator *closing);
/*
 * Waits (at most timeout seconds) until the consumer has drained what was
 * sampled before the interval's end and no deferred sample of it waits,
 * then routes new samples to the current aggregator only.  Returns whether
 * it drained in time (samples that come later are counted in agg.late).
 */
bool session_interval_close(struct session *s, double timeout);
struct prof_event;
/*
 * The profile's events (user/profile/profile.h) of a session with -e or
 * off-CPU; 0 for the default CPU profile, whose values are sample counts.
 */
size_t session_prof_events(const struct session *s, struct prof_event *out);
/* Sums the counters: samples taken, complete, lost (for progress lines). */
void session_progress(struct session *s, uint64_t *samples, uint64_t *complete, uint64_t *lost);

#endif
