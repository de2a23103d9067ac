// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's ring-buffer consumer (see consumer.h): samples into the
 * aggregator, deferred samples into their queue, loads and exits to the
 * tracker, and the agent's interval boundaries.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/thread_nice.h"
#include "common/clock.h"
#include "user/session/consumer.h"
#include "user/session/session.h"

static void longest(uint64_t *was, uint64_t ns)
{
	if (ns > *was)
		*was = ns;
}

int session_route_sample(struct session *s, const struct cfi_sample_record *r, size_t size,
			 uint64_t count)
{
	int err;

	pthread_mutex_lock(&s->agg_lock);
	if (s->late_agg && r->time_ns < s->last_boundary_ns) {
		err = agg_add_n(s->late_agg, r, size, count);
		s->late_agg->waited += count;
	} else {
		/* taken before an interval that is already written: it lands in this one */
		if (r->time_ns < s->last_boundary_ns)
			s->agg.late++;
		err = agg_add_n(&s->agg, r, size, count);
	}
	pthread_mutex_unlock(&s->agg_lock);
	return err;
}

/* A sample walked by the kernel, or finished in user space: the same from here on. */
static void add_sample(void *ctx, const struct cfi_sample_record *r, size_t size)
{
	struct session *s = ctx;

	/* while the process lives: its code objects are named from its memory */
	session_runtimes_note(&s->runtimes, r, size);
	if (!session_route_sample(s, r, size, 1))
		proc_tracker_note_sample(s->pt, r->pid, r->generation, r->time_ns,
					 r->reason == STOP_COMPLETE);
}

/* A deferred sample handed on: its code objects were read when it arrived (note_waiting). */
void session_add_deferred(void *ctx, const struct cfi_sample_record *r, size_t size,
			 const struct cfi_sample_record *taken)
{
	struct session *s = ctx;

	if (r != taken && r->generation != taken->generation)
		session_runtimes_carry(&s->runtimes, r, size, taken->generation);
	add_sample(ctx, r, size);
}

/* Off-CPU time without a stack: a sum of count blocks (user/session/offcpu_unwalked.h). */
static void add_unwalked(void *ctx, const struct cfi_sample_record *r, uint64_t count)
{
	session_route_sample(ctx, r, sizeof(*r), count);
}

/* The sums grow with every block: taken a few times a second, and at the end. */
#define UNWALKED_TAKE_NS (250ull * 1000 * 1000)

void session_take_unwalked(struct session *s, bool now)
{
	uint64_t t = mono_ns();

	if (!now && t - s->unwalked_taken_ns < UNWALKED_TAKE_NS)
		return;
	s->unwalked_taken_ns = t;
	offcpu_unwalked_take(&s->unwalked, t, add_unwalked, s);
}

/*
 * The tables a deferred sample waits for: its process's load and that object
 * go first, and its mappings are read now in case it exits before that load;
 * so are its code objects, which may be freed before its walk is finished.
 */
static void note_waiting(struct session *s, const void *data, size_t size)
{
	struct deferred_view v;
	uint64_t t0;

	if (!deferred_parse(data, size, &v))
		return;
	proc_tracker_note_waiting(s->pt, v.rec->pid, v.d->ip);
	t0 = mono_ns();
	proc_tracker_snapshot(s->pt, v.rec->pid, v.d->changed_ns);
	longest(&s->consumer_longest.snapshot_ns, mono_ns() - t0);
	session_runtimes_note(&s->runtimes, v.rec, v.rec_size);
}

void session_reload_for_walk(void *ctx, uint32_t pid, uint64_t now_ns)
{
	struct session *s = ctx;

	if (s->pt)
		proc_tracker_reload_for_walk(s->pt, pid, now_ns);
}

static void handle_one(struct session *s, const struct cfi_event_record *ev, void *data,
		       size_t size)
{
	if (size < sizeof(uint32_t))
		return;
	switch (ev->type) {
	case RECORD_SAMPLE:
		s->records++;
		add_sample(s, data, size);
		break;
	case RECORD_DEFERRED:
		s->records++;
		note_waiting(s, data, size);
		deferred_queue_add(&s->deferred, data, size);
		break;
	case RECORD_MAPS_ENTRY:
	case RECORD_MAPS_END:
		s->events++;
		proc_tracker_exit_record(s->pt, data, size);
		break;
	case RECORD_REQUEST:
	case RECORD_EXEC:
	case RECORD_EXIT:
		s->events++;
		if (size >= sizeof(*ev))
			proc_tracker_request(s->pt, ev->pid,
					     ev->type == RECORD_REQUEST ? WORK_LOAD
					     : ev->type == RECORD_EXEC  ? WORK_EXEC
									: WORK_EXIT,
					     ev->time_ns);
		break;
	default:
		pthread_mutex_lock(&s->agg_lock);
		s->agg.malformed++;
		pthread_mutex_unlock(&s->agg_lock);
		break;
	}
}

int session_handle_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct cfi_event_record *ev = data;
	uint64_t t0 = mono_ns();

	handle_one(s, ev, data, size);
	s->consumer_longest.pass_records_ns += mono_ns() - t0;
	return 0;
}

/* The consumer's passes: where the longest went (see session.h) */
static void pass_done(struct session *s, uint64_t deferred_ns, uint64_t unwalked_ns)
{
	longest(&s->consumer_longest.records_ns, s->consumer_longest.pass_records_ns);
	longest(&s->consumer_longest.deferred_ns, deferred_ns);
	longest(&s->consumer_longest.unwalked_ns, unwalked_ns);
	s->consumer_longest.pass_records_ns = 0;
}

/* The consumer never waits on table builds: those run on the tracker's table load thread. */
void *session_consumer_main(void *arg)
{
	struct session *s = arg;
	uint64_t t0, t1;
	int err;

	/* requests for unknown mappings pass through here: do not queue behind the workload */
	thread_nice(-10);
	while (!s->consumer_stop) {
		/* samples waiting for their tables are finished within ~10 ms of them */
		err = ring_buffer__poll(s->rb, s->deferred.stats.waiting ? 10 : 100);
		/* samples are submitted without a wakeup until enough are pending */
		if (err >= 0)
			err = ring_buffer__consume(s->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "cfiprof: ring buffer: %s\n", strerror(-err));
			break;
		}
		t0 = mono_ns();
		deferred_queue_run(&s->deferred, t0, false);
		t1 = mono_ns();
		session_take_unwalked(s, false);
		pass_done(s, t1 - t0, mono_ns() - t1);
		__atomic_store_n(&s->deferred_oldest_ns, s->deferred.stats.oldest_ns,
				 __ATOMIC_RELEASE);
		__atomic_add_fetch(&s->consumer_passes, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

uint64_t session_interval_swap(struct session *s, struct aggregator *fresh,
			       struct aggregator *closing)
{
	uint64_t until_ns;

	/*
	 * One step: were the swap and the boundary apart, a sample taken
	 * before the swap and routed between them would go to the new
	 * interval under the old boundary, neither waited for nor late.
	 */
	pthread_mutex_lock(&s->agg_lock);
	*closing = s->agg;
	s->agg = *fresh;
	s->late_agg = closing;
	s->last_boundary_ns = mono_ns();
	until_ns = unix_ns();
	pthread_mutex_unlock(&s->agg_lock);
	return until_ns;
}

bool session_interval_close(struct session *s, double timeout)
{
	uint64_t passes = __atomic_load_n(&s->consumer_passes, __ATOMIC_ACQUIRE);
	double deadline = mono_sec() + timeout;
	bool drained = false;

	/* two passes: the one under way may have polled before the boundary */
	while (s->consumer_started && mono_sec() < deadline) {
		if (__atomic_load_n(&s->consumer_passes, __ATOMIC_ACQUIRE) >= passes + 2 &&
		    __atomic_load_n(&s->deferred_oldest_ns, __ATOMIC_ACQUIRE) >= s->last_boundary_ns) {
			drained = true;
			break;
		}
		usleep(5000);
	}
	/* the code objects its samples queued, named in the profile that follows */
	session_runtimes_wait(&s->runtimes, deadline - mono_sec() > 0 ? deadline - mono_sec() : 0);
	pthread_mutex_lock(&s->agg_lock);
	s->late_agg = NULL;
	pthread_mutex_unlock(&s->agg_lock);
	return drained;
}

static void wake_noop(int sig)
{
	(void)sig;
}

/*
 * The consumer sleeps in epoll_wait up to 100 ms between records: a signal
 * makes it return (EINTR) and see consumer_stop at once.
 */
void session_consumer_stop(struct session *s)
{
	struct sigaction sa = {.sa_handler = wake_noop};
	struct timespec until;

	s->consumer_stop = true;
	sigaction(SIGURG, &sa, NULL);
	/* a signal just before it enters epoll_wait is missed: send another */
	do {
		pthread_kill(s->consumer, SIGURG);
		until = realtime_after_ms(10);
	} while (pthread_timedjoin_np(s->consumer, NULL, &until) == ETIMEDOUT);
	s->consumer_started = false;
}

