// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's DWARF opener (src_lines_opener_start): a thread that reads
 * objects' debug sections and lists their units, so that an interval never
 * waits on an open it cannot interrupt.  A lookup queues an object here and
 * names its frames without lines until the handle is ready.
 */
#include <pthread.h>
#include <stdlib.h>

#include "user/symbolize/src_lines.h"
#include "user/symbolize/src_lines_internal.h"

/* op->lock held: a ready handle leaves the list (taken: the caller has it). */
static void ready_unlink(struct src_opener *op, struct src_lines *sl)
{
	struct src_lines **pp = &op->ready;

	while (*pp && *pp != sl)
		pp = &(*pp)->open_next;
	if (*pp)
		*pp = sl->open_next;
	sl->open_next = NULL;
	op->ready_bytes -= sl->section_bytes;
	sl->open_state = OPEN_NONE;
	pthread_cond_broadcast(&op->cond);
}

/* op->lock held: a ready handle no lookup took goes. */
static void ready_drop(struct src_opener *op, struct src_lines *sl)
{
	ready_unlink(op, sl);
	src_lines_handle_drop(sl);
}

static void *opener_main(void *arg)
{
	struct src_opener *op = arg;
	enum open_state st;
	struct src_lines *sl;

	pthread_mutex_lock(&op->lock);
	while (!op->stopping) {
		sl = op->head;
		if (!sl || (op->ready && op->ready_bytes >= op->max_ready_bytes)) {
			pthread_cond_wait(&op->cond, &op->lock);
			continue;
		}
		op->head = sl->open_next;
		if (!op->head)
			op->tail = NULL;
		sl->open_next = NULL;
		sl->open_state = OPEN_RUNNING;
		pthread_mutex_unlock(&op->lock);
		st = src_lines_handle_read(sl, op->max_object_bytes);
		pthread_mutex_lock(&op->lock);
		sl->open_state = (uint8_t)st;
		if (st == OPEN_READY) {
			sl->open_next = op->ready;
			op->ready = sl;
			op->ready_bytes += sl->section_bytes;
			sl->ready_epoch = op->epoch;
		}
		pthread_cond_broadcast(&op->cond);
	}
	pthread_mutex_unlock(&op->lock);
	return NULL;
}

int src_lines_opener_start(struct src_lines_ctx *ctx)
{
	struct src_opener *op;

	if (ctx->opener)
		return 0;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -1;
	op->max_object_bytes = ctx->max_object_bytes;
	op->max_ready_bytes = ctx->max_open_bytes / 4;
	pthread_mutex_init(&op->lock, NULL);
	pthread_cond_init(&op->cond, NULL);
	if (pthread_create(&op->thread, NULL, opener_main, op)) {
		pthread_mutex_destroy(&op->lock);
		pthread_cond_destroy(&op->cond);
		free(op);
		return -1;
	}
	pthread_setname_np(op->thread, "cfiprof-dwarf");
	ctx->opener = op;
	return 0;
}

void src_lines_opener_stop(struct src_lines_ctx *ctx)
{
	struct src_opener *op = ctx->opener;

	if (!op)
		return;
	pthread_mutex_lock(&op->lock);
	op->stopping = true;
	pthread_cond_broadcast(&op->cond);
	pthread_mutex_unlock(&op->lock);
	pthread_join(op->thread, NULL);
	/* what is still queued or not taken opens at its next lookup, as without the opener */
	for (struct src_lines *sl = op->head, *next; sl; sl = next) {
		next = sl->open_next;
		sl->open_next = NULL;
		sl->open_state = OPEN_NONE;
	}
	while (op->ready)
		ready_drop(op, op->ready);
	pthread_mutex_destroy(&op->lock);
	pthread_cond_destroy(&op->cond);
	free(op);
	ctx->opener = NULL;
}

int src_opener_take(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	struct src_opener *op = ctx->opener;
	enum open_state st;

	pthread_mutex_lock(&op->lock);
	st = (enum open_state)sl->open_state;
	if (st == OPEN_NONE) {
		sl->open_state = OPEN_QUEUED;
		if (op->tail)
			op->tail->open_next = sl;
		else
			op->head = sl;
		op->tail = sl;
		pthread_cond_broadcast(&op->cond);
		st = OPEN_QUEUED;
	} else if (st == OPEN_READY) {
		ready_unlink(op, sl);
	} else if (st != OPEN_QUEUED && st != OPEN_RUNNING) {
		sl->open_state = OPEN_NONE;
	}
	pthread_mutex_unlock(&op->lock);
	switch (st) {
	case OPEN_READY:
		sl->epoch = ctx->epoch;
		src_lines_handle_adopt(ctx, sl);
		return 0;
	case OPEN_QUEUED:
	case OPEN_RUNNING:
		return 1;
	default:
		sl->refused = st == OPEN_REFUSED;
		return -1;
	}
}

void src_opener_forget(struct src_opener *op, struct src_lines *sl)
{
	struct src_lines *prev = NULL, *cur;

	pthread_mutex_lock(&op->lock);
	while (sl->open_state == OPEN_RUNNING)
		pthread_cond_wait(&op->cond, &op->lock);
	for (cur = op->head; sl->open_state == OPEN_QUEUED && cur;
	     prev = cur, cur = cur->open_next) {
		if (cur != sl)
			continue;
		if (prev)
			prev->open_next = sl->open_next;
		else
			op->head = sl->open_next;
		if (op->tail == sl)
			op->tail = prev;
		sl->open_next = NULL;
		break;
	}
	if (sl->open_state == OPEN_READY)
		ready_unlink(op, sl); /* its handle goes with it (src_lines_free) */
	sl->open_state = OPEN_NONE;
	pthread_mutex_unlock(&op->lock);
}

/*
 * At each interval's end (src_lines_close_idle): a ready handle that no
 * lookup took since the previous end is dropped.
 */
uint64_t src_opener_age(struct src_opener *op)
{
	uint64_t dropped = 0;

	pthread_mutex_lock(&op->lock);
	for (struct src_lines *r = op->ready, *rn; r; r = rn) {
		rn = r->open_next;
		if (r->ready_epoch != op->epoch) {
			ready_drop(op, r);
			dropped++;
		}
	}
	op->epoch++;
	pthread_mutex_unlock(&op->lock);
	return dropped;
}
