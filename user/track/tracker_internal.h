/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the process tracker's files share; proc_tracker.h is the public API.
 *
 *   proc_tracker.c  the pid registry: lookup, generation history, iteration, stats
 *   mappings.c      /proc/PID/maps entries resolved to objects, their BPF keys
 *   load_thread.c   the work queue and the table load thread (load_proc)
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

#include "user/track/proc_maps.h"
#include "user/track/proc_tracker.h"

#define QUEUE_CAP  65536
#define NR_BUCKETS 4096

struct work_item {
	uint32_t pid;
	uint16_t kind;	  /* enum tracker_work */
	uint16_t yielded; /* a big load sent to the back of the queue once already */
	uint64_t time_ns;
};

struct proc_tracker {
	struct table_store *ts;
	struct sym_cache *syms;
	struct cfi_table_cache *table_cache; /* NULL: every table is built */
	int procs_fd, mappings_fd;
	uint32_t keys_per_pid; /* LPM keys one process may hold (0: no quota) */

	pthread_mutex_t lock;
	pthread_mutex_t load_lock; /* one load / exit at a time, whichever thread asks */
	pthread_cond_t work_cond, idle_cond;
	struct work_item *queue;
	uint32_t q_head, q_len;
	bool stopping, discard, busy, started;
	pthread_t thread;

	struct proc *buckets[NR_BUCKETS];
	uint32_t generation;
	uint32_t nr_procs, nr_live, max_procs;
	uint32_t nr_unload_due;	 /* exited processes whose tables are still loaded */
	uint64_t next_expire_ns; /* next check of idle tables past their ttl */
	uint32_t loading_pid;	 /* never the one unloaded to make room for its own tables */
	struct tracker_stats stats;
	/* what the tests measure: work done by reloads, and the lock time of forgets */
	uint64_t pair_steps;	 /* old and new mappings compared while pairing them */
	uint64_t forget_lock_ns; /* how long the last proc_tracker_forget_exited held lock */
};

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
void proc_retire_maps(struct proc *p, struct map_set *s);
/* pt->lock held: s (the caller's reference) becomes the current set; the old one retires. */
void proc_publish_maps(struct proc *p, struct map_set *s);
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
 * Resolves the object behind a mapping, charged to its process (see
 * table_charge: refused when over its quota); returns an fd for symbol
 * loading, or -1.
 */
int mapping_resolve(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		    struct proc_mapping *m, struct table_charge *charge);
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
 */
uint32_t mappings_pair(const struct proc_mapping *old, uint32_t nr_old,
		       const struct maps_entry *ents, uint32_t nr, uint32_t *reuse, bool *kept,
		       uint64_t *steps);
/* A copy of the vDSO mapped at [start, end) in pid, in a memfd; -1 on failure. */
int vdso_copy_fd(uint32_t pid, uint64_t start, uint64_t end);
/* Opens /proc/PID/map_files/START-END: the mapped file, whatever mount namespace it is in. */
int map_file_open(uint32_t pid, uint64_t start, uint64_t end);

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
