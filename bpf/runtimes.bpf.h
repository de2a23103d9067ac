/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The language runtimes whose data a sample carries after its PCs (enum
 * cfi_runtime): which one a process runs, and its part of the record.  A
 * runtime is one BPF file with a NAME_append that starts from its
 * runtime_procs entry and a NAME_thread_exit; bpf/runtime_table.h lists them.
 */
#ifndef CFIPROF_RUNTIMES_BPF_H
#define CFIPROF_RUNTIMES_BPF_H

/* The current thread's thread pointer (TLS base): the fs base on x86-64, TPIDR_EL0 on arm64. */
static __always_inline __u64 current_thread_pointer(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

#if defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(t, thread.uw.tp_value);
#else
	return BPF_CORE_READ(t, thread.fsbase);
#endif
}

/* The pointer at addr in the sampled process, 0 when it cannot be read: every runtime's. */
static __always_inline __u64 rt_read_ptr(__u64 addr)
{
	__u64 v = 0;

	return bpf_probe_read_user(&v, sizeof(v), (const void *)addr) ? 0 : v;
}

/* module ids past this are not a dynamic loader's (glibc counts them from 1) */
#define TLS_MAX_MODID 65536
/*
 * A TLS descriptor's argument below this is a static-TLS offset from the
 * thread pointer (glibc's _dl_tlsdesc_return: the initial modules' blocks,
 * a few KiB beside the thread pointer, negative on x86-64); a larger one
 * points at _dl_tlsdesc_dynamic's {module id, offset} in the heap, which
 * even a non-PIE executable's brk heap puts past 4 MiB.
 */
#define TLS_DESC_STATIC_MAX (1ll << 20)

/*
 * The address, in the current thread, of a shared object's thread-local
 * variable (0 when its block is not there yet), from the GOT slot its
 * global-dynamic accesses use (struct cfi_tls_var): a DTPMOD64 slot holds
 * the module id (the block is the thread's DTV entry; offset is the
 * variable's in it), a TLSDESC pair (arm64's default dialect) the resolver
 * and its argument.
 */
static __always_inline __u64 tls_var_addr(__u64 tp, __u64 slot, __u64 offset, __u8 desc)
{
	__u64 dtv, modid, block;

	if (!tp || !slot)
		return 0;
	if (desc) {
		__s64 arg = (__s64)rt_read_ptr(slot + 8);

		if (arg > -TLS_DESC_STATIC_MAX && arg < TLS_DESC_STATIC_MAX)
			return arg ? tp + arg : 0;
		/* struct tlsdesc_dynamic_arg: tls_index {module, offset}, gen_count */
		modid = rt_read_ptr((__u64)arg);
		offset = rt_read_ptr((__u64)arg + 8);
	} else {
		modid = rt_read_ptr(slot);
	}
	/* 0 until the dynamic loader relocated the object */
	dtv = rt_read_ptr(tp + ARCH_TP_DTV);
	if (!dtv || !modid || modid > TLS_MAX_MODID)
		return 0;
	/* dtv_t: {val, to_free}; a block not allocated reads as 0 or -1 */
	block = rt_read_ptr(dtv + modid * 16);
	return block && block != ~0ull ? block + offset : 0;
}

/*
 * The runtimes whose frames are read, a bit each (1 << id): record's
 * --runtimes.  One left out costs no start time: no path reaches its walk
 * once this is frozen, and the kernel verifies a global function only when
 * a path reaches it (6.8 on).
 */
const volatile __u32 runtimes_on = ~0u;

#define RUNTIME_ON(id) (runtimes_on & (1u << (id)))

/*
 * Set in the first of the sampling program's two loads
 * (user/session/runtime_walks.c): its runtimes' walks are left out, which
 * its verifier then skips, and the second load, with them, takes its place
 * in sample_progs once verified.  Meanwhile a runtime's samples go without
 * its frames, counted (CNT_RT_WALK_PENDING).  What the native walk needs of
 * a runtime (its JIT code's rules, Go's vDSO callers) and what a thread's
 * exit clears stay on.
 */
const volatile __u8 runtime_walks_later = 0;

/*
 * The processes running a runtime user space found, one entry each
 * (user/track/runtime_procs.c writes them): not preallocated, as python's
 * threads map, so that an empty map costs no start time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tgid */
	__type(value, struct cfi_runtime_proc);
} runtime_procs SEC(".maps");

/*
 * Whether tgid's runtime entry, written by a load that read its mappings at
 * maps_read_ns, is the image's before an exec (pid_times PT_EXEC after it):
 * what it says of the process is gone, whatever a load finishing late wrote.
 */
static __always_inline bool runtime_entry_stale(__u32 tgid, __u64 maps_read_ns)
{
	struct pid_times *times = bpf_map_lookup_elem(&pid_times, &tgid);

	return times && times->ns[PT_EXEC] > maps_read_ns;
}

/* tgid's entry's own part when it runs runtime rt, else NULL. */
static __always_inline const void *runtime_proc(__u32 tgid, __u8 rt)
{
	const struct cfi_runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);

	return p && p->runtime == rt ? p->data : NULL;
}

/*
 * A runtime's read r (n items | status << 16; status 0: none to append) into
 * rec: its runtime and status set and counted; returns the items to copy, 0
 * for none.
 */
static __always_inline __u64 runtime_emit_status(struct cfi_sample_record *rec, __u8 rt, int r,
						 __u32 status_max, __u32 unreadable)
{
	__u32 status = (__u32)r >> 16;

	if (!status)
		return 0;
	rec->runtime = rt;
	rec->rt_status = status < status_max ? status : unreadable;
	walker_count(CNT_RT_STATUS(rt, rec->rt_status), 1);
	return (__u32)r & 0xffff;
}

/*
 * n items of item_bytes each (at most max_items) from src into rec after its
 * nr_pcs PCs (room for RT_RECORD_BYTES after max_pcs), counted.  Each bound
 * is checked in the register the read uses: a bound on n alone does not
 * reach n * item_bytes in verifiers before 6.8, and 6.1's does not carry one
 * learnt on a value to its copy spilled before.
 */
static __always_inline void runtime_emit_items(struct cfi_sample_record *rec, __u64 nr_pcs,
					       __u64 max_pcs, __u8 rt, __u64 n, const void *src,
					       __u32 item_bytes, __u32 max_items)
{
	__u64 bytes;

	if (!src || n == 0 || n > max_items)
		return;
	bytes = n * item_bytes;
	barrier_var(bytes);
	if (bytes > (__u64)max_items * item_bytes || bytes > RT_RECORD_BYTES)
		return;
	barrier_var(nr_pcs);
	if (nr_pcs > max_pcs)
		return;
	if (bpf_probe_read_kernel(&rec->pcs[nr_pcs], bytes, src))
		return;
	rec->nr_rt = n * (item_bytes / RT_UNIT_BYTES);
	walker_count(CNT_RT_UNITS(rt), n);
}

/*
 * runtime_emit on a scratch record (struct sample_scratch's size), its items
 * NAME_items' (after the runtimes' files, below), shape what runtime_emit
 * says of them (RT_SHAPE).  A global function: inlined into each runtime's
 * append, the verifier went through it once for every runtime and every
 * state a walk ends in (a tenth of on_sample's verification).
 */
#define RT_SHAPE(rt, item_bytes, max_items, status_max, unreadable)                                \
	((__u64)(rt) | (__u64)(item_bytes) << 8 | (__u64)(max_items) << 16 |                       \
	 (__u64)(status_max) << 32 | (__u64)(unreadable) << 40)
__noinline int runtime_emit_scratch(struct sample_scratch *buf, __u64 shape, int r, __u64 nr_pcs);

static __always_inline const void *runtime_items(__u32 rt);

/*
 * A runtime's part of rec, after its nr_pcs PCs (room for RT_RECORD_BYTES
 * after max_pcs): r is the runtime's read, its items in its scratch
 * (runtime_items).  A scratch record (max_pcs the most PCs a record has)
 * goes through runtime_emit_scratch.
 */
static __always_inline void runtime_emit(struct cfi_sample_record *rec, __u64 nr_pcs, __u64 max_pcs,
					 __u8 rt, int r, __u32 item_bytes, __u32 max_items,
					 __u32 status_max, __u32 unreadable)
{
	if (max_pcs == MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT) {
		runtime_emit_scratch((struct sample_scratch *)rec,
				     RT_SHAPE(rt, item_bytes, max_items, status_max, unreadable), r,
				     nr_pcs);
		return;
	}
	runtime_emit_items(rec, nr_pcs, max_pcs, rt,
			   runtime_emit_status(rec, rt, r, status_max, unreadable),
			   runtime_items(rt), item_bytes, max_items);
}

/* NAME_jit_caller_rule of a runtime that tells none (its code no JIT's, or not read yet) */
static __always_inline int runtime_no_jit_caller_rule(__u32 tgid, const void *data, __u64 pc,
						      struct cfi_rule *out)
{
	(void)tgid;
	(void)data;
	(void)pc;
	(void)out;
	return 0;
}

/* NAME_leaf_caller of a runtime whose leaf's caller is where its frame says */
static __always_inline int runtime_no_leaf_caller(__u32 tgid, const void *data, __u64 pc, __u64 sp,
						  __u64 *caller_pc, __u64 *caller_sp)
{
	(void)tgid;
	(void)data;
	(void)pc;
	(void)sp;
	(void)caller_pc;
	(void)caller_sp;
	return 0;
}

#define RUNTIME_TABLE_BPF_FILES
#include "runtime_table.h"

/* The items runtime rt's walk left in its scratch (NAME_items), NULL when none. */
static __always_inline const void *runtime_items(__u32 rt)
{
#define RUNTIME_ITEMS(id, value, name, tag, frames, type)                                          \
	if (rt == id)                                                                              \
		return name##_items();
	CFI_RUNTIMES(RUNTIME_ITEMS)
#undef RUNTIME_ITEMS
	return NULL;
}

__noinline int runtime_emit_scratch(struct sample_scratch *buf, __u64 shape, int r, __u64 nr_pcs)
{
	struct cfi_sample_record *rec = (struct cfi_sample_record *)buf;
	__u8 rt = shape & 0xff;
	__u64 n;

	if (!buf)
		return 0;
	n = runtime_emit_status(rec, rt, r, (shape >> 32) & 0xff, (shape >> 40) & 0xff);
	if (n)
		runtime_emit_items(rec, nr_pcs, MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT, rt, n,
				   runtime_items(rt), (shape >> 8) & 0xff, (shape >> 16) & 0xffff);
	return 0;
}

/*
 * Before the walk of tgid's sample: whether its runtime reads its frames by
 * their rbp (the walk then keeps each frame's, frame_bps), and whether it
 * knows the leaf's caller better than the leaf's frame does (Go's vDSO
 * calls): then the leaf goes into out[0] and the walk on from that caller.
 * Returns tgid's runtime (RT_NONE: none), as runtime_of does: the sample's
 * one lookup of runtime_procs.
 */
static __always_inline __u8 runtime_walk_begin(__u32 tgid, struct walker_state *st, __u64 *out)
{
	const struct cfi_runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);
	__u64 pc = 0, sp = 0;
	int found = 0;

	if (!p)
		return RT_NONE;
	if (st->done)
		return p->runtime;
	if (runtime_walks_later && RUNTIME_ON(p->runtime))
		walker_count(CNT_RT_WALK_PENDING, 1);
	else
		st->keep_bp = p->keep_bp;
#define RUNTIME_LEAF_CALLER(id, value, name, tag, frames, type)                                    \
	if (p->runtime == id && RUNTIME_ON(id))                                                    \
		found = name##_leaf_caller(tgid, p->data, st->ip, st->sp, &pc, &sp);
	CFI_RUNTIMES(RUNTIME_LEAF_CALLER)
#undef RUNTIME_LEAF_CALLER
	if (found)
		walker_leaf_elsewhere(st, out, pc, sp);
	return p->runtime;
}

/* The runtime of tgid (RT_NONE: none): its records need RT_RECORD_BYTES more. */
static __always_inline __u8 runtime_of(__u32 tgid)
{
	const struct cfi_runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);

	return p ? p->runtime : RT_NONE;
}

/*
 * The runtime's units appended to rec, whose frames fill pcs[0, nr_pcs) and
 * whose buffer has RT_RECORD_BYTES of room after max_pcs of them.
 */
static __always_inline void runtime_append(__u8 rt, struct cfi_sample_record *rec, __u64 nr_pcs,
					   __u64 max_pcs)
{
	/*
	 * The first of two loads has no walks; inside execve (the image being
	 * replaced) or exiting (no address space): none to read.
	 */
	if (runtime_walks_later || (rec->flags & (SAMPLE_IN_EXECVE | SAMPLE_EXITING)))
		return;
#define RUNTIME_APPEND(id, value, name, tag, frames, type)                                         \
	if (rt == id) {                                                                            \
		if (RUNTIME_ON(id))                                                                \
			name##_append(rec, nr_pcs, max_pcs);                                       \
		return;                                                                            \
	}
	CFI_RUNTIMES(RUNTIME_APPEND)
#undef RUNTIME_APPEND
}

/* Thread tid exits: each runtime forgets what it kept of it. */
static __always_inline void runtime_thread_exit(__u32 tid)
{
#define RUNTIME_THREAD_EXIT(id, value, name, tag, frames, type)                                    \
	if (RUNTIME_ON(id))                                                                        \
		name##_thread_exit(tid);
	CFI_RUNTIMES(RUNTIME_THREAD_EXIT)
#undef RUNTIME_THREAD_EXIT
}

/*
 * The walk of tgid reached a return address, pc, in JIT code compiled since
 * its rows were built (bpf/walker.h's WALKER_JIT_CALLER_RULE): the rule its
 * runtime reads from the code's own header into *out, 1; 0 when it tells
 * none and the walk waits for the next rows.  Inlined in walker_step: a
 * call of its own would take the fourth frame of the walk's stack, past
 * the verifier's 512 bytes.
 */
static __always_inline int runtime_jit_caller_rule(__u32 tgid, __u64 pc, struct cfi_rule *out)
{
	const struct cfi_runtime_proc *p = bpf_map_lookup_elem(&runtime_procs, &tgid);

	if (!p)
		return 0;
#define RUNTIME_JIT_CALLER_RULE(id, value, name, tag, frames, type)                                \
	if (p->runtime == id && RUNTIME_ON(id))                                                    \
		return name##_jit_caller_rule(tgid, p->data, pc, out);
	CFI_RUNTIMES(RUNTIME_JIT_CALLER_RULE)
#undef RUNTIME_JIT_CALLER_RULE
	return 0;
}

/* tgid exec'd: its runtime's entry was the old image's; true if it had one. */
static __always_inline bool runtime_exec(__u32 tgid)
{
	return !bpf_map_delete_elem(&runtime_procs, &tgid);
}

#endif
