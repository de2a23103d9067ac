/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c (its maps, walker and record helpers come first):
 * deferred unwinding, samples the kernel cannot finish yet for lack of tables.
 */
#ifndef CFIPROF_DEFER_BPF_H
#define CFIPROF_DEFER_BPF_H

/*
 * Only a walk that stopped for lack of tables can be finished later; inside
 * execve the registers may belong to the image being replaced.
 */
static __always_inline bool defer_wanted(const struct walker_state *st)
{
	return defer_stack_bytes && st->reason == STOP_TABLES_PENDING &&
	       !(st->flags & SAMPLE_IN_EXECVE);
}

/*
 * Takes need bytes of this second's copy budget: the window to give back what
 * was not copied (defer_budget_return), or NULL when the budget is spent.
 */
static __always_inline struct defer_window *defer_budget_take(__u64 need, __u64 *window)
{
	struct defer_window *w;
	__u32 zero = 0;
	__u64 now;

	w = bpf_map_lookup_elem(&defer_budget, &zero);
	if (!w)
		return NULL;
	now = bpf_ktime_get_ns();
	/* CPUs race on the window reset: the budget may be exceeded by a copy or two */
	if (now - w->start_ns >= 1000000000ULL) {
		w->start_ns = now;
		w->bytes = 0;
	}
	if (w->bytes + need > defer_bytes_per_sec)
		return NULL;
	__sync_fetch_and_add(&w->bytes, need);
	*window = w->start_ns;
	return w;
}

/*
 * The stack ends where its mapping does, usually well short of the maximum:
 * the budget counts bytes copied.  Not across a window reset (it would wrap).
 */
static __always_inline void defer_budget_return(struct defer_window *w, __u64 window, __u64 unused)
{
	if (unused && w->start_ns == window && w->bytes >= unused)
		__sync_fetch_and_sub(&w->bytes, unused);
}

/* bpf_find_vma's callback: where the mapping holding the stack pointer ends */
static long defer_stack_vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	(void)task;
	*(__u64 *)data = vma->vm_end;
	return 0;
}

/*
 * Where the copy of a stack from sp upwards ends: its mapping's end.  Past
 * it each page read faults, which costs more than the copy (a shallow
 * stack's 64 KiB copy is mostly such pages); the page faults of a process
 * just started are where deferred samples are.  Unknown (the mapping's
 * lock taken, sp below the mapping while it grows): no bound but the size.
 */
static __always_inline __u64 defer_stack_end(__u64 sp)
{
	__u64 end = ~0ULL;

	if (have_find_vma)
		bpf_find_vma(bpf_get_current_task_btf(), sp, defer_stack_vma_end, &end, 0);
	return end;
}

/*
 * Sends rec (already complete, its Python frames too) with the walker state
 * and a copy of the user stack from the page holding sp upwards, as one
 * RECORD_DEFERRED.  Returns
 * true when it went out; then rec itself must not be sent.
 */
static __always_inline bool emit_deferred(const struct cfi_sample_record *rec,
					  const struct walker_state *st)
{
	const __u32 stack_max = defer_stack_bytes & ~(DEFER_CHUNK - 1);
	struct cfi_deferred_record *d;
	struct defer_window *w;
	__u64 window, base = st->sp & ~(__u64)(DEFER_CHUNK - 1), rec_size, end;
	__u8 *stack;
	__u32 len = 0, i, holes;

	if (stack_max > DEFER_STACK_MAX)
		return false;
	w = defer_budget_take(stack_max, &window);
	if (!w) {
		walker_count(CNT_DEFER_BUDGET, 1);
		return false;
	}
	/*
	 * Room for a Python process's frame chain (bpf/python.bpf.h) in every
	 * copy: 2 KiB beside the stack's 64 KiB, and one size the verifier
	 * can bound the sample's copy by.
	 */
	d = bpf_ringbuf_reserve(&events,
				sizeof(*d) + stack_max + RECORD_MAX_BYTES + RT_RECORD_BYTES, 0);
	if (!d) {
		defer_budget_return(w, window, stack_max);
		walker_count(CNT_DEFER_LOST, 1);
		return false;
	}
	stack = (__u8 *)(d + 1);
	/*
	 * Everything but the copy's length first: each of the copy loop's
	 * exits is a state of its own for the verifier, and code after the loop
	 * is verified once per exit (6,000 instructions of on_sample's 27,000).
	 */
	d->type = RECORD_DEFERRED;
	d->stack_max = stack_max;
	d->stack_base = base;
	d->nr_signal = st->nr_signal;
	d->bp_valid = st->bp_valid;
	d->ip_is_ra = st->ip_is_ra;
	d->ip = st->ip;
	d->sp = st->sp;
	d->bp = st->bp;
	d->changed_ns = st->changed_ns;
	d->rbx = st->rbx;
	d->rbx_at = st->rbx_at;
	d->rbx_valid = st->rbx_valid;
	d->lr = st->lr;
	d->lr_valid = st->lr_valid;
	d->at_leaf = st->at_leaf;
	d->ip_from_fp = st->ip_from_fp;
	__builtin_memcpy(d->leaf, st->leaf, sizeof(d->leaf));
	rec_size = sizeof(*rec) + ((__u64)rec->nr_kernel + rec->nr_user) * sizeof(__u64);
	if (rec_size > RECORD_MAX_BYTES)
		rec_size = RECORD_MAX_BYTES;
	if (rec->nr_rt <= RT_MAX_UNITS)
		rec_size += rec->nr_rt * RT_UNIT_BYTES;
	if (rec_size > RECORD_MAX_BYTES + RT_RECORD_BYTES)
		rec_size = RECORD_MAX_BYTES + RT_RECORD_BYTES;
	bpf_probe_read_kernel(stack + stack_max, rec_size, rec);
	d->stack_len = 0;
	d->stack_holes = 0;
	end = defer_stack_end(st->sp);
	/*
	 * The size stays a test of its own: the mapping's end folded into one
	 * limit with it, 6.1's verifier loses len's bound within the
	 * reservation and refuses the copy's write (arm64 guest).
	 */
	for (i = 0; i < DEFER_STACK_MAX / DEFER_CHUNK; i++) {
		if (len >= stack_max || base + len >= end)
			break;
		if (bpf_probe_read_user(stack + len, DEFER_CHUNK, (const void *)(base + len))) {
			/*
			 * Near sp, a page the stack grows into whose fault is under way
			 * (the sample interrupted it): the frames above are still
			 * there.  Further up, the stack's top: keep what was readable.
			 */
			if (i >= DEFER_HOLE_CHUNKS)
				break;
			d->stack_holes |= 1ull << i;
			len += DEFER_CHUNK;
			continue;
		}
		len += DEFER_CHUNK;
		d->stack_len = len;
	}
	/* read back, not carried: the loop's exits then leave one state, not one per length */
	len = *(volatile __u32 *)&d->stack_len;
	holes = __builtin_popcountll(*(volatile __u64 *)&d->stack_holes);
	/*
	 * Woken at once, unlike plain samples: user space reads the process's
	 * mappings as soon as it sees its first deferred samples, and a short
	 * process (a build's mkdir, as) may be gone a few milliseconds later.
	 * Such records are few (only before a process's tables exist, within
	 * the copy budget).
	 */
	bpf_ringbuf_submit(d, BPF_RB_FORCE_WAKEUP);
	/* only on_exit_maps reads it: not kept on kernels without the VMA iterator */
	if (exit_maps_on)
		pid_time_set(rec->pid, PT_DEFERRED, rec->time_ns); /* for on_exit_maps */
	walker_count(CNT_DEFERRED, 1);
	defer_budget_return(w, window, stack_max - len);
	walker_count(CNT_DEFER_BYTES, len);
	walker_count(CNT_DEFER_HOLES, holes);
	return true;
}

#endif
