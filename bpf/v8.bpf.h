/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c, through bpf/runtimes.bpf.h: a V8 process's
 * JavaScript frames, recorded after the native PCs (struct
 * cfi_interp_frame, leaf first).  V8's JavaScript frames (interpreted,
 * baseline, optimized) keep a frame pointer and their JSFunction at a fixed
 * offset from it (v8dbg_off_fp_function): the thread's frame-pointer chain
 * is followed from the sample's registers, and each frame whose function
 * slot holds a JSFunction (its map says so) and whose PC is V8's code gives
 * its SharedFunctionInfo and the low half of that PC, which tells user space
 * which native frame of the sample it names.  Names are read in user space.
 */
#ifndef CFIPROF_V8_BPF_H
#define CFIPROF_V8_BPF_H

_Static_assert(sizeof(struct cfi_v8_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(V8_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(V8_MAX_FRAMES * sizeof(struct cfi_interp_frame) <= RT_RECORD_BYTES,
	       "its units past the record's room");

/* frames followed per sample, JavaScript or not */
#define V8_MAX_STEPS 256
/* ... without bpf_loop (kernels before 5.17, --tail-calls): see perl.bpf.h */
#define V8_MAX_STEPS_UNROLLED 8
/* a frame's slots read at once: 2 below fp (context, function), fp's two */
#define V8_SLOTS_BELOW 2
#define V8_FRAME_SLOTS 4
/* a V8 heap object's tag in its pointer's low bits (v8dbg_HeapObjectTag, ...TagMask) */
#define V8_HEAP_OBJECT_TAG	1
#define V8_HEAP_OBJECT_TAG_MASK 3

/*
 * Per CPU, not on the stack: 6.1's verifier counts on_sample's, v8_walk's
 * and the step's frames together against 512 bytes.
 */
struct v8_scratch {
	struct cfi_interp_frame f[V8_MAX_FRAMES];
	__u64 slots[V8_FRAME_SLOTS]; /* the frame being looked at */
	__u64 code_page;	     /* the last page found to be V8's code: recursion repeats it */
	/* the last JSFunction read, its SharedFunctionInfo, and a map known a JSFunction's */
	__u64 last_fn, last_sfi, fn_map;
	__u32 n; /* frames in f so far: see struct python_scratch */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct v8_scratch);
} v8_scratch SEC(".maps");

struct v8_walk_ctx {
	const struct cfi_v8_proc *v;
	struct v8_scratch *s;
	__u64 fp, pc; /* the frame to look at next, and the PC it runs */
	__u32 pid, status;
};

/* bpf_find_vma's callback: whether the memory at the pc maps a file */
static long v8_vma_maps_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	(void)task;
	*(__u8 *)data = vma->vm_file != NULL;
	return 0;
}

/*
 * Whether pc is V8's code: its builtins, or memory of no object (the JIT's:
 * no mapping known yet, or one of anonymous memory).  leaf: pc is the
 * interrupted one, not a return address the frame chain gave.
 */
static __always_inline bool v8_code_pc(struct v8_walk_ctx *c, __u64 pc, bool leaf)
{
	const struct cfi_mapping_val *m;
	__u8 file = 1;

	if ((pc >= c->v->builtins_lo && pc < c->v->builtins_hi) || pc >> 12 == c->s->code_page)
		return true;
	m = walker_lookup_mapping(c->pid, pc);
	/* a file's code without an object too: its tables refused, or it could not be opened */
	if (m && (m->obj_id || (m->flags & CFI_MAPPING_FILE)))
		return false;
	/*
	 * No key: the JIT's memory, mapped since the last load, or a file's whose
	 * keys user space is rewriting (or refused): a frameless leaf of libc
	 * called by a builtin (memcpy under TypedArray.prototype.set) would take
	 * the name of the function in the frame it runs on.  The kernel says
	 * which (5.17 on); memory it cannot tell now (its mmap lock taken) is
	 * not taken for JavaScript: a frame unnamed rather than misnamed.  Only
	 * the leaf can run on another's frame: a return address is the code of
	 * the frame whose slot named the function, and V8 takes its mmap lock
	 * often (code pages made writable and back), which left callers unnamed.
	 */
	if (!m && leaf && have_find_vma &&
	    (bpf_find_vma(bpf_get_current_task_btf(), pc, v8_vma_maps_file, &file, 0) || file))
		return false;
	c->s->code_page = pc >> 12;
	return true;
}

/*
 * The SharedFunctionInfo of the JSFunction at obj (tagged); 0 when obj is
 * none.  A recursion's frames repeat one function, and functions share a
 * few maps: what the last ones were saves their reads.
 */
static __always_inline __u64 v8_function_shared(struct v8_walk_ctx *c, __u64 obj)
{
	const struct cfi_v8_proc *v = c->v;
	struct v8_scratch *s = c->s;
	__u64 map;
	__u16 type = 0;

	if ((obj & V8_HEAP_OBJECT_TAG_MASK) != V8_HEAP_OBJECT_TAG)
		return 0;
	if (obj == s->last_fn)
		return s->last_sfi;
	map = rt_read_ptr(obj - V8_HEAP_OBJECT_TAG + v->heap_object_map);
	if (map != s->fn_map) {
		if ((map & V8_HEAP_OBJECT_TAG_MASK) != V8_HEAP_OBJECT_TAG ||
		    bpf_probe_read_user(
			&type, sizeof(type),
			(const void *)(map - V8_HEAP_OBJECT_TAG + v->map_instance_type)) ||
		    type < v->js_function_type || type > v->js_function_last)
			return 0;
		s->fn_map = map;
	}
	s->last_fn = obj;
	s->last_sfi = rt_read_ptr(obj - V8_HEAP_OBJECT_TAG + v->js_function_shared);
	return s->last_sfi;
}

/* One frame of the chain: a unit when it runs JavaScript; 1 ends the walk. */
static long v8_walk_step(__u32 index, void *data)
{
	struct v8_walk_ctx *c = data;
	struct v8_scratch *s = c->s;
	__u64 *slots = s->slots, sfi, fn;
	/* the function's slot's byte offset from the first slot read */
	__s64 at = (__s64)c->v->fp_function + V8_SLOTS_BELOW * 8;
	__u32 n = s->n;

	/*
	 * One read for the frame: the slots below fp (its function's among
	 * them), the caller's fp and the return address; a chain that ends,
	 * or ends in garbage.
	 */
	if (!c->fp || (c->fp & 7) || c->fp < V8_SLOTS_BELOW * 8 ||
	    bpf_probe_read_user(slots, sizeof(s->slots),
				(const void *)(c->fp - V8_SLOTS_BELOW * 8)))
		return 1;
	/* v8dbg_off_fp_function is a slot below fp (-16 for years), else read apart */
	if (at >= 0 && at < V8_SLOTS_BELOW * 8 && !(at & 7))
		fn = slots[((__u64)at >> 3) & (V8_FRAME_SLOTS - 1)];
	else
		fn = rt_read_ptr(c->fp + (__s64)c->v->fp_function);
	sfi = v8_function_shared(c, fn);
	if (sfi && v8_code_pc(c, c->pc, index == 0)) {
		if (n >= V8_MAX_FRAMES) {
			c->status = V8_STATUS_TRUNCATED;
			return 1;
		}
		barrier_var(n);
		s->f[n & (V8_MAX_FRAMES - 1)] = (struct cfi_interp_frame){
		    .code = sfi, .instr = (__u32)c->pc, .owner = V8_FRAME_JS};
		s->n = n + 1;
	}
	/* callers' frames are above: a link downwards is not a frame */
	if (slots[V8_SLOTS_BELOW] <= c->fp)
		return 1;
	c->pc = slots[V8_SLOTS_BELOW + 1];
	c->fp = slots[V8_SLOTS_BELOW];
	return 0;
}

/*
 * The sampled thread's JavaScript frames into the scratch area: returns
 * nr_frames | status << 16 (status 0: not a V8 process).  A global
 * function: verified once, whichever program calls it.
 */
__noinline int v8_walk(__u32 pid)
{
	struct v8_walk_ctx c = {.status = V8_STATUS_OK, .pid = pid};
	struct pt_regs *regs;
	__u32 zero = 0;
	int i;

	c.v = runtime_proc(pid, RT_V8);
	if (!c.v)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, c.v->maps_read_ns))
		return 0;
	c.s = bpf_map_lookup_elem(&v8_scratch, &zero);
	if (!c.s)
		return 0;
	c.s->n = 0;
	c.s->code_page = c.s->last_fn = c.s->last_sfi = c.s->fn_map = 0;
	/* the user registers, whether the sample interrupted user mode or the kernel */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return V8_STATUS_UNREADABLE << 16;
	c.fp = ARCH_FP(regs);
	c.pc = ARCH_PC(regs);
	if (use_bpf_loop) {
		bpf_loop(V8_MAX_STEPS, v8_walk_step, &c, 0);
	} else {
		for (i = 0; i < V8_MAX_STEPS_UNROLLED; i++)
			if (v8_walk_step(i, &c))
				break;
	}
	if (c.status == V8_STATUS_OK && !c.s->n)
		c.status = V8_STATUS_NO_JS;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items v8_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *v8_items(void)
{
	__u32 zero = 0;
	struct v8_scratch *s = bpf_map_lookup_elem(&v8_scratch, &zero);

	return s ? s->f : NULL;
}

static __always_inline void v8_append(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs)
{
	int r = v8_walk(rec->pid);

	runtime_emit(rec, nr_pcs, max_pcs, RT_V8, r, sizeof(struct cfi_interp_frame), V8_MAX_FRAMES,
		     V8_STATUS_MAX, V8_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (V8's code has no rows: frame pointers). */
#define v8_jit_caller_rule runtime_no_jit_caller_rule

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define v8_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: V8 keeps nothing per thread here. */
static __always_inline void v8_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
