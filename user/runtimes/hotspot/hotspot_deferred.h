/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A deferred sample of a JVM (its walk stopped in the kernel for lack of
 * tables and finished in user space, user/unwind/deferred_walk.h): the
 * kernel named the Java frames of the frames it walked (but the one it
 * stopped at may lack its unit: the JVM's entry not made yet, or stale);
 * the interpreted ones among the frames user space walked, and that one,
 * get their units here, read as
 * the kernel reads them (bpf/hotspot.bpf.h): the blob holding the pc is the
 * interpreter's, and its frame keeps its Method* at rbp - 24 and its bcp
 * at rbp - 64, values of the sample's time in the stack copy.  The
 * Method's digest is read when the walk is finished (the kernel reads it
 * at the sample), so the frame's bcp and class mirror at the sample must
 * be that method's now: a class unloaded in between and another made in
 * its memory is stale (counted), not named.  A compiled frame's compile id
 * at the sample, which tells reused code apart, is in no copy: its unit is
 * the kernel's only when the nmethod there now was seen there by a walk of
 * the code cache that ended before the sample (hotspot_jit_seen_before),
 * else stale (counted): code compiled since, or compiled just before.
 */
#ifndef CFIPROF_HOTSPOT_DEFERRED_H
#define CFIPROF_HOTSPOT_DEFERRED_H

#include "user/runtimes/runtime.h"

/* runtime_ops.deferred_units of HotSpot (rt: unused) */
size_t hotspot_deferred_units(void *rt, struct cfi_sample_record *out, size_t size,
			      const struct deferred_view *v, const __u64 *bps);

#endif
