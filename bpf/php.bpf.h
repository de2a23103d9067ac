/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * PHP frames of the sampled thread, appended to its sample record after
 * the native PCs (struct cfi_interp_frame, leaf first): the executor's
 * chain of zend_execute_data from executor_globals.current_execute_data.
 * Only processes user space found a supported, non-thread-safe PHP in
 * (runtime_procs, user/runtimes/php/php_detect.c) pay anything; the field
 * offsets come from their entry.  A non-thread-safe PHP runs one request
 * per process (CLI, FPM and mod_php workers), so its executor globals are
 * the sampled thread's.
 *
 * Each frame records its zend_function (code), the line of the opline it
 * runs (instr; 0 for a function of C), whether an executor call began with
 * it (is_entry: ZEND_CALL_TOP, where the native stack has an execute_ex),
 * the function's type (owner) and a digest of its opcodes (scope: a
 * function compiled again at a freed one's address is told apart).
 */
#ifndef CFIPROF_PHP_BPF_H
#define CFIPROF_PHP_BPF_H

_Static_assert(sizeof(struct cfi_php_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(PHP_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(PHP_RECORD_BYTES <= RT_RECORD_BYTES, "its units past the record's room");

/* offsets into the bytes read are masked after their bounds check (python.bpf.h says why) */
#define PHP_FRAME_OFF_MASK 63
#define PHP_FUNC_OFF_MASK  127
/* zend_function.type, first in every member of its union, and its user-code values */
#define PHP_FUNC_TYPE	  0
#define PHP_USER_FUNCTION 2
#define PHP_EVAL_CODE	  4

struct php_scratch {
	struct cfi_interp_frame f[PHP_MAX_FRAMES];
	__u8 ed[PHP_FRAME_OFF_MASK + 1 + 8];
	__u8 func[PHP_FUNC_OFF_MASK + 1 + 8];
	__u32 n; /* frames in f so far: see struct python_scratch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct php_scratch);
} php_scratch SEC(".maps");

struct php_walk_ctx {
	const struct cfi_php_proc *php;
	struct php_scratch *s;
	__u64 ed;
	__u32 n, status;
};

/* One zend_execute_data into the scratch area; 1 ends the walk. */
static long php_walk_step(__u32 index, void *data)
{
	struct php_walk_ctx *c = data;
	const struct cfi_php_proc *php = c->php;
	struct php_scratch *s = c->s;
	__u64 off_func = php->ed_func, off_prev = php->ed_prev, off_opline = php->ed_opline,
	      off_info = php->ed_call_info, off_opcodes = php->func_opcodes, func, opline, opcodes;
	__u32 n = s->n, info, lineno = 0;
	__u8 type = 0;

	if (!c->ed || n >= PHP_MAX_FRAMES)
		return 1;
	if (off_func > PHP_FRAME_READ - 8 || off_prev > PHP_FRAME_READ - 8 ||
	    off_opline > PHP_FRAME_READ - 8 || off_info > PHP_FRAME_READ - 4 ||
	    off_opcodes > PHP_FUNC_READ - 8 ||
	    bpf_probe_read_user(s->ed, PHP_FRAME_READ, (const void *)c->ed)) {
		c->status = PHP_STATUS_UNREADABLE;
		return 1;
	}
	barrier_var(off_func);
	barrier_var(off_prev);
	barrier_var(off_opline);
	barrier_var(off_info);
	barrier_var(off_opcodes);
	barrier_var(n);
	off_func &= PHP_FRAME_OFF_MASK;
	off_prev &= PHP_FRAME_OFF_MASK;
	off_opline &= PHP_FRAME_OFF_MASK;
	off_info &= PHP_FRAME_OFF_MASK;
	off_opcodes &= PHP_FUNC_OFF_MASK;
	func = *(__u64 *)(s->ed + off_func);
	opline = *(__u64 *)(s->ed + off_opline);
	info = *(__u32 *)(s->ed + off_info);
	c->ed = *(__u64 *)(s->ed + off_prev);
	s->f[n].code = func;
	s->f[n].is_entry = !!(info & php->call_top);
	s->f[n].scope = 0;
	if (func && !bpf_probe_read_user(s->func, PHP_FUNC_READ, (const void *)func)) {
		type = s->func[PHP_FUNC_TYPE];
		/* the opline of a function of C is its caller's, or not set */
		if ((type == PHP_USER_FUNCTION || type == PHP_EVAL_CODE) && opline)
			bpf_probe_read_user(&lineno, sizeof(lineno),
					    (const void *)(opline + php->op_lineno));
		opcodes = type == PHP_USER_FUNCTION || type == PHP_EVAL_CODE
			      ? *(__u64 *)(s->func + off_opcodes) >> 4
			      : 0;
		s->f[n].scope = (__u16)(opcodes ^ opcodes >> 16 ^ opcodes >> 32);
	}
	s->f[n].instr = lineno;
	s->f[n].owner = type;
	s->n = n + 1;
	return 0;
}

/*
 * The executor's frame chain of process pid into the scratch area: returns
 * nr_frames | status << 16 (status 0: not a PHP process).  A global
 * function: verified once, whichever program calls it.
 */
__noinline int php_walk(__u32 pid)
{
	struct php_walk_ctx c = {.status = PHP_STATUS_OK};
	int i;

	c.php = runtime_proc(pid, RT_PHP);
	if (!c.php)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, c.php->maps_read_ns))
		return 0;
	c.s = bpf_map_lookup_elem(&php_scratch, &c.n);
	if (!c.s)
		return 0;
	if (bpf_probe_read_user(
		&c.ed, sizeof(c.ed),
		(const void *)(c.php->executor_globals + c.php->eg_current_execute_data)))
		return PHP_STATUS_UNREADABLE << 16;
	if (!c.ed)
		return PHP_STATUS_IDLE << 16;
	c.s->n = 0;
	if (use_bpf_loop) {
		bpf_loop(PHP_MAX_FRAMES + 1, php_walk_step, &c, 0);
	} else {
		for (i = 0; i <= PHP_MAX_FRAMES; i++)
			if (php_walk_step(i, &c))
				break;
	}
	if (c.ed && c.status == PHP_STATUS_OK)
		c.status = PHP_STATUS_TRUNCATED;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items php_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *php_items(void)
{
	__u32 zero = 0;
	struct php_scratch *s = bpf_map_lookup_elem(&php_scratch, &zero);

	return s ? s->f : NULL;
}

/*
 * Appends the PHP frames of the sampled thread to rec, whose native PCs
 * fill pcs[0, nr_pcs) and whose buffer has RT_RECORD_BYTES of room after
 * max_pcs PCs.  Counts the outcome.
 */
static __always_inline void php_append(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs)
{
	int r = php_walk(rec->pid);

	runtime_emit(rec, nr_pcs, max_pcs, RT_PHP, r, sizeof(struct cfi_interp_frame),
		     PHP_MAX_FRAMES, PHP_STATUS_MAX, PHP_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (PHP's JIT is off by default and has no frame
 * header to read). */
#define php_jit_caller_rule runtime_no_jit_caller_rule

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define php_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: PHP keeps nothing per thread. */
static __always_inline void php_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
