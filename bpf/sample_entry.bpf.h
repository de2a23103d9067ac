/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The perf events' program while on_sample is loaded twice (the runtimes'
 * walks verified while sampling runs: bpf/runtimes.bpf.h's
 * runtime_walks_later): a tail call, whose target the second load replaces
 * without a perf event reopened.  Included by cfiprof.bpf.c after on_sample.
 */
#ifndef CFIPROF_SAMPLE_ENTRY_BPF_H
#define CFIPROF_SAMPLE_ENTRY_BPF_H

/*
 * The sampling program on_sample_entry hands each perf event to: the first
 * load's on_sample, without the runtimes' walks, until the second load's
 * takes its place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} sample_progs SEC(".maps");

SEC("?perf_event")
int on_sample_entry(struct perf_sample_ctx *ctx)
{
	bpf_tail_call(ctx, &sample_progs, 0);
	walker_count(CNT_NO_SAMPLE_PROG, 1);
	return 0;
}

#endif
