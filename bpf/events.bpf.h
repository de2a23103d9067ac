/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c (its maps, walker and sample_with_loop come first):
 * stacks on events other than the sampling perf event, as bpftrace puts
 * `ustack` on any probe.  uprobes, uretprobes and USDT probes have the user
 * registers in their context; kprobes (fentry), tracepoints and off-CPU
 * blocks take them from the task's pt_regs, with the kernel stack.  Each hit passes
 * the event budget (per process and per CPU) before any walk: past it, hits
 * are sampled and the sampled ones weighted (event_thin).  These
 * programs need bpf_loop: user space refuses -e / --off-cpu without it.
 * SEC("?..."): not loaded unless user space asks (user/session/event_attach.c).
 */
#ifndef CFIPROF_EVENTS_BPF_H
#define CFIPROF_EVENTS_BPF_H

#include <bpf/usdt.bpf.h>

/* the event index of each raw tracepoint slot, of off-CPU samples */
const volatile __u32 tp_event[EVENT_TP_SLOTS] = {};
const volatile __u32 func_event[EVENT_FUNC_SLOTS] = {};
const volatile __u32 offcpu_event = 0;
const volatile __u8 offcpu_enabled = 0;
/* the size of an offcpu_pending value: a whole record at --max-frames, Python frames too */
const volatile __u32 offcpu_value_bytes = RECORD_MAX_BYTES;

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

/*
 * Each blocked thread's sample, walked when it was switched out, sent with
 * its weight when it is switched in.  No BTF value type: user space sizes the
 * value to a record at --max-frames (and the map to 1 entry without --off-cpu).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(key_size, sizeof(__u32)); /* tid */
	__uint(value_size, RECORD_MAX_BYTES);
} offcpu_pending SEC(".maps");

/* A new slot: its counts start again, the last one's hits kept if it was the slot before. */
static __always_inline void slot_roll(struct cfi_event_slot *s, __u64 slot)
{
	if (s->slot == slot)
		return;
	s->prev_hits = s->slot + 1 == slot ? s->hits : 0;
	s->slot = slot;
	s->used = s->hits = 0;
}

/*
 * A hit's chance of being sampled under a budget of per-slot samples:
 * budget / max(this slot's hits so far, the last slot's hits), as
 * num / den (1 / 1: every hit).  A steady rate is sampled at the budget;
 * a burst from nothing at budget * (1 + ln(hits / budget)) at most.
 */
static __always_inline void slot_chance(struct cfi_event_slot *s, __u32 budget, __u64 *num,
					__u64 *den)
{
	__u64 seen = s->hits > s->prev_hits ? s->hits : s->prev_hits;

	*num = *den = 1;
	if (seen > budget) {
		*num = budget;
		*den = seen;
	}
}

/*
 * One stage of the budget: the hit counted in s, then sampled with a chance
 * (slot_chance) known before the coin is tossed; false if not sampled.
 */
static __always_inline bool slot_toss(struct cfi_event_slot *s, __u64 slot, __u32 budget,
				      __u64 *num, __u64 *den)
{
	slot_roll(s, slot);
	__sync_fetch_and_add(&s->hits, 1);
	slot_chance(s, budget, num, den);
	/* num, den < 2^32: no product overflows */
	if (*num != *den && (__u64)bpf_get_prandom_u32() * *den >= *num << 32)
		return false;
	__sync_fetch_and_add(&s->used, 1);
	return true;
}

/*
 * Past the budget each hit is sampled with a chance p known before the coin
 * is tossed, and a sampled hit weighs 1/p (rounded up or down at random, so
 * that its expected weight is exactly 1/p): each stack's summed weight is an
 * unbiased estimate of its hits (Horvitz-Thompson).  The process's share
 * first; the hits it samples then pass the CPU's share of all processes'
 * budget (a process in a tight loop takes no other's share), p the product
 * of the two chances.  Returns the weight, 0 for a hit not sampled (counted
 * as refused by the share whose coin refused it).
 */
static __always_inline __u64 event_thin(__u32 tgid, __u32 *thinned)
{
	__u64 slot = bpf_ktime_get_ns() / EVENT_SLOT_NS, pn = 1, pd = 1, cn = 1, cd = 1, num, den,
	      w;
	struct cfi_event_slot *s, fresh = {.slot = slot, .used = 1, .hits = 1};
	__u32 zero = 0;

	if (event_proc_budget) {
		s = bpf_map_lookup_elem(&event_proc_slots, &tgid);
		if (!s) {
			bpf_map_update_elem(&event_proc_slots, &tgid, &fresh, BPF_ANY);
		} else if (!slot_toss(s, slot, event_proc_budget, &pn, &pd)) {
			walker_count(CNT_EVENT_PROC_LIMITED, 1);
			return 0;
		}
	}
	if (event_cpu_budget) {
		s = bpf_map_lookup_elem(&event_cpu_slots, &zero);
		if (s && !slot_toss(s, slot, event_cpu_budget, &cn, &cd)) {
			walker_count(CNT_EVENT_THROTTLED, 1);
			return 0;
		}
	}
	/* numerators are budgets a slot (< 2^23 each): num < 2^46; den < 2^64 */
	num = pn * cn;
	den = pd * cd;
	*thinned = num != den;
	w = den / num;
	if (den % num &&
	    ((__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32()) % num < den % num)
		w++;
	return w;
}

/*
 * Off-CPU blocks are sampled up to the budget and no further: the time of
 * those not walked is summed apart ("[not walked: event budget]"), exactly.
 */
static __always_inline bool slot_full(struct cfi_event_slot *s, __u64 slot, __u32 budget)
{
	slot_roll(s, slot);
	s->hits++;
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
	struct cfi_event_slot *s, fresh = {.slot = slot, .used = 1, .hits = 1};
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
	    .probe = !user_in_ctx,
	};
	__u64 w;

	if (tgid == 0)
		return 0;
	if (!wanted(tgid)) {
		walker_count(CNT_FILTERED, 1);
		return 0;
	}
	w = event_thin(tgid, &src.thinned);
	if (!w)
		return 0;
	src.weight = weight * w;
	walker_count(CNT_EVENT_HITS, 1);
	walker_count(CNT_SAMPLES, 1);
	return sample_with_loop(&src, tgid, tid);
}

/* uprobe: and uretprobe: (the same program, attached as a return probe); the cookie is the event */
SEC("?uprobe")
int on_uprobe(struct pt_regs *ctx)
{
	return sample_event(ctx, ctx, true, (__u32)bpf_get_attach_cookie(ctx), 1);
}

SEC("?usdt")
int on_usdt(struct pt_regs *ctx)
{
	return sample_event(ctx, ctx, true, (__u32)bpf_usdt_cookie(ctx), 1);
}

/*
 * kprobe:FUNC and kretprobe:FUNC, as fentry / fexit (BTF trampolines: also on
 * kernels built without kprobes), one program per slot, its target set before the load.
 */
#define FUNC_SLOT(n)                                                                               \
	SEC("?fentry")                                                                             \
	int on_fentry##n(void *ctx)                                                                \
	{                                                                                          \
		return sample_event(ctx, NULL, false, func_event[n], 1);                           \
	}                                                                                          \
	SEC("?fexit")                                                                              \
	int on_fexit##n(void *ctx)                                                                 \
	{                                                                                          \
		return sample_event(ctx, NULL, false, func_event[n], 1);                           \
	}
FUNC_SLOT(0)
FUNC_SLOT(1)
FUNC_SLOT(2)
FUNC_SLOT(3)

/* tracepoint:CATEGORY:NAME, attached as a raw tracepoint: no tracefs needed */
#define TP_SLOT(n)                                                                                 \
	SEC("?raw_tp")                                                                             \
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
 * __TASK_TRACED: stopped by a tracer (cfiprof's own hold of a command at its
 * entry while its tables load, a debugger, strace): the tracer's time, not
 * the program's blocking.
 */
#define TASK_TRACED_STATE 0x08

/*
 * Every thread of the profile that has blocked, while it lives: when its
 * current block began (0: none) and why its stack was not walked, if so, so
 * that its time is in the profile at its switch-in either way.  User space
 * sizes it (1 entry without --off-cpu).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32); /* tid */
	__type(value, struct cfi_offcpu_block);
} offcpu_blocked SEC(".maps");

/* The time of blocks with no stack, per process and cause (struct cfi_unwalked_key). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cfi_unwalked_key);
	__type(value, struct cfi_unwalked_val);
} offcpu_unwalked SEC(".maps");

/* A block with no stack: its time joins its process's sum for the cause. */
static __always_inline void offcpu_unwalked_add(const struct cfi_offcpu_block *b, __u32 cause,
						__u64 delta)
{
	struct cfi_unwalked_key key = {.tgid = b->tgid, .cause = cause};
	struct cfi_unwalked_val *v = bpf_map_lookup_elem(&offcpu_unwalked, &key), fresh = {
	    .ns = delta, .blocks = 1, .cgroup_id = b->cgroup_id};

	if (!v) {
		__builtin_memcpy(fresh.comm, b->comm, sizeof(fresh.comm));
		if (!bpf_map_update_elem(&offcpu_unwalked, &key, &fresh, BPF_NOEXIST))
			return;
		/* another CPU made it meanwhile, or the map is full: tgid 0's entry */
		v = bpf_map_lookup_elem(&offcpu_unwalked, &key);
		if (!v) {
			key.tgid = 0;
			v = bpf_map_lookup_elem(&offcpu_unwalked, &key);
		}
		if (!v) {
			walker_count(CNT_OFFCPU_UNTRACKED, 1);
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, delta);
	__sync_fetch_and_add(&v->blocks, 1);
}

/* The walked block's sample, weighted; false if the ring buffer had no room for it. */
static __always_inline bool offcpu_send(const struct cfi_offcpu_block *b, __u32 tid, __u64 delta)
{
	struct cfi_sample_record *rec = bpf_map_lookup_elem(&offcpu_pending, &tid);
	__u32 size;

	if (!rec)
		return false;
	rec->weight = delta;
	size = sizeof(*rec) + ((__u32)rec->nr_kernel + rec->nr_user) * sizeof(__u64) +
	       (__u32)rec->nr_rt * RT_UNIT_BYTES;
	if (size > offcpu_value_bytes)
		size = offcpu_value_bytes;
	walker_count(CNT_SAMPLES, 1);
	if (bpf_ringbuf_output(&events, rec, size, ring_wakeup_flags(&events, wakeup_bytes))) {
		walker_count(CNT_LOST_RINGBUF, 1);
		return false;
	}
	walker_count(CNT_WRITTEN, 1);
	walk_stopped(b->reason, b->unsup);
	return true;
}

/*
 * The current thread's CPU time.  Read here, not off the caller's task
 * pointer: one pointer less live across offcpu_out's walk, where 6.1's
 * verifier lost a bound it had checked once the compiler spilled it.
 */
static __always_inline __u64 current_exec_ns(void)
{
	return bpf_get_current_task_btf()->se.sum_exec_runtime;
}

/*
 * The thread's block ended: its sample is sent, weighted by the block's
 * time, or that time added to its process's sum for the cause.  Blocks
 * under --min-block are neither (those walked are counted).  The time is
 * the wall time since the block began less the CPU time the thread had
 * since (exec_ns: its se.sum_exec_runtime now), which is none when its
 * switch-in is seen (end_unseen false).  Some switches reach no program
 * (the kernel skips sched_switch for tasks it hides from tracing; a
 * program busy on the CPU misses one): the thread is then found running,
 * at its next block, its exit (end_unseen true) or a later switch-in after
 * a preemption (CPU time since the block), and the time it ran is not
 * counted as blocked; a wait for a CPU after a preemption since is.
 *
 * Its own frame, not on_switch's: beside offcpu_out's walk state its locals
 * took on_switch -> walk_frames -> walker_step past 6.1's 512 bytes of stack
 * (each frame rounded up to 32).  Takes the tid, not the task: a static
 * subprog's pointer arguments are as typed as the caller's.
 */
static __noinline void offcpu_end(__u32 tid, __u64 exec_ns, bool end_unseen)
{
	struct cfi_offcpu_block *b = bpf_map_lookup_elem(&offcpu_blocked, &tid);
	__u64 delta, ran;

	/* start_ns 0: the thread's last block is accounted already */
	if (!b || !b->start_ns)
		return;
	delta = bpf_ktime_get_ns() - b->start_ns;
	ran = exec_ns - b->exec_ns;
	if (end_unseen || ran)
		walker_count(CNT_OFFCPU_END_UNSEEN, 1);
	delta = ran < delta ? delta - ran : 0;
	if (delta < offcpu_min_ns) {
		if (b->cause == UNWALKED_NONE)
			walker_count(CNT_OFFCPU_SHORT, 1);
	} else if (b->cause != UNWALKED_NONE) {
		offcpu_unwalked_add(b, b->cause, delta);
	} else if (!offcpu_send(b, tid, delta)) {
		offcpu_unwalked_add(b, UNWALKED_LOST, delta);
	}
	if (b->cause == UNWALKED_NONE)
		bpf_map_delete_elem(&offcpu_pending, &tid);
	b->start_ns = 0;
}

/*
 * A thread that blocks (not one preempted while runnable, not one exiting):
 * current is still prev, so its stacks are walked now, into offcpu_pending,
 * when the event budget allows.  Its entry in offcpu_blocked is made at its
 * first block and written in place after that (a map update and delete per
 * block cost ~200 ns more); on_exit removes it.
 */
static __always_inline void offcpu_out(void *ctx, struct task_struct *prev)
{
	unsigned int state = prev->__state;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	/* the kernel stack from __schedule: not this program and bpf_trace_run4 */
	struct sample_src src = {.ctx = ctx,
				 .user_in_ctx = false,
				 .event = offcpu_event,
				 .kernel_skip = 2,
				 .probe = true};
	struct cfi_offcpu_block *b;
	struct cfi_sample_record *rec;
	struct tc_scratch *s;
	__u32 zero = 0;
	__u8 rt;

	if (!state || (state & (TASK_DEAD_STATE | TASK_TRACED_STATE)) ||
	    (prev->flags & PF_KTHREAD) || !tgid)
		return;
	if (!wanted(tgid))
		return;
	s = bpf_map_lookup_elem(&tc_scratch, &zero);
	if (!s)
		return;
	b = bpf_map_lookup_elem(&offcpu_blocked, &tid);
	if (!b) {
		/* an empty entry from the scratch: on the stack it would not fit 6.1's 512 bytes */
		__builtin_memset(&s->block, 0, sizeof(s->block));
		bpf_map_update_elem(&offcpu_blocked, &tid, &s->block, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&offcpu_blocked, &tid);
		if (!b) {
			walker_count(CNT_OFFCPU_UNTRACKED, 1);
			return;
		}
	}
	/* running, so its last block ended: at a switch-in no program saw */
	if (b->start_ns)
		offcpu_end(tid, current_exec_ns(), true);
	/* final at the switch-out: the walk below does not change it */
	b->exec_ns = current_exec_ns();
	b->tgid = tgid;
	b->reason = b->unsup = 0;
	if (!event_budget_left(tgid)) {
		b->cgroup_id = bpf_get_current_cgroup_id();
		b->cause = UNWALKED_BUDGET;
		bpf_get_current_comm(b->comm, sizeof(b->comm));
		b->start_ns = bpf_ktime_get_ns();
		return;
	}
	/*
	 * Walked into this CPU's scratch record, then kept as the thread's
	 * pending sample; the walk's state in the scratch too (its tail-call
	 * walks', which never run here: interrupts are off in the scheduler).
	 */
	rec = (struct cfi_sample_record *)s->record;
	walker_count(CNT_EVENT_HITS, 1);
	rt = sample_fill_scratch(&src, rec, &s->st, tgid, tid);
	/* the runtime's units too: the scratch and the pending value have room for them */
	runtime_append(rt, rec, rec->nr_kernel + s->st.nr, MAX_KERNEL_FRAMES + max_user_frames);
	/* its stop reason is counted when it is sent: a short block never is */
	walk_finished(&s->st, true);
	walk_requests(&s->st);
	b->cgroup_id = rec->cgroup_id;
	b->cause = UNWALKED_NONE;
	b->reason = s->st.reason;
	b->unsup = s->st.unsup;
	__builtin_memcpy(b->comm, rec->comm, sizeof(b->comm));
	if (bpf_map_update_elem(&offcpu_pending, &tid, rec, BPF_ANY)) {
		walker_count(CNT_OFFCPU_FULL, 1);
		b->cause = UNWALKED_FULL;
	}
	b->start_ns = rec->time_ns;
}

/*
 * Set by user space when on_switch is detached at the stop: a block that
 * ends after that is not in the profile, and a sample sent then would be
 * written after the ring buffer's last read.
 */
volatile __u8 offcpu_detached = 0;

/* A thread's exit ends its entry (bpf/lifecycle.bpf.h). */
static __always_inline void offcpu_thread_exit(__u32 tid)
{
	if (!offcpu_enabled)
		return;
	/* a block whose end no program saw, before the entry that holds it goes */
	if (!offcpu_detached)
		offcpu_end(tid, current_exec_ns(), true);
	bpf_map_delete_elem(&offcpu_blocked, &tid);
}

SEC("?tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (!preempt)
		offcpu_out(ctx, prev);
	offcpu_end(next->pid, next->se.sum_exec_runtime, false);
	return 0;
}

#endif
