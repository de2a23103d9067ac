/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ruby frames of the sampled thread, appended to its sample record after
 * the native PCs (struct cfi_interp_frame, leaf first): the control frames
 * of the thread's execution context, innermost first.  The context is
 * ruby_current_ec, thread-local in libruby's TLS block, found from the GOT
 * slot of libruby's own accesses to it (tls_var_addr in runtimes.bpf.h: a
 * module id and the thread's DTV, or a TLS descriptor).  Each thread has
 * its own context, so a
 * thread that released the GVL (a blocking call) still shows its frames.
 * A frame is Ruby-level when its flags (ep[0]) lack CFRAME: its iseq and
 * pc are recorded, named and given a line in user space; a C method's, its
 * method entry, named in user space too; a frame whose
 * flags carry FINISH is where a vm_exec call (rb_vm_exec, the native
 * frame the group goes above) began.  Only processes user space found a
 * supported Ruby in (runtime_procs, user/runtimes/ruby/) pay anything.
 */
#ifndef CFIPROF_RUBY_BPF_H
#define CFIPROF_RUBY_BPF_H

_Static_assert(sizeof(struct cfi_ruby_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(RUBY_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(RUBY_MAX_FRAMES * sizeof(struct cfi_interp_frame) <= RT_RECORD_BYTES,
	       "its units past the record's room");

/* offsets into the bytes read are masked after their bounds check (python.bpf.h says why) */
#define RUBY_OFF_MASK 63
/* control frames visited per sample, Ruby-level or not (C methods, ifuncs) */
#define RUBY_MAX_STEPS 512
/*
 * ... without bpf_loop (kernels before 5.17, --tail-calls): the verifier
 * walks each step of the loop in turn, and the states it keeps grow with
 * the frames recorded, so its work grows with the square of the steps:
 * 32 took 830 thousand of its million instructions beside the rest of the
 * program.  Deeper stacks are truncated there.
 */
#define RUBY_MAX_STEPS_UNROLLED 24

struct ruby_scratch {
	struct cfi_interp_frame f[RUBY_MAX_FRAMES];
	__u8 cfp[RUBY_OFF_MASK + 1 + 8];
	__u32 n; /* frames in f so far: see struct python_scratch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ruby_scratch);
} ruby_scratch SEC(".maps");

struct ruby_walk_ctx {
	const struct cfi_ruby_proc *rb;
	struct ruby_scratch *s;
	__u64 cfp, end;
	__u32 n, status;
};

/* One control frame (a frame when Ruby-level); 1 ends the walk. */
static long ruby_walk_step(__u32 index, void *data)
{
	struct ruby_walk_ctx *c = data;
	const struct cfi_ruby_proc *rb = c->rb;
	struct ruby_scratch *s = c->s;
	__u64 off_pc = rb->cfp_pc, off_iseq = rb->cfp_iseq, off_ep = rb->cfp_ep, pc, iseq, flags,
	      ep, me;
	__u32 n = s->n;

	if (c->cfp >= c->end)
		return 1;
	if (n >= RUBY_MAX_FRAMES) {
		c->status = RUBY_STATUS_TRUNCATED;
		return 1;
	}
	barrier_var(n);
	if (off_pc > RUBY_CFP_READ - 8 || off_iseq > RUBY_CFP_READ - 8 ||
	    off_ep > RUBY_CFP_READ - 8 ||
	    bpf_probe_read_user(s->cfp, RUBY_CFP_READ, (const void *)c->cfp)) {
		c->status = RUBY_STATUS_UNREADABLE;
		return 1;
	}
	c->cfp += rb->cfp_size;
	barrier_var(off_pc);
	barrier_var(off_iseq);
	barrier_var(off_ep);
	off_pc &= RUBY_OFF_MASK;
	off_iseq &= RUBY_OFF_MASK;
	off_ep &= RUBY_OFF_MASK;
	pc = *(__u64 *)(s->cfp + off_pc);
	iseq = *(__u64 *)(s->cfp + off_iseq);
	ep = *(__u64 *)(s->cfp + off_ep);
	flags = rt_read_ptr(ep);
	/*
	 * A C method's frame has neither: its method entry, ep[-2]
	 * (VM_ENV_DATA_INDEX_ME_CREF), names it in user space.  Other frames
	 * without either (a block in C, a dummy) are left out.
	 */
	if (!pc && !iseq && (flags & rb->frame_magic_mask) == rb->frame_cfunc &&
	    (me = rt_read_ptr(ep - 16))) {
		s->f[n] = (struct cfi_interp_frame){.code = me, .owner = RUBY_FRAME_CFUNC};
		s->n = n + 1;
		return 0;
	}
	if (!pc || !iseq)
		return 0;
	if (flags & rb->frame_cframe)
		return 0;
	s->f[n] = (struct cfi_interp_frame){.code = iseq,
					    .instr = (__u32)pc,
					    .is_entry = (flags & rb->frame_finish) ? 1 : 0,
					    .owner = RUBY_FRAME_ISEQ};
	s->n = n + 1;
	return 0;
}

/*
 * The sampled thread's Ruby frames into the scratch area: returns
 * nr_frames | status << 16 (status 0: not a Ruby process).  A global
 * function: verified once, whichever program calls it.
 */
__noinline int ruby_walk(__u32 pid)
{
	struct ruby_walk_ctx c = {.status = RUBY_STATUS_OK};
	__u64 tp, var, ec, stack, size;
	int i;

	c.rb = runtime_proc(pid, RT_RUBY);
	if (!c.rb)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, c.rb->maps_read_ns))
		return 0;
	c.s = bpf_map_lookup_elem(&ruby_scratch, &c.n);
	tp = current_thread_pointer();
	if (!c.s || !tp)
		return 0;
	var = tls_var_addr(tp, c.rb->tls.slot, c.rb->tls.offset, c.rb->tls.desc);
	ec = var ? rt_read_ptr(var) : 0;
	if (!ec)
		return RUBY_STATUS_NO_THREAD << 16;
	stack = rt_read_ptr(ec + c.rb->ec_vm_stack);
	size = rt_read_ptr(ec + c.rb->ec_vm_stack_size);
	c.cfp = rt_read_ptr(ec + c.rb->ec_cfp);
	/*
	 * Control frames grow down from the VM stack's end; the last is a
	 * thread's dummy (the main thread's holds a stand-in iseq named
	 * "<main>"), which Ruby's own backtraces skip too.
	 */
	c.end = stack + size * 8 - c.rb->cfp_size;
	if (!stack || !c.cfp || c.cfp < stack || c.cfp >= c.end || !c.rb->cfp_size)
		return RUBY_STATUS_UNREADABLE << 16;
	c.s->n = 0;
	if (use_bpf_loop) {
		bpf_loop(RUBY_MAX_STEPS, ruby_walk_step, &c, 0);
	} else {
		for (i = 0; i < RUBY_MAX_STEPS_UNROLLED; i++)
			if (ruby_walk_step(i, &c))
				break;
	}
	if (c.status == RUBY_STATUS_OK && c.cfp < c.end)
		c.status = RUBY_STATUS_TRUNCATED;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items ruby_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *ruby_items(void)
{
	__u32 zero = 0;
	struct ruby_scratch *s = bpf_map_lookup_elem(&ruby_scratch, &zero);

	return s ? s->f : NULL;
}

static __always_inline void ruby_append(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs)
{
	int r = ruby_walk(rec->pid);

	runtime_emit(rec, nr_pcs, max_pcs, RT_RUBY, r, sizeof(struct cfi_interp_frame),
		     RUBY_MAX_FRAMES, RUBY_STATUS_MAX, RUBY_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (YJIT is off by default). */
#define ruby_jit_caller_rule runtime_no_jit_caller_rule

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define ruby_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: Ruby keeps nothing per thread. */
static __always_inline void ruby_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
