/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps both BPF objects use: cfiprof.bpf.c's programs and exit_maps.bpf.c's
 * on_exit_maps, loaded apart (its kfuncs make libbpf parse all of the
 * kernel's BTF) and handed the first's maps.  User space creates them for both
 * (user/session/bpf_program.c's loader_early_maps: the same sizes and flags).
 */
#ifndef CFIPROF_LIFECYCLE_MAPS_BPF_H
#define CFIPROF_LIFECYCLE_MAPS_BPF_H

#include "lifecycle_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROCS_MAX);
	__type(key, __u32); /* tgid */
	__type(value, struct cfi_proc_val);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * Exiting processes' mapping lists (RECORD_MAPS_*), apart from the samples: a
 * swarm of new processes fills events with deferred stack copies, and a list
 * lost there loses every waiting sample of its process.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EXIT_MAPS_RING_BYTES);
} exit_maps SEC(".maps");

/*
 * Mappings sent of the process exiting on this CPU: a count in a map, which
 * the verifier does not follow through the VMA loop (a stack counter made it
 * verify the loop once per value, a second at every start).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} exit_maps_sent SEC(".maps");

/*
 * Per process (tgid), the times its requests and changes were last seen, one
 * LRU entry for all four: a preallocated LRU map's creation costs time in
 * proportion to its elements, at every start, and four maps paid it four
 * times.
 *   PT_REQUEST         the last RECORD_REQUEST for its tables (rate limit)
 *   PT_CHANGE_REQUEST  the last mapping-change request: at most one a
 *                      millisecond, loads are deduplicated in user space
 *   PT_CHANGED         when it last changed its executable mappings (exec,
 *                      mmap of code, munmap of a known mapping), whether or
 *                      not a request went out: a pc in no known mapping after
 *                      that is one the loader has not read yet
 *   PT_EXEC            when a process with a Python interpreter exec'd (its
 *                      runtime_procs entry is the old image's: python.bpf.h)
 *   PT_DEFERRED        when it last sent a deferred sample: one that exits
 *                      with such a sample newer than its last load sends its
 *                      mappings (lifecycle.bpf.h)
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PID_TIMES_MAX);
	__type(key, __u32);
	__type(value, struct pid_times);
} pid_times SEC(".maps");

static __always_inline void walker_count(__u32 counter_id, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &counter_id);

	/* per-CPU slot: no other writer while this program runs on this CPU */
	if (v)
		*v += n;
}

#endif
