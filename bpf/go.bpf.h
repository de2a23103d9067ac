/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Go's profiler labels (pprof.Do, pprof.SetGoroutineLabels) of the sampled
 * goroutine, appended to its sample record after the native PCs (struct
 * cfi_go_label).  Only processes user space found a supported Go runtime in
 * (runtime_procs, user/runtimes/go/go_detect.c) pay anything; the field offsets come
 * from that map, never from here.
 *
 * The goroutine is the one Go's own profiler charges (runtime.sigprof):
 * g.m.curg of the thread's g, so a sample on the system stack (GC work,
 * systemstack) carries the labels of the goroutine it runs for.  g is in the
 * thread's TLS at a fixed offset from the thread pointer.  The labels are a
 * *labelMap, a map[string]string up to Go 1.23: the hash map's first bucket
 * is read, which holds every label of a map of up to 8 (Go grows a map past
 * one bucket at its ninth key).  A second bucket's loop cost a third more
 * BPF verification time at every start, for labels past the 8 kept anyway.
 */
#ifndef CFIPROF_GO_BPF_H
#define CFIPROF_GO_BPF_H

_Static_assert(sizeof(struct cfi_go_proc) <= RT_PROC_BYTES, "runtime_procs entry too small");
_Static_assert(GO_STATUS_MAX <= RT_STATUS_SLOTS, "a status without its counter");
_Static_assert(GO_RECORD_BYTES <= RT_RECORD_BYTES, "its units past the record's room");

/* runtime.hmap and runtime.bmap of a map[string]string, Go 1.12-1.23 */
#define GO_HMAP_READ	   32 /* count, flags, B, noverflow, hash0, buckets, oldbuckets */
#define GO_HMAP_B	   9
#define GO_HMAP_BUCKETS	   16
#define GO_HMAP_OLDBUCKETS 24
#define GO_BUCKET_SLOTS	   8
#define GO_BUCKET_KEYS	   8			     /* after tophash[8] */
#define GO_BUCKET_VALUES   (8 + GO_BUCKET_SLOTS * 16) /* after the keys, strings of 16 bytes */
#define GO_BUCKET_BYTES	   (GO_BUCKET_VALUES + GO_BUCKET_SLOTS * 16 + 8)
#define GO_MIN_TOPHASH	   5 /* below: an empty or evacuated slot */

struct go_scratch {
	struct cfi_go_label l[GO_MAX_LABELS];
	__u8 bucket[GO_BUCKET_BYTES];
	__u8 hmap[GO_HMAP_READ];
	__u64 caller_pc; /* go_vdso_caller's answer */
	__u64 caller_sp;
	/*
	 * The labels read so far, kept here and not on the stack: a count the
	 * verifier tracks (it indexes l) keeps apart the paths of each slot read
	 * or skipped, 36% of the whole program's verification; read back from
	 * map memory it is any number below GO_MAX_LABELS.
	 */
	__u32 n;
	__u32 cut;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct go_scratch);
} go_scratch SEC(".maps");

/* One string of a label: its length as Go has it, the bytes that fit copied. */
static __always_inline int go_read_string(const __u8 *hdr, char *dst, __u32 room, __u16 *len_out)
{
	__u64 ptr = *(const __u64 *)hdr, len = *(const __u64 *)(hdr + 8);
	__u32 n = len < room ? (__u32)len : room;

	*len_out = len > 0xffff ? 0xffff : (__u16)len;
	if (!n)
		return 0;
	return bpf_probe_read_user(dst, n, (const void *)ptr) ? -1 : 0;
}

/*
 * The labels of one bucket's slots into s->l from s->n on; false once a
 * label was unreadable.
 */
static __always_inline bool go_bucket_labels(struct go_scratch *s)
{
	for (int i = 0; i < GO_BUCKET_SLOTS; i++) {
		struct cfi_go_label *l;
		__u32 k;

		if (s->bucket[i] < GO_MIN_TOPHASH)
			continue;
		k = *(volatile __u32 *)&s->n;
		if (k >= GO_MAX_LABELS) {
			s->cut = 1;
			return true;
		}
		l = &s->l[k & (GO_MAX_LABELS - 1)];
		/* bytes past a string are part of the sample's key in user space: zeroed */
		__builtin_memset(l, 0, sizeof(*l));
		if (go_read_string(&s->bucket[GO_BUCKET_KEYS + i * 16], l->key, GO_LABEL_KEY_MAX,
				   &l->key_len) ||
		    go_read_string(&s->bucket[GO_BUCKET_VALUES + i * 16], l->value,
				   GO_LABEL_VALUE_MAX, &l->value_len))
			return false;
		*(volatile __u32 *)&s->n = k + 1;
	}
	return true;
}

/*
 * The sampled goroutine's labels into the per-CPU scratch: (enum
 * cfi_go_status << 16) | labels read; 0 for a process without an entry.  A
 * global function: verified once, whichever program calls it.
 */
__noinline int go_labels_read(__u32 pid)
{
	const struct cfi_go_proc *gp = runtime_proc(pid, RT_GO);
	__u64 tp, g, m, curg, lp, h, buckets, count;
	struct go_scratch *s;
	__u32 zero = 0, n;

	if (!gp)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, gp->maps_read_ns))
		return 0;
	s = bpf_map_lookup_elem(&go_scratch, &zero);
	tp = current_thread_pointer();
	if (!s || !tp)
		return GO_STATUS_NONE << 16;
	s->n = 0;
	s->cut = 0;
	/* a thread Go did not start (a C thread of a cgo program) has no g */
	g = rt_read_ptr(tp + (__s64)gp->tls_g);
	m = rt_read_ptr(g ? g + gp->g_m : 0);
	curg = rt_read_ptr(m ? m + gp->m_curg : 0);
	if (!curg)
		return GO_STATUS_NONE << 16;
	lp = rt_read_ptr(curg + gp->g_labels);
	if (!lp)
		return GO_STATUS_OK << 16;
	h = rt_read_ptr(lp);
	if (!h)
		return GO_STATUS_OK << 16;
	if (bpf_probe_read_user(s->hmap, sizeof(s->hmap), (const void *)h))
		return GO_STATUS_UNREADABLE << 16;
	count = *(__u64 *)s->hmap;
	buckets = *(__u64 *)&s->hmap[GO_HMAP_BUCKETS];
	if (!count)
		return GO_STATUS_OK << 16;
	/*
	 * More buckets than one (B > 0), or a map still growing: labels are made
	 * once and never written again, so neither is expected below 9 labels
	 */
	if (s->hmap[GO_HMAP_B] || *(__u64 *)&s->hmap[GO_HMAP_OLDBUCKETS])
		s->cut = 1;
	if (bpf_probe_read_user(s->bucket, sizeof(s->bucket), (const void *)buckets))
		return GO_STATUS_UNREADABLE << 16;
	/* an overflow bucket is not followed */
	if (*(__u64 *)&s->bucket[GO_BUCKET_BYTES - 8])
		s->cut = 1;
	if (!go_bucket_labels(s))
		return GO_STATUS_UNREADABLE << 16 | (s->n & (GO_MAX_LABELS * 2 - 1));
	n = s->n & (GO_MAX_LABELS * 2 - 1);
	return (s->cut || n < count ? GO_STATUS_TRUNCATED : GO_STATUS_OK) << 16 | n;
}

/*
 * The thread's g: Go keeps it in x28 on arm64 (in the TLS slot too only in a
 * cgo program), in the TLS slot on x86-64.
 */
static __always_inline __u64 go_current_g(const struct cfi_go_proc *gp)
{
#if defined(__TARGET_ARCH_arm64)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	(void)gp;
	return regs ? regs->regs[28] : 0;
#else
	__u64 tp = current_thread_pointer();

	return tp ? rt_read_ptr(tp + (__s64)gp->tls_g) : 0;
#endif
}

/*
 * Go calls the vDSO (time.now, runtime.nanotime1, runtime.walltime) on the
 * system stack, switched to without a frame: from the vDSO's code, or from
 * the calling function's past the switch, no rule leads back to the
 * goroutine.  The call's caller is in m.vdsoPC and m.vdsoSP while it lasts,
 * set for Go's own profiler (runtime.sigprof): the walk goes on from there,
 * the leaf's pc kept.  Taken for a pc in the vDSO, or for one in Go's code
 * with g the goroutine itself on a stack not its own (the switch keeps g; a
 * signal handler, systemstack and cgo calls change it).  Into the per-CPU
 * scratch's caller_pc and caller_sp, 1; 0 otherwise.  A global function:
 * on the sample's stack, not the walk's.
 */
__noinline int go_vdso_caller(__u32 pid, __u64 pc, __u64 sp)
{
	const struct cfi_go_proc *gp = runtime_proc(pid, RT_GO);
	const struct cfi_mapping_val *mv;
	struct go_scratch *s;
	__u64 g, m, vsp, vpc, lo, hi;
	__u32 zero = 0;

	if (!gp || !gp->m_vdso_sp || !gp->m_vdso_pc)
		return 0;
	/* written by a load that read the mappings before the process exec'd */
	if (runtime_entry_stale(pid, gp->maps_read_ns))
		return 0;
	s = bpf_map_lookup_elem(&go_scratch, &zero);
	g = go_current_g(gp);
	m = g ? rt_read_ptr(g + gp->g_m) : 0;
	vsp = m ? rt_read_ptr(m + gp->m_vdso_sp) : 0;
	if (!s || !vsp)
		return 0;
	mv = walker_lookup_mapping(pid, pc);
	if (!mv || !(mv->flags & CFI_MAPPING_VDSO)) {
		/* runtime.g.stack, {lo, hi}, is g's first field in every version */
		if (g != rt_read_ptr(m + gp->m_curg))
			return 0;
		lo = rt_read_ptr(g);
		hi = rt_read_ptr(g + 8);
		if (sp >= lo && sp < hi)
			return 0;
	}
	vpc = rt_read_ptr(m + gp->m_vdso_pc);
	if (!vpc)
		return 0;
	s->caller_pc = vpc;
	s->caller_sp = vsp;
	return 1;
}

/*
 * Where the walk of a sample at pc, sp goes on instead of the leaf's own
 * caller (a vDSO call's): 1 with *caller_pc and *caller_sp, 0 to walk as usual.
 */
static __always_inline int go_leaf_caller(__u32 tgid, const void *data, __u64 pc, __u64 sp,
					  __u64 *caller_pc, __u64 *caller_sp)
{
	struct go_scratch *s;
	__u32 zero = 0;

	(void)data;
	if (!go_vdso_caller(tgid, pc, sp))
		return 0;
	s = bpf_map_lookup_elem(&go_scratch, &zero);
	if (!s)
		return 0;
	*caller_pc = s->caller_pc;
	*caller_sp = s->caller_sp;
	return 1;
}

/* The items go_walk left in this CPU's scratch, NULL when none (runtime_emit's). */
static __always_inline const void *go_items(void)
{
	__u32 zero = 0;
	struct go_scratch *s = bpf_map_lookup_elem(&go_scratch, &zero);

	return s ? s->l : NULL;
}

/*
 * Appends the goroutine's labels to rec, a record whose frames fill
 * pcs[0, nr_pcs) and whose buffer has RT_RECORD_BYTES of room after
 * max_pcs of them.
 */
static __always_inline void go_append(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs)
{
	int r = go_labels_read(rec->pid);

	runtime_emit(rec, nr_pcs, max_pcs, RT_GO, r, sizeof(struct cfi_go_label), GO_MAX_LABELS,
		     GO_STATUS_MAX, GO_STATUS_UNREADABLE);
}

/* A caller's rule for JIT code its rows lack: none (Go's code is its binary's). */
#define go_jit_caller_rule runtime_no_jit_caller_rule

/* Thread tid exits: Go keeps nothing per thread. */
static __always_inline void go_thread_exit(__u32 tid)
{
	(void)tid;
}

#endif
