/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c (its maps, walker and sample_with_loop come first):
 * stacks on events other than the sampling perf event, as bpftrace puts
 * `ustack` on any probe.  uprobes, uretprobes and USDT probes have the user
 * registers in their context; kprobes, tracepoints and the off-CPU switch-in
 * take them from the task's pt_regs, with the kernel stack.  Each hit passes
 * the event budget (per process, then per CPU) before any walk.  These
 * programs need bpf_loop: user space refuses -e / --off-cpu without it.
 */
#ifndef CFIPROF_EVENTS_BPF_H
#define CFIPROF_EVENTS_BPF_H

#include <bpf/usdt.bpf.h>

/* the event index of each raw tracepoint slot, of off-CPU samples */
const volatile __u32 tp_event[EVENT_TP_SLOTS] = {};
const volatile __u32 offcpu_event = 0;

/* Each process's hits in the current slot (approximate across CPUs by design). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct cfi_event_slot);
} event_proc_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_event_slot);
} event_cpu_slots SEC(".maps");

/* When each blocked thread was switched out; user space sizes it to 1 without --off-cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, __u64);
} offcpu_start SEC(".maps");

static __always_inline bool slot_full(struct cfi_event_slot *s, __u64 slot, __u32 budget)
{
	if (s->slot != slot) {
		s->slot = slot;
		s->used = 0;
	}
	if (s->used >= budget)
		return true;
	__sync_fetch_and_add(&s->used, 1);
	return false;
}

/*
 * The process's own share first: a process over it is refused without using
 * the CPU's share, which bounds the cost of all processes together.
 */
static __always_inline bool event_budget_left(__u32 tgid)
{
	__u64 slot = bpf_ktime_get_ns() / EVENT_SLOT_NS;
	struct cfi_event_slot *s, fresh = {.slot = slot, .used = 1};
	__u32 zero = 0;

	if (event_proc_budget) {
		s = bpf_map_lookup_elem(&event_proc_slots, &tgid);
		if (!s)
			bpf_map_update_elem(&event_proc_slots, &tgid, &fresh, BPF_ANY);
		else if (slot_full(s, slot, event_proc_budget)) {
			walker_count(CNT_EVENT_PROC_LIMITED, 1);
			return false;
		}
	}
	if (event_cpu_budget) {
		s = bpf_map_lookup_elem(&event_cpu_slots, &zero);
		if (s && slot_full(s, slot, event_cpu_budget)) {
			walker_count(CNT_EVENT_THROTTLED, 1);
			return false;
		}
	}
	return true;
}

/* One hit: filter, budget, then the same sample as a perf event's (sample_with_loop). */
static __always_inline int sample_event(void *ctx, struct pt_regs *ctx_regs, bool user_in_ctx,
					__u32 event, __u64 weight)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sample_src src = {
	    .ctx = ctx,
	    .ctx_regs = ctx_regs,
	    .user_in_ctx = user_in_ctx,
	    .event = event,
	    .weight = weight,
	};

	if (tgid == 0)
		return 0;
	if (!wanted(tgid)) {
		walker_count(CNT_FILTERED, 1);
		return 0;
	}
	if (!event_budget_left(tgid))
		return 0;
	walker_count(CNT_EVENT_HITS, 1);
	walker_count(CNT_SAMPLES, 1);
	return sample_with_loop(&src, tgid, tid);
}

/* uprobe: and uretprobe: (the same program, attached as a return probe); the cookie is the event */
SEC("uprobe")
int on_uprobe(struct pt_regs *ctx)
{
	return sample_event(ctx, ctx, true, (__u32)bpf_get_attach_cookie(ctx), 1);
}

SEC("usdt")
int on_usdt(struct pt_regs *ctx)
{
	return sample_event(ctx, ctx, true, (__u32)bpf_usdt_cookie(ctx), 1);
}

SEC("kprobe")
int on_kprobe(struct pt_regs *ctx)
{
	return sample_event(ctx, NULL, false, (__u32)bpf_get_attach_cookie(ctx), 1);
}

/* tracepoint:CATEGORY:NAME, attached as a raw tracepoint: no tracefs needed */
#define TP_SLOT(n)                                                                                 \
	SEC("raw_tp")                                                                              \
	int on_tp##n(void *ctx)                                                                    \
	{                                                                                          \
		return sample_event(ctx, NULL, false, tp_event[n], 1);                             \
	}
TP_SLOT(0)
TP_SLOT(1)
TP_SLOT(2)
TP_SLOT(3)

/* ---- off-CPU time: a blocked thread's stack, weighted by the time until it runs again ---- */

#define TASK_DEAD_STATE 0x80

/*
 * Switch-out: a thread that blocks (not one preempted while runnable, not one
 * exiting) notes when.  current is still prev here, so the filter applies.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_out, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	unsigned int state = prev->__state;
	__u32 tid = prev->pid;
	__u64 now;

	if (preempt || !state || (state & TASK_DEAD_STATE) || (prev->flags & PF_KTHREAD) ||
	    !prev->tgid)
		return 0;
	if (!wanted(prev->tgid))
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&offcpu_start, &tid, &now, BPF_ANY);
	return 0;
}

/*
 * Switch-in (a kprobe on finish_task_switch, in the thread that now runs):
 * its user memory is current again and its stacks are those it blocked in,
 * so the walk happens here, weighted by the time it was off the CPU.
 */
SEC("kprobe")
int on_switch_in(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *start = bpf_map_lookup_elem(&offcpu_start, &tid), delta;

	if (!start)
		return 0;
	delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&offcpu_start, &tid);
	if (delta < offcpu_min_ns) {
		walker_count(CNT_OFFCPU_SHORT, 1);
		return 0;
	}
	return sample_event(ctx, NULL, false, offcpu_event, delta);
}

#endif
