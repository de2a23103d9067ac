/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the tracker tells the language runtimes' detectors (user/runtimes/,
 * runtime.h) as it loads processes: the objects a load opens, a process's
 * mappings early and at the load's end, its unload and its exit.  The
 * tracker calls every hook of the list it was given and knows no runtime.
 */
#ifndef CFIPROF_RUNTIME_HOOKS_H
#define CFIPROF_RUNTIME_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi_table;
struct maps_entry;
struct proc_mapping;

/* room for a JIT table's key (a table store key: PROC_MAPPING_KEY_LEN is more) */
#define JIT_KEY_LEN 64

struct runtime_hooks {
	void *ctx; /* the detector */
	/* an object a load opened (fd open, path as the process maps it) */
	void (*object)(void *ctx, const char *key, const char *path, int fd);
	/* the load's new mappings as it opened them (fds[i] -1: not open), before tables */
	void (*early)(void *ctx, uint32_t pid, const struct proc_mapping *maps,
		      const struct maps_entry *ents, const int *fds, uint32_t nr, uint64_t read_ns);
	/* the process's mappings read at read_ns (bpf clock), at the load's end */
	void (*proc)(void *ctx, uint32_t pid, const struct proc_mapping *maps, uint32_t nr,
		     uint64_t read_ns);
	/* its tables went (exit, eviction) */
	void (*unload)(void *ctx, uint32_t pid);
	/* it left the tracker */
	void (*forget)(void *ctx, uint32_t pid);
	/*
	 * JIT code with unwind rows of the runtime's own (HotSpot's code
	 * cache).  jit_key: whether the anonymous executable memory [start,
	 * end) of pid is its code: 0 with key ("jit:...", JIT_KEY_LEN) naming
	 * the rows it has now (a new key for new rows, never shared by another
	 * process), -1 when not.  jit_build: those rows, a table of absolute
	 * addresses (bias 0), NULL with *err a cfi_err.  Load thread only.
	 */
	int (*jit_key)(void *ctx, uint32_t pid, uint64_t start, uint64_t end, char *key);
	/* whether jit_key may claim some of pid's memory now: its loads ask for it again */
	bool (*jit_pid)(void *ctx, uint32_t pid);
	struct cfi_table *(*jit_build)(void *ctx, uint32_t pid, const char *key, int *err);
	/*
	 * Asked on the load thread every JIT_POLL_MS: up to max pids (into
	 * pids) whose JIT rows changed since their load; each is loaded again.
	 */
	uint32_t (*jit_stale)(void *ctx, uint32_t *pids, uint32_t max);
	/*
	 * Whether jit_stale has anything to look at (a process of its runtime,
	 * or one gone whose state it still holds): while not, the tracker does
	 * not ask it, and sleeps.  NULL: always.  Load thread.
	 */
	bool (*jit_watching)(void *ctx);
};

/*
 * How often the tracker asks jit_stale (the runtime says which of its
 * processes are due): rows no later than this after code is compiled.
 */
#define JIT_POLL_MS 50

#endif
