/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Each language runtime's BPF program (bpf/cfiprof.bpf.c's rt_emit_NAME),
 * loaded when a process running that runtime is first found, not at
 * start: a start verifies only the native walk, and a runtime's walker is
 * verified once, when it is first needed.  A second instance of the same
 * BPF object, every map the session's own (reused by name), loads that one
 * program and puts it in on_sample's rt_progs, before the process's
 * runtime_procs entry is written (user/track/runtime_procs.h's hook): a
 * sample never tail-calls a program that is not there.
 */
#ifndef CFIPROF_RUNTIME_PROGS_H
#define CFIPROF_RUNTIME_PROGS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct loader;

struct runtime_progs_stats {
	uint64_t load_ns[RT_MAX]; /* each runtime's program's load, 0: not loaded */
	int err[RT_MAX];	  /* a load that failed: its negative errno */
};

/*
 * Loads the programs of runtimes as their first processes are found (the
 * loader loaded with rt_lazy: with bpf_loop); before it, or without, the
 * runtimes' walkers are on_sample's own and nothing is loaded later.
 */
void runtime_progs_start(struct loader *l);
/* Before the loader closes: nothing more is loaded into its maps. */
void runtime_progs_stop(void);
/* Runtime rt's program in rt_progs: 0, or a negative errno (said once). */
int runtime_progs_ensure(uint8_t rt);
void runtime_progs_stats(struct runtime_progs_stats *out);

#endif
