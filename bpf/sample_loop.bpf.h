/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bpf_loop strategy: the walk straight into a ring reservation (probes'
 * and tracepoints' stacks) or a per-CPU scratch record (perf events), then
 * the record written out.  Part of cfiprof.bpf.c: its maps, the walker,
 * sample.bpf.h and defer.bpf.h come first.
 */
#ifndef CFIPROF_SAMPLE_LOOP_BPF_H
#define CFIPROF_SAMPLE_LOOP_BPF_H

struct loop_ctx {
	struct walker_state st;
	__u64 *out; /* user pcs inside the reservation */
	__u8 rt;    /* the process's runtime (RT_NONE: none) */
};

/*
 * Frames per bpf_loop callback: the callback's entry and exit (reloading the
 * context, the state's address) are paid once for several frames.
 */
#define FRAMES_PER_CALLBACK 4

static long walk_frames(__u32 index, void *data)
{
	struct loop_ctx *lc = data;
	int i;

	for (i = 0; i < FRAMES_PER_CALLBACK; i++)
		if (walker_frame(&lc->st, lc->out, max_user_frames))
			return 1;
	return 0;
}

/*
 * The record's header and kernel stack, st set up for the user walk into
 * *out, the process's runtime into *rt: returns its kernel frames.
 */
static __always_inline __u32 sample_walk_start(const struct sample_src *src,
					       struct cfi_sample_record *rec,
					       struct walker_state *st, __u32 tgid, __u32 tid,
					       __u64 **out, __u8 *rt)
{
	__u32 nr_kernel = sample_begin(src, rec, st, tgid, tid);

	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	*out = rec->pcs + nr_kernel;
	*rt = runtime_walk_begin(tgid, st, *out);
	return nr_kernel;
}

/* every frame, plus one to notice truncation */
#define WALK_CALLBACKS (max_user_frames / FRAMES_PER_CALLBACK + 1)

/* The walk into rec, not yet ended (sample_end): returns its kernel frames. */
static __always_inline __u32 sample_walk(const struct sample_src *src,
					 struct cfi_sample_record *rec, struct loop_ctx *lc,
					 __u32 tgid, __u32 tid)
{
	__u32 nr_kernel = sample_walk_start(src, rec, &lc->st, tgid, tid, &lc->out, &lc->rt);

	bpf_loop(WALK_CALLBACKS, walk_frames, lc, 0);
	return nr_kernel;
}

/* The whole walk into rec: a ring-buffer reservation, or a per-CPU scratch record. */
static __always_inline __u32 sample_fill(const struct sample_src *src,
					 struct cfi_sample_record *rec, struct loop_ctx *lc,
					 __u32 tgid, __u32 tid)
{
	__u32 nr_kernel = sample_walk(src, rec, lc, tgid, tid);

	if (!lc->st.done)
		walker_stop(&lc->st, STOP_TRUNCATED);
	sample_end(rec, &lc->st, nr_kernel);
	return nr_kernel;
}

/*
 * bpf_loop's context for a walk whose state is not on the program's stack
 * but in this CPU's scratch: a program whose own frame and the walk's calls
 * would pass 6.1's 512 bytes with a walker_state beside them (on_switch's,
 * on arm64).
 */
struct loop_scratch {
	struct walker_state *st;
	__u64 *out;
};

static long walk_frames_scratch(__u32 index, void *data)
{
	struct loop_scratch *ls = data;
	int i;

	for (i = 0; i < FRAMES_PER_CALLBACK; i++)
		if (walker_frame(ls->st, ls->out, max_user_frames))
			return 1;
	return 0;
}

/* sample_fill with the walk's state at st (per-CPU scratch): returns the process's runtime. */
static __always_inline __u8 sample_fill_scratch(const struct sample_src *src,
						struct cfi_sample_record *rec,
						struct walker_state *st, __u32 tgid, __u32 tid)
{
	struct loop_scratch ls = {.st = st};
	__u8 rt;
	__u32 nr_kernel = sample_walk_start(src, rec, st, tgid, tid, &ls.out, &rt);

	bpf_loop(WALK_CALLBACKS, walk_frames_scratch, &ls, 0);
	if (!st->done)
		walker_stop(st, STOP_TRUNCATED);
	sample_end(rec, st, nr_kernel);
	return rt;
}

static __always_inline int sample_with_loop(const struct sample_src *src, __u32 tgid, __u32 tid)
{
	const __u64 size = sizeof(struct cfi_sample_record) +
			   (MAX_KERNEL_FRAMES + max_user_frames) * sizeof(__u64);
	struct cfi_sample_record *rec;
	struct loop_ctx lc;
	__u8 rt = runtime_of(tgid);
	bool deferred;

	if (rt)
		rec = bpf_ringbuf_reserve(&events, size + RT_RECORD_BYTES, 0);
	else
		rec = bpf_ringbuf_reserve(&events, size, 0);
	if (!rec) {
		walker_count(CNT_LOST_RINGBUF, 1);
		return 0;
	}
	sample_fill(src, rec, &lc, tgid, tid);
	/* before a deferral: the frame chain is read now, the native walk ends now or later */
	runtime_append(rt, rec, rec->nr_kernel + lc.st.nr, MAX_KERNEL_FRAMES + max_user_frames);
	deferred = defer_wanted(&lc.st) && emit_deferred(rec, &lc.st);
	if (deferred)
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
	else
		bpf_ringbuf_submit(rec, ring_wakeup_flags(&events, wakeup_bytes));
	walker_count(CNT_WRITTEN, 1);
	walk_finished(&lc.st, deferred);
	walk_requests(&lc.st);
	return 0;
}

/*
 * A record walked into a per-CPU scratch, ended by sample_end (nr_kernel: at
 * most MAX_KERNEL_FRAMES): to the ring with the frames it has (one copy), or
 * deferred.
 */
static __always_inline void sample_output(struct cfi_sample_record *rec, struct walker_state *st,
					  __u32 nr_kernel)
{
	__u32 nr = st->nr;
	bool deferred;
	__u64 size;

	if (nr > MAX_USER_FRAMES_LIMIT)
		nr = MAX_USER_FRAMES_LIMIT;
	size = sizeof(*rec) + (nr_kernel + nr) * sizeof(__u64);
	if (size > RECORD_MAX_BYTES)
		size = RECORD_MAX_BYTES;
	size += rec->nr_rt * RT_UNIT_BYTES;
	if (size > RECORD_MAX_BYTES + RT_RECORD_BYTES)
		size = RECORD_MAX_BYTES + RT_RECORD_BYTES;
	deferred = defer_wanted(st) && emit_deferred(rec, st);
	if (!deferred && bpf_ringbuf_output(&samples, rec, size,
					    ring_wakeup_flags(&samples, samples_wakeup_bytes))) {
		walker_count(CNT_LOST_RINGBUF, 1);
		return;
	}
	walker_count(CNT_WRITTEN, 1);
	walk_finished(st, deferred);
	walk_requests(st);
}

/* runtime_append on a scratch record (room for the most PCs a record has) */
static __always_inline void sample_append_rt(struct cfi_sample_record *rec,
					     const struct walker_state *st, __u32 nr_kernel,
					     __u8 rt)
{
	__u32 nr = st->nr < MAX_USER_FRAMES_LIMIT ? st->nr : MAX_USER_FRAMES_LIMIT;

	runtime_append(rt, rec, nr_kernel + nr, MAX_KERNEL_FRAMES + MAX_USER_FRAMES_LIMIT);
}

static __always_inline void sample_emit(struct cfi_sample_record *rec, struct walker_state *st,
					__u32 nr_kernel, __u8 rt)
{
	sample_append_rt(rec, st, nr_kernel, rt);
	sample_output(rec, st, nr_kernel);
}

/*
 * A scratch record's walk ended and written out, its runtime part appended:
 * a global function, which the verifier checks once, not once for each state
 * bpf_loop's callback can end the walk in.  The runtime's walk is called
 * before, from on_sample's frame: one more frame on its stack would be past
 * the verifier's 512 bytes.
 */
__noinline int sample_finish(struct sample_scratch *buf, struct walker_state *st, __u32 nr_kernel)
{
	struct cfi_sample_record *rec = (struct cfi_sample_record *)buf;

	if (!buf || !st)
		return 0;
	if (nr_kernel > MAX_KERNEL_FRAMES)
		nr_kernel = MAX_KERNEL_FRAMES;
	sample_end_walk(rec, st);
	sample_output(rec, st, nr_kernel);
	return 0;
}

/*
 * A perf event's sample with bpf_loop.  Walked in place, a ring reservation
 * had to hold the most frames a sample may have (5.2 KB at --max-frames 512)
 * whatever it had, and its cost grew with that size, not with the frames
 * walked; a walk into scratch and one copy of what it holds costs less, and
 * the ring holds as many samples as their real sizes allow.
 */
static __always_inline int sample_from_scratch(const struct sample_src *src, __u32 tgid, __u32 tid)
{
	struct cfi_sample_record *rec;
	struct loop_ctx lc;
	__u32 zero = 0, nr_kernel;

	rec = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!rec)
		return 0;
	nr_kernel = sample_walk(src, rec, &lc, tgid, tid);
	if (!lc.st.done)
		walker_stop(&lc.st, STOP_TRUNCATED);
	sample_rt_reset(rec, &lc.st, nr_kernel);
	sample_append_rt(rec, &lc.st, nr_kernel, lc.rt);
	sample_finish((struct sample_scratch *)rec, &lc.st, nr_kernel);
	return 0;
}

#endif
