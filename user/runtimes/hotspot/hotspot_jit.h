/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The JVMs of a session and their code caches' unwind rows as the tracker
 * loads them (user/track/runtime_hooks.h's jit_key, jit_build, jit_stale):
 * each JVM's layout (hotspot_vmstructs.h) and code heaps, the digest of
 * the code its loaded rows were built from, and the processes whose code
 * changed since, loaded again at a bounded rate.  One table for the
 * session, as the layouts the BPF entries name by index.
 */
#ifndef CFIPROF_HOTSPOT_JIT_H
#define CFIPROF_HOTSPOT_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/track/runtime_hooks.h"

/* JVMs followed at once; more are counted and keep frame pointers */
#define HOTSPOT_JVMS_MAX 64

/* a runtime_procs entry's layout before the JVM's tables can be read */
#define HOTSPOT_NO_LAYOUT 0xffff

/* The layout a runtime_procs entry's index names; NULL when none. */
const struct hotspot_layout *hotspot_layout_at(uint16_t index);
/* The layout of pid's JVM into *l: false when pid is no JVM of the session's. */
bool hotspot_jvm_layout(uint32_t pid, struct hotspot_layout *l);
/*
 * Whether b, an nmethod of pid's code cache read now, was in pid's code
 * cache at t_ns (CLOCK_MONOTONIC): the walk the JVM's rows were last built
 * from holds the same compile at the same place, first seen by a walk that
 * ended by t_ns.  Compile ids are never reused: a compile there before t
 * and still there now was there at t, though a stack copy of t cannot say
 * which code its return address was in.
 */
bool hotspot_jit_seen_before(uint32_t pid, const struct hotspot_blob *b, uint64_t t_ns);

/*
 * pid runs a JVM of layout l: its entry (BPF's part: heaps, offsets) into
 * *out; 0, or -1 when there is no room for it.
 */
int hotspot_jvm_note(uint32_t pid, const struct hotspot_layout *l, struct cfi_hotspot_proc *out);

/* The tracker's hooks for JIT rows (ctx unused: the table is the session's). */
void hotspot_jit_hooks(struct runtime_hooks *out);

struct hotspot_jit_stats {
	uint64_t jvms;	     /* JVMs followed */
	uint64_t builds;     /* row tables built */
	uint64_t reloads;    /* loads asked for because the code changed */
	uint64_t held_back;  /* ... put off by the rate bound */
	uint64_t walks_cut;  /* code cache walks cut by their budget */
	uint64_t rows_blobs; /* blobs with rows in the last table built */
	uint64_t nmethods_read; /* nmethods whose code builds read for their prologues */
	uint64_t nmethods_kept; /* ... whose marks came from the build before */
};

void hotspot_jit_stats(struct hotspot_jit_stats *out);

/* Forgets the JVMs that exited (their entries go). */
void hotspot_jit_sweep(void);

#endif
