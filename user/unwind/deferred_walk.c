// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpf/walker.h built as ordinary C for the profiler itself: the environment
 * below reads the stack copy a deferred sample carries and the maps the
 * kernel walks (walk_maps.h).  Only the consumer thread walks; the state is
 * per thread all the same.
 */
#include <string.h>

#include "user/unwind/deferred_walk.h"

struct walk_env {
	const struct walk_maps *m;
	const __u8 *stack;
	__u64 base;
	__u32 len;
	__u64 holes;	/* chunks the kernel could not read (struct cfi_deferred_record) */
	bool past_copy; /* a read above the copied bytes failed */
	struct cfi_proc_val proc;
	struct cfi_mapping_val mapping;
	struct cfi_page_val page;
	/* the rule cache of the kernel's walk, kept across deferred samples */
	struct cfi_rule_cache_entry cache[RULE_CACHE_SLOTS];
	struct walker_window window;
};

static __thread struct walk_env env;

/*
 * size bytes at addr of a stack copy (len bytes from base, holes: its
 * DEFER_CHUNKs the kernel could not read) into dst: 0, or -1 outside it or
 * in a hole.
 */
static int copy_read(const __u8 *stack, __u64 base, __u64 len, __u64 holes, void *dst, size_t size,
		     __u64 addr)
{
	__u64 off = addr - base;

	if (addr < base || off > len || size > len - off)
		return -1;
	for (__u64 c = off / DEFER_CHUNK; size && c <= (off + size - 1) / DEFER_CHUNK; c++)
		if (c < 64 && (holes >> c & 1))
			return -1;
	memcpy(dst, stack + off, size);
	return 0;
}

static inline int walker_read_user(void *dst, __u32 size, __u64 addr)
{
	if (!copy_read(env.stack, env.base, env.len, env.holes, dst, size, addr))
		return 0;
	if (addr >= env.base + env.len)
		env.past_copy = true;
	return -1;
}

static inline struct cfi_proc_val *walker_lookup_proc(__u32 pid)
{
	return env.m->ops->proc(env.m->ctx, pid, &env.proc) ? &env.proc : NULL;
}

static inline struct cfi_mapping_val *walker_lookup_mapping(__u32 pid, __u64 pc)
{
	return env.m->ops->mapping(env.m->ctx, pid, pc, &env.mapping) ? &env.mapping : NULL;
}

static inline struct cfi_page_val *walker_lookup_page(__u32 obj_id, __u32 page)
{
	return env.m->ops->page(env.m->ctx, obj_id, page, &env.page) ? &env.page : NULL;
}

static inline struct cfi_row *walker_row(__u32 idx)
{
	return idx < env.m->nr_rows ? (struct cfi_row *)&env.m->rows[idx] : NULL;
}

static inline struct cfi_rule *walker_rule(__u32 id)
{
	return id < env.m->nr_rules ? (struct cfi_rule *)&env.m->rules[id] : NULL;
}

static inline struct cfi_rule_cache_entry *walker_cache_slot(__u32 idx)
{
	return idx < RULE_CACHE_SLOTS ? &env.cache[idx] : NULL;
}

static inline struct walker_window *walker_window(void)
{
	return &env.window;
}

/* each frame's rbp as the last walk found it (0: not known), for the runtime that reads by it */
static __thread __u64 frame_bps[MAX_USER_FRAMES_LIMIT];
#define WALKER_KEEP_BP(st, nr, bp) (frame_bps[(nr) & (MAX_USER_FRAMES_LIMIT - 1)] = (bp))

#include "bpf/walker.h"

const __u64 *deferred_walk_bps(void)
{
	return frame_bps;
}

bool deferred_copy_read(const struct deferred_view *v, __u64 addr, void *dst, size_t len)
{
	return len && !copy_read(v->stack, v->d->stack_base, v->d->stack_len, v->d->stack_holes,
				 dst, len, addr);
}

bool deferred_parse(const void *data, size_t size, struct deferred_view *v)
{
	const struct cfi_deferred_record *d = data;
	const struct cfi_sample_record *r;
	size_t at;

	if (size < sizeof(*d) || d->type != RECORD_DEFERRED || d->stack_max > DEFER_STACK_MAX ||
	    d->stack_len > d->stack_max || d->stack_max % DEFER_CHUNK)
		return false;
	at = sizeof(*d) + d->stack_max;
	if (size < at + sizeof(*r))
		return false;
	r = (const struct cfi_sample_record *)((const char *)data + at);
	if (r->type != RECORD_SAMPLE || r->nr_kernel > MAX_KERNEL_FRAMES ||
	    r->nr_user > MAX_USER_FRAMES_LIMIT || r->nr_rt > RT_MAX_UNITS)
		return false;
	/* the PCs, then the runtime's units (bpf/runtimes.bpf.h) */
	v->rec_size = sizeof(*r) + ((size_t)r->nr_kernel + r->nr_user) * sizeof(__u64) +
		      (size_t)r->nr_rt * RT_UNIT_BYTES;
	if (size - at < v->rec_size)
		return false;
	v->d = d;
	v->stack = (const __u8 *)(d + 1);
	v->rec = r;
	return true;
}

/*
 * What a runtime may need to judge the walk by: the leaf's mapping (a vDSO
 * call's), and how many frames from the leaf are in its object, so that
 * the first past them is its caller however many the object took.  Each
 * return address is looked up a byte before it, in its call.
 */
static void leaf_mapping(struct deferred_view *v, __u32 pid, const __u64 *user, __u32 nr)
{
	__u32 obj_id;

	v->leaf_flags = 0;
	v->leaf_run = 0;
	if (!nr || !walker_lookup_mapping(pid, user[0]))
		return;
	v->leaf_flags = env.mapping.flags;
	obj_id = env.mapping.obj_id;
	for (v->leaf_run = 1; v->leaf_run < nr; v->leaf_run++) {
		if (!walker_lookup_mapping(pid, user[v->leaf_run] - 1) ||
		    env.mapping.obj_id != obj_id)
			break;
	}
}

enum deferred_outcome deferred_walk(const struct walk_maps *m, struct deferred_view *v,
				    __u32 max_frames, bool final, struct cfi_sample_record *out,
				    size_t *out_size, __u64 *missing_pc)
{
	const struct cfi_deferred_record *d = v->d;
	const struct cfi_sample_record *r = v->rec;
	struct walker_state st;
	__u64 *user = out->pcs + r->nr_kernel;
	int i;

	if (max_frames > MAX_USER_FRAMES_LIMIT)
		max_frames = MAX_USER_FRAMES_LIMIT;
	env.m = m;
	env.stack = v->stack;
	env.base = d->stack_base;
	env.len = d->stack_len;
	env.holes = d->stack_holes;
	env.past_copy = false;
	if (!walker_lookup_proc(r->pid))
		return DEFERRED_WAIT;
	memcpy(out, r, v->rec_size);
	memset(&st, 0, sizeof(st));
	st.pid = r->pid;
	st.generation = env.proc.generation;
	st.proc_known = 1;
	st.ip = d->ip;
	st.sp = d->sp;
	st.bp = d->bp;
	st.bp_valid = d->bp_valid;
	st.ip_is_ra = d->ip_is_ra;
	st.nr_signal = (__u8)d->nr_signal;
	st.flags = r->flags;
	st.nr = r->nr_user;
	st.nr_fp = r->nr_fp;
	st.rbx = d->rbx;
	st.rbx_at = d->rbx_at;
	st.rbx_valid = d->rbx_valid;
	st.lr = d->lr;
	st.lr_valid = d->lr_valid;
	st.at_leaf = d->at_leaf;
	st.ip_from_fp = d->ip_from_fp;
	st.keep_bp = 1;
	/* JIT rows built after the sample, or none to wait for: a pc without one is no code */
	st.jit_final = final || env.proc.loaded_ns >= r->time_ns;
	memcpy(st.leaf, d->leaf, sizeof(st.leaf));
	walker_window_begin(&st);
	/* the kernel emitted st.ip and stopped unwinding it: unwind it first */
	if (!st.nr || !walker_step(&st)) {
		for (i = 0; i <= MAX_USER_FRAMES_LIMIT; i++) {
			if (walker_frame(&st, user, max_frames))
				break;
		}
	}
	if (!st.done)
		walker_stop(&st, STOP_TRUNCATED);
	if (st.reason == STOP_TABLES_PENDING)
		return DEFERRED_WAIT;
	/* a walk that needed more than the copy holds, not memory that was unreadable */
	if (st.reason == STOP_UNREADABLE && env.past_copy && d->stack_len == d->stack_max)
		st.reason = STOP_STACK_COPY;
	/* the walker keeps the frame's pc; a return address was looked up a byte before it */
	if (missing_pc)
		*missing_pc = st.reason == STOP_NO_MAPPING ? st.missing_pc - st.ip_is_ra : 0;
	leaf_mapping(v, r->pid, user, st.nr);
	out->reason = st.reason;
	out->flags = st.flags | SAMPLE_DEFERRED;
	out->nr_fp = st.nr_fp;
	out->nr_user = st.nr;
	out->generation = st.generation;
	*out_size = sizeof(*out) + ((size_t)r->nr_kernel + st.nr) * sizeof(__u64);
	/* the kernel read them at sample time; they follow the PCs, whose number grew */
	memcpy((char *)out + *out_size, r->pcs + r->nr_kernel + r->nr_user,
	       (size_t)r->nr_rt * RT_UNIT_BYTES);
	*out_size += (size_t)r->nr_rt * RT_UNIT_BYTES;
	return DEFERRED_FINISHED;
}
