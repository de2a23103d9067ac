// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof's BPF side: on every perf sample, walk the user stack with the
 * compiled CFI tables (bpf/walker.h) and write kernel + user PCs straight into
 * a ring-buffer reservation.  Also reports exec / exit and asks user space to
 * load tables for pids and mappings it has not seen yet.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cfiprof_abi.h"
#include "kfunc_abi.h"
#include "arch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- settings, frozen before load (the verifier sees them as constants) ---- */
const volatile __u8 filter_enabled = 0;	 /* only tgids in target_bits */
const volatile __u8 follow_children = 0; /* targets' children become targets (perf's inherit) */
const volatile __u8 filter_cgroup = 0;		      /* only tasks in target_cgroup, or below */
const volatile __u8 collect_kernel = 1;		      /* kernel stack with bpf_get_stack */
const volatile __u8 use_bpf_loop = 1;		      /* 0: bounded loops + tail calls */
/* bpf_find_vma is there (5.17): not a CO-RE enum check, a search of all the kernel's BTF */
const volatile __u8 have_find_vma = 0;
const volatile __u8 skip_idle = 1;		      /* drop samples of the idle task (pid 0) */
const volatile __u32 max_user_frames = DEFAULT_USER_FRAMES;	      /* 1 .. MAX_USER_FRAMES_LIMIT */
const volatile __u64 request_interval_ns = 100000000; /* per-pid RECORD_REQUEST rate limit */
/* RECORD_REQUESTs per CPU per REQUEST_SLOT_NS, all pids together; 0: no bound */
const volatile __u32 request_budget = 50;
/*
 * Samples wake the reader only once this much is pending: a wakeup per sample
 * (irq_work, a self-IPI) costs more than the whole walk.  The reader must also
 * consume on a timer (ring_buffer__consume) to pick up the rest.
 */
const volatile __u64 wakeup_bytes = 256 * 1024;
/* the same for the samples' ring (samples): an eighth of it, set with its size */
const volatile __u64 samples_wakeup_bytes = SAMPLES_RING_BYTES / 8;
/*
 * Deferred unwinding: a tables-pending sample carries this many bytes of user
 * stack (a multiple of DEFER_CHUNK, 0: off), within defer_bytes_per_sec.
 */
const volatile __u32 defer_stack_bytes = 0;
const volatile __u64 defer_bytes_per_sec = 0;
const volatile __u8 exit_maps_on = 0; /* on_exit_maps is loaded: PT_DEFERRED is kept */
/*
 * Stacks on other events (bpf/events.bpf.h): hits sampled per process and per
 * CPU in each EVENT_SLOT_NS slot (0: every hit); the perf events of -e pass it too.
 */
const volatile __u32 event_proc_budget = 0;
const volatile __u32 event_cpu_budget = 0;
const volatile __u8 budget_perf_events = 0;
/* a perf event other than the session's first is attached: its index, the cookie, is read */
const volatile __u8 perf_cookies = 0;
/* off-CPU: blocks shorter than this are counted, not sampled */
const volatile __u64 offcpu_min_ns = 0;

/* ---- maps ---- */
#include "lifecycle_maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct cfi_mapping_key);
	__type(value, struct cfi_mapping_val);
} mappings SEC(".maps");

/* sized by user space from the rows map (bpf_program.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cfi_page_key);
	__type(value, struct cfi_page_val);
} pages SEC(".maps");

/*
 * Rows of every loaded object, two per element: array elements are 8-byte
 * aligned, so single 4-byte rows would waste half the map.  User space sizes
 * it before load and writes it through mmap.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * 1024 * 1024);
	__type(key, __u32);
	__type(value, struct cfi_row_pair);
} rows SEC(".maps");

/* One global rule dictionary; rows carry global ids. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RULES_MAX);
	__type(key, __u32);
	__type(value, struct cfi_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RULE_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct cfi_rule_cache_entry);
} rule_cache SEC(".maps");

/* The walker's last window of user stack (bpf/walker.h), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walker_window);
} walk_window SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EVENTS_RING_BYTES);
} events SEC(".maps");

/*
 * The perf events' walked samples, apart from everything else (stack copies,
 * requests, probes' reservations): a ring small enough to stay in the
 * cache.  Each byte of a ring is written again one ring's length later;
 * by then a ring of megabytes has left the cache, and every 64 bytes of a
 * record cost a miss, more than the walk of the frames they hold
 * (docs/design.md, the walker).  Stack copies, tens of KiB each, keep the
 * large ring: a small one would hold a handful.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SAMPLES_RING_BYTES);
} samples SEC(".maps");

/*
 * The pid filter's processes, a bit per tgid: a sample of another task, the
 * common case under a filter, exits after one load of an array's word (a
 * lookup the verifier inlines); a hash lookup (a hash and a bucket, their
 * pages seldom in the TLB) cost more than the rest of that exit together.
 * Set by user space (an atomic OR in the mapped array) and on_fork, cleared at
 * on_free, each bit by one of them at a time.  A map of its own, not .bss:
 * libbpf copies a global's 512 KiB of zeros into the kernel at every start.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TARGET_PID_LIMIT / 64);
	__type(key, __u32);
	__type(value, __u64);
} target_bits SEC(".maps");

/* The cgroup (v2) to profile, descendants included: slot 0 holds its fd. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroup SEC(".maps");

/* The global request budget's current slot, per CPU: no atomics, no contention. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_request_slot);
} request_slots SEC(".maps");

/*
 * Sets one of pid's times.  Not inlined: a fresh entry on the caller's
 * stack would take 40 bytes the deepest call chain (through python_walk)
 * does not have.
 */
static __noinline void pid_time_set(__u32 pid, __u32 which, __u64 ns)
{
	struct pid_times fresh = {}, *t;

	if (which >= PT_MAX)
		return;
	t = bpf_map_lookup_elem(&pid_times, &pid);
	if (t) {
		t->ns[which] = ns;
		return;
	}
	fresh.ns[which] = ns;
	/* another CPU may have made the entry since the lookup: keep its times */
	if (!bpf_map_update_elem(&pid_times, &pid, &fresh, BPF_NOEXIST))
		return;
	t = bpf_map_lookup_elem(&pid_times, &pid);
	if (t)
		t->ns[which] = ns;
}

/* Stack bytes copied in the current one-second window, across CPUs (approximate by design). */
struct defer_window {
	__u64 start_ns;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct defer_window);
} defer_budget SEC(".maps");

/* The tail-call path's walk state and record, per CPU (struct tc_scratch: below walker.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_scratch);
} tc_scratch SEC(".maps");

/*
 * Slot 0 is walk_tc itself, set by user space after the load: walk_tc is not
 * loaded at all when bpf_loop walks (a static slot would make libbpf insist).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} walk_progs SEC(".maps");

/* ---- environment of the walker (see bpf/walker.h) ---- */
static __always_inline int walker_read_user(void *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user(dst, size, (const void *)addr);
}

static __always_inline struct cfi_proc_val *walker_lookup_proc(__u32 pid)
{
	return bpf_map_lookup_elem(&procs, &pid);
}

static __always_inline struct cfi_mapping_val *walker_lookup_mapping(__u32 pid, __u64 pc)
{
	struct cfi_mapping_key key = {
	    .prefixlen = 32 + 64,
	    .pid = pid,
	    .addr_be = __builtin_bswap64(pc),
	};

	return bpf_map_lookup_elem(&mappings, &key);
}

static __always_inline struct cfi_page_val *walker_lookup_page(__u32 obj_id, __u32 page)
{
	struct cfi_page_key key = {.obj_id = obj_id, .page = page};

	return bpf_map_lookup_elem(&pages, &key);
}

static __always_inline struct cfi_row *walker_row(__u32 idx)
{
	__u32 pair = idx >> 1;
	struct cfi_row_pair *p = bpf_map_lookup_elem(&rows, &pair);

	return p ? &p->row[idx & 1] : NULL;
}

static __always_inline struct cfi_rule *walker_rule(__u32 id)
{
	return bpf_map_lookup_elem(&rules, &id);
}

static __always_inline struct cfi_rule_cache_entry *walker_cache_slot(__u32 idx)
{
	return bpf_map_lookup_elem(&rule_cache, &idx);
}

static __always_inline struct walker_window *walker_window(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&walk_window, &zero);
}

/*
 * One frame's step is a global function: the verifier checks it once, for any
 * walker state, instead of once per state the walk loop can be in.
 */
/*
 * Each user frame's rbp as the walk found it, the current sample's, per
 * CPU: a runtime that reads its frames by their rbp (HotSpot's interpreted
 * frames) takes them after the walk (struct cfi_runtime_proc's keep_bp).
 */
struct frame_bps {
	__u32 tid; /* whose walk kept them */
	__u32 nr;  /* frames kept: bp[0, nr) */
	__u64 leaf_bcp; /* the sample's interpreter bcp register (ARCH_INTERP_BCP) */
	__u64 bp[MAX_USER_FRAMES_LIMIT];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct frame_bps);
} frame_bps SEC(".maps");

/*
 * A global function: inlined, the verifier checked it in every frame of every
 * walk loop's state (a sixteenth of on_sample's verification), for the few
 * processes that keep their frames' rbp.
 */
__noinline int walker_keep_bp(__u32 nr, __u64 bp, __u64 leaf_bcp)
{
	__u32 zero = 0;
	struct frame_bps *b = bpf_map_lookup_elem(&frame_bps, &zero);

	if (!b)
		return 0;
	if (!nr) {
		b->tid = (__u32)bpf_get_current_pid_tgid();
		b->leaf_bcp = leaf_bcp;
	}
	b->bp[nr & (MAX_USER_FRAMES_LIMIT - 1)] = bp;
	b->nr = nr + 1;
	return 0;
}
/* the leaf's registers: kept at the first frame only */
#define WALKER_KEEP_BP(st, nr, bp) walker_keep_bp(nr, bp, ARCH_INTERP_BCP(st))

/* bpf/runtimes.bpf.h: the rule a runtime reads for its new JIT code */
static __always_inline int runtime_jit_caller_rule(__u32 tgid, __u64 pc, struct cfi_rule *out);
#define WALKER_JIT_CALLER_RULE(tgid, pc, rule) runtime_jit_caller_rule(tgid, pc, rule)

#define WALKER_STEP_ATTR __noinline
#include "walker.h"

#define PF_KTHREAD	     0x00200000
#define PF_EXITING	     0x00000004
#define FRAMES_PER_TAIL_CALL 32
#define RECORD_MAX_BYTES                                                                           \
	(sizeof(struct cfi_sample_record) + (MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT) * sizeof(__u64))

/*
 * The tail-call path cannot hold a reservation across calls, so it builds the
 * record here; the off-CPU program walks into it too.
 */
struct tc_scratch {
	struct walker_state st;
	__u8 rt; /* the sample's runtime, for tc_output at the last tail call */
	__u64 record[(RECORD_MAX_BYTES + RT_RECORD_BYTES) / sizeof(__u64)];
	/* off-CPU: a thread's first entry, made from here, off the stack (bpf/events.bpf.h) */
	struct cfi_offcpu_block block;
};

/*
 * A perf event's sample is walked here, then only the frames it has go to the
 * ring (sample_from_scratch).  Perf event programs never nest on a CPU (the
 * kernel's bpf_prog_active turns the inner one away), so this CPU's scratch is
 * theirs alone: probes and off-CPU programs, which can run under one, do not
 * use it.
 */
struct sample_scratch {
	__u64 record[(RECORD_MAX_BYTES + RT_RECORD_BYTES) / sizeof(__u64)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_scratch);
} sample_scratch SEC(".maps");

/* ---- Python frames after the native ones: bpf/python.bpf.h ---- */
#include "runtimes.bpf.h"

/* ---- what user space is asked for: bpf/requests.bpf.h ---- */
#include "requests.bpf.h"

/* ---- a sample's start and end, shared by both walk strategies: bpf/sample.bpf.h ---- */
#include "sample.bpf.h"

/* ---- deferred unwinding: bpf/defer.bpf.h ---- */
#include "defer.bpf.h"

/* ---- bpf_loop strategy, the walk into a record and out: bpf/sample_loop.bpf.h ---- */
#include "sample_loop.bpf.h"

/* ---- tail-call strategy: FRAMES_PER_TAIL_CALL frames per program, state per CPU ---- */

static __always_inline void tc_output(struct tc_scratch *s)
{
	struct cfi_sample_record *rec = (struct cfi_sample_record *)s->record;
	__u32 nr_kernel = rec->nr_kernel;

	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	if (!s->st.done)
		walker_stop(&s->st, STOP_TRUNCATED);
	sample_end(rec, &s->st, nr_kernel);
	/* one copy: a reservation cannot be held across tail calls */
	sample_emit(rec, &s->st, nr_kernel, s->rt);
}

SEC("perf_event")
int walk_tc(struct bpf_perf_event_data *ctx)
{
	struct tc_scratch *s;
	struct cfi_sample_record *rec;
	__u32 zero = 0, nr_kernel;
	__u64 *out;
	int i;

	s = bpf_map_lookup_elem(&tc_scratch, &zero);
	if (!s)
		return 0;
	rec = (struct cfi_sample_record *)s->record;
	nr_kernel = rec->nr_kernel;
	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	out = rec->pcs + nr_kernel;
	for (i = 0; i < FRAMES_PER_TAIL_CALL; i++) {
		if (walker_frame(&s->st, out, max_user_frames))
			break;
	}
	if (!s->st.done)
		bpf_tail_call(ctx, &walk_progs, 0);
	/* done, or out of tail calls: the stack so far is kept as truncated */
	tc_output(s);
	return 0;
}

static __always_inline int sample_with_tail_calls(struct bpf_perf_event_data *ctx,
						  const struct sample_src *src, __u32 tgid, __u32 tid)
{
	struct tc_scratch *s;
	struct cfi_sample_record *rec;
	__u32 zero = 0, nr_kernel;

	s = bpf_map_lookup_elem(&tc_scratch, &zero);
	if (!s)
		return 0;
	rec = (struct cfi_sample_record *)s->record;
	nr_kernel = sample_begin(src, rec, &s->st, tgid, tid);
	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	rec->nr_kernel = nr_kernel;
	s->rt = runtime_walk_begin(tgid, &s->st, rec->pcs + nr_kernel);
	if (!s->st.done)
		bpf_tail_call(ctx, &walk_progs, 0);
	tc_output(s);
	return 0;
}

/* NULL only past the array, which a tgid's word never is */
static __always_inline __u64 *target_word(__u32 tgid)
{
	__u32 word = tgid / 64;

	return bpf_map_lookup_elem(&target_bits, &word);
}

static __always_inline bool is_target(__u32 tgid)
{
	__u64 *w = target_word(tgid);

	return w && (*w & (1ULL << (tgid & 63)));
}

/* The pid and cgroup filters: other tasks cost only this early exit. */
static __always_inline int wanted(__u32 tgid)
{
	if (filter_cgroup && bpf_current_task_under_cgroup(&target_cgroup, 0) != 1)
		return 0;
	return !filter_enabled || is_target(tgid);
}

/* ---- stacks on other events: probes, tracepoints, off-CPU time: bpf/events.bpf.h ---- */
#include "events.bpf.h"

/*
 * What on_sample reads of its context, UAPI's struct bpf_perf_event_data
 * (the user registers, bpf/arch.bpf.h, then sample_period): a fixed layout,
 * read without CO-RE, whose first relocation of a type searches the whole
 * of the kernel's BTF, a type, at every start.
 */
struct perf_sample_ctx {
	__u64 regs[PERF_CTX_REGS];
	__u64 sample_period;
};

/*
 * A perf event's sample source, or false for a sample not taken (idle, a
 * task filtered out, thinned by the event budget): on_sample's start, and
 * on_sample_entry's while on_sample is not loaded yet.
 */
static __always_inline bool sample_src_init(struct perf_sample_ctx *ctx, __u32 tgid,
					    struct sample_src *src)
{
	__u32 thinned = 0;
	__u64 w = 1;

	if (tgid == 0 && skip_idle)
		return false;
	if (!wanted(tgid)) {
		walker_count(CNT_FILTERED, 1);
		return false;
	}
	/* -e events go through the same budget as probes (bpf/events.bpf.h) */
	if (budget_perf_events) {
		w = event_thin(tgid, &thinned);
		if (!w)
			return false;
	}
	walker_count(CNT_SAMPLES, 1);
	/* after the filter: other tasks' samples are the common early exit */
	*src = (struct sample_src){
	    .ctx = ctx,
	    .ctx_regs = (struct pt_regs *)ctx->regs,
	    /* user addresses are the lower canonical half (ctx allows only 8-byte loads: no cs) */
	    .user_in_ctx = (__s64)ctx->regs[PERF_CTX_IP] >= 0,
	    .event = perf_cookies ? (__u32)bpf_get_attach_cookie(ctx) : 0,
	    .weight = ctx->sample_period * w,
	    .thinned = thinned,
	};
	return true;
}

SEC("perf_event")
int on_sample(struct perf_sample_ctx *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct sample_src src;

	if (!sample_src_init(ctx, tgid, &src))
		return 0;
	if (use_bpf_loop)
		return sample_from_scratch(&src, tgid, tid);
	return sample_with_tail_calls((struct bpf_perf_event_data *)ctx, &src, tgid, tid);
}

/* ---- what the perf events run while on_sample is loaded twice: bpf/sample_entry.bpf.h ---- */
#include "sample_entry.bpf.h"

/* ---- process lifecycle for the tracker: bpf/lifecycle.bpf.h ---- */
#include "lifecycle.bpf.h"

/* ---- kernel frames' names, asked by user space: bpf/ksym_names.bpf.h ---- */
#include "ksym_names.bpf.h"
