// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Aggregator throughput: a replayed stream of sample records with 32 user
 * frames (drawn from DISTINCT different stacks, so most adds hit an existing
 * entry as in a real profile) fed to agg_add on one core.  Prints the median
 * of RUNS runs in samples per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/profile/aggregate.h"

#define FRAMES 32
#define DISTINCT 20000
#define SAMPLES 2000000
#define RUNS 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	size_t rec_size = sizeof(struct cfi_sample_record) + FRAMES * sizeof(__u64);
	char *stream = malloc((size_t)DISTINCT * rec_size);
	double rates[RUNS];
	unsigned int seed = 1;
	int run, i, k;

	if (!stream)
		return 1;
	for (i = 0; i < DISTINCT; i++) {
		struct cfi_sample_record *r = (struct cfi_sample_record *)(stream + (size_t)i * rec_size);

		memset(r, 0, sizeof(*r));
		r->type = RECORD_SAMPLE;
		r->pid = 1000 + (unsigned)i % 50;
		r->tid = r->pid;
		snprintf(r->comm, sizeof(r->comm), "proc%u", r->pid);
		r->nr_user = FRAMES;
		for (k = 0; k < FRAMES; k++)
			r->pcs[k] = 0x400000 + (uint64_t)(rand_r(&seed) % 4096) * 16;
	}
	for (run = 0; run < RUNS; run++) {
		struct aggregator a;
		double t;

		agg_init(&a, 1 << 20);
		t = now();
		for (i = 0; i < SAMPLES; i++) {
			/* a skewed pick: hot stacks dominate, as in real profiles */
			unsigned int j = (unsigned)(rand_r(&seed) % DISTINCT);

			j = j * j / DISTINCT;
			agg_add(&a, (struct cfi_sample_record *)(stream + (size_t)j * rec_size), rec_size);
		}
		rates[run] = SAMPLES / (now() - t);
		agg_free(&a);
	}
	qsort(rates, RUNS, sizeof(rates[0]), cmp_double);
	printf("aggregator: %.2f M samples/s of %d-frame stacks (median of %d runs of %d samples, "
	       "%d distinct stacks; runs %.2f..%.2f M/s)\n",
	       rates[RUNS / 2] / 1e6, FRAMES, RUNS, SAMPLES, DISTINCT, rates[0] / 1e6,
	       rates[RUNS - 1] / 1e6);
	free(stream);
	return 0;
}
