/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Processes being profiled: their executable mappings, the objects behind
 * them, and the BPF entries (procs, mappings) that let the walker find tables.
 * Everything that mutates state runs on the table load thread; the record
 * consumer only queues work (see proc_tracker_request).  The files behind
 * this API are listed in tracker_internal.h.
 */
#ifndef CFIPROF_PROC_TRACKER_H
#define CFIPROF_PROC_TRACKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "user/symbolize/sym_cache.h"
#include "tables/table_cache.h"
#include "user/track/table_store.h"

struct runtime_hooks;

/* cfi_file_key's: a 64-byte build-id in hex, '@', the file's identity. */
#define PROC_MAPPING_KEY_LEN CFI_FILE_KEY_LEN

struct proc_mapping {
	uint64_t start, end, offset;
	uint64_t inode;
	uint64_t bias;	  /* pc - bias = ELF virtual address */
	uint32_t flags;	  /* enum cfi_mapping_flags */
	uint32_t nr_keys; /* its LPM keys in the BPF map (0: refused, or none added) */
	/* its load ran out of time before its table, or its names: a later load does them */
	bool table_cut, names_cut;
	/*
	 * NULL for anonymous memory.  The tables are held by the current set of a
	 * process with tables loaded (proc->tables_held); load thread only.
	 */
	struct obj_entry *obj;
	struct sym_obj *sym;		/* NULL if not an ELF we could read */
	char key[PROC_MAPPING_KEY_LEN]; /* cfi_file_key, or vdso:BUILDID */
	char path[256];
};

/*
 * The executable mappings of a process as one load saw them, sorted by start.
 * A set is built, published and never changed: a reload publishes a new one
 * and keeps the old one a while to name the samples taken under it.  Readers
 * take a reference (proc_tracker_get_maps) and drop it (map_set_put); the
 * last reference frees the set, so the load thread never frees one in use.
 */
struct map_set {
	uint32_t refs; /* the process's own, and one per reader */
	/* samples of generations first_generation..generation were taken under it */
	uint32_t first_generation, generation;
	uint32_t ns_pid; /* the pid in its innermost PID namespace, 0 if unknown */
	uint32_t nr_maps;
	/* a sample taken under it is waiting for names (tracker lock; cleared when named) */
	bool sampled;
	struct proc_mapping maps[];
};

/*
 * Mapping sets of earlier generations kept per process (exec, dlopen/dlclose):
 * the PROC_HISTORY newest whatever they named, older ones while samples taken
 * under them wait for names, PROC_HISTORY_MAX in all and PROC_HISTORY_OLD_MAPS
 * mappings in the older ones (past either the oldest goes, counted: its
 * samples are named only where the sets kept agree).
 */
#define PROC_HISTORY 8
#define PROC_HISTORY_MAX 32
/* ... and the older ones at most this many mappings in all (some 2 MB): a budget per process */
#define PROC_HISTORY_OLD_MAPS 4096

struct proc {
	uint32_t pid;
	uint32_t ns_pid; /* innermost PID namespace (NSpid), 0 if unknown */
	uint32_t uid;	 /* owner of /proc/PID at the last load */
	bool same_tmp;	 /* same root and mount namespace as the profiler's */
	uint32_t generation;
	bool exited;
	bool exit_seen;		/* exited at the last forget: dropped at the next one */
	uint64_t unload_due_ns; /* exited: its tables go at this time (0: none pending) */
	struct proc *due_prev, *due_next; /* the tracker's queue of those, in due order */
	bool loaded;
	bool evicted;		    /* unloaded to respect a cap: loaded again when it is sampled */
	bool quota_logged;	    /* its first refusal by a per-process quota was logged */
	bool keys_quota;	    /* keys of its set refused by the quota (load_lock) */
	bool tables_held;	    /* the objects of cur are held, its keys in BPF (load_lock) */
	uint8_t loads_resumed;	    /* loads resumed in a row (load_lock) */
	uint64_t start_time;	    /* from /proc/PID/stat: a reused pid is another process */
	uint64_t last_sample_ns;    /* newest sample (bpf clock): the eviction order */
	uint64_t exec_ns;	    /* bpf clock time of the exec event, 0 if not seen */
	uint64_t first_complete_ns; /* first complete stack after exec */
	uint64_t tables_loaded_ns; /* its mappings (and their tables) last loaded, after a change */
	uint64_t reload_asked_ns;  /* bpf clock: the last load a deferred walk asked for */
	uint64_t maps_read_ns;	   /* mono clock: when the mappings it has loaded were read */
	/* replaced under both locks: readers hold the lock or a reference */
	struct map_set *cur;		       /* NULL until loaded */
	struct map_set *history[PROC_HISTORY_MAX]; /* earlier generations, oldest first */
	uint32_t nr_history;
	uint32_t sampled_ahead; /* newest generation sampled before its set was published */
	/* report mode: mappings read from a recording, published as a set when complete */
	struct proc_mapping *saved;
	uint32_t nr_saved;
	uint32_t saved_first; /* ... their first generation (0: after the previous set's) */
	struct proc *next;
};

enum tracker_work {
	WORK_LOAD = 1, /* new pid, or new mappings (dlopen) */
	WORK_EXEC,
	WORK_EXIT,
};

struct tracker_stats {
	uint64_t loads, reloads, exits, vanished, no_user, mapping_keys, map_update_errors;
	uint64_t reloads_unchanged; /* reloads that found the same mappings: generation kept */
	uint64_t queue_dropped;
	uint64_t loads_merged; /* requests for a pid whose load was already queued */
	uint64_t dying;	       /* loads skipped: the process was already exiting */
	uint64_t exits_swept;  /* gone or exiting at a sweep, before their exit event was handled */
	uint64_t evicted_procs;	 /* least recently sampled processes unloaded: --max-processes */
	uint64_t evicted_tables; /* ... unloaded to make room for tables: --max-table-bytes, rows */
	uint64_t files_refused;	 /* mapped path now a FIFO, device, symlink or another file: FP */
	uint64_t keys_refused_quota; /* LPM keys not added: the process's share of the trie */
	uint64_t keys_refused_full;  /* LPM keys not added: the trie was full */
	uint64_t keys_in_map;	     /* LPM keys in the trie now */
	uint64_t keys_capacity;	     /* the trie's capacity */
	uint64_t procs_over_quota;   /* processes refused something by a per-process quota */
	uint64_t no_fds;	     /* mapped file not opened: out of file descriptors (EMFILE) */
	uint64_t over_load_time;     /* mappings left unresolved: their load took over its time */
	uint64_t loads_resumed;	     /* loads queued again for the mappings one left unresolved */
	uint64_t forgets_deferred;   /* forget passes put off while a load ran */
	uint64_t big_loads_yielded;  /* loads of many mappings sent behind the queued ones */
	uint64_t tables_prebuilt;    /* tables a load built before swapping its mappings in */
	uint64_t tables_built_parallel; /* ... of those, built while other workers built too */
	uint64_t loads_hurried;		/* queued loads moved to the front: deferred samples wait */
	uint64_t reloads_for_walks;	/* loads asked by deferred walks waiting at no mapping */
	uint64_t snapshots_taken;	/* processes' mappings read early: their samples wait */
	uint64_t snapshots_used;	/* ... loaded from: the process was gone at its load */
	uint64_t snapshots_refused;	/* not taken: over their budget (count, time, fds) */
	uint64_t snapshots_late;     /* not taken: the process was gone (or its memory) already */
	uint64_t snapshots_at_exit;  /* from the kernel's list of an exiting process's mappings */
	uint64_t exit_files_unknown; /* ... mappings of a file no load had opened: no tables */
	uint64_t exit_lists_partial; /* ... lists with mappings missing (over 64, or lost) */
	uint64_t exit_lists_dropped; /* ... lists never ended (more exiting at once than kept) */
	uint64_t
	    map_sets_dropped; /* sets with samples waiting dropped: PROC_HISTORY_MAX, _OLD_MAPS */
	uint64_t samples_set_gone; /* samples whose mapping set was gone when they arrived */
};

struct proc_tracker;

/*
 * What a tracker works with and its caps, all given at its creation.  A
 * tracker of names only (report: no BPF maps, no tables) has ts NULL and
 * both fds -1.
 */
struct proc_tracker_opts {
	struct table_store *ts;
	struct sym_cache *syms;
	int procs_fd, mappings_fd;
	/* tables are read from and kept in this cache (NULL: every table is built) */
	struct cfi_table_cache *table_cache;
	/* processes running CPython are found at their loads and told to it (NULL: none) */
	/* the language runtimes' detectors, told of every load (user/track/runtime_hooks.h) */
	const struct runtime_hooks *runtimes;
	uint32_t nr_runtimes;
	/*
	 * At most max_procs live processes have tables loaded (0: no cap); when
	 * a new one arrives, or a new table does not fit the table store's
	 * bounds, the least recently sampled process is unloaded first
	 * (counted).  An unloaded process that is sampled again is loaded again.
	 */
	uint32_t max_procs;
	/* the tables one load builds at once, each on its own thread (0: the online CPUs, at most
	 * 4) */
	uint32_t build_workers;
};

struct proc_tracker *proc_tracker_new(const struct proc_tracker_opts *o);

/* A tracker of names only: what report and the tests of recordings use. */
static inline struct proc_tracker *proc_tracker_new_names(struct sym_cache *syms)
{
	return proc_tracker_new(
	    &(struct proc_tracker_opts){.syms = syms, .procs_fd = -1, .mappings_fd = -1});
}
/* Starts the table load thread. */
int proc_tracker_start(struct proc_tracker *pt);
/* Stops the load thread after the queued work is done (or dropped when discard). */
void proc_tracker_stop(struct proc_tracker *pt, bool discard);
void proc_tracker_free(struct proc_tracker *pt);

/* Queues work for pid; callable from any thread, never blocks on table builds. */
void proc_tracker_request(struct proc_tracker *pt, uint32_t pid, enum tracker_work w,
			  uint64_t time_ns);
/*
 * Deferred samples of pid wait for the table of the object at pc: its queued
 * load moves to the front, and that object is built first.  Any thread.
 */
void proc_tracker_note_waiting(struct proc_tracker *pt, uint32_t pid, uint64_t pc);
/*
 * A deferred walk of pid ended at a pc in none of its mappings as last read:
 * they are read again, at most once per RELOAD_FOR_WALKS_GAP_NS per process
 * and RELOADS_FOR_WALKS_PER_SLOT per RELOAD_SLOT_NS for all (now_ns: bpf
 * clock), when no other process's load is queued.  Any thread.
 */
void proc_tracker_reload_for_walk(struct proc_tracker *pt, uint32_t pid, uint64_t now_ns);
/*
 * Deferred samples of pid wait for mappings that changed at changed_ns (bpf
 * clock): unless the tracker read them since, its executable mappings and
 * their files are read now, on the caller's thread (cheap: no tables built),
 * so that its load can still happen if it exits first.  Bounded per second
 * (count and time) and in snapshots and fds held; refusals are counted.
 */
void proc_tracker_snapshot(struct proc_tracker *pt, uint32_t pid, uint64_t changed_ns);
/* Exit lists gathered at once: more than processes exit at the same instant on all CPUs. */
#define EXIT_LISTS_GATHERED 16

/* The kernel's list of a process's executable mappings as it exited, gathered. */
struct exit_list {
	uint32_t pid, nr;
	bool truncated; /* more than CFI_MAPS_MAX, or some lost on the way */
	uint64_t time_ns, start_boottime_ns;
	struct cfi_maps_entry ents[CFI_MAPS_MAX];
};

/*
 * A snapshot of the exit list (the consumer's own snapshot of the process, if
 * any, and the files earlier loads opened for the same inodes provide the
 * files); the process's load is asked for.
 */
void proc_tracker_snapshot_at_exit(struct proc_tracker *pt, const struct exit_list *l);
/*
 * One RECORD_MAPS_ENTRY or RECORD_MAPS_END (size bytes), on the consumer
 * thread only: a list is gathered per pid and taken at its end.
 */
void proc_tracker_exit_record(struct proc_tracker *pt, const void *rec, size_t size);
/* Loads pid synchronously on the caller's thread (load_lock: also while the load thread runs). */
int proc_tracker_load_now(struct proc_tracker *pt, uint32_t pid);
/* Waits until the queue is empty. */
void proc_tracker_drain(struct proc_tracker *pt);
/* The same for at most timeout seconds; false if work is left. */
bool proc_tracker_drain_for(struct proc_tracker *pt, double timeout);

/*
 * Report mode (no BPF): adds a mapping read from a saved recording; symbols
 * come from key (a build-id, or the path) and path.  Call proc_tracker_sort
 * once all are added.
 */
int proc_tracker_add_saved(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m);
void proc_tracker_sort(struct proc_tracker *pt);
/*
 * Report mode: the mappings added next belong to generations first..gen
 * (first 0: those after the previous set's); older sets are retired.
 */
void proc_tracker_saved_generation(struct proc_tracker *pt, uint32_t pid, uint32_t gen,
				   uint32_t first);
/* Report mode: the pid inside its PID namespace. */
void proc_tracker_saved_ns_pid(struct proc_tracker *pt, uint32_t pid, uint32_t ns_pid);

/*
 * Symbolization while the load thread runs: the mappings pid had in generation
 * gen (0 or unknown: the current ones), with a reference that keeps them
 * whatever the load thread does meanwhile; NULL when there are none.  Drop it
 * with map_set_put.  Their symbols live until proc_tracker_forget_exited:
 * call that on the thread that symbolizes.
 */
struct map_set *proc_tracker_get_maps(struct proc_tracker *pt, uint32_t pid, uint32_t gen);
/*
 * The same, or when pc is in none of those mappings the set before it (a
 * sample of a load's update window, its pc in a mapping the load removed),
 * else the first later set that maps pc (code mapped after gen's load).
 */
struct map_set *proc_tracker_get_maps_at(struct proc_tracker *pt, uint32_t pid, uint32_t gen,
					 uint64_t pc);
void map_set_put(struct map_set *s);
const struct proc_mapping *map_set_find(const struct map_set *s, uint64_t pc);
/*
 * The mapping that names pc in a sample of pid's taken in generation gen:
 * maps' (gen's set, from proc_tracker_get_maps; NULL: none taken), else the
 * set before gen's or the first later one mapping pc; gen's set gone, the
 * one file all kept sets map at pc,
 * else none (sets that disagree: another file may have been the one sampled).
 * One whose load ran out of time before
 * its names (table_cut, names_cut) comes from the newest retained set that
 * has the same mapping named: a later load read them, and the samples taken
 * under the cut set are named like the others.  *ref: the set holding what
 * is returned when it is not maps, referenced (drop it with map_set_put), or
 * NULL.
 */
const struct proc_mapping *proc_tracker_mapping_for(struct proc_tracker *pt, uint32_t pid,
						    uint32_t gen, const struct map_set *maps,
						    uint64_t pc, struct map_set **ref);
/*
 * The entry of pid and its current mappings, for whoever runs alone with the
 * tracker: report mode, after proc_tracker_stop, tests.  The entry stays
 * valid until proc_tracker_forget_exited or free.
 */
struct proc *proc_tracker_find(struct proc_tracker *pt, uint32_t pid);

/* Who a process is, as of its last load (read under the tracker lock). */
struct proc_identity {
	uint32_t ns_pid; /* 0 if unknown */
	uint32_t uid;
	bool same_tmp;
};
/* false when the tracker does not know pid. */
bool proc_tracker_identity(struct proc_tracker *pt, uint32_t pid, struct proc_identity *out);
const struct proc_mapping *proc_find_mapping(const struct proc *p, uint64_t pc);
/* pid exec'd at time_ns (bpf clock), seen other than by an exec event (record -- CMD). */
void proc_tracker_note_exec(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns);
/*
 * The consumer saw a sample of pid taken in generation gen (complete: its
 * stack reached the root): that generation's set is kept until it is named.
 */
void proc_tracker_note_sample(struct proc_tracker *pt, uint32_t pid, uint32_t gen, uint64_t time_ns,
			      bool complete);
void proc_tracker_stats(struct proc_tracker *pt, struct tracker_stats *out);
/* Live processes (tables loaded) and all entries held (exited ones kept for names). */
void proc_tracker_counts(struct proc_tracker *pt, uint32_t *live, uint32_t *retained);
/*
 * Drops processes that exited, with the symbols of objects no live process
 * maps, once their samples are symbolized (the agent, after each interval):
 * memory returns to its baseline after process churn.  A process is kept for
 * one more call after it is first seen exited, so samples still in flight at
 * an interval boundary keep their names.  Live processes that are gone (an
 * exit event lost to a full ring buffer) are unloaded here first.  Returns
 * how many were dropped.
 */
size_t proc_tracker_forget_exited(struct proc_tracker *pt);
/* Iteration over all processes seen (for reports). */
struct proc *proc_tracker_first(struct proc_tracker *pt, uint32_t *bucket);
struct proc *proc_tracker_next(struct proc_tracker *pt, struct proc *p, uint32_t *bucket);

#endif
