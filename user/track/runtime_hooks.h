/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the tracker tells the language runtimes' detectors (user/runtimes/,
 * runtime.h) as it loads processes: the objects a load opens, a process's
 * mappings early and at the load's end, its unload and its exit.  The
 * tracker calls every hook of the list it was given and knows no runtime.
 */
#ifndef CFIPROF_RUNTIME_HOOKS_H
#define CFIPROF_RUNTIME_HOOKS_H

#include <stdint.h>

struct maps_entry;
struct proc_mapping;

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
};

#endif
