// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* DWARF opened before its first lookup; see src_lines_warm.h. */
#include "user/symbolize/src_lines_warm.h"

#include <pthread.h>
#include <stdlib.h>

struct src_lines_warm {
	struct src_lines_ctx *ctx;
	/*
	 * The queue's lock, held only briefly: the table load thread adds to the
	 * queue, and waited here for seconds while this thread (at nice 19 then),
	 * holding one lock for both, decompressed a debug file on a busy host (every
	 * sample of a process's new JIT page went unwound meanwhile:
	 * test_faults:badstack).
	 */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* held while an object is opened or freed: the ctx's list of open handles is shared */
	pthread_mutex_t open_lock;
	pthread_t thread;
	bool stopping, joined;
	struct src_lines **q; /* FIFO; NULL: freed while queued */
	size_t head, n, cap;
	struct src_lines *current; /* being opened (lock held to read or change) */
	uint64_t opened;
};

static void *warm_main(void *arg)
{
	struct src_lines_warm *w = arg;
	struct src_lines *sl;
	bool ok;

	/*
	 * At the process's own priority, not below it: it mallocs all the while
	 * (libdw decompressing a debug file), and record's heap is one arena
	 * (common/heap.h).  At nice 19 on a busy host it was preempted holding
	 * the arena's lock, and the consumer (nice -10) waited on it for 1-2.7 s
	 * at a JVM's start (the ring buffer filled, samples were kept
	 * tables-pending), and a stop waited tens of seconds for its last open.
	 */
	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		if (w->head == w->n) {
			w->head = w->n = 0;
			pthread_cond_wait(&w->cond, &w->lock);
			continue;
		}
		sl = w->q[w->head++];
		if (!sl)
			continue;
		w->current = sl;
		pthread_mutex_unlock(&w->lock);
		pthread_mutex_lock(&w->open_lock);
		ok = !src_lines_prepare(w->ctx, sl);
		pthread_mutex_unlock(&w->open_lock);
		pthread_mutex_lock(&w->lock);
		w->current = NULL;
		w->opened += ok;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct src_lines_warm *src_lines_warm_start(struct src_lines_ctx *ctx)
{
	struct src_lines_warm *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ctx = ctx;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->open_lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, warm_main, w)) {
		pthread_mutex_destroy(&w->lock);
		pthread_mutex_destroy(&w->open_lock);
		pthread_cond_destroy(&w->cond);
		free(w);
		return NULL;
	}
	pthread_setname_np(w->thread, "cfiprof-warm");
	return w;
}

void src_lines_warm_add(struct src_lines_warm *w, struct src_lines *sl)
{
	struct src_lines **q;

	pthread_mutex_lock(&w->lock);
	if (w->stopping)
		goto out;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;

		q = realloc(w->q, cap * sizeof(*q));
		if (!q)
			goto out; /* opened by its first lookup instead */
		w->q = q;
		w->cap = cap;
	}
	w->q[w->n++] = sl;
	pthread_cond_signal(&w->cond);
out:
	pthread_mutex_unlock(&w->lock);
}

void src_lines_warm_free(struct src_lines_warm *w, struct src_lines *sl)
{
	size_t i;

	if (!sl)
		return;
	pthread_mutex_lock(&w->lock);
	for (i = w->head; i < w->n; i++)
		if (w->q[i] == sl)
			w->q[i] = NULL;
	/* not freed under the thread opening it */
	while (w->current == sl)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_lock(&w->open_lock);
	src_lines_free(w->ctx, sl);
	pthread_mutex_unlock(&w->open_lock);
}

void src_lines_warm_stop(struct src_lines_warm *w)
{
	if (!w || w->joined)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->joined = true;
}

void src_lines_warm_destroy(struct src_lines_warm *w)
{
	if (!w)
		return;
	src_lines_warm_stop(w);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->open_lock);
	pthread_cond_destroy(&w->cond);
	free(w->q);
	free(w);
}

uint64_t src_lines_warm_opened(struct src_lines_warm *w)
{
	uint64_t n;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	n = w->opened;
	pthread_mutex_unlock(&w->lock);
	return n;
}

bool src_lines_warm_busy(struct src_lines_warm *w)
{
	bool busy;

	if (!w)
		return false;
	pthread_mutex_lock(&w->lock);
	busy = w->current != NULL;
	pthread_mutex_unlock(&w->lock);
	return busy;
}
