/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c, through bpf/runtimes.bpf.h: a JVM's compiled Java
 * frames, recorded after the native PCs (struct cfi_interp_frame, leaf
 * first).  The native walk unwound them (the code cache's rows user space
 * loads); here each native PC in a code heap is looked up as HotSpot's
 * CodeHeap::find_start does, through the heap's segment map, to the
 * nmethod holding it, and that nmethod's Method* and compile id are read
 * now, at the sample: user space names the Method* later, and the compile
 * id tells it whether the code it reads is still the one sampled.
 */
#ifndef CFIPROF_HOTSPOT_BPF_H
#define CFIPROF_HOTSPOT_BPF_H

_Static_assert(sizeof(struct cfi_hotspot_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(HOTSPOT_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(HOTSPOT_MAX_FRAMES * sizeof(struct cfi_interp_frame) <= RT_RECORD_BYTES,
	       "its units past the record's room");

/* native frames looked at per sample */
#define HOTSPOT_MAX_STEPS 512
/* ... without bpf_loop (kernels before 5.17, --tail-calls): see perl.bpf.h */
#define HOTSPOT_MAX_STEPS_UNROLLED 16
/*
 * Segment map bytes followed back to a block's start: each says how many
 * segments to go back, at most 254 (HotSpot's free_sentinel - 1), so 16
 * steps reach the start of a blob of 4,064 segments (254 KiB at 64 bytes).
 */
#define HOTSPOT_SEGMAP_STEPS 16
#define HOTSPOT_SEGMAP_FREE  0xff

/* Per CPU, not on the stack: see v8.bpf.h. */
struct hotspot_scratch {
	struct cfi_interp_frame f[HOTSPOT_MAX_FRAMES];
	__u64 last_pc; /* the last compiled pc looked up and its frame: a recursion repeats them */
	struct cfi_interp_frame last;
	__u32 n;
	__u8 last_ok;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hotspot_scratch);
} hotspot_scratch SEC(".maps");

struct hotspot_walk_ctx {
	const struct cfi_hotspot_proc *h;
	struct hotspot_scratch *s;
	const struct cfi_sample_record *rec; /* its PCs: read with bpf_probe_read_kernel */
	__u32 first, end;		     /* its user frames: [first, end) */
	__u32 status;
};

/*
 * The blob holding pc when it is an nmethod or the interpreter (*kind its
 * HOTSPOT_FRAME_*); 0 when pc is in no code heap or in another kind of
 * blob, or the segment map is garbage.
 */
static __always_inline __u64 hotspot_blob_at(const struct cfi_hotspot_proc *h, __u64 pc, __u8 *kind)
{
	__u64 low = 0, segmap = 0, seg, blob, name;
	__u8 b = 0;
	int i;

	for (i = 0; i < HOTSPOT_BPF_HEAPS; i++) {
		if (i < h->nr_heaps && pc >= h->heap[i].low && pc - h->heap[i].low < h->size[i]) {
			low = h->heap[i].low;
			segmap = h->heap[i].segmap;
		}
	}
	/*
	 * Neither kind's name known yet.  Each is learnt apart: a JVM that
	 * compiles nothing (-Xint) has an interpreter and never an nmethod.
	 */
	if (!h->nmethod_name && !h->interp_name)
		return 0;
	if (!low || h->log2_segment < 4 || h->log2_segment > 16)
		return 0;
	seg = (pc - low) >> h->log2_segment;
	for (i = 0; i < HOTSPOT_SEGMAP_STEPS; i++) {
		if (bpf_probe_read_user(&b, 1, (const void *)(segmap + seg)) ||
		    b == HOTSPOT_SEGMAP_FREE)
			return 0;
		if (!b)
			break;
		if (b > seg)
			return 0;
		seg -= b;
	}
	if (b)
		return 0;
	blob = low + (seg << h->log2_segment) + h->block_size;
	name = rt_read_ptr(blob + h->off_name);
	/* a failed read (0) must not pass for a kind whose name is not known (0) */
	if (!name)
		return 0;
	if (name == h->nmethod_name)
		*kind = HOTSPOT_FRAME_COMPILED;
	else if (name == h->interp_name)
		*kind = HOTSPOT_FRAME_INTERPRETED;
	else
		return 0;
	return blob;
}

/*
 * The rbp of the interpreted frame at user frame index (the walk kept it,
 * when it kept this thread's), 0 when not known; the leaf's (index 0) bcp
 * register into *leaf_bcp, kept beside them (0 for the others).
 */
static __always_inline __u64 hotspot_interp_bp(__u32 index, __u32 tid, __u64 *leaf_bcp)
{
	__u32 zero = 0;
	struct frame_bps *b = bpf_map_lookup_elem(&frame_bps, &zero);
	__u64 bp;

	*leaf_bcp = 0;
	if (!b || b->tid != tid || index >= b->nr)
		return 0;
	bp = b->bp[index & (MAX_USER_FRAMES_LIMIT - 1)];
	if (!index)
		*leaf_bcp = b->leaf_bcp;
	return bp > -HOTSPOT_INTERP_BCP_OFF ? bp : 0;
}

/*
 * bci + 1 of an interpreted frame's bcp in the ConstMethod at cm, 0 when
 * none: a caller's from its frame's slot (saved at the call), the leaf's
 * from the register, leaf_bcp (the slot is stale while it runs).
 */
static __always_inline __u16 hotspot_bci1(const struct cfi_hotspot_proc *h, __u64 bp, __u64 cm,
					  bool leaf, __u64 leaf_bcp)
{
	__u64 bcp = !h->const_size || !cm ? 0
		    : leaf		  ? leaf_bcp
					  : rt_read_ptr(bp + HOTSPOT_INTERP_BCP_OFF);
	__u64 code = cm + h->const_size;

	return bcp >= code && bcp - code < 0xffff ? (__u16)(bcp - code + 1) : 0;
}

/*
 * The digest of the Method at method as it is now (hotspot_abi.h), 0 when
 * unreadable; its ConstMethod* into *cm.
 */
static __always_inline __u16 hotspot_read_digest(const struct cfi_hotspot_proc *h, __u64 method,
						 __u64 *cm_out)
{
	__u64 cm = rt_read_ptr(method + h->off_method_const), pool, holder, kname, tail = 0;
	__u16 name_i = 0, sig_i = 0, len = 0;
	__u32 n, hash = 0;

	*cm_out = cm;
	pool = cm ? rt_read_ptr(cm + h->off_const_pool) : 0;
	holder = pool ? rt_read_ptr(pool + h->off_pool_holder) : 0;
	kname = holder ? rt_read_ptr(holder + h->off_klass_name) : 0;
	if (!kname ||
	    bpf_probe_read_user(&name_i, sizeof(name_i), (const void *)(cm + h->off_name_index)) ||
	    bpf_probe_read_user(&sig_i, sizeof(sig_i), (const void *)(cm + h->off_sig_index)) ||
	    bpf_probe_read_user(&len, sizeof(len), (const void *)(kname + h->off_symbol_length)))
		return 0;
	n = len < HOTSPOT_DIGEST_TAIL ? len : HOTSPOT_DIGEST_TAIL;
	barrier_var(n);
	if (n > HOTSPOT_DIGEST_TAIL ||
	    (n &&
	     bpf_probe_read_user(&tail, n, (const void *)(kname + h->off_symbol_body + len - n))))
		return 0;
	if (h->off_symbol_hash != HOTSPOT_NO_FIELD &&
	    bpf_probe_read_user(&hash, sizeof(hash), (const void *)(kname + h->off_symbol_hash)))
		return 0;
	return hotspot_method_digest(kname, name_i, sig_i, len, tail, (__u16)(hash >> 16));
}

/* f as the sample's next unit: 1 (the walk ends) when there is no room left. */
static __always_inline long hotspot_unit(struct hotspot_walk_ctx *c, struct cfi_interp_frame f)
{
	struct hotspot_scratch *s = c->s;
	__u32 n = s->n;

	if (n >= HOTSPOT_MAX_FRAMES) {
		c->status = HOTSPOT_STATUS_TRUNCATED;
		return 1;
	}
	barrier_var(n);
	s->f[n & (HOTSPOT_MAX_FRAMES - 1)] = f;
	s->n = n + 1;
	return 0;
}

/* One native frame: a unit when it runs Java code, compiled or interpreted; 1 ends the walk. */
static long hotspot_walk_step(__u32 index, void *data)
{
	struct hotspot_walk_ctx *c = data;
	struct hotspot_scratch *s = c->s;
	__u32 i = c->first + index;
	__u64 pc = 0, nm, method;
	__s32 compile_id = 0;
	__u8 kind = 0;

	if (i >= c->end || i >= MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT)
		return 1;
	if (bpf_probe_read_kernel(&pc, sizeof(pc), &c->rec->pcs[i]))
		return 1;
	/*
	 * The cache holds last_pc's compiled frame; a frame of other code in
	 * between (the interpreter, a stub) leaves it as it is: a compiled
	 * method that calls an interpreted one that calls it again returns to
	 * the same pc in each of its frames.
	 */
	if (pc != s->last_pc) {
		/* a caller's pc is its return address: the call is the byte before */
		nm = hotspot_blob_at(c->h, pc - (i > c->first), &kind);
		if (!nm)
			return 0;
		/* one interpreter runs every interpreted method: its pc tells none */
		if (kind == HOTSPOT_FRAME_INTERPRETED) {
			__u64 leaf_bcp, cm = 0;
			__u64 bp = hotspot_interp_bp(i - c->first, c->rec->tid, &leaf_bcp);
			__u16 digest;

			method = bp ? rt_read_ptr(bp + HOTSPOT_INTERP_METHOD_OFF) : 0;
			digest = method ? hotspot_read_digest(c->h, method, &cm) : 0;
			if (!digest || method >> HOTSPOT_CODE_ID_SHIFT) {
				c->status = HOTSPOT_STATUS_UNREADABLE;
				return 0;
			}
			return hotspot_unit(
			    c, (struct cfi_interp_frame){
				   .code = method | (__u64)digest << HOTSPOT_CODE_ID_SHIFT,
				   .instr = (__u32)pc,
				   .owner = HOTSPOT_FRAME_INTERPRETED,
				   .scope = hotspot_bci1(c->h, bp, cm, i == c->first, leaf_bcp)});
		}
		s->last_ok = 0;
		s->last_pc = pc;
		method = rt_read_ptr(nm + c->h->off_method);
		if (!method || bpf_probe_read_user(&compile_id, sizeof(compile_id),
						   (const void *)(nm + c->h->off_compile_id))) {
			c->status = HOTSPOT_STATUS_UNREADABLE;
			return 0;
		}
		/* the nmethod and its compile id: user space reads its Method* if it is still it */
		s->last = (struct cfi_interp_frame){.code = nm | (__u64)(__u16)compile_id
								     << HOTSPOT_CODE_ID_SHIFT,
						    .instr = (__u32)pc,
						    .owner = HOTSPOT_FRAME_COMPILED,
						    .scope = (__u16)compile_id};
		s->last_ok = 1;
	}
	if (!s->last_ok)
		return 0;
	return hotspot_unit(c, s->last);
}

/*
 * The record's compiled Java frames into the scratch area: nr_frames |
 * status << 16 (status 0: not a JVM process).  A global function: verified
 * once, whichever program calls it.
 */
__noinline int hotspot_walk(const struct cfi_sample_record *rec, __u32 first, __u32 end)
{
	struct hotspot_walk_ctx c = {.status = HOTSPOT_STATUS_OK, .rec = rec};
	__u32 zero = 0, pid;
	int i;

	if (!rec)
		return 0;
	pid = rec->pid;
	c.h = runtime_proc(pid, RT_HOTSPOT);
	if (!c.h)
		return 0;
	if (runtime_entry_stale(pid, c.h->maps_read_ns))
		return 0;
	c.s = bpf_map_lookup_elem(&hotspot_scratch, &zero);
	if (!c.s)
		return 0;
	c.s->n = 0;
	c.s->last_pc = 0;
	c.s->last_ok = 0;
	c.first = first;
	c.end = end;
	if (use_bpf_loop) {
		bpf_loop(HOTSPOT_MAX_STEPS, hotspot_walk_step, &c, 0);
	} else {
		for (i = 0; i < HOTSPOT_MAX_STEPS_UNROLLED; i++)
			if (hotspot_walk_step(i, &c))
				break;
	}
	if (c.status == HOTSPOT_STATUS_OK && !c.s->n)
		c.status = HOTSPOT_STATUS_NO_JAVA;
	return (c.s->n & 0xffff) | c.status << 16;
}

/* The items hotspot_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *hotspot_items(void)
{
	__u32 zero = 0;
	struct hotspot_scratch *s = bpf_map_lookup_elem(&hotspot_scratch, &zero);

	return s ? s->f : NULL;
}

static __always_inline void hotspot_append(struct cfi_sample_record *rec, __u64 nr_pcs,
					   __u64 max_pcs)
{
	int r = hotspot_walk(rec, rec->nr_kernel, (__u32)nr_pcs);

	runtime_emit(rec, nr_pcs, max_pcs, RT_HOTSPOT, r, sizeof(struct cfi_interp_frame),
		     HOTSPOT_MAX_FRAMES, HOTSPOT_STATUS_MAX, HOTSPOT_STATUS_UNREADABLE);
}

/*
 * An nmethod compiled since the rows its process has, at a call in it: its
 * frame's size, which its CodeBlob header holds from its making, is all the
 * rule there (frame::sender_for_compiled_frame: the caller's sp at sp +
 * frame size words, the return address and the caller's rbp the two words
 * below).  Its prologue and epilogues, which only rows tell, hold no call.
 */
static __always_inline int hotspot_jit_caller_rule(__u32 tgid, const void *data, __u64 pc,
						   struct cfi_rule *out)
{
	const struct cfi_hotspot_proc *h = data;
	__u64 blob;
	__s32 words = 0;
	__u8 kind = 0;

	/* an entry of the image before an exec: its code heaps are gone */
	if (!h->off_frame_size || runtime_entry_stale(tgid, h->maps_read_ns))
		return 0;
	blob = hotspot_blob_at(h, pc, &kind);
	if (!blob || kind != HOTSPOT_FRAME_COMPILED ||
	    bpf_probe_read_user(&words, sizeof(words), (const void *)(blob + h->off_frame_size)) ||
	    words < 2 || words > HOTSPOT_FRAME_WORDS_MAX)
		return 0;
	/* field by field: a compound literal is a copy on the stack the walk's calls share */
	out->cfa_kind = CFI_CFA_RSP;
	out->cfa_off = words * 8;
	out->ra_kind = CFI_REG_AT_CFA;
	out->ra_off = -8;
	out->rbp_kind = CFI_REG_AT_CFA;
	out->rbp_off = -16;
	out->rbx_kind = CFI_REG_SAME;
	out->reason = CFI_UNSUP_NONE;
	return 1;
}

/* Where the walk goes on instead of the leaf's caller: the leaf's caller. */
#define hotspot_leaf_caller runtime_no_leaf_caller

/* Thread tid exits: HotSpot keeps nothing per thread here. */
static __always_inline void hotspot_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
