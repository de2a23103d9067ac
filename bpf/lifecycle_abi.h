/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sizes of the maps both BPF objects share (lifecycle_maps.bpf.h), which
 * user space creates for both (user/session/bpf_program.c).
 */
#ifndef CFIPROF_LIFECYCLE_ABI_H
#define CFIPROF_LIFECYCLE_ABI_H

#if !defined(__bpf__) && !defined(__BPF__)
#include <linux/types.h>
#endif

/*
 * Per process (tgid), the times its requests and changes were last seen
 * (bpf/lifecycle_maps.bpf.h's pid_times; created by user space for both BPF
 * objects, so its size is shared here).
 */
enum pid_time {
	PT_REQUEST,
	PT_CHANGE_REQUEST,
	PT_CHANGED,
	PT_DEFERRED,
	PT_EXEC,
	PT_MAX,
};

struct pid_times {
	__u64 ns[PT_MAX];
};

#define PID_TIMES_MAX	     8192
#define PROCS_MAX	     65536 /* processes with tables (procs) */
#define EXIT_MAPS_RING_BYTES (256 * 1024)

#endif
