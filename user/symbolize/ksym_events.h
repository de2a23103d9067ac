/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel code that appears after /proc/kallsyms was read: BPF programs,
 * trampolines and dispatchers loaded by any tool on the host, from the
 * kernel's PERF_RECORD_KSYMBOL records (what perf record keeps for the same
 * reason).  A kernel stack can run through another tool's program loaded
 * while cfiprof samples; without these records it is an address.
 */
#ifndef CFIPROF_KSYM_EVENTS_H
#define CFIPROF_KSYM_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;
struct ksym_events;

/*
 * Starts listening on every CPU; open it before kallsyms is read so that
 * nothing loaded in between is missed.  NULL with a message in err.
 */
struct ksym_events *ksym_events_open(char *err, size_t errlen);

/*
 * Adds the code registered or unregistered since the last call to k ("NAME
 * [bpf]", as kallsyms names it) and sorts k when any was added.  Code
 * unregistered keeps its name: samples taken while it ran are still to be
 * named.
 * Returns how many were added.
 */
size_t ksym_events_drain(struct ksym_events *e, struct ksyms *k);

/* Records the kernel dropped (its buffer full between two drains), so far. */
uint64_t ksym_events_lost(const struct ksym_events *e);

void ksym_events_close(struct ksym_events *e);

#endif
