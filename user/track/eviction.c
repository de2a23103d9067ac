// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When a process's tables go: at its exit (after a short delay), when a cap
 * needs room (the least recently sampled live process first), or when a sweep
 * finds it gone.  The mapping list always stays, for naming its samples.
 */
#include <bpf/bpf.h>

#include "common/clock.h"
#include "user/track/tracker_internal.h"

/*
 * The exit event comes before the kernel tears the address space down, and
 * samples of that teardown (a large program's exit_mmap takes a while) still
 * have the user stack of the exit call: its tables stay this long.
 */
#define EXIT_UNLOAD_DELAY_NS (250ull * 1000 * 1000)

void drop_kernel_state(struct proc_tracker *pt, struct proc *p)
{
	bpf_map_delete_elem(pt->opts.procs_fd, &p->pid);
	FOR_EACH_RUNTIME(pt, h)
	if (h->unload)
		h->unload(h->ctx, p->pid);
	if (p->tables_held && p->cur)
		mappings_release(pt, p->pid, p->cur->maps, p->cur->nr_maps, true);
	p->tables_held = false;
}

bool clear_unload_due(struct proc_tracker *pt, struct proc *p)
{
	if (!p->unload_due_ns)
		return false;
	p->unload_due_ns = 0;
	pt->nr_unload_due--;
	*(p->due_prev ? &p->due_prev->due_next : &pt->due_head) = p->due_next;
	*(p->due_next ? &p->due_next->due_prev : &pt->due_tail) = p->due_prev;
	p->due_prev = p->due_next = NULL;
	return true;
}

/* lock held: p's unload due after the delay, queued last (every one waits as long) */
static void set_unload_due(struct proc_tracker *pt, struct proc *p)
{
	p->unload_due_ns = mono_ns() + EXIT_UNLOAD_DELAY_NS;
	pt->nr_unload_due++;
	p->due_next = NULL;
	p->due_prev = pt->due_tail;
	*(pt->due_tail ? &pt->due_tail->due_next : &pt->due_head) = p;
	pt->due_tail = p;
}

void unload_proc(struct proc_tracker *pt, struct proc *p, bool evict)
{
	pthread_mutex_lock(&pt->lock);
	if (is_live(p))
		pt->nr_live--;
	clear_unload_due(pt, p);
	p->exited = true;
	p->exit_seen = false;
	p->evicted = evict;
	pthread_mutex_unlock(&pt->lock);
	drop_kernel_state(pt, p);
}

void exit_proc(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;
	bool live;

	tracker_forget_big(pt, pid);
	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (!p || (p->exited && !p->evicted)) {
		/*
		 * Never loaded, or already unloaded by a sweep; or loaded from a
		 * snapshot after it was gone, and due to be unloaded: its waiting
		 * samples need the entry until then.
		 */
		bool due = p && p->unload_due_ns;

		pthread_mutex_unlock(&pt->lock);
		if (!due)
			bpf_map_delete_elem(pt->opts.procs_fd, &pid);
		return;
	}
	live = is_live(p);
	if (live) {
		pt->nr_live--;
		set_unload_due(pt, p);
	}
	p->exited = true;
	p->exit_seen = false;
	p->evicted = false; /* an evicted one has nothing loaded */
	pthread_mutex_unlock(&pt->lock);
	TRACKER_COUNT(pt, exits, 1);
}

void unload_due_procs(struct proc_tracker *pt, uint64_t now)
{
	for (;;) {
		struct proc *p;

		pthread_mutex_lock(&pt->lock);
		p = pt->due_head;
		pt->unload_steps += p != NULL;
		if (!p || p->unload_due_ns > now) {
			pthread_mutex_unlock(&pt->lock);
			return;
		}
		clear_unload_due(pt, p);
		pthread_mutex_unlock(&pt->lock);
		/* load_lock held: nothing frees p meanwhile (forgets take it too) */
		drop_kernel_state(pt, p);
	}
}

/* The live process sampled least recently, other than the one being loaded. */
static struct proc *least_recently_sampled(struct proc_tracker *pt)
{
	struct proc *p, *best = NULL;
	uint32_t b;

	pthread_mutex_lock(&pt->lock);
	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			if (is_live(p) && p->pid != pt->loading_pid &&
			    (!best || p->last_sample_ns < best->last_sample_ns))
				best = p;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	return best;
}

bool tracker_reclaim_for_tables(void *ctx)
{
	struct proc_tracker *pt = ctx;
	struct proc *victim = least_recently_sampled(pt);

	if (!victim)
		return false;
	unload_proc(pt, victim, true);
	TRACKER_COUNT(pt, evicted_tables, 1);
	return true;
}

void evict_for_new_proc(struct proc_tracker *pt)
{
	if (!pt->opts.max_procs)
		return;
	while (pt->nr_live >= pt->opts.max_procs) {
		struct proc *victim = least_recently_sampled(pt);

		if (!victim)
			break;
		unload_proc(pt, victim, true);
		TRACKER_COUNT(pt, evicted_procs, 1);
	}
}
