/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The session's ring-buffer consumer thread (consumer.c), private to
 * session.c: it reads the events and exit-maps rings, routes samples into
 * the aggregator (the agent's late interval included), queues deferred
 * samples and finishes them, and passes loads and exits to the tracker.
 */
#ifndef CFIPROF_SESSION_CONSUMER_H
#define CFIPROF_SESSION_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct session;

/*
 * A sample (count of them) into the interval it was taken in: the agent's
 * closing one while its end waits (session_interval_swap), else the current
 * one, counted late there if taken before the last boundary.
 */
int session_route_sample(struct session *s, const struct cfi_sample_record *r, size_t size,
			 uint64_t count);
/* The ring-buffer callback for both rings (ctx: the session). */
int session_handle_record(void *ctx, void *data, size_t size);
/* The thread: polls until session_consumer_stop. */
void *session_consumer_main(void *arg);
/* Ends the thread at once, even from inside epoll_wait. */
void session_consumer_stop(struct session *s);
/* The deferred queue's callbacks: a finished sample, a reload a walk asks for. */
void session_add_deferred(void *ctx, const struct cfi_sample_record *r, size_t size,
			  const struct cfi_sample_record *taken);
void session_reload_for_walk(void *ctx, uint32_t pid, uint64_t now_ns);
/* Off-CPU blocks never walked, into the aggregator (now: all of them, at the stop). */
void session_take_unwalked(struct session *s, bool now);

#endif
