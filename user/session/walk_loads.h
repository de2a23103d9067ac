/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampling program's later loads, verified while sampling runs and put
 * behind on_sample_entry (bpf/sample_entry.bpf.h): the walk itself when the
 * first load (bpf_program.c) left on_sample out, so that the command starts
 * without waiting for its verification (samples meanwhile are sent unwalked,
 * with a copy of their stack); then the language runtimes' walks, once a
 * runtime's process is seen, in its place.
 */
#ifndef CFIPROF_WALK_LOADS_H
#define CFIPROF_WALK_LOADS_H

#include <stdbool.h>
#include <stdint.h>

struct cfiprof_bpf;
struct walk_loads;

enum walk_load {
	WALK_NATIVE,   /* on_sample without the runtimes' walks */
	WALK_RUNTIMES, /* on_sample with them */
	WALK_LOADS,
};

/*
 * Starts the loads' thread on first's maps, with the cached kernel types of
 * core_fd (core_btf.h; -1: none): the native walk at once when native, the
 * runtimes' once walk_loads_want_runtimes() asks.  NULL when it cannot start.
 */
struct walk_loads *walk_loads_start(struct cfiprof_bpf *first, int core_fd, bool native);
/* The runtimes' walks are wanted: loaded after the native walk, if that comes first. */
void walk_loads_want_runtimes(struct walk_loads *wl);
/*
 * When a load took its place (mono_ns; 0: not yet), and how long its open
 * and load took.
 */
uint64_t walk_loads_in_place(const struct walk_loads *wl, enum walk_load which, uint64_t *load_ns);
/*
 * Ends it: the first load is not touched after this returns.  A load still
 * running is left to finish, or to end with the process, on its own.
 */
void walk_loads_stop(struct walk_loads *wl);

#endif
