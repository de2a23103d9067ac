// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table load thread's queue, fed by the ring-buffer consumer: requests
 * for a pid already waiting are merged, and a process whose samples wait for
 * their tables moves ahead of the others.
 */
#include <string.h>

#include "user/track/tracker_internal.h"

/* Queued items looked at for one of the same pid: a request merges with a load waiting. */
#define MERGE_SCAN 64

/* lock held: whether work of pid is queued among the newest items (of kind, 0: any). */
static bool queued_locked(struct proc_tracker *pt, uint32_t pid, uint16_t kind)
{
	uint32_t k, n = pt->q_len < MERGE_SCAN ? pt->q_len : MERGE_SCAN;

	for (k = 0; k < n; k++) {
		const struct work_item *q = &pt->queue[(pt->q_head + pt->q_len - 1 - k) % QUEUE_CAP];

		if (q->pid == pid && (!kind || q->kind == kind))
			return true;
	}
	return false;
}

/* lock held. */
static void enqueue_locked(struct proc_tracker *pt, uint32_t pid, enum tracker_work w,
			   uint64_t time_ns)
{
	if (pt->q_len == QUEUE_CAP) {
		TRACKER_COUNT(pt, queue_dropped, 1);
	} else {
		pt->queue[(pt->q_head + pt->q_len) % QUEUE_CAP] =
		    (struct work_item){.pid = pid, .kind = w, .time_ns = time_ns};
		pt->q_len++;
		pthread_cond_signal(&pt->work_cond);
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

void tracker_request_unqueued(struct proc_tracker *pt, uint32_t pid)
{
	pthread_mutex_lock(&pt->lock);
	if (!queued_locked(pt, pid, 0))
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
	 * A load of pid queued reads its maps anyway; others' go first: a swarm of
	 * new processes would be gone before their loads.
	 */
	if (pt->q_len)
		goto out;
	if (pt->reload_slot != now_ns / RELOAD_SLOT_NS) {
		pt->reload_slot = now_ns / RELOAD_SLOT_NS;
		pt->reload_slot_used = 0;
	}
	if (pt->reload_slot_used >= RELOADS_FOR_WALKS_PER_SLOT)
		goto out;
	pt->reload_slot_used++;
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
		if (pt->hints[k].pid == pid && pt->hints[k].pc >> 12 == pc >> 12)
			return;
	}
	memmove(&pt->hints[1], &pt->hints[0], (WAIT_HINTS - 1) * sizeof(pt->hints[0]));
	pt->hints[0] = (struct wait_hint){.pid = pid, .pc = pc};
}

void proc_tracker_note_waiting(struct proc_tracker *pt, uint32_t pid, uint64_t pc)
{
	uint32_t k, n;
	struct work_item w;

	pthread_mutex_lock(&pt->lock);
	add_wait_hint(pt, pid, pc);
	n = pt->q_len < HURRY_SCAN ? pt->q_len : HURRY_SCAN;
	/* pid's first queued item, if it is a load: the items before it are other pids' */
	for (k = 0; k < n && pt->queue[(pt->q_head + k) % QUEUE_CAP].pid != pid; k++)
		;
	w = pt->queue[(pt->q_head + k) % QUEUE_CAP];
	if (k > 0 && k < n && w.kind != WORK_EXIT) {
		for (; k > 0; k--)
			pt->queue[(pt->q_head + k) % QUEUE_CAP] =
			    pt->queue[(pt->q_head + k - 1) % QUEUE_CAP];
		pt->queue[pt->q_head] = w;
		TRACKER_COUNT(pt, loads_hurried, 1);
	}
	pthread_mutex_unlock(&pt->lock);
}
