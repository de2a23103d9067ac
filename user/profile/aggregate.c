// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stack table.  Memory is bounded by max_stacks: a sample whose stack is
 * new once the table is full is counted in `overflow` (and shown as such in
 * every output), never silently dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "user/profile/aggregate.h"

int agg_init(struct aggregator *a, uint64_t max_stacks)
{
	memset(a, 0, sizeof(*a));
	a->nr_buckets = 1 << 14;
	a->buckets = calloc(a->nr_buckets, sizeof(*a->buckets));
	a->max_stacks = max_stacks;
	return a->buckets ? 0 : -1;
}

void agg_free(struct aggregator *a)
{
	uint32_t i;

	for (i = 0; a->buckets && i < a->nr_buckets; i++) {
		struct agg_stack *s = a->buckets[i], *n;

		for (; s; s = n) {
			n = s->next;
			free(s);
		}
	}
	free(a->buckets);
	memset(a, 0, sizeof(*a));
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xbf58476d1ce4e5b9ull;
}

static void grow(struct aggregator *a)
{
	uint32_t n = a->nr_buckets * 2, i;
	struct agg_stack **b = calloc(n, sizeof(*b));

	if (!b)
		return; /* longer chains, still correct */
	for (i = 0; i < a->nr_buckets; i++) {
		struct agg_stack *s = a->buckets[i], *next;

		for (; s; s = next) {
			next = s->next;
			s->next = b[s->hash & (n - 1)];
			b[s->hash & (n - 1)] = s;
		}
	}
	free(a->buckets);
	a->buckets = b;
	a->nr_buckets = n;
}

int agg_add(struct aggregator *a, const struct cfi_sample_record *r, size_t size)
{
	return agg_add_n(a, r, size, 1);
}

int agg_add_n(struct aggregator *a, const struct cfi_sample_record *r, size_t size, uint64_t count)
{
	uint32_t nr, i;
	uint64_t h = 0;
	struct agg_stack *s;

	if (size < sizeof(*r)) {
		a->malformed++;
		return -1;
	}
	/* a runtime's unit is two words after the PCs: one key with them */
	nr = (uint32_t)r->nr_kernel + r->nr_user +
	     r->nr_rt * (uint32_t)(RT_UNIT_BYTES / sizeof(uint64_t));
	if (r->nr_kernel > MAX_KERNEL_FRAMES || r->nr_user > MAX_USER_FRAMES_LIMIT ||
	    r->nr_rt > RT_MAX_UNITS || r->runtime >= RT_MAX ||
	    size < sizeof(*r) + nr * sizeof(uint64_t)) {
		a->malformed++;
		return -1;
	}
	/* an off-CPU time sum (no stack) is no sample received */
	if (!(r->flags & SAMPLE_UNWALKED_MASK)) {
		a->samples += count;
		/* a newer recording's reason: carried by the sample, counted apart */
		if (r->reason < STOP_REASON_MAX)
			a->by_reason[r->reason] += count;
		else
			a->unknown_reason += count;
		if (r->flags & SAMPLE_IN_KERNEL)
			a->in_kernel += count;
		if (r->reason != STOP_NO_USER) {
			a->user_frames += r->nr_user * count;
			a->user_samples += count;
		}
	}
	if (r->thinned && r->event < 32)
		a->estimated_events |= 1u << r->event;
	h = mix(h, r->pid);
	h = mix(h, r->flags & SAMPLE_UNWALKED_MASK);
	h = mix(h, r->cgroup_id);
	h = mix(h, r->generation);
	h = mix(h, r->reason);
	h = mix(h, r->event);
	/* a deferred sample's stack is kept apart: a recording's FLAGS say which were */
	h = mix(h, r->flags & SAMPLE_DEFERRED);
	h = mix(h, (uint64_t)r->runtime << 48 | (uint64_t)r->nr_rt << 32 |
		       (uint64_t)r->nr_kernel << 16 | r->nr_user);
	for (i = 0; i < nr; i++)
		h = mix(h, r->pcs[i]);
	for (s = a->buckets[h & (a->nr_buckets - 1)]; s; s = s->next) {
		if (s->hash == h && s->pid == r->pid && s->cgroup_id == r->cgroup_id &&
		    s->generation == r->generation && s->reason == r->reason &&
		    s->event == r->event &&
		    !((s->flags ^ r->flags) & (SAMPLE_DEFERRED | SAMPLE_UNWALKED_MASK)) &&
		    s->nr_kernel == r->nr_kernel && s->nr_user == r->nr_user &&
		    s->nr_rt == r->nr_rt && s->runtime == r->runtime &&
		    !memcmp(s->comm, r->comm, COMM_LEN) &&
		    !memcmp(s->pcs, r->pcs, nr * sizeof(uint64_t))) {
			s->count += count;
			s->weight += r->weight;
			return 0;
		}
	}
	if (a->nr_stacks >= a->max_stacks) {
		a->overflow += count;
		a->overflow_weight += r->weight;
		return 0;
	}
	s = malloc(sizeof(*s) + nr * sizeof(uint64_t));
	if (!s) {
		a->overflow += count;
		a->overflow_weight += r->weight;
		return 0;
	}
	s->count = count;
	s->weight = r->weight;
	s->event = r->event;
	s->hash = h;
	s->pid = r->pid;
	s->tid = r->tid;
	s->cgroup_id = r->cgroup_id;
	s->generation = r->generation;
	memcpy(s->comm, r->comm, COMM_LEN);
	s->comm[COMM_LEN - 1] = 0;
	s->reason = r->reason;
	s->flags = r->flags;
	s->nr_kernel = r->nr_kernel;
	s->nr_user = r->nr_user;
	s->nr_rt = r->nr_rt;
	s->rt_status = r->rt_status;
	s->runtime = r->runtime;
	memcpy(s->pcs, r->pcs, nr * sizeof(uint64_t));
	s->next = a->buckets[h & (a->nr_buckets - 1)];
	a->buckets[h & (a->nr_buckets - 1)] = s;
	if (++a->nr_stacks > (uint64_t)a->nr_buckets * 2)
		grow(a);
	return 0;
}

static int by_count_desc(const void *x, const void *y)
{
	const struct agg_stack *a = *(struct agg_stack *const *)x;
	const struct agg_stack *b = *(struct agg_stack *const *)y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->hash < b->hash ? -1 : a->hash > b->hash;
}

struct agg_stack **agg_sorted(struct aggregator *a, uint64_t *nr)
{
	struct agg_stack **v = malloc((a->nr_stacks ? a->nr_stacks : 1) * sizeof(*v)), *s;
	uint64_t n = 0;
	uint32_t i;

	if (!v)
		return NULL;
	for (i = 0; i < a->nr_buckets; i++) {
		for (s = a->buckets[i]; s; s = s->next)
			v[n++] = s;
	}
	qsort(v, n, sizeof(*v), by_count_desc);
	*nr = n;
	return v;
}
