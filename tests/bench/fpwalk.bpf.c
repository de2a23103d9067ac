// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Baselines for the walker's kernel cost (make bench): on every cpu-clock
 * sample of the target process,
 *   kstack:  the kernel's own frame-pointer walk, bpf_get_stack(BPF_F_USER_STACK)
 *   bpfwalk: the same frame-pointer walk written in BPF (bpf_loop, one
 *            bpf_probe_read_user of 16 bytes per frame): the floor of any BPF
 *            walker that reads one word pair per frame.
 * Frames walked are summed in a per-CPU counter; run time comes from
 * kernel.bpf_stats_enabled (run_time_ns / run_cnt of the program).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define MAX_FRAMES 1024

const volatile __u32 target_tgid = 0;

struct stackbuf {
	__u64 pcs[MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stackbuf);
} buf SEC(".maps");

/* 0: target samples, 1: frames, 2: samples with an empty stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += n;
}

static __always_inline int is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* The target's user stack into this CPU's buffer, counted: its bytes (0: none) */
static __always_inline long kernel_walk(struct bpf_perf_event_data *ctx, struct stackbuf **out)
{
	__u32 zero = 0;
	struct stackbuf *b;
	long n;

	if (!is_target())
		return 0;
	b = bpf_map_lookup_elem(&buf, &zero);
	if (!b)
		return 0;
	n = bpf_get_stack(ctx, b->pcs, sizeof(b->pcs), BPF_F_USER_STACK);
	count(0, 1);
	if (n <= 0) {
		count(2, 1);
		return 0;
	}
	count(1, n / 8);
	*out = b;
	return n > (long)sizeof(b->pcs) ? (long)sizeof(b->pcs) : n;
}

SEC("perf_event")
int kstack(struct bpf_perf_event_data *ctx)
{
	struct stackbuf *b;

	kernel_walk(ctx, &b);
	return 0;
}

/*
 * kstack_ring: the same walk, its stack then sent to user space as a
 * profiler must send it (cfiprof's records go the same way: one
 * bpf_ringbuf_output of the frames, a wakeup only past a fill level), so
 * that a per-frame cost compared with cfiprof's counts the same delivery.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} ring SEC(".maps");

const volatile __u64 wakeup_bytes = 1 << 20; /* set by fpwalk -r: an eighth of the ring */

SEC("perf_event")
int kstack_ring(struct bpf_perf_event_data *ctx)
{
	struct stackbuf *b = NULL;
	long n = kernel_walk(ctx, &b);

	if (n > 0 && b)
		bpf_ringbuf_output(&ring, b->pcs, n,
				   bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) >= wakeup_bytes
				       ? BPF_RB_FORCE_WAKEUP
				       : BPF_RB_NO_WAKEUP);
	return 0;
}

struct fpwalk_state {
	__u64 fp;
	__u64 *pcs;
	__u32 n;
};

static long fp_step(__u64 i, void *arg)
{
	struct fpwalk_state *s = arg;
	__u64 pair[2]; /* saved rbp, return address */

	if (!s->fp || bpf_probe_read_user(pair, sizeof(pair), (void *)s->fp))
		return 1;
	/* index by the loop counter (unknown to the verifier), not by a tracked constant */
	s->pcs[(i + 1) & (MAX_FRAMES - 1)] = pair[1];
	s->n = i + 2;
	if (pair[0] <= s->fp)
		return 1;
	s->fp = pair[0];
	return 0;
}

SEC("perf_event")
int bpfwalk(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs;
	struct fpwalk_state s = {};
	__u32 zero = 0;
	struct stackbuf *b;
	struct task_struct *task;

	if (!is_target())
		return 0;
	b = bpf_map_lookup_elem(&buf, &zero);
	if (!b)
		return 0;
	/* the user registers: the sample's own if it hit user mode, else the task's */
	task = bpf_get_current_task_btf();
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	s.fp = PT_REGS_FP(regs);
	s.pcs = b->pcs;
	b->pcs[0] = PT_REGS_IP(regs);
	s.n = 1;
	bpf_loop(MAX_FRAMES - 1, fp_step, &s, 0);
	count(0, 1);
	count(1, s.n);
	return 0;
}
