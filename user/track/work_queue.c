// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table load thread's queue, fed by the ring-buffer consumer: requests
 * for a pid already waiting are merged, a process whose samples wait for
 * their tables moves ahead of the others, and a big one goes behind them.
 */
#include <string.h>

#include "user/track/tracker_internal.h"

/* Queued items looked at for one of the same pid: a request merges with a load waiting. */
#define MERGE_SCAN 64

/* lock held: whether work of pid is queued among the newest items (of kind, 0: any). */
static bool queued_locked(struct proc_tracker *pt, uint32_t pid, uint16_t kind)
{
	uint32_t k, n = pt->work.q_len < MERGE_SCAN ? pt->work.q_len : MERGE_SCAN;

	for (k = 0; k < n; k++) {
		const struct work_item *q = &pt->work.queue[(pt->work.q_head + pt->work.q_len - 1 - k) % QUEUE_CAP];

		if (q->pid == pid && (!kind || q->kind == kind))
			return true;
	}
	return false;
}

/* lock held. */
static void enqueue_locked(struct proc_tracker *pt, uint32_t pid, enum tracker_work w,
			   uint64_t time_ns)
{
	if (pt->work.q_len == QUEUE_CAP) {
		TRACKER_COUNT(pt, queue_dropped, 1);
	} else {
		pt->work.queue[(pt->work.q_head + pt->work.q_len) % QUEUE_CAP] =
		    (struct work_item){.pid = pid, .kind = w, .time_ns = time_ns};
		pt->work.q_len++;
		pthread_cond_signal(&pt->work.work_cond);
	}
}

void proc_tracker_request(struct proc_tracker *pt, uint32_t pid, enum tracker_work w,
			  uint64_t time_ns)
{
	pthread_mutex_lock(&pt->lock);
	if (w == WORK_EXIT)
		snapshot_note_exit_locked(pt, pid);
	/* a load already waiting will read the newest mappings anyway */
	if (w == WORK_LOAD && queued_locked(pt, pid, WORK_LOAD))
		TRACKER_COUNT(pt, loads_merged, 1);
	else
		enqueue_locked(pt, pid, w, time_ns);
	pthread_mutex_unlock(&pt->lock);
}

void tracker_request_unqueued(struct proc_tracker *pt, uint32_t pid, uint16_t kind)
{
	pthread_mutex_lock(&pt->lock);
	if (!queued_locked(pt, pid, kind))
		enqueue_locked(pt, pid, WORK_LOAD, 0);
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_reload_for_walk(struct proc_tracker *pt, uint32_t pid, uint64_t now_ns)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (!p || !is_live(p) || now_ns - p->reload_asked_ns < RELOAD_FOR_WALKS_GAP_NS)
		goto out;
	/*
	 * Its keys were refused by its quota: the pcs left without a mapping
	 * would be refused again, and reading thousands of unchanged mappings
	 * each time is the loop the BPF side avoids the same way
	 * (CFI_PROC_KEYS_QUOTA); a change of its mappings still asks there.
	 */
	if (__atomic_load_n(&p->keys_quota, __ATOMIC_RELAXED))
		goto out;
	/*
	 * A load of pid queued reads its maps anyway; others' go first: a swarm of
	 * new processes would be gone before their loads.
	 */
	if (pt->work.q_len)
		goto out;
	if (pt->reload.reload_slot != now_ns / RELOAD_SLOT_NS) {
		pt->reload.reload_slot = now_ns / RELOAD_SLOT_NS;
		pt->reload.reload_slot_used = 0;
	}
	if (pt->reload.reload_slot_used >= RELOADS_FOR_WALKS_PER_SLOT)
		goto out;
	pt->reload.reload_slot_used++;
	p->reload_asked_ns = now_ns;
	TRACKER_COUNT(pt, reloads_for_walks, 1);
	enqueue_locked(pt, pid, WORK_LOAD, 0);
out:
	pthread_mutex_unlock(&pt->lock);
}

/* Queued items looked at for a waiting process's load: its first samples come early. */
#define HURRY_SCAN 256

/* lock held: remembers where pid's samples wait (newest first, one entry per page). */
static void add_wait_hint(struct proc_tracker *pt, uint32_t pid, uint64_t pc)
{
	uint32_t k;

	for (k = 0; k < WAIT_HINTS; k++) {
		if (pt->reload.hints[k].pid == pid && pt->reload.hints[k].pc >> 12 == pc >> 12)
			return;
	}
	memmove(&pt->reload.hints[1], &pt->reload.hints[0], (WAIT_HINTS - 1) * sizeof(pt->reload.hints[0]));
	pt->reload.hints[0] = (struct wait_hint){.pid = pid, .pc = pc};
}

void proc_tracker_note_waiting(struct proc_tracker *pt, uint32_t pid, uint64_t pc)
{
	uint32_t k, n;
	struct work_item w;

	pthread_mutex_lock(&pt->lock);
	add_wait_hint(pt, pid, pc);
	n = pt->work.q_len < HURRY_SCAN ? pt->work.q_len : HURRY_SCAN;
	/* pid's first queued item, if it is a load: the items before it are other pids' */
	for (k = 0; k < n && pt->work.queue[(pt->work.q_head + k) % QUEUE_CAP].pid != pid; k++)
		;
	w = pt->work.queue[(pt->work.q_head + k) % QUEUE_CAP];
	/* a big load was sent behind the others on purpose: its samples waiting change nothing */
	if (k > 0 && k < n && w.kind != WORK_EXIT && !w.yielded) {
		for (; k > 0; k--)
			pt->work.queue[(pt->work.q_head + k) % QUEUE_CAP] =
			    pt->work.queue[(pt->work.q_head + k - 1) % QUEUE_CAP];
		pt->work.queue[pt->work.q_head] = w;
		TRACKER_COUNT(pt, loads_hurried, 1);
	}
	pthread_mutex_unlock(&pt->lock);
}

/*
 * A process with more than BIG_LOAD_MAPPINGS executable mappings is loaded
 * after the work queued behind it: a process mapping thousands of files (or
 * one file thousands of times) must not make every ordinary process wait its
 * load.  big_pids remembers who those are.
 */

/* lock held: the index of pid in big_pids, or -1. */
static int big_pid_at(const struct proc_tracker *pt, uint32_t pid)
{
	for (uint32_t k = 0; k < pt->work.nr_big; k++)
		if (pt->work.big_pids[k] == pid)
			return (int)k;
	return -1;
}

/* lock held: pid's maps were read big (newest first, the oldest forgotten) or not. */
static void note_big_locked(struct proc_tracker *pt, uint32_t pid, bool big)
{
	int at = big_pid_at(pt, pid);

	if (at >= 0)
		memmove(&pt->work.big_pids[at], &pt->work.big_pids[at + 1],
			(--pt->work.nr_big - (uint32_t)at) * sizeof(pt->work.big_pids[0]));
	if (!big)
		return;
	if (pt->work.nr_big == BIG_PIDS_HELD)
		pt->work.nr_big--;
	memmove(&pt->work.big_pids[1], &pt->work.big_pids[0], pt->work.nr_big++ * sizeof(pt->work.big_pids[0]));
	pt->work.big_pids[0] = pid;
}

void tracker_forget_big(struct proc_tracker *pt, uint32_t pid)
{
	pthread_mutex_lock(&pt->lock);
	note_big_locked(pt, pid, false);
	pthread_mutex_unlock(&pt->lock);
}

/* lock held: whether a load of pid already waits at the back. */
static bool yielded_queued_locked(const struct proc_tracker *pt, uint32_t pid)
{
	for (uint32_t k = 0; k < pt->work.q_len; k++) {
		const struct work_item *q = &pt->work.queue[(pt->work.q_head + k) % QUEUE_CAP];

		if (q->pid == pid && q->yielded)
			return true;
	}
	return false;
}

/*
 * Sends a big load behind the queued work, once; true when it did (or when
 * one already waits there).  nr is the mappings read, or -1 before any read:
 * a process known to be big goes back unread, since reading 18,000 mappings
 * is itself most of a second on a loaded host, and hurrying its load (its
 * samples wait too) would otherwise bring it to the front read after read.
 */
bool tracker_yield_big_load(struct proc_tracker *pt, const struct work_item *w, int64_t nr)
{
	bool queued = false, known;

	if (!w)
		return false;
	pthread_mutex_lock(&pt->lock);
	known = big_pid_at(pt, w->pid) >= 0;
	if (nr >= 0)
		note_big_locked(pt, w->pid, nr > BIG_LOAD_MAPPINGS);
	if (w->yielded || (nr >= 0 ? nr <= BIG_LOAD_MAPPINGS : !known))
		goto out;
	if (yielded_queued_locked(pt, w->pid)) {
		queued = true;
		TRACKER_COUNT(pt, loads_merged, 1);
	} else if (pt->work.q_len > 0 && pt->work.q_len < QUEUE_CAP) {
		pt->work.queue[(pt->work.q_head + pt->work.q_len) % QUEUE_CAP] = (struct work_item){
		    .pid = w->pid, .kind = w->kind, .yielded = 1, .time_ns = w->time_ns};
		pt->work.q_len++;
		queued = true;
		/* counted once per maps read: a known one sent back unread is not */
		if (nr >= 0)
			TRACKER_COUNT(pt, big_loads_yielded, 1);
	}
out:
	pthread_mutex_unlock(&pt->lock);
	return queued;
}
