// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table load thread.  Table builds are slow (tens of ms for a large
 * library) so they run here, away from the ring-buffer consumer: a slow build
 * must never make the ring buffer overflow.  The consumer only queues work
 * (proc_tracker_request, work_queue.c); loads, exits and delayed unloads run
 * on this thread, one at a time under load_lock.  One load is proc_load.c;
 * the tables it lacks are built side by side on a few workers (table_builds.c).
 *
 * (Not to be confused with the BPF program loader, user/session/bpf_program.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/thread_nice.h"
#include "common/clock.h"
#include "user/track/tracker_internal.h"

/* Whether a runtime has JIT rows that may go out of date now (runtime_hooks' jit_stale). */
static bool jit_watched(const struct proc_tracker *pt)
{
	FOR_EACH_RUNTIME(pt, h)
	if (h->jit_stale && (!h->jit_watching || h->jit_watching(h->ctx)))
		return true;
	return false;
}

/* Whether a runtime may come to watch JIT code (runtime_hooks' jit_stale). */
static bool jit_possible(const struct proc_tracker *pt)
{
	FOR_EACH_RUNTIME(pt, h)
	if (h->jit_stale)
		return true;
	return false;
}

/*
 * How long the idle thread sleeps, in ms (0: until work comes): until the
 * first unload due, the next JIT poll while a runtime watches JIT code, the
 * next expiry while tables are idle.  A runtime that may start watching
 * outside this thread's loads (a load on another thread, load_now) is looked
 * at again within JIT_IDLE_MS.  pt->lock held.
 */
#define JIT_IDLE_MS 1000
static uint64_t idle_wait_ms(const struct proc_tracker *pt, bool jit_hooks, bool jit,
			     uint64_t next_jit_ns, bool tables_idle)
{
	uint64_t now = mono_ns(), until = UINT64_MAX;

	if (jit_hooks)
		until = now + JIT_IDLE_MS * 1000000ull;
	if (pt->due_head && pt->due_head->unload_due_ns < until)
		until = pt->due_head->unload_due_ns;
	if (jit && next_jit_ns < until)
		until = next_jit_ns;
	if (tables_idle && pt->next_expire_ns < until)
		until = pt->next_expire_ns;
	if (until == UINT64_MAX)
		return 0;
	return until > now ? (until - now + 999999) / 1000000 : 1;
}

/* Processes whose JIT code changed are loaded again: their rows are rebuilt. */
static void jit_poll(struct proc_tracker *pt)
{
	uint32_t pids[16], n, i;

	FOR_EACH_RUNTIME(pt, h)
	{
		if (!h->jit_stale)
			continue;
		n = h->jit_stale(h->ctx, pids, sizeof(pids) / sizeof(pids[0]));
		for (i = 0; i < n && i < sizeof(pids) / sizeof(pids[0]); i++)
			tracker_request_unqueued(pt, pids[i], 0);
	}
}

static void *load_thread_main(void *arg)
{
	struct proc_tracker *pt = arg;
	uint64_t next_jit_ns = 0;
	bool jit_hooks = jit_possible(pt), jit;
	bool tables_idle = false; /* read under load_lock, at the end of each pass */

	/*
	 * Loads are short bursts that decide how many samples of a new process or
	 * library go unwound: run them ahead of the CPU-bound programs being
	 * profiled (needs CAP_SYS_NICE; without it the default priority stays).
	 */
	thread_nice(-10);
	/* under neither lock, as jit_poll: a runtime takes its own locks */
	jit = jit_watched(pt);
	pthread_mutex_lock(&pt->lock);
	for (;;) {
		struct work_item w = {0};
		bool timed_out = false;
		uint64_t wait_ms;

		while (!pt->work.q_len && !pt->work.stopping && !timed_out) {
			/* nothing else to do: a load cut short earlier goes on */
			if (pt->work.nr_resumes && !pt->work.draining) {
				pt->work.queue[pt->work.q_head] = (struct work_item){
				    .pid = pt->work.resume_pids[0], .kind = WORK_LOAD, .yielded = 1};
				pt->work.q_len = 1;
				memmove(pt->work.resume_pids, pt->work.resume_pids + 1,
					--pt->work.nr_resumes * sizeof(pt->work.resume_pids[0]));
				break;
			}
			wait_ms = idle_wait_ms(pt, jit_hooks, jit, next_jit_ns, tables_idle);
			if (!wait_ms) {
				pthread_cond_wait(&pt->work.work_cond, &pt->lock);
			} else {
				/* exited processes wait for their unload, JIT code for its rows */
				struct timespec until = realtime_after_ms(wait_ms);

				timed_out = pthread_cond_timedwait(&pt->work.work_cond, &pt->lock,
								   &until) == ETIMEDOUT;
			}
		}
		if (pt->work.stopping && (!pt->work.q_len || pt->work.discard))
			break;
		if (pt->work.q_len) {
			w = pt->work.queue[pt->work.q_head];
			pt->work.q_head = (pt->work.q_head + 1) % QUEUE_CAP;
			pt->work.q_len--;
		}
		pt->work.busy = true;
		pthread_mutex_unlock(&pt->lock);
		pthread_mutex_lock(&pt->load_lock);
		if (w.kind == WORK_EXIT)
			exit_proc(pt, w.pid);
		else if (w.kind)
			tracker_load_proc(pt, w.pid, w.kind == WORK_EXEC, w.time_ns, &w);
		if (pt->nr_unload_due)
			unload_due_procs(pt, mono_ns());
		/* idle tables past their ttl: checked at most once a second */
		if (pt->opts.ts && pt->opts.ts->stats.idle_now && mono_ns() >= pt->next_expire_ns) {
			table_store_expire(pt->opts.ts, mono_ns());
			pt->next_expire_ns = mono_ns() + 1000000000ull;
		}
		tables_idle = pt->opts.ts && pt->opts.ts->stats.idle_now;
		pthread_mutex_unlock(&pt->load_lock);
		/* under neither lock: a runtime reads its processes' memory */
		jit = jit_watched(pt);
		if (jit && mono_ns() >= next_jit_ns && !pt->work.stopping) {
			jit_poll(pt);
			next_jit_ns = mono_ns() + JIT_POLL_MS * 1000000ull;
		}
		pthread_mutex_lock(&pt->lock);
		pt->work.busy = false;
		if (!pt->work.q_len)
			pthread_cond_broadcast(&pt->work.idle_cond);
	}
	pt->work.busy = false;
	pthread_cond_broadcast(&pt->work.idle_cond);
	pthread_mutex_unlock(&pt->lock);
	return NULL;
}

int proc_tracker_start(struct proc_tracker *pt)
{
	int err;

	pthread_mutex_lock(&pt->lock);
	err = pthread_create(&pt->work.thread, NULL, load_thread_main, pt);
	pt->work.started = !err;
	if (!err)
		pthread_setname_np(pt->work.thread, "cfiprof-load");
	pthread_mutex_unlock(&pt->lock);
	return -err;
}

int proc_tracker_load_now(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;
	bool loaded;

	pthread_mutex_lock(&pt->load_lock);
	tracker_load_proc(pt, pid, false, 0, NULL);
	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	loaded = p && p->loaded;
	pthread_mutex_unlock(&pt->lock);
	pthread_mutex_unlock(&pt->load_lock);
	return loaded ? 0 : -ESRCH;
}

void proc_tracker_drain(struct proc_tracker *pt)
{
	pthread_mutex_lock(&pt->lock);
	pt->work.draining++;
	while (pt->work.started && (pt->work.q_len || pt->work.busy))
		pthread_cond_wait(&pt->work.idle_cond, &pt->lock);
	pt->work.draining--;
	pthread_mutex_unlock(&pt->lock);
}

bool proc_tracker_drain_for(struct proc_tracker *pt, double timeout)
{
	struct timespec until = realtime_after_ms((uint64_t)(timeout * 1000));
	bool idle;

	pthread_mutex_lock(&pt->lock);
	pt->work.draining++;
	while (pt->work.started && (pt->work.q_len || pt->work.busy) &&
	       pthread_cond_timedwait(&pt->work.idle_cond, &pt->lock, &until) != ETIMEDOUT)
		;
	pt->work.draining--;
	idle = !pt->work.started || (!pt->work.q_len && !pt->work.busy);
	pthread_mutex_unlock(&pt->lock);
	return idle;
}

void proc_tracker_stop(struct proc_tracker *pt, bool discard)
{
	pthread_mutex_lock(&pt->lock);
	if (!pt->work.started) {
		pthread_mutex_unlock(&pt->lock);
		return;
	}
	pt->work.stopping = true;
	pt->work.discard = discard;
	/* what is discarded need not be built: the builds on the workers end within ms */
	if (discard)
		__atomic_store_n(&pt->work.cancel_builds, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&pt->work.work_cond);
	pthread_mutex_unlock(&pt->lock);
	pthread_join(pt->work.thread, NULL);
	pthread_mutex_lock(&pt->lock);
	__atomic_store_n(&pt->work.cancel_builds, 0, __ATOMIC_RELAXED);
	pt->work.started = false;
	pt->work.stopping = false;
	/* whoever drains now: what was discarded will never be done */
	pthread_cond_broadcast(&pt->work.idle_cond);
	pthread_mutex_unlock(&pt->lock);
}
