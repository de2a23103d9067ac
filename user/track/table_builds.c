// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tables one load lacks, built at once on a few threads.  A cold clang
 * maps libLLVM and libclang-cpp (and a dozen smaller libraries): built one
 * after the other, its samples wait for the sum of the builds; built side by
 * side, for the longest one.  Only the builds run here: each is a pure
 * function of an open file (and the table cache, which locks itself).  The
 * table store, the BPF maps and the registry are still written by the load
 * thread alone, in the order of the mappings, so what a load puts in the
 * maps is what a serial load puts there.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/track/tracker_internal.h"

/* More workers than this buy little: a process rarely lacks more than a few big objects. */
#define BUILD_WORKERS_MAX 4

uint32_t build_workers_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > BUILD_WORKERS_MAX ? BUILD_WORKERS_MAX : (uint32_t)n;
}

struct build_run {
	struct proc_tracker *pt;
	struct build_job **order; /* the jobs, in the order they start */
	uint32_t n;
	uint32_t next; /* the next job to take: atomic */
	uint64_t deadline;
};

static void *build_worker(void *arg)
{
	struct build_run *r = arg;
	struct build_job *j;
	uint32_t i;

	while ((i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED)) < r->n) {
		/* past the load's time, the rest of its mappings go by frame pointers */
		if (mono_ns() > r->deadline || builds_cancelled(r->pt))
			continue;
		j = r->order[i];
		j->table = mapping_build_table(r->pt, j->pid, j->name, j->key, j->fd, &j->err);
		j->done = true;
	}
	return NULL;
}

/* Waited for first, then the biggest: the longest build starts first and ends the load. */
static int build_order(const void *a, const void *b)
{
	const struct build_job *x = *(struct build_job *const *)a,
			       *y = *(struct build_job *const *)b;

	if (x->waited_for != y->waited_for)
		return x->waited_for ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size;
}

/* Marks the jobs deferred samples wait for; one pass under the lock. */
static void mark_waited_for(struct proc_tracker *pt, struct build_job *jobs, uint32_t n)
{
	uint32_t i, k;

	pthread_mutex_lock(&pt->lock);
	for (k = 0; k < WAIT_HINTS; k++) {
		const struct wait_hint *h = &pt->reload.hints[k];

		for (i = 0; h->pid && i < n; i++) {
			if (h->pid == jobs[i].pid && h->pc >= jobs[i].start && h->pc < jobs[i].end)
				jobs[i].waited_for = true;
		}
	}
	pthread_mutex_unlock(&pt->lock);
}

void table_builds_run(struct proc_tracker *pt, struct build_job *jobs, uint32_t n,
		      uint64_t deadline)
{
	struct build_run r = {.pt = pt, .n = n, .deadline = deadline};
	uint32_t i, done = 0, started = 0, nr_threads = pt->opts.build_workers ? pt->opts.build_workers : 1;
	pthread_t *threads = NULL;

	if (!n)
		return;
	mark_waited_for(pt, jobs, n);
	r.order = malloc(n * sizeof(*r.order));
	if (!r.order) /* each mapping's table is built when the store asks for it */
		return;
	for (i = 0; i < n; i++)
		r.order[i] = &jobs[i];
	qsort(r.order, n, sizeof(*r.order), build_order);
	if (nr_threads > n)
		nr_threads = n;
	/* the load thread is one of the workers: one job (the usual dlopen) starts no thread */
	if (nr_threads > 1)
		threads = calloc(nr_threads - 1, sizeof(*threads));
	for (i = 0; threads && i < nr_threads - 1; i++) {
		if (pthread_create(&threads[i], NULL, build_worker, &r))
			break;
		pthread_setname_np(threads[i], "cfiprof-build");
		started++;
	}
	build_worker(&r);
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	free(r.order);
	for (i = 0; i < n; i++)
		done += jobs[i].done;
	TRACKER_COUNT(pt, tables_prebuilt, done);
	if (started)
		TRACKER_COUNT(pt, tables_built_parallel, done);
}
