/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user-stack walker: one frame at a time, from (pc, stack pointer, frame
 * pointer) to the caller's, using the compiled CFI tables of cfiprof_abi.h.
 * x86-64 (rip, rsp, rbp) or AArch64 (pc, sp, x29; the return address in x30
 * until a prologue stores it): what differs sits in walker_arch.h's constants
 * and a few accessors here; rule kinds named after x86-64 (CFI_CFA_RSP,
 * rbp_kind) mean the stack and frame pointer on both.
 *
 * This header is compiled twice: by clang -target bpf (from cfiprof.bpf.c)
 * and as ordinary C (from the replay tests), so that captured stacks can be
 * replayed without a kernel.  Everything that touches the environment is an
 * inline function the includer defines BEFORE including this file:
 *
 *   int walker_read_user(void *dst, __u32 size, __u64 addr);      0 or error
 *   struct cfi_proc_val *walker_lookup_proc(__u32 pid);
 *   struct cfi_mapping_val *walker_lookup_mapping(__u32 pid, __u64 pc);
 *   struct cfi_page_val *walker_lookup_page(__u32 obj_id, __u32 page);
 *   struct cfi_row *walker_row(__u32 idx);          global rows array
 *   struct cfi_rule *walker_rule(__u32 id);         global rule dictionary
 *   struct cfi_rule_cache_entry *walker_cache_slot(__u32 idx);
 *   struct walker_window *walker_window(void);      the stack window, or NULL
 *
 * Nothing here allocates: the includer writes each pc straight into its
 * output (the ring-buffer reservation).  User memory is read a window of
 * WALKER_WINDOW bytes at a time (struct walker_window), which serves the
 * frames above it without another read.
 */
#ifndef CFIPROF_WALKER_H
#define CFIPROF_WALKER_H

#include "cfiprof_abi.h"
#include "walker_arch.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * Rows of one page: at most 65536 (16-bit offsets), so 16 halvings find any
 * row; one more keeps a corrupt nr_rows from looping further.
 */
#define WALKER_BSEARCH_STEPS 17

/*
 * Signal frames one walk may cross.  Real stacks nest a handful at most; a
 * ucontext crafted to point at itself would otherwise repeat until the frame
 * limit (a signal frame's rsp may jump anywhere, sigaltstack, so "above the
 * last one" cannot be required).
 */
#define WALKER_MAX_SIGNAL_FRAMES 8

/*
 * A frame pointer further above rsp than this is not in the frame's stack:
 * a frame-pointer step trusts rbp only within it.
 */
#define WALKER_FP_MAX_FRAME (8ull << 20)

/* Walk state; lives on the BPF stack (bpf_loop) or in per-CPU scratch (tail calls). */
struct walker_state {
	__u64 ip; /* pc of the frame being unwound (already emitted) */
	__u64 sp;
	__u64 bp;
	__u64 missing_pc; /* pc that had no mapping, for a RECORD_REQUEST */
	__u64 loaded_ns;  /* when user space read the pid's mappings (its procs entry at the start) */
	__u64 changed_ns; /* when they last changed (set by the includer after the walk) */
	__u32 pid;	  /* tgid: mappings are per process */
	__u32 generation;
	__u16 nr;      /* user frames emitted so far */
	__u16 nr_fp;   /* of which recovered with frame pointers */
	__u8 bp_valid; /* 0 once a rule left rbp undefined */
	__u8 ip_is_ra; /* ip is a return address: look it up at ip - 1 */
	__u8 proc_known;
	__u8 reason; /* enum cfi_stop_reason, valid once done */
	__u8 flags;  /* enum cfi_sample_flags */
	__u8 done;
	__u8 change_pending; /* the mappings changed after the last load: ask for them again */
	__u8 keys_quota;     /* stopped at no mapping in a process over its keys quota */
	__u8 nr_signal;	     /* signal frames crossed */
	__u16 cache_hits; /* counted once per walk by the includer, not per frame */
	__u16 cache_misses;
	__u8 rbx_valid; /* 0 once a rule or a frame-pointer step lost rbx */
	__u8 at_leaf;	/* leaf[] holds the registers of the frame being unwound */
	__u8 ip_from_fp; /* ip came from a frame-pointer step: unconfirmed */
	__u8 unsup;	 /* enum cfi_unsupported_reason of a STOP_UNSUPPORTED */
	__u64 rbx;	 /* the frame's rbx when rbx_at is 0 */
	__u64 rbx_at;	 /* else it was saved at this stack address: read only when needed */
	__u32 win_tag;	 /* this walk's tag in walker_window()->walks; 0: read directly */
	__u8 lr_valid;	 /* arm64: lr holds the frame's x30 (the leaf, a signal frame) */
	__u8 keep_bp;	 /* each frame's rbp kept (WALKER_KEEP_BP): a runtime reads frames by it */
	__u8 jit_final;	 /* JIT rows newer than the sample: a pc without one is no code they know */
	__u8 pad[1];
	__u64 lr;
	/* the sample's registers by DWARF number, set by the includer; used at the leaf only */
	__u64 leaf[CFI_DW_NR_REGS];
};

/* Give a walk its tag in the window: walker_init does; a walk resumed elsewhere calls it. */
static __always_inline void walker_window_begin(struct walker_state *st)
{
	struct walker_window *win = walker_window();

	st->win_tag = 0;
	if (!win)
		return;
	/* 0 means "no window": skip it when the counter wraps */
	if (++win->walks == 0)
		win->walks = 1;
	st->win_tag = win->walks;
}

/*
 * Start a walk at the interrupted user registers.  Rules with the CFA in
 * another register need the others: the includer then fills st->leaf[] and
 * calls walker_leaf_regs().
 */
static __always_inline void walker_init(struct walker_state *st, __u32 pid, __u64 ip, __u64 sp,
					__u64 bp)
{
	struct cfi_proc_val *proc;

	__builtin_memset(st, 0, sizeof(*st));
	st->pid = pid;
	st->ip = ip;
	st->sp = sp;
	st->bp = bp;
	st->bp_valid = 1;
	walker_window_begin(st);
	proc = walker_lookup_proc(pid);
	if (proc) {
		st->proc_known = 1;
		st->generation = proc->generation;
		st->loaded_ns = proc->loaded_ns;
	}
}

/* st->leaf[] holds the sample's registers: rbx is carried from there on (x86-64). */
static __always_inline void walker_leaf_regs(struct walker_state *st)
{
	st->at_leaf = 1;
#ifndef WALKER_ARCH_ARM64
	st->rbx = st->leaf[CFI_DW_RBX];
	st->rbx_valid = 1;
#endif
}

/* arm64: the sample's x30, where the first frame's return address is until saved. */
static __always_inline void walker_link_register(struct walker_state *st, __u64 lr)
{
	st->lr = lr & WALKER_RA_MASK;
	st->lr_valid = 1;
}

static __always_inline int walker_stop(struct walker_state *st, int reason)
{
	st->reason = reason;
	st->done = 1;
	return 1;
}

static __always_inline int walker_unsupported(struct walker_state *st, __u8 why)
{
	st->unsup = why;
	return walker_stop(st, STOP_UNSUPPORTED);
}

static __always_inline __u32 walker_cache_index(__u32 pid, __u32 generation, __u64 pc)
{
	__u64 h = pc ^ (((__u64)pid << 32) | generation);

	/* Fibonacci hashing: the top bits spread neighbouring pcs and pids over all slots. */
	h *= 0x9e3779b97f4a7c15ULL;
	return (__u32)(h >> (64 - RULE_CACHE_SHIFT));
}

/*
 * Rule for addr (ELF vaddr) in object obj_id: the last row of its page whose
 * offset is <= the offset of addr.  0 on success, -1 when nothing covers addr.
 */
static __always_inline int walker_find_rule(__u32 obj_id, __u64 addr, struct cfi_rule *out)
{
	struct cfi_page_val *page;
	struct cfi_row *row;
	struct cfi_rule *rule;
	__u32 off = addr & (CFI_PAGE_SIZE - 1);
	__u32 first, n, base = 0, half, start;
	int i;

	page = walker_lookup_page(obj_id, (__u32)(addr >> CFI_PAGE_SHIFT));
	if (!page)
		return -1;
	first = page->first_row;
	n = page->nr_rows;
	if (n == 0)
		return -1;
	/* Halving search: base stays on a row <= off, n shrinks to 1. */
	for (i = 0; i < WALKER_BSEARCH_STEPS; i++) {
		if (n <= 1)
			break;
		half = n / 2;
		row = walker_row(first + base + half);
		if (!row)
			return -1;
		if (row->off <= off)
			base += half;
		n -= half;
	}
	row = walker_row(first + base);
	if (!row || row->off > off)
		return -1;
	rule = walker_rule(row->rule);
	if (!rule)
		return -1;
	start = row->off;
	/* the next row folded into this one (see struct cfi_rule) */
	if (rule->next_at && off - start >= rule->next_at) {
		start += rule->next_at;
		rule = walker_rule(rule->next_rule);
		if (!rule)
			return -1;
	}
	/* a gap folded into the function's last row (see struct cfi_rule) */
	if (rule->hole_len) {
		__u32 d = off - start, next = CFI_PAGE_SIZE;

		if (rule->hole_off) {
			if (d >= rule->hole_off && d < (__u32)rule->hole_off + rule->hole_len)
				return -1;
		} else {
			if (base + 1 < page->nr_rows) {
				row = walker_row(first + base + 1);
				if (!row)
					return -1;
				next = row->off;
			}
			if (off + rule->hole_len >= next)
				return -1;
		}
	}
	*out = *rule;
	return 0;
}

#ifndef barrier
#define barrier() __asm__ __volatile__("" ::: "memory")
#endif
/* libbpf's bpf_helpers.h has it; the plain C build does not */
#ifndef barrier_var
#define barrier_var(var) __asm__ __volatile__("" : "+r"(var))
#endif

/*
 * size (8 or 16: a compile-time constant at every call) bytes of user memory
 * at addr, from the walk's window, refilled at addr when it does not hold
 * them.  A window that cannot be read whole (the stack's top, an untouched
 * page) falls back to reading just what was asked: the same bytes, the same
 * failures as one read per value.
 */
static __always_inline int walker_read(struct walker_state *st, void *dst, __u32 size, __u64 addr)
{
	struct walker_window *w;
	__u64 off, base, len;

	if (!st->win_tag)
		return walker_read_user(dst, size, addr);
	w = walker_window();
	if (!w)
		return walker_read_user(dst, size, addr);
	off = addr - w->base;
	if (w->tag != st->win_tag || addr < w->base || off + size > w->len) {
		/* a frame's other slots are just below the first one asked for, never below rsp */
		base = addr - WALKER_WINDOW_BELOW;
		if (addr < st->sp + WALKER_WINDOW_BELOW)
			base = addr < st->sp ? addr : st->sp;
		w->tag = 0;
		len = WALKER_WINDOW;
		if (walker_read_user(w->bytes, WALKER_WINDOW, base)) {
			/* past the stack's top: the rest of addr's page, mapped if addr is */
			len = (addr | (WALKER_WINDOW_PAGE - 1)) + 1 - base;
			if (len >= WALKER_WINDOW || addr + size > base + len)
				return walker_read_user(dst, size, addr);
			/* the mask beside the call: 6.1's verifier loses a spill's bound */
			barrier_var(len);
			if (walker_read_user(w->bytes, len & (WALKER_WINDOW - 1), base))
				return walker_read_user(dst, size, addr);
		}
		w->base = base;
		w->len = len;
		w->tag = st->win_tag;
		off = addr - base;
	}
	/*
	 * Saved registers sit at 8-byte aligned addresses and the window starts
	 * at one: whole words.  A copy from the window at any other offset would
	 * be what the BPF backend makes of a memcpy of unknown alignment, byte
	 * by byte (16 loads and 30 shifts and ors for a pair), and clang merges
	 * the two copies into that one: an unaligned address is read directly.
	 */
	if (off & 7)
		return walker_read_user(dst, size, addr);
	((__u64 *)dst)[0] = *(const __u64 *)(w->bytes + (off & (WALKER_WINDOW - 8)));
	if (size == 16)
		((__u64 *)dst)[1] = *(const __u64 *)(w->bytes + (off & (WALKER_WINDOW - 8)) + 8);
	/* copied before the check: an interrupting walk shows in walks */
	barrier();
	if (w->walks != st->win_tag) {
		st->win_tag = 0;
		return walker_read_user(dst, size, addr);
	}
	return 0;
}

static __always_inline int walker_read_u64(struct walker_state *st, __u64 addr, __u64 *val)
{
	return walker_read(st, val, sizeof(*val), addr);
}

/*
 * Frame-pointer step for JIT code, objects without CFI and code no FDE covers
 * in objects with CFI.  An implausible rbp stops with no_fp (the reason the
 * frame had no better way); the caller it finds is only confirmed by the next
 * step's mapping lookup (walker_step takes it back if there is none).
 */
static __always_inline int walker_fp_step(struct walker_state *st, int no_fp)
{
	__u64 bp = st->bp, ip, next_bp;

	/* rbp == rsp is a leaf right after "mov %rsp,%rbp"; below rsp it is not a frame. */
	if (!st->bp_valid || bp < st->sp || bp - st->sp > WALKER_FP_MAX_FRAME || (bp & 7))
		return walker_stop(st, no_fp);
	{
		/* saved rbp and return address are adjacent: one read, not two */
		__u64 pair[2];

		if (walker_read(st, pair, sizeof(pair), bp))
			return walker_stop(st, STOP_UNREADABLE);
		next_bp = pair[0];
		ip = pair[1];
	}
	ip &= WALKER_RA_MASK;
	/* only CFI's "return address undefined" proves the outermost frame, never a 0 here */
	if (ip == 0)
		return walker_stop(st, STOP_FP_BROKEN);
	/* new rsp = bp + 16 > bp >= old rsp: a chain that cycles ends above as FP_BROKEN */
	st->ip = ip;
	st->sp = bp + 16;
	st->bp = next_bp;
	st->ip_is_ra = 1;
	st->ip_from_fp = 1;
	st->nr_fp++;
	/* code without CFI may have used rbx and saved the caller's anywhere */
	st->rbx_valid = 0;
	st->lr_valid = 0;
	return 0;
}

/* The kernel saved every register of the interrupted code: take its pc, sp and frame pointer. */
static __always_inline int walker_signal_step(struct walker_state *st)
{
	__u64 uc = st->sp, ip, sp, bp;

	if (++st->nr_signal > WALKER_MAX_SIGNAL_FRAMES)
		return walker_stop(st, STOP_UNREADABLE);
	if (walker_read_u64(st, uc + WALKER_SIG_PC, &ip) ||
	    walker_read_u64(st, uc + WALKER_SIG_SP, &sp) ||
	    walker_read_u64(st, uc + WALKER_SIG_FP, &bp))
		return walker_stop(st, STOP_UNREADABLE);
#ifdef WALKER_ARCH_ARM64
	{
		__u64 lr;

		/* the interrupted frame may be a leaf: its return address still in x30 */
		if (walker_read_u64(st, uc + WALKER_SIG_LR, &lr))
			return walker_stop(st, STOP_UNREADABLE);
		walker_link_register(st, lr);
	}
#else
	st->rbx_at = uc + WALKER_SIG_RBX;
	st->rbx_valid = 1;
#endif
	/* No "CFA above rsp" check: the handler may run on a sigaltstack. */
	st->ip = ip;
	st->sp = sp;
	st->bp = bp;
	st->bp_valid = 1;
	/* rip is the interrupted instruction itself, not a return address. */
	st->ip_is_ra = 0;
	st->flags |= SAMPLE_SIGNAL;
	if (ip == 0)
		return walker_stop(st, STOP_COMPLETE);
	return 0;
}

/*
 * arm64: is st->ip the kernel's sigreturn trampoline, "mov x8, #139; svc #0"?
 * The vDSO's has had no CFI since Linux 5.8 (qemu's user-mode page never
 * had any): a handler's return address is found by its two instructions,
 * and so is a sample taken on them or inside the rt_sigreturn they make,
 * the pc then past the svc (Go's preemption signals make both common).
 * Code, not stack: read past the stack window.
 */
static __always_inline int walker_at_sigreturn(struct walker_state *st)
{
#ifdef WALKER_ARCH_ARM64
	__u32 w[4];

	if (st->ip_is_ra)
		return !walker_read_user(w, 8, st->ip) && w[0] == WALKER_A64_SIGRETURN_MOV &&
		       w[1] == WALKER_A64_SIGRETURN_SVC;
	/* the sample's own pc: on the mov, on the svc, or after it (in the syscall) */
	if (walker_read_user(w, sizeof(w), st->ip - 8))
		return 0;
	return (w[2] == WALKER_A64_SIGRETURN_MOV && w[3] == WALKER_A64_SIGRETURN_SVC) ||
	       (w[1] == WALKER_A64_SIGRETURN_MOV && w[2] == WALKER_A64_SIGRETURN_SVC) ||
	       (w[0] == WALKER_A64_SIGRETURN_MOV && w[1] == WALKER_A64_SIGRETURN_SVC);
#else
	(void)st;
	return 0;
#endif
}

static __always_inline int walker_eval_rule(struct walker_state *st, const struct cfi_rule *r)
{
	/* the frame's own rbp: where AT_FP registers are, before rbp becomes the caller's */
	__u64 cfa, ra, bp, tmp, fp = st->bp;

	switch (r->cfa_kind) {
	case CFI_CFA_RSP:
		cfa = st->sp + (__s64)r->cfa_off;
		break;
	case CFI_CFA_RBP:
		if (!st->bp_valid)
			return walker_unsupported(st, CFI_UNSUP_REG_LOST);
		cfa = st->bp + (__s64)r->cfa_off;
		break;
	case CFI_CFA_PLT:
		cfa = st->sp + (__s64)r->cfa_off + ((st->ip & 15) >= (__u64)(__s64)r->aux ? 8 : 0);
		break;
	case CFI_CFA_DEREF_RSP:
		if (walker_read_u64(st, st->sp + (__s64)r->cfa_off, &tmp))
			return walker_stop(st, STOP_UNREADABLE);
		cfa = tmp + (__s64)r->aux;
		break;
	case CFI_CFA_DEREF_RBP:
		if (!st->bp_valid)
			return walker_unsupported(st, CFI_UNSUP_REG_LOST);
		if (walker_read_u64(st, st->bp + (__s64)r->cfa_off, &tmp))
			return walker_stop(st, STOP_UNREADABLE);
		cfa = tmp + (__s64)r->aux;
		break;
	case CFI_CFA_REG:
		/* rbx is carried through the walk; any other register is known at the leaf only */
		if (r->aux == WALKER_CARRIED_REG && st->rbx_valid) {
			tmp = st->rbx;
			if (st->rbx_at && walker_read_u64(st, st->rbx_at, &tmp))
				return walker_stop(st, STOP_UNREADABLE);
		} else if (st->at_leaf && r->aux != WALKER_CARRIED_REG) {
			tmp = st->leaf[r->aux & (CFI_DW_NR_REGS - 1)];
		} else {
			return walker_unsupported(st, CFI_UNSUP_REG_LOST);
		}
		cfa = tmp + (__s64)r->cfa_off;
		break;
	case CFI_CFA_SIGNAL:
		return walker_signal_step(st);
	case CFI_CFA_NONE:
		return walker_stop(st, STOP_NO_RULE);
	default:
		return walker_unsupported(st, r->reason);
	}

	/* the outermost frame: where its CFA would be does not matter (arm64's _start: sp+0) */
	if (r->ra_kind == CFI_REG_UNDEFINED)
		return walker_stop(st, STOP_COMPLETE);
	/*
	 * The caller's sp before its call: above ours, or (arm64) the same where
	 * nothing was pushed and the return address is still in x30.  Anything
	 * else is garbage.
	 */
	if (cfa < st->sp || (cfa == st->sp && r->ra_kind != CFI_REG_SAME))
		return walker_stop(st, STOP_UNREADABLE);
	/* RA in the link register (arm64 only): known in the first frame and at a signal */
	if (r->ra_kind == CFI_REG_SAME) {
		if (!st->lr_valid)
			return walker_unsupported(st, CFI_UNSUP_REG_LOST);
		ra = st->lr;
	} else if (r->ra_kind == CFI_REG_AT_FP) {
		if (!st->bp_valid)
			return walker_unsupported(st, CFI_UNSUP_REG_LOST);
	} else if (r->ra_kind != CFI_REG_AT_CFA) {
		return walker_unsupported(st, r->reason);
	}
	/* where the caller's rbx is: read only if a CFA-in-rbx rule needs it */
	if (r->rbx_kind == CFI_REG_AT_CFA) {
		st->rbx_at = cfa + (__s64)r->rbx_off;
	} else if (r->rbx_kind == CFI_REG_VAL_CFA) {
		st->rbx = cfa + (__s64)r->rbx_off;
		st->rbx_at = 0;
	} else if (r->rbx_kind != CFI_REG_SAME) {
		st->rbx_valid = 0;
	}
	if (r->ra_kind == CFI_REG_AT_CFA && r->rbp_kind == CFI_REG_AT_CFA &&
	    r->rbp_off == r->ra_off - 8) {
		/* "push %rbp" right after the call: rbp and the return address in one read */
		__u64 pair[2];

		if (walker_read(st, pair, sizeof(pair), cfa + (__s64)r->rbp_off))
			return walker_stop(st, STOP_UNREADABLE);
		st->bp = pair[0];
		st->bp_valid = 1;
		ra = pair[1];
		goto have_ra;
	}
	if (r->ra_kind == CFI_REG_AT_CFA && walker_read_u64(st, cfa + (__s64)r->ra_off, &ra))
		return walker_stop(st, STOP_UNREADABLE);
	if (r->ra_kind == CFI_REG_AT_FP && walker_read_u64(st, fp + (__s64)r->ra_off, &ra))
		return walker_stop(st, STOP_UNREADABLE);

	switch (r->rbp_kind) {
	case CFI_REG_SAME:
		break;
	case CFI_REG_AT_CFA:
		if (walker_read_u64(st, cfa + (__s64)r->rbp_off, &bp))
			return walker_stop(st, STOP_UNREADABLE);
		st->bp = bp;
		st->bp_valid = 1;
		break;
	case CFI_REG_VAL_CFA:
		st->bp = cfa + (__s64)r->rbp_off;
		st->bp_valid = 1;
		break;
	case CFI_REG_AT_FP:
		/* a frame pointer lost before: the caller's rbp is lost with it */
		if (!st->bp_valid)
			break;
		if (walker_read_u64(st, fp + (__s64)r->rbp_off, &bp))
			return walker_stop(st, STOP_UNREADABLE);
		st->bp = bp;
		break;
	default:
		/* Only fatal if a later frame needs rbp. */
		st->bp_valid = 0;
		break;
	}
have_ra:
	st->ip = ra & WALKER_RA_MASK;
	st->sp = cfa;
	st->ip_is_ra = 1;
	/* the caller's x30 was the call's own: gone */
	st->lr_valid = 0;
	if (st->ip == 0)
		return walker_stop(st, STOP_COMPLETE);
	return 0;
}

/* The BPF build makes the step a global function (verified once); C inlines it. */
#ifndef WALKER_STEP_ATTR
#define WALKER_STEP_ATTR static __always_inline
#endif

/*
 * Unwind the frame at st->ip (already emitted by the caller) to its caller.
 * Returns 0 when st holds a new frame to emit, 1 when the walk ended
 * (st->reason says why).
 */
WALKER_STEP_ATTR int walker_step(struct walker_state *st)
{
	struct cfi_rule_cache_entry *slot;
	struct cfi_mapping_val *m;
	int ret;
	__u64 pc, bias;
	__u32 mflags;
	__u8 from_fp, fp_only;

	/* a global function's pointer argument may be NULL as far as the verifier knows */
	if (!st)
		return 1;
	if (!st->proc_known)
		return walker_stop(st, STOP_TABLES_PENDING);

	pc = st->ip - st->ip_is_ra;
	from_fp = st->ip_from_fp;
	st->ip_from_fp = 0;
	slot = walker_cache_slot(walker_cache_index(st->pid, st->generation, pc));
	/* cannot happen (the index is in range), and the verifier wants it said */
	if (!slot)
		return walker_stop(st, STOP_NO_RULE);
	/* a hit is the slot alone: the mapping's verdict and the rule, evaluated in place */
	if (slot->valid && slot->pc == pc && slot->pid == st->pid &&
	    slot->generation == st->generation) {
		st->cache_hits++;
	} else {
		st->cache_misses++;
		m = walker_lookup_mapping(st->pid, pc);
		if (!m && from_fp) {
			/* the frame pointer led to no code: take its frame back rather than keep it */
			st->nr--;
			st->nr_fp--;
			return walker_stop(st, STOP_FP_BROKEN);
		}
		if (!m && walker_at_sigreturn(st))
			return walker_signal_step(st);
		if (m) {
			mflags = m->flags;
			bias = m->bias;
			if (mflags & CFI_MAPPING_PENDING)
				return walker_stop(st, STOP_TABLES_PENDING);
			/* No row (a gap, or no page at all) is rule 0 = CFI_CFA_NONE. */
			if ((mflags & CFI_MAPPING_FP) && !(mflags & CFI_MAPPING_CFI))
				__builtin_memset(&slot->rule, 0, sizeof(slot->rule));
			else if (walker_find_rule(m->obj_id, pc - bias, &slot->rule))
				__builtin_memset(&slot->rule, 0, sizeof(slot->rule));
#ifdef WALKER_JIT_CALLER_RULE
		} else if (st->ip_is_ra && WALKER_JIT_CALLER_RULE(st->pid, pc, &slot->rule)) {
			/* JIT code in memory committed since the last load read the maps */
			mflags = CFI_MAPPING_JIT;
#endif
		} else {
			st->missing_pc = st->ip;
			return walker_stop(st, STOP_NO_MAPPING);
		}
		slot->pc = pc;
		slot->pid = st->pid;
		slot->generation = st->generation;
		slot->mapping_flags = mflags;
		slot->valid = 1;
	}
	mflags = slot->mapping_flags;
	/*
	 * JIT code compiled since its rows were built: the walk finishes with
	 * the next rows, or, at a call in it, with the rule its runtime reads
	 * from the code's header (kept in the slot: this pc's, this generation's)
	 */
	if ((mflags & CFI_MAPPING_JIT) && slot->rule.cfa_kind == CFI_CFA_NONE && !st->jit_final) {
#ifdef WALKER_JIT_CALLER_RULE
		if (!st->ip_is_ra || !WALKER_JIT_CALLER_RULE(st->pid, pc, &slot->rule))
#endif
			return walker_stop(st, STOP_TABLES_PENDING);
	}

	fp_only = (mflags & CFI_MAPPING_FP) && !(mflags & CFI_MAPPING_CFI);
	/* or code no FDE covers (hand-written assembly, V8's builtins): frame pointers, if any */
	if ((fp_only || slot->rule.cfa_kind == CFI_CFA_NONE) && walker_at_sigreturn(st))
		ret = walker_signal_step(st);
	else if (fp_only || slot->rule.cfa_kind == CFI_CFA_NONE)
		ret = walker_fp_step(st, fp_only ? STOP_FP_BROKEN : STOP_NO_RULE);
	else
		ret = walker_eval_rule(st, &slot->rule);
	st->at_leaf = 0;
	return ret;
}

/*
 * The leaf's caller is known apart from its frame (a runtime's record of a
 * call made on another stack): the leaf goes into out[0] and the walk goes
 * on at that caller's return address pc and its sp, registers unknown.
 * Before the walk's first frame.
 */
static __always_inline void walker_leaf_elsewhere(struct walker_state *st, __u64 *out, __u64 pc,
						  __u64 sp)
{
	out[0] = st->ip;
	st->nr = 1;
	st->ip = pc & WALKER_RA_MASK;
	st->sp = sp;
	st->ip_is_ra = 1;
	st->bp_valid = 0;
	st->rbx_valid = 0;
	st->lr_valid = 0;
	st->at_leaf = 0;
}

/*
 * Emit st->ip into out[st->nr] and unwind it.  max is the depth limit; pass
 * a compile-time (or frozen .rodata) constant so the verifier can bound the
 * write.  Returns 1 when the walk is over.
 */
static __always_inline int walker_frame(struct walker_state *st, __u64 *out, __u32 max)
{
	__u32 nr = st->nr;

	if (st->done)
		return 1;
	if (nr >= max || nr >= MAX_USER_FRAMES_LIMIT)
		/* There is a frame we cannot keep: the stack is truncated, not failed. */
		return walker_stop(st, STOP_TRUNCATED);
	out[nr] = st->ip;
	st->nr = nr + 1;
#ifdef WALKER_KEEP_BP
	/* the frame's own rbp, before its step makes it the caller's (0: not known) */
	if (st->keep_bp)
		WALKER_KEEP_BP(st, nr, st->bp_valid ? st->bp : 0);
#endif
	/* 0 or 1 exactly: bpf_loop's callback must say so (walker_step may be global) */
	return walker_step(st) != 0;
}

#endif /* CFIPROF_WALKER_H */
