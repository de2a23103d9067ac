/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A language runtime in user space: the one interface each runtime's folder
 * (user/runtimes/NAME/) implements, and its BPF file's counterpart
 * (bpf/NAME.bpf.h).  A session makes one instance of each runtime that
 * user/session/runtimes.c lists: it finds the runtime in processes (the
 * tracker's hooks), writes their runtime_procs entries, names what the
 * kernel recorded (interpreter frames, labels) and reports what it did.
 * Nothing outside the runtime's folder knows its fields.
 */
#ifndef CFIPROF_RUNTIME_H
#define CFIPROF_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/runtime_units.h"
#include "user/track/runtime_hooks.h"
#include "user/unwind/deferred_queue.h"

struct runtime_ops {
	uint8_t id; /* enum cfi_runtime (CFI_RUNTIMES gives its name and tag) */
	/* an instance; procs_fd: the runtime_procs map (-1: none, user space only) */
	void *(*create)(int procs_fd);
	void (*destroy)(void *rt);
	/* what the tracker tells it of its loads (user/track/runtime_hooks.h) */
	void (*hooks)(void *rt, struct runtime_hooks *out);
	/*
	 * Its interpreter frames' namer (NULL when its units are no frames); rt
	 * NULL: a recording's, whose frames are named as it kept them.
	 */
	void (*namer)(void *rt, struct interp_namer *out);
	/* its units as labels (NULL: they are none); see struct runtime_label */
	runtime_labels_fn labels;
	/* the consumer saw sample r (size bytes, checked) of one of its processes */
	void (*note)(void *rt, const struct cfi_sample_record *r, size_t size);
	/* ... a deferred one, finished in user space, taken under mapping generation taken_gen */
	void (*carry)(void *rt, const struct cfi_sample_record *r, size_t size, uint32_t taken_gen);
	/*
	 * a deferred sample's walk finished in user space: its units for the
	 * frames past the kernel's walk, and, of one taken before its process's
	 * runtime was known, what of the walk stands (deferred_units_fn; NULL:
	 * none)
	 */
	size_t (*deferred_units)(void *rt, struct cfi_sample_record *out, size_t size,
				 const struct deferred_view *v, const __u64 *bps);
	/* waits (timeout seconds at most) for what note queued; true if nothing is left */
	bool (*wait)(void *rt, double timeout);
	/* forgets what it kept of processes that no longer exist (after a profile) */
	void (*sweep)(void *rt);
	/* its line of the end-of-run summary, when it saw a process (counters: the BPF ones) */
	void (*summary)(void *rt, const uint64_t *counters, FILE *f);
	/* its /metrics families (Prometheus text) */
	void (*metrics)(void *rt, const uint64_t *counters, FILE *f);
};

#endif
