/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython frames of the sampled thread, appended to its sample record after
 * the native PCs (struct cfi_interp_frame, leaf first).  User space splices
 * them in at the evaluation loop's native frames.  Only processes user space
 * found a supported interpreter in (runtime_procs, user/runtimes/python/python_detect.c)
 * pay anything; the field offsets come from that map, never from here.
 *
 * The thread state is found by the kernel's thread id: each PyThreadState
 * holds native_thread_id, set when the thread starts running Python.  The
 * GIL holder (_PyRuntime.gilstate.tstate_current) would be wrong for every
 * thread but one, and the thread-local key (pthread_getspecific) depends on
 * glibc's struct pthread, which no table here would cover.  Found once per
 * thread, then cached and checked with one read per sample.
 */
#ifndef CFIPROF_PYTHON_BPF_H
#define CFIPROF_PYTHON_BPF_H

_Static_assert(sizeof(struct cfi_python_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(PY_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(PY_RECORD_BYTES <= RT_RECORD_BYTES, "its units past the record's room");

struct python_thread {
	__u64 tstate;	/* 0: none found */
	__u64 retry_ns; /* none found: the lists are searched again after this */
	__u64 head;	/* none found: the first interpreter's first thread state then */
	__u32 pid;
	__u32 pad;
};

/*
 * Threads of Python processes only, each removed when it exits (on_exit):
 * not preallocated, since creating a preallocated map (LRU or not) costs
 * every start time in proportion to its elements.  Full, a thread goes
 * uncached: searched again
 * at each sample, at most PY_MAX_THREAD_STEPS thread states.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tid */
	__type(value, struct python_thread);
} python_threads SEC(".maps");

/*
 * Offsets into frame[] are masked with PY_FRAME_OFF_MASK after their bounds
 * check: older verifiers (6.1) lose the check's bound on the register the
 * access uses, the mask gives it again.  frame[] has room for the mask's
 * largest offset plus 8.
 */
#define PY_FRAME_OFF_MASK 127

struct python_scratch {
	struct cfi_interp_frame f[PY_MAX_FRAMES];
	__u8 frame[PY_FRAME_OFF_MASK + 1 + 8];
	struct python_thread thread; /* a python_threads update: off the stack, which is full */
	struct {
		__u32 pid, tgid; /* UAPI's struct bpf_pidns_info, without CO-RE */
	} ns;
	/*
	 * Frames in f so far.  Here, not in the walk's stack context: a count
	 * read from a map is not tracked exactly, so the verifier's walk of the
	 * loop callback converges at once instead of once per count.
	 */
	__u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct python_scratch);
} python_scratch SEC(".maps");

/* thread states visited per search, all interpreters together */
#define PY_MAX_THREAD_STEPS 256
/* a thread with no thread state is searched for again after this */
#define PY_THREAD_RETRY_NS (50 * 1000 * 1000)

/* A search of the interpreters' thread lists for the thread state of one thread. */
struct py_find_ctx {
	const struct cfi_python_proc *py;
	__u64 interp, ts; /* found: ts, with interp 0 */
	__u64 id;	  /* the thread's id as its thread state holds it */
};

/* One thread state visited (or the next interpreter's list begun); 1 ends the search. */
static long py_find_step(__u32 index, void *data)
{
	struct py_find_ctx *c = data;
	const struct cfi_python_proc *py = c->py;

	if (!c->interp)
		return 1;
	if (!c->ts) {
		c->interp = rt_read_ptr(c->interp + py->interp_next);
		c->ts = c->interp ? rt_read_ptr(c->interp + py->interp_threads_head) : 0;
		return 0;
	}
	if (rt_read_ptr(c->ts + py->tstate_native_tid) == c->id) {
		c->interp = 0;
		return 1;
	}
	c->ts = rt_read_ptr(c->ts + py->tstate_next);
	return 0;
}

/*
 * The thread state whose thread id is id, or 0: the interpreters' thread
 * lists.  Not inlined: its search state would sit in python_walk's frame
 * beside the walk's, and on_sample -> python_walk -> a bpf_loop callback
 * must fit BPF's 512 bytes of stack.
 */
static __noinline __u64 py_find_tstate(const struct cfi_python_proc *py, __u64 id)
{
	struct py_find_ctx c = {.py = py, .id = id};
	int i;

	c.interp = rt_read_ptr(py->runtime + py->runtime_interp_head);
	if (c.interp)
		c.ts = rt_read_ptr(c.interp + py->interp_threads_head);
	/* bpf_loop: verified once, not once per step (a frozen setting: the other path is pruned)
	 */
	if (use_bpf_loop) {
		bpf_loop(PY_MAX_THREAD_STEPS, py_find_step, &c, 0);
	} else {
		for (i = 0; i < PY_MAX_THREAD_STEPS; i++)
			if (py_find_step(i, &c))
				break;
	}
	return c.interp ? 0 : c.ts;
}

/*
 * The current thread's id in its process's PID namespace: what CPython stores
 * as native_thread_id (gettid()), which differs from the kernel's global tid
 * in a container.  The namespace comes from user space, not from reading
 * task->thread_pid with CO-RE: each type CO-RE relocates searches all of the
 * kernel's BTF at load (struct pid and struct upid), at every start.
 * The global tid when it cannot be had.
 */
static __always_inline __u32 py_ns_tid(const struct cfi_python_proc *py, struct python_scratch *s,
				       __u32 tid)
{
	if (!py->pidns_ino ||
	    bpf_get_ns_current_pid_tgid(py->pidns_dev, py->pidns_ino, (void *)&s->ns,
					sizeof(s->ns)) ||
	    !s->ns.pid)
		return tid;
	return s->ns.pid;
}

/*
 * pthread_self() of the current thread, what CPython 3.10 and older keep as a
 * thread state's thread_id: glibc's thread pointer.
 */
static __always_inline __u64 py_pthread_self(void)
{
	return current_thread_pointer();
}

/* The first thread state of the first interpreter (0: none): a new one goes first. */
static __always_inline __u64 py_threads_head(const struct cfi_python_proc *py)
{
	__u64 interp = rt_read_ptr(py->runtime + py->runtime_interp_head);

	return interp ? rt_read_ptr(interp + py->interp_threads_head) : 0;
}

/*
 * The thread state of thread tid (id: as its thread state knows it), or 0.
 * A thread found without one is searched for again after
 * PY_THREAD_RETRY_NS, or at once when a thread state was added (the main
 * thread's, made while the interpreter starts: its first samples come
 * before it; or a thread's) or the newest one holds its id.
 */
static __always_inline __u64 py_tstate(const struct cfi_python_proc *py, struct python_scratch *s,
				       __u32 pid, __u32 tid, __u64 id)
{
	struct python_thread *t = bpf_map_lookup_elem(&python_threads, &tid), *nt = &s->thread;
	__u64 now = bpf_ktime_get_ns();

	if (t && t->pid == pid) {
		/* a thread state is freed when its thread ends: its tid must still be in it */
		if (t->tstate && rt_read_ptr(t->tstate + py->tstate_native_tid) == id)
			return t->tstate;
		/*
		 * the head is the newest thread state: one whose id was stored
		 * after it was linked (an interrupt between the two stores of
		 * the interpreter's start) is this thread's, found again at once
		 */
		if (!t->tstate && now < t->retry_ns && py_threads_head(py) == t->head &&
		    (!t->head || rt_read_ptr(t->head + py->tstate_native_tid) != id))
			return 0;
	}
	/* in the scratch, not on python_walk's stack: 6.1 allows on_sample's chain 512 bytes */
	nt->head = py_threads_head(py);
	nt->pid = pid;
	nt->pad = 0;
	nt->tstate = py_find_tstate(py, id);
	nt->retry_ns = now + PY_THREAD_RETRY_NS;
	bpf_map_update_elem(&python_threads, &tid, nt, BPF_ANY);
	return nt->tstate;
}

/* The walk of one thread's frame chain. */
struct py_walk_ctx {
	const struct cfi_python_proc *py;
	struct python_scratch *s;
	__u64 frame;
	__u32 n, status;
};

/* One interpreter frame into the scratch area; 1 ends the walk. */
static long py_walk_step(__u32 index, void *data)
{
	struct py_walk_ctx *c = data;
	const struct cfi_python_proc *py = c->py;
	struct python_scratch *s = c->s;
	__u64 code, instr, globals = 0, off_code = py->frame_code, off_prev = py->frame_previous,
			   off_instr = py->frame_instr, off_entry = py->frame_is_entry,
			   off_owner = py->frame_owner, off_globals = py->frame_globals;
	__u32 n = s->n, lasti = 0;
	bool has_entry = off_entry <= PY_FRAME_READ - 1;
	bool has_globals = off_globals <= PY_FRAME_READ - 8;
	bool has_owner = off_owner <= PY_FRAME_READ - 1;
	/* 3.10 and older: f_lasti, an int past the bytes read at once */
	bool frame_object = py->flags & PY_FLAG_FRAME_OBJECT;

	if (!c->frame || n >= PY_MAX_FRAMES)
		return 1;
	if (off_code > PY_FRAME_READ - 8 || off_prev > PY_FRAME_READ - 8 ||
	    (!frame_object && off_instr > PY_FRAME_READ - 8) ||
	    bpf_probe_read_user(s->frame, PY_FRAME_READ, (const void *)c->frame) ||
	    (frame_object &&
	     bpf_probe_read_user(&lasti, sizeof(lasti), (const void *)(c->frame + off_instr)))) {
		c->status = PY_STATUS_UNREADABLE;
		return 1;
	}
	if (!has_entry)
		off_entry = 0;
	if (!has_globals)
		off_globals = 0;
	if (!has_owner)
		off_owner = 0;
	/* the bounds checked above, on the registers the accesses use */
	barrier_var(off_code);
	barrier_var(off_prev);
	barrier_var(off_instr);
	barrier_var(off_owner);
	barrier_var(off_entry);
	barrier_var(off_globals);
	barrier_var(n);
	off_code &= PY_FRAME_OFF_MASK;
	off_prev &= PY_FRAME_OFF_MASK;
	off_instr &= PY_FRAME_OFF_MASK;
	off_owner &= PY_FRAME_OFF_MASK;
	off_entry &= PY_FRAME_OFF_MASK;
	code = *(__u64 *)(s->frame + off_code);
	s->f[n].code = code;
	if (frame_object) {
		/* the index itself (-1: not started) */
		s->f[n].instr = lasti;
	} else {
		instr = *(__u64 *)(s->frame + off_instr);
		s->f[n].instr =
		    instr >= code && instr - code < 0xffffffffull ? instr - code : 0xffffffff;
	}
	/* a frame object is the only frame of its evaluation-loop call */
	s->f[n].is_entry = frame_object ? 1 : has_entry ? s->frame[off_entry] : 0;
	s->f[n].owner = has_owner ? s->frame[off_owner] : 0;
	if (has_globals)
		globals = *(__u64 *)(s->frame + off_globals) >> 4; /* objects are 16-byte aligned */
	s->f[n].scope = (__u16)(globals ^ globals >> 16 ^ globals >> 32);
	c->frame = *(__u64 *)(s->frame + off_prev);
	s->n = n + 1;
	return 0;
}

/*
 * The thread state of thread tid of Python process pid (0: the thread has
 * none yet), or PY_NOT_PYTHON when pid is not a Python process cfiprof read
 * after its exec.  Called by the sample's program, not by python_walk:
 * on_sample -> python_walk -> py_find_tstate -> its loop callback was four
 * frames past the 6.1 verifier's 512 bytes (each frame rounded up to 32),
 * and a frame of its own keeps its locals off the sample programs' frames,
 * already the largest of the chain.  Global: verified once, not once per
 * caller (the tail-call walk's million instructions on 6.1).
 */
#define PY_NOT_PYTHON (~0ull)

__noinline __u64 python_thread(__u32 pid, __u32 tid)
{
	const struct cfi_python_proc *py = runtime_proc(pid, RT_PYTHON);
	struct python_scratch *s;
	__u32 zero = 0;

	if (!py)
		return PY_NOT_PYTHON;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, py->maps_read_ns))
		return PY_NOT_PYTHON;
	s = bpf_map_lookup_elem(&python_scratch, &zero);
	if (!s)
		return PY_NOT_PYTHON;
	return py_tstate(py, s, pid, tid,
			 py->flags & PY_FLAG_PTHREAD_ID ? py_pthread_self()
							: py_ns_tid(py, s, tid));
}

/*
 * The frame chain from thread state ts of process pid into the scratch area:
 * returns nr_frames | status << 16.  A global function: verified once,
 * whichever program and state calls it.
 */
__noinline int python_walk(__u32 pid, __u64 ts)
{
	struct py_walk_ctx c = {.status = PY_STATUS_OK};
	int i;

	c.py = runtime_proc(pid, RT_PYTHON);
	if (!c.py)
		return 0;
	/* c.n, still 0, is the scratch's key: a key of its own grows this frame */
	c.s = bpf_map_lookup_elem(&python_scratch, &c.n);
	if (!c.s)
		return 0;
	if (!ts)
		return PY_STATUS_NO_THREAD << 16;
	c.s->n = 0;
	c.frame = rt_read_ptr(ts + c.py->tstate_frame);
	if (c.frame && (c.py->flags & PY_FLAG_CFRAME))
		c.frame = rt_read_ptr(c.frame + c.py->cframe_current_frame);
	if (use_bpf_loop) {
		bpf_loop(PY_MAX_FRAMES + 1, py_walk_step, &c, 0);
	} else {
		for (i = 0; i <= PY_MAX_FRAMES; i++)
			if (py_walk_step(i, &c))
				break;
	}
	if (c.frame && c.status == PY_STATUS_OK)
		c.status = PY_STATUS_TRUNCATED;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items python_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *python_items(void)
{
	__u32 zero = 0;
	struct python_scratch *s = bpf_map_lookup_elem(&python_scratch, &zero);

	return s ? s->f : NULL;
}

/*
 * Appends the Python frames of the sampled thread to rec, whose native PCs
 * fill pcs[0, nr_pcs) and whose buffer has RT_RECORD_BYTES of room after
 * max_pcs PCs.  Counts the outcome.
 */
static __always_inline void python_append(struct cfi_sample_record *rec, __u64 nr_pcs,
					  __u64 max_pcs)
{
	__u64 ts = python_thread(rec->pid, rec->tid);
	int r = ts != PY_NOT_PYTHON ? python_walk(rec->pid, ts) : 0;

	runtime_emit(rec, nr_pcs, max_pcs, RT_PYTHON, r, sizeof(struct cfi_interp_frame),
		     PY_MAX_FRAMES, PY_STATUS_MAX, PY_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (CPython compiles no code). */
#define python_jit_caller_rule runtime_no_jit_caller_rule

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define python_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: its entry goes. */
static __always_inline void python_thread_exit(__u32 tid)
{
	bpf_map_delete_elem(&python_threads, &tid);
}

#endif
