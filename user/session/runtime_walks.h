/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampling program's second load: the first (bpf_program.c) leaves the
 * language runtimes' walks out, so that sampling starts without waiting for
 * their verification; this one, with them, is verified while sampling runs
 * and then takes the first's place behind on_sample_entry.
 */
#ifndef CFIPROF_RUNTIME_WALKS_H
#define CFIPROF_RUNTIME_WALKS_H

#include <stdint.h>

struct cfiprof_bpf;
struct runtime_walks;

/*
 * Starts the second load of first in a thread, with the cached kernel types
 * of core_fd (core_btf.h; -1: none); NULL when it cannot start.
 */
struct runtime_walks *runtime_walks_start(struct cfiprof_bpf *first, int core_fd);
/*
 * When the walks took the first load's place (mono_ns; 0: not yet), and how
 * long their load took.
 */
uint64_t runtime_walks_in_place(const struct runtime_walks *rw, uint64_t *load_ns);
/*
 * Ends it: the first load is not touched after this returns.  A load still
 * running is left to finish, or to end with the process, on its own.
 */
void runtime_walks_stop(struct runtime_walks *rw);

#endif
