/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c (its maps, walker and requests.bpf.h come first): a
 * sample's start and end, shared by the bpf_loop and tail-call walks and the
 * programs of events.bpf.h.  The record's header, the registers the walk
 * starts from (the context's, or the task's saved user registers), the kernel
 * stack, why the walk stopped (settle_reason), the counters a walk adds to,
 * and when the reader is woken.
 */
#ifndef CFIPROF_SAMPLE_BPF_H
#define CFIPROF_SAMPLE_BPF_H

/* A submission to ring wakes the reader only once at least bytes are pending. */
static __always_inline __u64 ring_wakeup_flags(void *ring, __u64 bytes)
{
	return bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= bytes ? BPF_RB_FORCE_WAKEUP
								   : BPF_RB_NO_WAKEUP;
}

/* A walk's stop reason (and unsupported rule), counted for each sample sent. */
static __always_inline void walk_stopped(__u8 reason, __u8 unsup)
{
	walker_count(CNT_STOP_BASE + (reason < STOP_REASON_MAX ? reason : 0), 1);
	if (reason == STOP_UNSUPPORTED)
		walker_count(CNT_UNSUP_BASE + (unsup < CFI_UNSUP_MAX ? unsup : 0), 1);
}

/*
 * A walk's work, and its stop reason unless the sample is sent later:
 * deferred walks are counted by user space under the reason they finally stop
 * with, off-CPU walks when their block ends (bpf/events.bpf.h).
 */
static __always_inline void walk_finished(struct walker_state *st, bool sent_later)
{
	walker_count(CNT_CACHE_HIT, st->cache_hits);
	walker_count(CNT_CACHE_MISS, st->cache_misses);
	walker_count(CNT_FRAMES, st->nr);
	walker_count(CNT_FP_FRAMES, st->nr_fp);
	if (!sent_later)
		walk_stopped(st->reason, st->unsup);
}

/* The sample's registers by DWARF number, for rules with the CFA in one of them (leaf only). */
#define LEAF_REGS(st, r)                                                                           \
	do {                                                                                       \
		ARCH_LEAF_REGS(st, r);                                                             \
		walker_leaf_regs(st);                                                              \
	} while (0)

/* Its own function: inlined, the compiler merges both copies into loads off a moved ctx pointer. */
static __noinline void leaf_regs_from_ctx(struct pt_regs *regs, struct walker_state *st)
{
	LEAF_REGS(st, *regs);
}

/*
 * Where a sample's user registers are: in the program's context (a perf event
 * that interrupted user mode, a uprobe: ctx_regs), or in the task's pt_regs
 * (any event in kernel mode: its kernel stack is taken too).  ctx is the
 * program's context, for bpf_get_stack.
 */
struct sample_src {
	void *ctx;
	struct pt_regs *ctx_regs;
	bool user_in_ctx;
	__u32 event;	   /* the record's event */
	__u64 weight;	   /* and weight */
	__u32 thinned;	   /* 1: the weight stands for hits the budget did not sample too */
	__u32 kernel_skip; /* kernel frames of the BPF program's own call chain */
	bool probe;	   /* a program on kernel code: SAMPLE_PROBE_STACK */
};

/*
 * The current task's name and cgroup read through its BTF pointer: plain
 * loads where bpf_get_current_comm() and bpf_get_current_cgroup_id() are a
 * helper call each, which is most of what they cost per sample.  comm is
 * NUL-padded by the kernel (strscpy_pad); the last byte is cleared anyway,
 * as the helper's copy would be.
 */
static __always_inline void task_comm(const struct task_struct *task, char comm[COMM_LEN])
{
	__u64 *dst = (__u64 *)comm;
	const __u64 *src = (const __u64 *)task->comm;

	_Static_assert(COMM_LEN == 2 * sizeof(__u64), "comm is two words");
	dst[0] = src[0];
	dst[1] = src[1];
	comm[COMM_LEN - 1] = 0;
}

/*
 * bpf_rdonly_cast (kfunc_abi.h).  Read from the trusted task, each pointer of
 * the chain below had the verifier search the kernel's BTF, one type at a
 * time, for the names that would make it trusted (btf_nested_type_is_trusted,
 * up to four searches a field, once for each program that takes samples).
 * From the untrusted copy the loads are the same fault-safe loads, and the
 * cast itself is a register copy once JITed.
 */
static void *(*const rdonly_cast)(const void *obj,
				  __u32 btf_id) = (void *)(KFUNC_CALL_BASE + KFUNC_RDONLY_CAST);

static __always_inline __u64 task_cgroup_id(const struct task_struct *task)
{
	const struct task_struct *t = rdonly_cast(task, KTYPE_ID_BASE + KTYPE_TASK_STRUCT);

	/* the default hierarchy's cgroup, as the helper's task_dfl_cgroup() */
	return t->cgroups->dfl_cgrp->kn->id;
}

/*
 * Fill the record header and the kernel stack; set up st for the user walk.
 * Returns the number of kernel frames written into rec->pcs.
 */
static __always_inline __u32 sample_begin(const struct sample_src *src,
					  struct cfi_sample_record *rec, struct walker_state *st,
					  __u32 tgid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	__u32 nr_kernel = 0;
	__u8 flags = 0;
	long n;

	rec->type = RECORD_SAMPLE;
	rec->pid = tgid;
	rec->tid = tid;
	rec->cpu = bpf_get_smp_processor_id();
	rec->time_ns = bpf_ktime_get_ns();
	rec->cgroup_id = task_cgroup_id(task);
	task_comm(task, rec->comm);

	/*
	 * Each branch sets up the walk from its own registers: a second test of
	 * user_in_ctx (a byte in the caller's stack) is unknown to the 6.1
	 * verifier, which then follows a NULL regs into LEAF_REGS.
	 */
	if (src->user_in_ctx) {
		ARCH_WALKER_INIT(st, tgid, src->ctx_regs);
		leaf_regs_from_ctx(src->ctx_regs, st);
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		flags |= SAMPLE_IN_KERNEL | (src->probe ? SAMPLE_PROBE_STACK : 0);
		if (collect_kernel) {
			n = bpf_get_stack(src->ctx, rec->pcs, MAX_KERNEL_FRAMES * sizeof(__u64),
					  src->kernel_skip & BPF_F_SKIP_FIELD_MASK);
			if (n > 0)
				nr_kernel = (__u32)n / sizeof(__u64);
		}
		ARCH_WALKER_INIT(st, tgid, regs);
		LEAF_REGS(st, *regs);
	}
	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	st->flags = flags;
	rec->event = src->event;
	rec->weight = src->weight;
	rec->thinned = src->thinned;
	if (task->flags & PF_KTHREAD)
		walker_stop(st, STOP_NO_USER);
	/*
	 * In do_exit after exit_mm(): no profiler can read this stack any more.
	 * The leaf (the exit_group call) is still known; the walk stops at its
	 * first read, and settle_reason() names why.  PF_EXITING comes before
	 * exit_mm(); mm is read only then, and not as a BTF pointer, whose
	 * load costs the verifier searches of the kernel's BTF by name (is the
	 * field trusted?) at each place it checks it.
	 */
	else if ((task->flags & PF_EXITING) && !BPF_CORE_READ(task, mm))
		st->flags |= SAMPLE_EXITING;
	/*
	 * Inside execve the saved user registers may belong to the image being
	 * replaced while the address space is already the new one: nothing to
	 * unwind, and nothing to finish later (user space would read the new
	 * image's mappings).
	 */
	else if ((flags & SAMPLE_IN_KERNEL) && bpf_core_field_exists(task->in_execve) &&
		 BPF_CORE_READ_BITFIELD(task, in_execve)) {
		st->flags |= SAMPLE_IN_EXECVE;
		walker_stop(st, STOP_IN_EXECVE);
	}
	return nr_kernel;
}

/*
 * A pc in no known mapping of a process whose executable mappings changed
 * after user space last read them, or whose keys user space is rewriting
 * right now: the loader has not caught up with a new library yet, which is
 * tables-pending, not an unknown region (JIT code).
 */
static __always_inline void settle_reason(struct walker_state *st)
{
	struct pid_times *times;
	struct cfi_proc_val *proc;
	/* a key on the stack: st may be a global function's memory, no map key to 6.1's verifier */
	__u32 pid = st->pid;

	if (st->reason == STOP_NO_USER || st->reason == STOP_IN_EXECVE)
		return;
	if (st->flags & SAMPLE_EXITING) {
		st->reason = STOP_EXITING;
		return;
	}
	times = bpf_map_lookup_elem(&pid_times, &pid);
	/*
	 * One lookup per sample serves three: the request for a change whose own
	 * request was refused (walk_requests), this reason, a deferred record.
	 */
	st->changed_ns = times ? times->ns[PT_CHANGED] : 0;
	st->change_pending = st->proc_known && st->changed_ns > st->loaded_ns;
	if (st->reason != STOP_NO_MAPPING)
		return;
	/* the entry as it is now: user space may be rewriting the keys */
	proc = bpf_map_lookup_elem(&procs, &pid);
	if (proc && ((proc->flags & CFI_PROC_UPDATING) || st->changed_ns > proc->loaded_ns)) {
		st->reason = STOP_TABLES_PENDING;
		st->change_pending = 1;
	} else if (proc && (proc->flags & CFI_PROC_KEYS_QUOTA)) {
		st->keys_quota = 1;
	}
}

/*
 * rec's frame counts and flags, with no runtime part yet: what runtime_append
 * reads of it (the flags; HotSpot's walk: nr_kernel).
 */
static __always_inline void sample_rt_reset(struct cfi_sample_record *rec,
					    const struct walker_state *st, __u32 nr_kernel)
{
	rec->flags = st->flags;
	rec->nr_kernel = nr_kernel;
	rec->nr_user = st->nr;
	rec->nr_rt = 0;
	rec->rt_status = 0;
	rec->runtime = RT_NONE;
}

/* The rest of rec from the ended walk st, after sample_rt_reset. */
static __always_inline void sample_end_walk(struct cfi_sample_record *rec, struct walker_state *st)
{
	settle_reason(st);
	rec->reason = st->reason;
	rec->nr_fp = st->nr_fp;
	/* user space names the PCs with the mappings of this generation, not the latest */
	rec->generation = st->generation;
}

static __always_inline void sample_end(struct cfi_sample_record *rec, struct walker_state *st,
				       __u32 nr_kernel)
{
	sample_rt_reset(rec, st, nr_kernel);
	sample_end_walk(rec, st);
}

#endif
