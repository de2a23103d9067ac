/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The perf events' program while on_sample is loaded later or twice (the
 * walk verified while sampling runs: user/session/walk_loads.h): a tail
 * call, whose target a later load sets or replaces without a perf event
 * reopened.  Included by cfiprof.bpf.c after on_sample.
 */
#ifndef CFIPROF_SAMPLE_ENTRY_BPF_H
#define CFIPROF_SAMPLE_ENTRY_BPF_H

/*
 * 1: this object's on_sample is not loaded; until a later load's is in
 * sample_progs, each sample is sent unwalked with a copy of its stack
 * (deferred: user space walks it with the same walker).
 */
const volatile __u8 walk_later = 0;

/*
 * The sampling program on_sample_entry hands each perf event to: a later
 * load's on_sample (without the runtimes' walks, then with them), or this
 * object's until the one with the runtimes' walks takes its place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} sample_progs SEC(".maps");

/*
 * A sample taken before the walk is verified: its registers and stack for
 * user space to walk, as a walk that found no tables would send them.
 */
static __always_inline int sample_unwalked(struct perf_sample_ctx *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, nr_kernel;
	struct cfi_sample_record *rec;
	struct sample_src src;
	struct walker_state st;

	if (!sample_src_init(ctx, tgid, &src))
		return 0;
	rec = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!rec)
		return 0;
	nr_kernel = sample_begin(&src, rec, &st, tgid, tid);
	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	walker_count(CNT_UNWALKED, 1);
	/*
	 * As the walk begins: a runtime's process counted, a leaf its runtime
	 * knows the caller of (Go's vDSO calls) stepped out of
	 */
	runtime_walk_begin(tgid, &st, rec->pcs + nr_kernel);
	/*
	 * A deferred walk's frames end with the one it stopped in, its ip: the
	 * caller the leaf was stepped out to is sent as one, for user space to
	 * unwind first
	 */
	if (!st.done && st.nr == 1) {
		rec->pcs[nr_kernel + 1] = st.ip;
		st.nr = 2;
	}
	if (!st.done)
		walker_stop(&st, STOP_TABLES_PENDING);
	sample_rt_reset(rec, &st, nr_kernel);
	sample_finish((struct sample_scratch *)rec, &st, nr_kernel);
	return 0;
}

SEC("?perf_event")
int on_sample_entry(struct perf_sample_ctx *ctx)
{
	bpf_tail_call(ctx, &sample_progs, 0);
	if (walk_later)
		return sample_unwalked(ctx);
	walker_count(CNT_NO_SAMPLE_PROG, 1);
	return 0;
}

#endif
