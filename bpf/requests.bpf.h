/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of cfiprof.bpf.c (its maps and walker come first): what the BPF side
 * asks of user space.  Exec / exit events, and requests to load a pid or its
 * new mappings, each rate-limited per pid and bounded for all pids together.
 */
#ifndef CFIPROF_REQUESTS_BPF_H
#define CFIPROF_REQUESTS_BPF_H

static __always_inline void emit_event(__u32 type, __u32 pid, __u64 addr)
{
	struct cfi_event_record *ev;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		walker_count(CNT_EVENTS_LOST, 1);
		return;
	}
	ev->type = type;
	ev->pid = pid;
	ev->addr = addr;
	ev->time_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	/* requests and exec/exit are rare and urgent: wake the consumer now */
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
}

/*
 * The global bound: many processes (or one forking many) each within its own
 * limit must not flood the ring buffer and the loader.  Returns false (and
 * counts it) when this CPU has sent its share of the current slot.  Nothing is
 * lost for good: an unknown process, or one whose mappings changed after the
 * loader last read them, asks again from its next sample (walk_requests).
 */
static __always_inline bool request_budget_left(__u64 now)
{
	struct cfi_request_slot *s;
	__u64 slot = now / REQUEST_SLOT_NS;
	__u32 zero = 0;

	if (!request_budget)
		return true;
	s = bpf_map_lookup_elem(&request_slots, &zero);
	if (!s)
		return true;
	if (s->slot != slot) {
		s->slot = slot;
		s->used = 0;
	}
	if (s->used >= request_budget) {
		walker_count(CNT_REQUESTS_THROTTLED, 1);
		return false;
	}
	s->used++;
	return true;
}

/*
 * At most one request per pid per interval: pid_times' @which holds each
 * pid's last one.  Returns true when this one is within the interval, or over
 * the global budget, and must not go out.  Only a request that goes out
 * restarts the pid's interval: one refused by the budget may ask again at once.
 */
static __always_inline bool request_limited(__u32 which, __u32 pid, __u64 now, __u64 interval)
{
	struct pid_times *t = bpf_map_lookup_elem(&pid_times, &pid);

	if (t && now - t->ns[which] < interval) {
		walker_count(CNT_REQUESTS_LIMITED, 1);
		return true;
	}
	if (!request_budget_left(now))
		return true;
	pid_time_set(pid, which, now);
	walker_count(CNT_REQUESTS, 1);
	return false;
}

/* Ask user space to load a pid (addr 0) or a new mapping, at most once per interval per pid. */
static __always_inline void request_tables(__u32 pid, __u64 addr)
{
	if (!request_limited(PT_REQUEST, pid, bpf_ktime_get_ns(), request_interval_ns))
		emit_event(RECORD_REQUEST, pid, addr);
}

static __always_inline void note_change(__u32 pid, __u64 now)
{
	pid_time_set(pid, PT_CHANGED, now);
}

static __always_inline void mapping_changed(__u32 pid, __u64 addr)
{
	__u64 now = bpf_ktime_get_ns();

	note_change(pid, now);
	/* loads are deduplicated in user space: a millisecond apart is enough */
	if (!request_limited(PT_CHANGE_REQUEST, pid, now, 1000000))
		emit_event(RECORD_REQUEST, pid, addr);
}

static __always_inline void walk_requests(struct walker_state *st)
{
	/* an exiting process will need no tables */
	if (st->reason == STOP_EXITING)
		return;
	if (!st->proc_known)
		request_tables(st->pid, 0);
	/*
	 * A change whose own request was rate-limited or over the budget still
	 * gets the mappings read: also when the walk did not notice it (a
	 * library replaced by another at the same address).  A pc whose keys the
	 * process's quota refused would only be refused again.
	 */
	else if ((st->reason == STOP_NO_MAPPING && !st->keys_quota) || st->change_pending)
		request_tables(st->pid, st->missing_pc);
}

#endif
