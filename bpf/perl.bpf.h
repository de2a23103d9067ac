/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Perl subroutine frames of the sampled thread, appended to its sample
 * record after the native PCs (struct cfi_interp_frame, leaf first): the
 * interpreter's context stacks, innermost first.  The thread's interpreter
 * is PL_current_context, in the executable's TLS block; its stack infos
 * (PL_curstackinfo, then si_prev) each hold a stack of contexts, of which
 * the subroutine calls (CXt_SUB) are frames: their CV, and the line they
 * run, which is the line of the COP the next inner call was made from (for
 * the innermost, PL_curcop).  Past the outermost, the program's main code,
 * recorded by the COP it runs (whose file is the program's), once it runs
 * (PL_phase RUN): while perl compiles, BEGIN blocks run in a runops loop of
 * their own under perl_parse, and no main code runs yet.
 * A stack info other than the main one is a runops loop of its own (sort's
 * comparator, a signal handler, a tie, DESTROY): its outermost frame is
 * where that loop began (is_entry).  Only processes user space found a
 * supported perl in (runtime_procs, user/runtimes/perl/) pay anything.
 */
#ifndef CFIPROF_PERL_BPF_H
#define CFIPROF_PERL_BPF_H

_Static_assert(sizeof(struct cfi_perl_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(PERL_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(PERL_MAX_FRAMES * sizeof(struct cfi_interp_frame) <= RT_RECORD_BYTES,
	       "its units past the record's room");

/* offsets into the bytes read are masked after their bounds check (python.bpf.h says why) */
#define PERL_OFF_MASK 127
/* contexts visited per sample, subroutine calls or not (loops, blocks, evals) */
#define PERL_MAX_STEPS 512
/*
 * ... without bpf_loop (kernels before 5.17, --tail-calls), where the
 * verifier walks each step in turn: 512 took walk_tc past 6.1's million
 * instructions, and 24 still did at its 18th step on 6.1.  Deeper stacks are
 * truncated there.
 */
#define PERL_MAX_STEPS_UNROLLED 8

struct perl_scratch {
	struct cfi_interp_frame f[PERL_MAX_FRAMES];
	__u8 cx[PERL_OFF_MASK + 1 + 8];
	__u8 si[PERL_OFF_MASK + 1 + 8];
	__u32 n; /* frames in f so far: see struct python_scratch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perl_scratch);
} perl_scratch SEC(".maps");

struct perl_walk_ctx {
	const struct cfi_perl_proc *pl;
	struct perl_scratch *s;
	__u64 si, cxstack;
	__u64 cop;	/* the COP the next frame runs: its line, and for the main code its file */
	__s64 ix;	/* the next context's index in the stack info si (-1: none left) */
	__u32 line;	/* the line the next sub frame runs */
	__u32 si_first; /* the first frame found in si */
	__u32 n, status;
	bool main_runs; /* PL_phase is RUN: the main code has a frame (not while it compiles) */
	bool done;	/* every stack info read */
};

/* Stack info si's contexts into c; false when unreadable. */
static __always_inline bool perl_enter_si(struct perl_walk_ctx *c, __u64 si)
{
	const struct cfi_perl_proc *pl = c->pl;
	__u64 off_stack = pl->si_cxstack, off_ix = pl->si_cxix;

	c->si = si;
	c->si_first = c->s->n;
	if (!si)
		return true;
	if (off_stack > PERL_SI_READ - 8 || off_ix > PERL_SI_READ - 4 ||
	    bpf_probe_read_user(c->s->si, PERL_SI_READ, (const void *)si))
		return false;
	barrier_var(off_stack);
	barrier_var(off_ix);
	off_stack &= PERL_OFF_MASK;
	off_ix &= PERL_OFF_MASK;
	c->cxstack = *(__u64 *)(c->s->si + off_stack);
	c->ix = *(__s32 *)(c->s->si + off_ix);
	return true;
}

/* One context (a frame when a sub's call), or the next stack info; 1 ends the walk. */
static long perl_walk_step(__u32 index, void *data)
{
	struct perl_walk_ctx *c = data;
	const struct cfi_perl_proc *pl = c->pl;
	struct perl_scratch *s = c->s;
	__u64 off_cv = pl->cx_sub_cv, off_cop = pl->cx_oldcop, prev;
	__u32 n = s->n;

	if (n >= PERL_MAX_FRAMES) {
		c->status = PERL_STATUS_TRUNCATED;
		return 1;
	}
	barrier_var(n);
	if (!c->si) {
		c->done = true;
		if (!c->main_runs)
			return 1;
		/* past the outermost stack info: the program's main code, where perl began */
		s->f[n] = (struct cfi_interp_frame){
		    .code = c->cop, .instr = c->line, .is_entry = 1, .owner = PERL_FRAME_MAIN};
		c->s->n = n + 1;
		return 1;
	}
	if (c->ix < 0) {
		prev = rt_read_ptr(c->si + pl->si_prev);
		/* a stack info of its own is a runops loop of its own: its outermost frame began it
		 */
		if (prev && c->s->n > c->si_first && c->s->n - 1 < PERL_MAX_FRAMES)
			s->f[(c->s->n - 1) & (PERL_MAX_FRAMES - 1)].is_entry = 1;
		if (!perl_enter_si(c, prev)) {
			c->status = PERL_STATUS_UNREADABLE;
			return 1;
		}
		return 0;
	}
	if (off_cv > PERL_CX_READ - 8 || off_cop > PERL_CX_READ - 8 ||
	    bpf_probe_read_user(s->cx, PERL_CX_READ,
				(const void *)(c->cxstack + (__u64)c->ix * pl->cx_size))) {
		c->status = PERL_STATUS_UNREADABLE;
		return 1;
	}
	c->ix--;
	if ((s->cx[0] & 0xf) != pl->cxt_sub)
		return 0;
	barrier_var(off_cv);
	barrier_var(off_cop);
	off_cv &= PERL_OFF_MASK;
	off_cop &= PERL_OFF_MASK;
	s->f[n] = (struct cfi_interp_frame){
	    .code = *(__u64 *)(s->cx + off_cv), .instr = c->line, .owner = PERL_FRAME_SUB};
	c->s->n = n + 1;
	/* the next outer frame runs the line this call was made from */
	c->cop = *(__u64 *)(s->cx + off_cop);
	c->line = 0;
	if (c->cop)
		bpf_probe_read_user(&c->line, sizeof(c->line),
				    (const void *)(c->cop + pl->cop_line));
	return 0;
}

/*
 * The sampled thread's Perl frames into the scratch area: returns
 * nr_frames | status << 16 (status 0: not a Perl process).  A global
 * function: verified once, whichever program calls it.
 */
__noinline int perl_walk(__u32 pid)
{
	struct perl_walk_ctx c = {.status = PERL_STATUS_OK};
	__u64 tp, interp;
	__u32 phase = 0;
	int i;

	c.pl = runtime_proc(pid, RT_PERL);
	if (!c.pl)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, c.pl->maps_read_ns))
		return 0;
	c.s = bpf_map_lookup_elem(&perl_scratch, &c.n);
	tp = current_thread_pointer();
	if (!c.s || !tp)
		return 0;
	c.s->n = 0;
	interp = rt_read_ptr(tp + (__s64)c.pl->tls_context);
	if (!interp)
		return PERL_STATUS_NO_THREAD << 16;
	c.cop = rt_read_ptr(interp + c.pl->interp_curcop);
	bpf_probe_read_user(&phase, sizeof(phase), (const void *)(interp + c.pl->interp_phase));
	c.main_runs = phase == c.pl->phase_run;
	if (c.cop)
		bpf_probe_read_user(&c.line, sizeof(c.line),
				    (const void *)(c.cop + c.pl->cop_line));
	if (!perl_enter_si(&c, rt_read_ptr(interp + c.pl->interp_curstackinfo)))
		return PERL_STATUS_UNREADABLE << 16;
	if (use_bpf_loop) {
		bpf_loop(PERL_MAX_STEPS, perl_walk_step, &c, 0);
	} else {
		for (i = 0; i < PERL_MAX_STEPS_UNROLLED; i++)
			if (perl_walk_step(i, &c))
				break;
	}
	/* the steps ran out before the main code: its outer frames are missing */
	if (c.status == PERL_STATUS_OK &&
	    (c.s->n == 0 || c.s->f[(c.s->n - 1) & (PERL_MAX_FRAMES - 1)].owner != PERL_FRAME_MAIN))
		c.status = PERL_STATUS_TRUNCATED;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items perl_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *perl_items(void)
{
	__u32 zero = 0;
	struct perl_scratch *s = bpf_map_lookup_elem(&perl_scratch, &zero);

	return s ? s->f : NULL;
}

static __always_inline void perl_append(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs)
{
	int r = perl_walk(rec->pid);

	runtime_emit(rec, nr_pcs, max_pcs, RT_PERL, r, sizeof(struct cfi_interp_frame),
		     PERL_MAX_FRAMES, PERL_STATUS_MAX, PERL_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (Perl compiles no machine code). */
#define perl_jit_caller_rule runtime_no_jit_caller_rule

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define perl_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: Perl keeps nothing per thread. */
static __always_inline void perl_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
