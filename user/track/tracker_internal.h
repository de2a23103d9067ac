/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the process tracker's files share; proc_tracker.h is the public API.
 *
 *   proc_tracker.c  the pid registry: lookup, generation history, iteration, stats
 *   mappings.c      /proc/PID/maps entries resolved to objects, their BPF keys
 *   work_queue.c    the load thread's queue: requests, and loads moved ahead for waiting samples
 *   load_thread.c   the table load thread: its queue's loop, start, drain, stop
 *   proc_load.c     one load of a process (tracker_load_proc), within its time
 *   table_builds.c  the tables one load lacks, built on a bounded set of workers
 *   eviction.c      exits, delayed unloads, caps and least-recently-sampled eviction
 *   forget.c        dropping exited processes and sweeping gone ones
 *   saved_maps.c    report mode: mappings read from a saved recording
 *
 * Two locks: load_lock serializes every load, exit, unload and forget
 * (whichever thread asks); lock guards the registry and the queue and is
 * never held across a table build, a BPF call or a scan of every mapping:
 * the consumer takes it for every sample.  The registry and the mapping sets
 * change only with both held, so whoever holds load_lock reads them freely.
 * Functions that need one say so.
 */
#ifndef CFIPROF_TRACKER_INTERNAL_H
#define CFIPROF_TRACKER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "elf/safe_open.h"
#include "user/track/file_index.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_stat.h"
#include "user/track/proc_tracker.h"
#include "user/track/runtime_hooks.h"

/* Each runtime's hook h of the tracker (user/track/runtime_hooks.h), when it has one. */
#define FOR_EACH_RUNTIME(pt, h)                                                                    \
	for (const struct runtime_hooks *h = (pt)->opts.runtimes;                                  \
	     h && h < (pt)->opts.runtimes + (pt)->opts.nr_runtimes; h++)

#define QUEUE_CAP  65536
#define NR_BUCKETS 4096

/* Processes waiting for a load of what their last one ran out of time for. */
#define RESUMES_HELD 16

/* Processes known to map more than BIG_LOAD_MAPPINGS: their loads wait behind the others'. */
#define BIG_PIDS_HELD 64

struct work_item {
	uint32_t pid;
	uint16_t kind;	  /* enum tracker_work */
	uint16_t yielded; /* a big load sent to the back of the queue once already */
	uint64_t time_ns;
};

/* Called as the table of name starts (true) and ends (false), on the thread building it: tests. */
typedef void (*build_hook_fn)(void *ctx, const char *name, bool start);

/* Hints of what deferred samples wait for: the pid and the pc where their walk stopped. */
#define WAIT_HINTS 8

struct wait_hint {
	uint32_t pid;
	uint64_t pc;
};

/*
 * A process's executable mappings and their files, read by the consumer when
 * its first deferred samples arrive (snapshots.c): a process that exits
 * before the load thread reaches it (a compiler's as, a script's mkdir) is
 * loaded from this instead, so those samples still finish.  pt->lock guards
 * the list; a snapshot taken off it belongs to its taker.
 */
struct proc_snapshot {
	struct proc_snapshot *next;
	uint32_t pid;
	bool exit_seen;		 /* an exit event of pid came after it was taken */
	bool only_source;	 /* the process is gone: nothing is opened through /proc */
	bool at_exit;		 /* the kernel's list at the process's exit */
	uint64_t start_time;	 /* from /proc/PID/stat: a reused pid is another process */
	uint64_t taken_ns;	 /* mono clock, before its maps were read */
	uint32_t nr_taken;	 /* snapshots of this process so far, this one included */
	uint32_t nr;		 /* entries, and fds */
	uint32_t nr_fds;	 /* of those open */
	struct maps_entry *ents; /* sorted by start; one block with their paths */
	int *fds;		 /* per entry: the mapped file (a vDSO copy), or -1 */
};

/* The load thread's queue and state (work_queue.c, load_thread.c); under lock unless said. */
struct tracker_load_queue {
	pthread_cond_t work_cond, idle_cond;
	struct work_item *queue;
	uint32_t q_head, q_len;
	bool stopping, discard, busy, started;
	int cancel_builds; /* atomic: a discarding stop ends the builds under way */
	pthread_t thread;
	/* processes whose last load ran out of time, loaded again when the queue is empty */
	uint32_t resume_pids[RESUMES_HELD];
	uint32_t nr_resumes;
	/* processes whose last maps read was big, newest first (proc_load.c) */
	uint32_t big_pids[BIG_PIDS_HELD];
	uint32_t nr_big;
	uint32_t draining; /* callers waiting for the queue to empty: no resumes then */
};

/* Snapshots of processes whose samples wait, and their budget (snapshots.c); under lock. */
struct tracker_snapshots {
	struct proc_snapshot *snaps;
	/* files loads opened, held for processes gone before their maps were read */
	struct file_index files;
	/* the consumer's: exit lists being gathered, one per process exiting at once */
	struct exit_list *exit_lists; /* EXIT_LISTS_GATHERED */
	uint32_t nr_snaps, snap_fds;
	uint64_t snap_window_ns, snap_window_spent_ns;
	uint32_t snap_window_taken;
	bool snap_refusal_logged;
};

/* Loads for deferred walks that ended at no mapping (proc_tracker_reload_for_walk); lock. */
struct tracker_reloads {
	struct wait_hint hints[WAIT_HINTS]; /* the newest first */
	uint64_t reload_slot;		    /* the bound for all processes */
	uint32_t reload_slot_used;
};

struct proc_tracker {
	struct proc_tracker_opts opts; /* as given to proc_tracker_new */
	uint32_t keys_per_pid;	       /* LPM keys one process may hold (0: no quota) */
	uint64_t load_budget_ns;       /* a load's time (0: LOAD_TIME_BUDGET_NS; tests shorten it) */
	build_hook_fn build_hook;
	void *build_hook_ctx;

	pthread_mutex_t lock;
	pthread_mutex_t load_lock; /* one load / exit at a time, whichever thread asks */
	struct tracker_load_queue work;

	struct proc *buckets[NR_BUCKETS];
	uint32_t generation;
	uint32_t nr_procs, nr_live;
	uint32_t nr_unload_due;	 /* exited processes whose tables are still loaded */
	struct proc *due_head, *due_tail; /* those, by unload_due_ns (one delay for all) */
	uint64_t next_expire_ns; /* next check of idle tables past their ttl */
	uint32_t loading_pid;	 /* never the one unloaded to make room for its own tables */
	struct tracker_reloads reload;
	struct tracker_snapshots snap;
	struct tracker_stats stats;
	/* what the tests measure: work done by reloads, and the lock time of forgets */
	uint64_t pair_steps;	 /* old and new mappings compared while pairing them */
	uint64_t unload_steps;	 /* processes unload_due_procs looked at */
	/* the CPU time the last proc_tracker_forget_exited spent holding lock (not its waits) */
	uint64_t forget_lock_cpu_ns;
};

/*
 * Loads for deferred walks that ended at no mapping (proc_tracker_reload_for_walk).
 * A process mapping and unmapping libraries in a loop asks for loads by its
 * own changes, so they read its maps in the middle of one (lazybind: most
 * saw liblazy.so without liblazyext.so), and the kernel holds back its other
 * requests (10 ms per process for its samples', 1 ms for its changes').  One
 * load per 20 ms per process reads them at other moments, well within what
 * that limit lets a process ask for; all processes together get 200 a
 * second, a fifth of the kernel's global budget, and only while no other
 * process's load waits.
 */
#define RELOAD_FOR_WALKS_GAP_NS	   (20ull * 1000 * 1000)
#define RELOAD_SLOT_NS		   (100ull * 1000 * 1000)
#define RELOADS_FOR_WALKS_PER_SLOT 20
/* A discarding stop is under way: what a load has not built or read yet is not needed. */
static inline bool builds_cancelled(struct proc_tracker *pt)
{
	return __atomic_load_n(&pt->work.cancel_builds, __ATOMIC_RELAXED) != 0;
}

static inline bool is_live(const struct proc *p)
{
	return p->loaded && !p->exited;
}

/* Counters are bumped with or without lock, and copied under it: atomically. */
#define TRACKER_COUNT(pt, field, n)                                                                \
	__atomic_fetch_add(&(pt)->stats.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* ---- proc_tracker.c: the registry ---- */

/* pt->lock held. */
struct proc *tracker_find_locked(struct proc_tracker *pt, uint32_t pid);
/* pt->lock held; adds an empty entry for a pid not seen before (NULL: out of memory). */
struct proc *tracker_get_locked(struct proc_tracker *pt, uint32_t pid);
/* A set of nr mappings (zeroed) with one reference, its builder's; NULL: out of memory. */
struct map_set *map_set_new(uint32_t nr);
/* pt->lock held: a replaced set joins the history for naming its samples (or goes). */
void proc_retire_maps(struct proc_tracker *pt, struct proc *p, struct map_set *s);
/* pt->lock held: s (the caller's reference) becomes the current set; the old one retires. */
void proc_publish_maps(struct proc_tracker *pt, struct proc *p, struct map_set *s);
/* pt->lock held: the older sets no sample waits on any more go (PROC_HISTORY newest stay). */
void proc_trim_history(struct proc *p);
/* Frees an entry already off its bucket, with its mappings and history (tables released). */
void proc_destroy(struct proc *p);

/* ---- mappings.c: mappings resolved to objects ---- */

/*
 * Opens the file behind a mapping (a copy of the vDSO): never blocking, never
 * through a symlink, only the inode mapped; refusals and a lack of file
 * descriptors are counted.  An fd (*st filled), or -1.
 */
int mapping_open(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		 struct stat *st);
/* A mapping as the walker first sees it: frame pointers, no object, no name. */
void mapping_init(const struct maps_entry *e, struct proc_mapping *m);
/*
 * Resolves the object behind a mapping (its file from snap when that holds
 * it; NULL: none), charged to its process (see table_charge: refused when
 * over its quota); returns an fd for symbol loading, or -1.
 */
/*
 * Anonymous executable memory a runtime has JIT rows for (runtime_hooks'
 * jit_key): m keyed and its table acquired as a file's; false when no
 * runtime claims it (frame pointers, as before).
 */
bool mapping_jit(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		 struct proc_mapping *m, struct table_charge *charge);
/* Whether a runtime has JIT rows for pid's anonymous memory now (runtime_hooks' jit_pid). */
bool mapping_jit_pid(struct proc_tracker *pt, uint32_t pid);
int mapping_resolve(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		    struct proc_mapping *m, struct table_charge *charge,
		    const struct proc_snapshot *snap);
/*
 * A table one load builds before it swaps its mappings in: the first
 * mapping of an object that is neither in the table store nor built by
 * another job of the same load.
 */
struct build_job {
	const char *key;  /* the mapping's key */
	const char *name; /* the path as the process maps it */
	uint32_t key_hash;
	uint32_t pid;
	int fd;		     /* the load's, open until after the swap */
	uint64_t start, end; /* the mapping's range */
	uint64_t size;	     /* of the file: the biggest are built first */
	bool waited_for;     /* deferred samples stopped in it: built before the others */
	bool done;	     /* built (table or err); false: not started before the deadline */
	bool taken;	     /* the table went to the store */
	int err;
	struct cfi_table *table; /* until the store takes it */
};

/*
 * Opens the file behind a mapping (see snapshot_mapping_open) and names its
 * object: the key and load bias go into m (initialised first).  An fd (*st
 * filled), or -1.
 */
int mapping_identify(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		     struct proc_mapping *m, struct stat *st, const struct proc_snapshot *snap);
/*
 * Takes the object of a mapping named by mapping_identify from the table
 * store, which builds it from fd unless job holds its table built already.
 */
void mapping_acquire(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		     struct proc_mapping *m, int fd, struct build_job *job,
		     struct table_charge *charge);
/* The table of the object in fd (from the table cache if it is there): any thread. */
struct cfi_table *mapping_build_table(struct proc_tracker *pt, uint32_t pid, const char *name,
				      const char *key, int fd, int *err);
/* Symbols are only needed for output: loaded after the walker can already unwind. */
void mapping_load_symbols(struct proc_tracker *pt, uint32_t pid, struct proc_mapping *m,
			  const char *path, int fd);
/*
 * Adds the LPM keys of m (all or none): none when they would take the process
 * past pt->keys_per_pid (*pid_keys: what it holds, updated) or the trie is
 * full; m->nr_keys says how many went in.  Returns the keys refused.
 */
uint32_t mapping_add_keys(struct proc_tracker *pt, uint32_t pid, struct proc_mapping *m,
			  uint32_t *pid_keys);
/* Deletes the LPM keys m added. */
void mapping_del_keys(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m);
/* Releases the objects of maps (and deletes their BPF keys when bpf_too). */
void mappings_release(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *maps,
		      uint32_t n, bool bpf_too);
/*
 * Pairs each entry of ents with the mapping of old it keeps (the same range of
 * the same file): both sorted by start, one merge pass.  reuse[i] is the index
 * + 1 of the old mapping entry i keeps (0: none), kept[j] whether old mapping
 * j is kept.  Returns how many are kept; *steps counts the comparisons.
 * jit: a runtime has JIT rows for the process (mapping_jit_pid): its
 * anonymous mappings are asked for again, never kept.
 */
uint32_t mappings_pair(const struct proc_mapping *old, uint32_t nr_old,
		       const struct maps_entry *ents, uint32_t nr, bool jit, uint32_t *reuse,
		       bool *kept, uint64_t *steps);
/* A copy of the vDSO mapped at [start, end) in pid, in a memfd; -1 on failure. */
int vdso_copy_fd(uint32_t pid, uint64_t start, uint64_t end);
/* Opens /proc/PID/map_files/START-END: the mapped file, whatever mount namespace it is in. */
int map_file_open(uint32_t pid, uint64_t start, uint64_t end, const struct file_id *want);

/* ---- snapshots.c: mappings read early, for processes gone before their load ---- */

/* Per second: snapshots, and the consumer's CPU time spent taking them (refused ones too). */
#define SNAPSHOTS_PER_SEC   64
#define SNAPSHOT_NS_PER_SEC (20ull * 1000 * 1000)

/* The load thread takes pid's snapshot off the list (before it reads /proc); NULL: none. */
struct proc_snapshot *snapshot_take(struct proc_tracker *pt, uint32_t pid);
/*
 * Whether s may serve the load: the process alive (stat read now), only a
 * snapshot of the same start time; gone (stat NULL), only a fresh one.  s,
 * or NULL (s freed).
 */
struct proc_snapshot *snapshot_check(struct proc_tracker *pt, struct proc_snapshot *s,
				     const struct proc_stat_info *stat);
void snapshot_free(struct proc_tracker *pt, struct proc_snapshot *s);
/*
 * The file behind a mapping: a copy of snap's fd when snap holds that very
 * mapping, else opened now (mapping_open) unless snap is the only source.
 */
int snapshot_mapping_open(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
			  struct stat *st, const struct proc_snapshot *snap);
/* pt->lock held: an exit event of pid (a later deferred sample may be another process's). */
void snapshot_note_exit_locked(struct proc_tracker *pt, uint32_t pid);
/* Frees every snapshot (the tracker goes). */
void snapshots_free_all(struct proc_tracker *pt);

/* ---- work_queue.c ---- */

/*
 * A load of pid, unless work of pid is queued already (among the newest
 * items; of kind only when kind is not 0).
 */
void tracker_request_unqueued(struct proc_tracker *pt, uint32_t pid, uint16_t kind);

/* ---- proc_load.c ---- */

/* Executable mappings past which a load goes behind the queued work (work_queue.c). */
#define BIG_LOAD_MAPPINGS 1024

/*
 * w's load goes behind the queued work when big: nr mappings read, or -1
 * before the read (a process known to be big).  True when it was sent back.
 */
bool tracker_yield_big_load(struct proc_tracker *pt, const struct work_item *w, int64_t nr);
/* pid is gone: it is no longer known to map many files. */
void tracker_forget_big(struct proc_tracker *pt, uint32_t pid);

/*
 * Loads (or reloads) pid's mappings and their tables; load_lock held.  w: the
 * queued work this load is (NULL: a synchronous load, never sent back).
 */
void tracker_load_proc(struct proc_tracker *pt, uint32_t pid, bool exec, uint64_t time_ns,
		       const struct work_item *w);

/* Files one load keeps open at once (a quarter of RLIMIT_NOFILE, 16 to 1,024). */
uint32_t fds_per_load(void);
/* Files the index holds at most (file_index.h); fewer under a low RLIMIT_NOFILE. */
#define FILES_HELD 256
/* ... a quarter of one load's files, as the limit is now. */
uint32_t files_held_now(void);

/* ---- table_builds.c: the tables of one load, built concurrently ---- */

/*
 * Builds the n jobs on up to pt->opts.build_workers threads (the caller's among
 * them), those deferred samples wait for first, then the biggest; jobs not
 * started by deadline are left undone.  load_lock held.
 */
void table_builds_run(struct proc_tracker *pt, struct build_job *jobs, uint32_t n,
		      uint64_t deadline);
/* The online CPUs, at most 4: the default of pt->opts.build_workers. */
uint32_t build_workers_default(void);

/* ---- eviction.c: exits, unloads and caps ---- */

/* table_store's reclaim callback: one process's tables go per call. */
bool tracker_reclaim_for_tables(void *ctx);
/* Unloads the least recently sampled processes until a new one fits max_procs.  load_lock held. */
void evict_for_new_proc(struct proc_tracker *pt);
/* Unloads a process at once (evicted, or found gone by a sweep).  load_lock held. */
void unload_proc(struct proc_tracker *pt, struct proc *p, bool evict);
/* The exit event of pid: its tables go after a delay (see unload_due_procs).  load_lock held. */
void exit_proc(struct proc_tracker *pt, uint32_t pid);
/* Exited processes whose delay has passed lose their tables.  load_lock held. */
void unload_due_procs(struct proc_tracker *pt, uint64_t now);
/* pt->lock held: the pending unload is done now, or by whoever clears it. */
bool clear_unload_due(struct proc_tracker *pt, struct proc *p);
/* BPF entries and tables go; the mapping set stays for naming samples.  load_lock held. */
void drop_kernel_state(struct proc_tracker *pt, struct proc *p);

#endif
