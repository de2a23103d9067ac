// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stack table: identical stacks merge, the cap overflows into one counted
 * sample, the table grows.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "tests/lib/agg_samples.h"
#include "user/profile/aggregate.h"

static const struct agg_stack *find_stack(struct aggregator *a, uint32_t pid, const char *comm,
					  uint8_t reason, unsigned int nk, unsigned int nu,
					  const uint64_t *pcs)
{
	uint32_t b;

	for (b = 0; b < a->nr_buckets; b++) {
		const struct agg_stack *s;

		for (s = a->buckets[b]; s; s = s->next) {
			if (s->pid == pid && streq(s->comm, comm) && s->reason == reason &&
			    s->nr_kernel == nk && s->nr_user == nu &&
			    !memcmp(s->pcs, pcs, (nk + nu) * sizeof(uint64_t)))
				return s;
		}
	}
	return NULL;
}

static void test_aggregate_basic(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	static const uint64_t u1[] = {0x401000, 0x402000, 0x403000};
	static const uint64_t u2[] = {0x401000, 0x402000, 0x403001};
	static const uint64_t all[] = {0xffffffff81000010ull, 0xffffffff81000020ull, 0x401000,
				       0x402000, 0x403000};
	const struct agg_stack *s;
	struct aggregator a;
	struct agg_stack **v;
	uint64_t nr, i;
	size_t sz;
	int r;

	CHECK(agg_init(&a, 100) == 0, "agg_init");
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	CHECK(agg_add(&a, rec(), sz) == 0, "add");
	CHECK(agg_add(&a, rec(), sz) == 0, "add");
	/* tid and flags describe the sample, not the stack */
	sz = mkrec(100, 102, "app", STOP_COMPLETE, SAMPLE_IN_KERNEL, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(a.nr_stacks == 1 && s && s->count == 3, "identical stacks: %" PRIu64 " stacks",
	      a.nr_stacks);
	CHECK(s && s->tid == 101, "first tid kept");

	/* each of these differs in exactly one key field */
	sz = mkrec(200, 201, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_TRUNCATED, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u2);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app2", STOP_COMPLETE, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	/* same PC sequence split differently between kernel and user */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 3, all, 2, all + 3);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 0, NULL, 5, all);
	agg_add(&a, rec(), sz);
	/* a shorter stack that is a prefix of another */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 2, u1);
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 8, "distinct keys: %" PRIu64 " stacks, want 8", a.nr_stacks);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 3, "original unchanged: %" PRIu64, s ? s->count : 0);
	s = find_stack(&a, 100, "app2", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 1, "comm is part of the key");
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 3, 2, all);
	CHECK(s && s->count == 1, "kernel/user split is part of the key");

	/* empty stacks (kernel thread) aggregate too */
	sz = mkrec(300, 300, "kworker/0:1", STOP_NO_USER, SAMPLE_IN_KERNEL, 1, k1, 0, NULL);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 9, "kernel thread stack: %" PRIu64, a.nr_stacks);

	CHECK(a.samples == 14 && a.malformed == 0 && a.overflow == 0,
	      "samples %" PRIu64 " malformed %" PRIu64, a.samples, a.malformed);
	CHECK(a.by_reason[STOP_COMPLETE] == 9 && a.by_reason[STOP_TRUNCATED] == 1 &&
		  a.by_reason[STOP_NO_USER] == 4,
	      "by_reason %" PRIu64 " %" PRIu64 " %" PRIu64, a.by_reason[STOP_COMPLETE],
	      a.by_reason[STOP_TRUNCATED], a.by_reason[STOP_NO_USER]);
	CHECK(a.in_kernel == 5, "in_kernel %" PRIu64, a.in_kernel);
	/* 3+3+3 (first three) +3+3+3+3 +2 +5 +2 = user frames of the 10 user samples */
	CHECK(a.user_samples == 10 && a.user_frames == 3 * 7 + 2 + 5 + 2,
	      "user_samples %" PRIu64 " user_frames %" PRIu64, a.user_samples, a.user_frames);

	v = agg_sorted(&a, &nr);
	CHECK(v && nr == 9, "agg_sorted nr %" PRIu64, nr);
	for (i = 1; v && i < nr; i++)
		CHECK(v[i - 1]->count >= v[i]->count, "sorted order at %" PRIu64, i);
	CHECK(v && nr == 9 && v[0]->count == 4 && v[0]->pid == 300 && v[1]->count == 3 &&
		  v[2]->count == 1,
	      "most samples first");
	free(v);

	/* malformed records are rejected and counted, never half-read */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	r = agg_add(&a, rec(), sizeof(struct cfi_sample_record) - 1);
	CHECK(r == -1, "shorter than the header");
	r = agg_add(&a, rec(), 0);
	CHECK(r == -1, "size 0");
	r = agg_add(&a, rec(), sz - 1);
	CHECK(r == -1, "one byte short of the PCs");
	r = agg_add(&a, rec(), sizeof(struct cfi_sample_record) + 4 * sizeof(uint64_t));
	CHECK(r == -1, "one PC short");
	recbuf.r.nr_user = MAX_USER_FRAMES_LIMIT + 1;
	r = agg_add(&a, rec(), sizeof(recbuf));
	CHECK(r == -1, "nr_user > MAX_USER_FRAMES_LIMIT");
	recbuf.r.nr_user = 0;
	recbuf.r.nr_kernel = MAX_KERNEL_FRAMES + 1;
	r = agg_add(&a, rec(), sizeof(recbuf));
	CHECK(r == -1, "nr_kernel > MAX_KERNEL_FRAMES");
	CHECK(a.malformed == 6 && a.samples == 14 && a.nr_stacks == 9,
	      "malformed %" PRIu64 " samples %" PRIu64, a.malformed, a.samples);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 3, "malformed records did not count");

	/* the largest legal record is accepted */
	{
		static uint64_t big[MAX_USER_FRAMES_LIMIT];

		for (i = 0; i < MAX_USER_FRAMES_LIMIT; i++)
			big[i] = 0x400000 + i;
		sz = mkrec(100, 101, "big", STOP_TRUNCATED, 0, 0, NULL, MAX_USER_FRAMES_LIMIT, big);
		r = agg_add(&a, rec(), sz);
		s = find_stack(&a, 100, "big", STOP_TRUNCATED, 0, MAX_USER_FRAMES_LIMIT, big);
		CHECK(r == 0 && s && s->count == 1, "MAX_USER_FRAMES_LIMIT frames accepted");
	}
	agg_free(&a);
}

static void test_aggregate_cap(void)
{
	struct aggregator a;
	uint64_t pc;
	size_t sz;

	agg_init(&a, 3);
	for (pc = 1; pc <= 3; pc++) {
		sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
		agg_add(&a, rec(), sz);
	}
	pc = 4;
	sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
	CHECK(agg_add(&a, rec(), sz) == 0, "overflow is not an error");
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 3 && a.overflow == 2, "cap: %" PRIu64 " stacks, overflow %" PRIu64,
	      a.nr_stacks, a.overflow);
	pc = 2;
	sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
	agg_add(&a, rec(), sz);
	CHECK(find_stack(&a, 1, "c", STOP_COMPLETE, 0, 1, &pc) &&
		  find_stack(&a, 1, "c", STOP_COMPLETE, 0, 1, &pc)->count == 2,
	      "existing stack still counts when full");
	CHECK(a.overflow == 2 && a.samples == 6, "overflow %" PRIu64 " samples %" PRIu64,
	      a.overflow, a.samples);
	agg_free(&a);
}

/*
 * Off-CPU time without a stack: a sum per process and cause is a stack of its
 * own (not merged with an empty walked stack, nor with another cause), weighs
 * its nanoseconds, and is not counted among the samples received.
 */
static void test_aggregate_unwalked(void)
{
	const uint8_t budget = UNWALKED_BUDGET << SAMPLE_UNWALKED_SHIFT;
	const uint8_t lost = UNWALKED_LOST << SAMPLE_UNWALKED_SHIFT;
	struct aggregator a;
	struct agg_stack **v;
	uint64_t nr, i, weight = 0, count = 0;
	size_t sz;

	agg_init(&a, 100);
	sz = mkrec(7, 7, "w", STOP_COMPLETE, budget, 0, NULL, 0, NULL);
	recbuf.r.weight = 5000;
	CHECK(agg_add_n(&a, rec(), sz, 40) == 0, "a sum of 40 blocks");
	recbuf.r.weight = 700;
	agg_add_n(&a, rec(), sz, 3);
	sz = mkrec(7, 7, "w", STOP_COMPLETE, lost, 0, NULL, 0, NULL);
	recbuf.r.weight = 90;
	agg_add_n(&a, rec(), sz, 1);
	sz = mkrec(7, 7, "w", STOP_COMPLETE, 0, 0, NULL, 0, NULL);
	recbuf.r.weight = 11;
	agg_add(&a, rec(), sz);
	v = agg_sorted(&a, &nr);
	for (i = 0; v && i < nr; i++) {
		if ((v[i]->flags & SAMPLE_UNWALKED_MASK) == budget)
			weight = v[i]->weight, count = v[i]->count;
	}
	CHECK(nr == 3 && weight == 5700 && count == 43,
	      "budget, lost and a walked empty stack apart: %" PRIu64 " stacks, budget %" PRIu64
	      " ns in %" PRIu64 " blocks",
	      nr, weight, count);
	CHECK(a.samples == 1 && a.by_reason[STOP_COMPLETE] == 1,
	      "only the walked sample is received: %" PRIu64, a.samples);
	free(v);
	agg_free(&a);
}

static void test_aggregate_growth(void)
{
	const uint32_t n = 45000;
	struct aggregator a;
	struct agg_stack **v;
	uint64_t nr, i, total = 0, want_total = 0;
	uint32_t initial, j;
	int bad = 0;
	uint8_t *seen = calloc(n, 1);

	agg_init(&a, 1000000);
	initial = a.nr_buckets;
	/* stack j gets (j % 3) + 1 samples, interleaved so counts grow across rehashes */
	for (j = 0; j < 3; j++) {
		uint32_t x;

		for (x = 0; x < n; x++) {
			uint64_t pcs[2] = {0x400000 + x, 0x500000 + (x & 7)};
			size_t sz;

			if (j > x % 3)
				continue;
			sz = mkrec(10 + (x & 1), 10, "grow", STOP_COMPLETE, 0, 1,
				   (uint64_t[]){0xffffffff81000000ull}, 2, pcs);
			agg_add(&a, rec(), sz);
		}
	}
	for (j = 0; j < n; j++)
		want_total += j % 3 + 1;
	CHECK(a.nr_stacks == n, "stacks %" PRIu64 " want %u", a.nr_stacks, n);
	CHECK(a.nr_buckets > initial, "table grew: %u buckets (initial %u)", a.nr_buckets, initial);
	v = agg_sorted(&a, &nr);
	CHECK(v && nr == n, "sorted nr %" PRIu64, nr);
	for (i = 0; v && seen && i < nr; i++) {
		uint64_t x = v[i]->pcs[1] - 0x400000;

		total += v[i]->count;
		if (x >= n || seen[x]++ || v[i]->count != x % 3 + 1 || v[i]->pid != 10 + (x & 1) ||
		    (i && v[i - 1]->count < v[i]->count))
			bad++;
	}
	CHECK(!bad && total == want_total,
	      "%d wrong stacks after growth, total %" PRIu64 "/%" PRIu64, bad, total, want_total);
	free(v);
	free(seen);
	agg_free(&a);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_aggregate_basic);
	RUN_TEST(test_aggregate_cap);
	RUN_TEST(test_aggregate_unwalked);
	RUN_TEST(test_aggregate_growth);
	return HARNESS_DONE();
}
