// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Samples waiting for their tables; see deferred_queue.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/unwind/deferred_queue.h"

/*
 * Walks of one sample that end at no mapping: the library it was in may have
 * been unmapped when the load read the maps, and mapped again since (dlopen /
 * dlclose in a loop).  A walk is repeated only once every pc where an earlier
 * one stopped is mapped again, so each gets further than the last; the loads
 * in between (asked for by the loop's own changes, so read in the middle of
 * one) cost no walk.  A pc no load covers costs one walk, and waits until the
 * timeout.
 */
#define NO_MAPPING_TRIES 4

struct deferred_item {
	struct deferred_item *next;
	size_t bytes;
	uint32_t tried_gen; /* the generation its last walk ended at no mapping in */
	uint32_t tries;
	uint64_t missing[NO_MAPPING_TRIES]; /* where each of those walks found no mapping */
	/* that walk, handed on if no later load comes (the process exits, time runs out) */
	struct cfi_sample_record *walked;
	size_t walked_size;
	struct deferred_view v; /* into data */
	__u64 data[];		/* header, stack_len stack bytes, the kernel's sample */
};

int deferred_queue_init(struct deferred_queue *q, const struct walk_maps *m, uint32_t max_frames,
			uint64_t max_bytes, uint64_t timeout_ns, deferred_emit_fn emit, void *ctx)
{
	memset(q, 0, sizeof(*q));
	q->tailp = &q->head;
	q->maps = *m;
	q->max_frames = max_frames;
	q->max_bytes = max_bytes;
	q->timeout_ns = timeout_ns;
	q->emit = emit;
	q->emit_ctx = ctx;
	q->out = malloc(DEFERRED_RECORD_MAX);
	return q->out ? 0 : -ENOMEM;
}

void deferred_queue_set_reload(struct deferred_queue *q, deferred_reload_fn fn, void *ctx)
{
	q->reload = fn;
	q->reload_ctx = ctx;
}

void deferred_queue_set_units(struct deferred_queue *q, deferred_units_fn fn, void *ctx)
{
	q->units = fn;
	q->units_ctx = ctx;
}

static void hand_on(struct deferred_queue *q, const struct cfi_sample_record *r, size_t size,
		    const struct cfi_sample_record *taken)
{
	q->stats.by_reason[r->reason < STOP_REASON_MAX ? r->reason : 0]++;
	q->emit(q->emit_ctx, r, size, taken);
}

/* The sample as the kernel left it: its walk stays tables-pending. */
static void give_up(struct deferred_queue *q, const struct deferred_view *v, uint64_t *cause)
{
	(*cause)++;
	hand_on(q, v->rec, v->rec_size, v->rec);
}

void deferred_queue_add(struct deferred_queue *q, const void *data, size_t size)
{
	struct deferred_view v;
	struct deferred_item *it;
	size_t stack_len, bytes;
	char *p;

	if (!deferred_parse(data, size, &v)) {
		q->stats.malformed++;
		return;
	}
	q->stats.received++;
	stack_len = v.d->stack_len;
	bytes = sizeof(*it) + sizeof(*v.d) + stack_len + v.rec_size;
	if (q->stats.bytes + bytes > q->max_bytes || !(it = malloc(bytes))) {
		give_up(q, &v, &q->stats.gave_up_full);
		return;
	}
	/* only the bytes copied, not the record's whole stack area */
	p = (char *)it->data;
	memcpy(p, v.d, sizeof(*v.d));
	it->v.d = (const struct cfi_deferred_record *)p;
	p += sizeof(*v.d);
	memcpy(p, v.stack, stack_len);
	it->v.stack = (const __u8 *)p;
	p += stack_len;
	memcpy(p, v.rec, v.rec_size);
	it->v.rec = (const struct cfi_sample_record *)p;
	it->v.rec_size = v.rec_size;
	it->bytes = bytes;
	it->tries = 0;
	it->tried_gen = 0;
	it->walked = NULL;
	it->walked_size = 0;
	it->next = NULL;
	*q->tailp = it;
	q->tailp = &it->next;
	q->stats.waiting++;
	q->stats.bytes += bytes;
	if (q->stats.bytes > q->stats.bytes_peak)
		q->stats.bytes_peak = q->stats.bytes;
}

/*
 * Whether user space has read the process's mappings since they last changed
 * before the sample (exec, the mmap of a library): only then can the tables
 * the walk needs be in the maps (or never come).
 */
static bool mappings_read_after(struct deferred_queue *q, const struct deferred_view *v,
				bool *known, uint32_t *generation)
{
	struct cfi_proc_val pv;

	*known = q->maps.ops->proc(q->maps.ctx, v->rec->pid, &pv);
	*generation = *known ? pv.generation : 0;
	return *known && !(pv.flags & CFI_PROC_UPDATING) && pv.loaded_ns >= v->d->changed_ns;
}

/* Whether a load since the item's last walk maps every pc where its walks found no mapping. */
static bool missing_mapped_now(struct deferred_queue *q, const struct deferred_item *it,
			       uint32_t generation)
{
	struct cfi_mapping_val mv;
	uint32_t i;

	if (generation == it->tried_gen)
		return false;
	for (i = 0; i < it->tries; i++) {
		if (!q->maps.ops->mapping(q->maps.ctx, it->v.rec->pid, it->missing[i], &mv))
			return false;
	}
	return true;
}

/*
 * A walk that ended at no mapping is repeated against a later load, a few
 * times; meanwhile the item keeps that walk (in the queue's byte bound).
 */
static bool wait_for_later_load(struct deferred_queue *q, struct deferred_item *it, size_t size,
				uint64_t missing_pc, bool expired)
{
	struct cfi_sample_record *w;

	if (expired || q->out->reason != STOP_NO_MAPPING || it->tries >= NO_MAPPING_TRIES ||
	    q->stats.bytes - it->walked_size + size > q->max_bytes)
		return false;
	w = realloc(it->walked, size);
	if (!w)
		return false;
	memcpy(w, q->out, size);
	q->stats.bytes += size - it->walked_size;
	it->bytes += size - it->walked_size;
	it->walked = w;
	it->walked_size = size;
	it->missing[it->tries++] = missing_pc;
	it->tried_gen = q->out->generation;
	q->stats.rewalked++;
	return true;
}

static void walk_done(struct deferred_queue *q, const struct cfi_sample_record *out, size_t size,
		      const struct cfi_sample_record *r, uint64_t now_ns)
{
	q->stats.finished++;
	if (now_ns > r->time_ns && now_ns - r->time_ns > q->stats.latency_ns_max)
		q->stats.latency_ns_max = now_ns - r->time_ns;
	hand_on(q, out, size, r);
}

/* true when the item is done with (handed on). */
static bool try_item(struct deferred_queue *q, struct deferred_item *it, uint64_t now_ns,
		     bool final)
{
	const struct cfi_sample_record *r = it->v.rec;
	bool known, expired = final || now_ns - r->time_ns >= q->timeout_ns;
	uint32_t generation;
	__u64 missing_pc;
	size_t size;

	if (mappings_read_after(q, &it->v, &known, &generation) &&
	    (expired || !it->tries || missing_mapped_now(q, it, generation)) &&
	    deferred_walk(&q->maps, &it->v, q->max_frames, expired, q->out, &size, &missing_pc) ==
		DEFERRED_FINISHED) {
		if (q->units)
			size = q->units(q->units_ctx, q->out, size, &it->v, deferred_walk_bps());
		if (!wait_for_later_load(q, it, size, missing_pc, expired)) {
			walk_done(q, q->out, size, r, now_ns);
			return true;
		}
	} else if (it->walked && (!known || expired)) {
		/* its process gone (no later load will come), or out of time: the walk it had */
		walk_done(q, it->walked, it->walked_size, r, now_ns);
		return true;
	} else if (expired) {
		give_up(q, &it->v, known ? &q->stats.gave_up_timeout : &q->stats.gave_up_gone);
		return true;
	}
	/*
	 * The loads a process's own mapping changes ask for read its maps in the
	 * middle of a change, and the kernel's per-process limit holds back the
	 * rest: loads at other moments are asked for (the tracker bounds them).
	 */
	if (it->walked && q->reload)
		q->reload(q->reload_ctx, r->pid, now_ns);
	return false;
}

void deferred_queue_run(struct deferred_queue *q, uint64_t now_ns, bool final)
{
	struct deferred_item **pp = &q->head, *it;

	q->stats.oldest_ns = UINT64_MAX;
	while ((it = *pp)) {
		if (!try_item(q, it, now_ns, final)) {
			if (it->v.rec->time_ns < q->stats.oldest_ns)
				q->stats.oldest_ns = it->v.rec->time_ns;
			pp = &it->next;
			continue;
		}
		*pp = it->next;
		if (q->tailp == &it->next)
			q->tailp = pp;
		q->stats.waiting--;
		q->stats.bytes -= it->bytes;
		free(it->walked);
		free(it);
	}
}

void deferred_queue_free(struct deferred_queue *q)
{
	struct deferred_item *it, *n;

	/* deferred_queue_run(final) hands everything on; this is for error paths */
	for (it = q->head; it; it = n) {
		n = it->next;
		free(it->walked);
		free(it);
	}
	free(q->out);
	memset(q, 0, sizeof(*q));
}
