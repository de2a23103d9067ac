/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's own resources, as /metrics and its last log line report them:
 * the kernel's figures (/proc/self, getrusage, the BPF maps' memlock) and
 * malloc's heap in use.  Each returns 0 when it cannot be read.
 */
#ifndef CFIPROF_AGENT_SELF_STATS_H
#define CFIPROF_AGENT_SELF_STATS_H

#include <stdint.h>

uint64_t agent_rss_bytes(void);
uint64_t agent_virtual_bytes(void);
uint64_t agent_open_fds(void);
double agent_cpu_seconds(void);
uint64_t agent_kernel_map_bytes(void);
uint64_t agent_heap_bytes(void);

#endif
