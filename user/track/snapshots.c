// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Snapshots of processes whose samples wait for their tables.  Under a build
 * (record -a, the agent) processes such as as, mkdir or sed live a few
 * milliseconds: by the time the load thread reaches them they are gone, and
 * /proc/PID/maps with them, so their deferred samples could never finish.
 * The consumer, which sees a deferred sample within a millisecond of it, reads
 * the executable mappings and opens their files right then (no tables are
 * built there); a load that finds the process gone loads from that instead.
 *
 * Every process on the host may be hostile, and this runs on the ring-buffer
 * consumer: snapshots are bounded in number and consumer time per second, in
 * mappings per process, and in snapshots and fds held; what is refused is
 * counted (cfiprof_process_snapshots_total{outcome="refused"}) and logged once.
 * A snapshot belongs to a pid and a start time: a reused pid never gets
 * another process's mappings while it is alive, and one not used within the
 * deferred queue's timeout is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/track/tracker_internal.h"

/* A snapshot unused this long is dropped: its samples have been given up by then. */
#define SNAPSHOT_TTL_NS (5000ull * 1000 * 1000)
/*
 * Snapshots of one process (each mapping change after the last asks for one):
 * ld.so maps a handful of objects; one process mapping code in a loop must
 * not take every other process's share.
 */
#define SNAPSHOTS_PER_PROCESS 8
/* Held at once: snapshots (one per pid). */
#define SNAPSHOTS_HELD 64
/* A process with more executable mappings than this is left to its load. */
#define SNAPSHOT_MAX_MAPPINGS 64

/* Files all snapshots hold at once: half of what one load may. */
static uint32_t snapshot_fds_max(void)
{
	return fds_per_load() / 2;
}

static int by_start(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* pt->lock held: the link to pid's snapshot (*link NULL: none). */
static struct proc_snapshot **find_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc_snapshot **pp = &pt->snap.snaps;

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* pt->lock held: takes the snapshot at *pp off the list. */
static struct proc_snapshot *unlink_locked(struct proc_tracker *pt, struct proc_snapshot **pp)
{
	struct proc_snapshot *s = *pp;

	*pp = s->next;
	s->next = NULL;
	pt->snap.nr_snaps--;
	pt->snap.snap_fds -= s->nr_fds;
	return s;
}

void snapshot_free(struct proc_tracker *pt, struct proc_snapshot *s)
{
	uint32_t i;

	(void)pt;
	if (!s)
		return;
	for (i = 0; s->fds && i < s->nr; i++) {
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	}
	free(s->fds);
	free(s->ents);
	free(s);
}

/* pt->lock held: snapshots past their time move to *gone (freed without the lock). */
static void expire_locked(struct proc_tracker *pt, uint64_t now, struct proc_snapshot **gone)
{
	struct proc_snapshot **pp = &pt->snap.snaps, *s;

	while (*pp) {
		if (now - (*pp)->taken_ns < SNAPSHOT_TTL_NS) {
			pp = &(*pp)->next;
			continue;
		}
		s = unlink_locked(pt, pp);
		s->next = *gone;
		*gone = s;
	}
}

static void free_list(struct proc_tracker *pt, struct proc_snapshot *s)
{
	struct proc_snapshot *next;

	for (; s; s = next) {
		next = s->next;
		snapshot_free(pt, s);
	}
}

enum admission {
	SNAP_SKIP,    /* the tracker has read the mappings since, or a snapshot has */
	SNAP_TAKE,    /* take one */
	SNAP_RECHECK, /* one exists, but pid exited since: take one only for another process */
	SNAP_REFUSED, /* over the budget */
};

/* pt->lock held: whether to take a snapshot of pid now; *existing_start for SNAP_RECHECK. */
static enum admission admit_locked(struct proc_tracker *pt, uint32_t pid, uint64_t changed_ns,
				   uint64_t now, uint64_t *existing_start)
{
	struct proc_snapshot *s = *find_locked(pt, pid);
	struct proc *p = tracker_find_locked(pt, pid);

	if (s && s->taken_ns >= changed_ns && !s->exit_seen)
		return SNAP_SKIP;
	if (p && is_live(p) && p->maps_read_ns >= changed_ns)
		return SNAP_SKIP;
	if (now - pt->snap.snap_window_ns >= 1000000000ull) {
		pt->snap.snap_window_ns = now;
		pt->snap.snap_window_taken = 0;
		pt->snap.snap_window_spent_ns = 0;
	}
	if ((s && !s->exit_seen && s->nr_taken >= SNAPSHOTS_PER_PROCESS) ||
	    pt->snap.snap_window_taken >= SNAPSHOTS_PER_SEC ||
	    pt->snap.snap_window_spent_ns >= SNAPSHOT_NS_PER_SEC ||
	    (!s && pt->snap.nr_snaps >= SNAPSHOTS_HELD))
		return SNAP_REFUSED;
	pt->snap.snap_window_taken++;
	if (s && s->taken_ns >= changed_ns) {
		*existing_start = s->start_time;
		return SNAP_RECHECK;
	}
	return SNAP_TAKE;
}

static void count_refusal(struct proc_tracker *pt, uint32_t pid, const char *why)
{
	bool first;

	TRACKER_COUNT(pt, snapshots_refused, 1);
	pthread_mutex_lock(&pt->lock);
	first = !pt->snap.snap_refusal_logged;
	pt->snap.snap_refusal_logged = true;
	pthread_mutex_unlock(&pt->lock);
	if (first)
		fprintf(stderr,
			"cfiprof: pid %u: no snapshot of its mappings (%s): if it exits before "
			"its load, its waiting samples stay tables-pending; logged once\n",
			pid, why);
}

/*
 * Reads pid's executable mappings and opens their files; NULL when there is
 * nothing to keep (gone, a kernel thread, the process already snapshotted
 * when recheck, or refused: counted).
 */
static struct proc_snapshot *snapshot_read(struct proc_tracker *pt, uint32_t pid, bool recheck,
					   uint64_t existing_start)
{
	struct proc_stat_info stat;
	struct proc_snapshot *s = calloc(1, sizeof(*s));
	bool fds_ok;
	struct stat st;
	uint32_t i;
	int n;

	if (!s)
		return NULL;
	s->pid = pid;
	/* what a load from it tells BPF it read: mapping changes after this are newer */
	s->taken_ns = mono_ns();
	if (proc_stat_read(pid, &stat)) {
		TRACKER_COUNT(pt, snapshots_late, 1);
		goto fail;
	}
	if (recheck && stat.start_time == existing_start)
		goto fail;
	s->start_time = stat.start_time;
	/* a sample with a user stack is never a kernel thread's: nothing mapped is too late */
	n = proc_maps_read((int)pid, true, &s->ents);
	if (n <= 0) {
		TRACKER_COUNT(pt, snapshots_late, 1);
		goto fail;
	}
	if (n > SNAPSHOT_MAX_MAPPINGS) {
		count_refusal(pt, pid, "too many executable mappings");
		goto fail;
	}
	s->nr = (uint32_t)n;
	qsort(s->ents, s->nr, sizeof(*s->ents), by_start);
	s->fds = malloc(s->nr * sizeof(*s->fds));
	if (!s->fds)
		goto fail;
	for (i = 0; i < s->nr; i++)
		s->fds[i] = -1;
	/* only this thread adds snapshots: the fds held can only go down until it inserts */
	pthread_mutex_lock(&pt->lock);
	fds_ok = pt->snap.snap_fds + s->nr <= snapshot_fds_max();
	pthread_mutex_unlock(&pt->lock);
	if (!fds_ok) {
		count_refusal(pt, pid, "the files snapshots hold");
		goto fail;
	}
	for (i = 0; i < s->nr; i++) {
		s->fds[i] = mapping_open(pt, pid, &s->ents[i], &st);
		if (s->fds[i] >= 0)
			s->nr_fds++;
	}
	return s;
fail:
	snapshot_free(pt, s);
	return NULL;
}

/* Takes the place of pid's older snapshot, if any (freed). */
static void insert(struct proc_tracker *pt, struct proc_snapshot *s, uint64_t spent_ns)
{
	struct proc_snapshot **pp, *old = NULL;

	pthread_mutex_lock(&pt->lock);
	pt->snap.snap_window_spent_ns += spent_ns;
	if (s) {
		pp = find_locked(pt, s->pid);
		if (*pp)
			old = unlink_locked(pt, pp);
		s->nr_taken = old && old->start_time == s->start_time ? old->nr_taken + 1 : 1;
		s->next = pt->snap.snaps;
		pt->snap.snaps = s;
		pt->snap.nr_snaps++;
		pt->snap.snap_fds += s->nr_fds;
	}
	pthread_mutex_unlock(&pt->lock);
	snapshot_free(pt, old);
	if (s)
		TRACKER_COUNT(pt, snapshots_taken, 1);
}

void proc_tracker_snapshot(struct proc_tracker *pt, uint32_t pid, uint64_t changed_ns)
{
	struct proc_snapshot *gone = NULL, *s;
	uint64_t t0 = mono_ns(), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), existing_start = 0;
	enum admission a;

	pthread_mutex_lock(&pt->lock);
	expire_locked(pt, t0, &gone);
	a = admit_locked(pt, pid, changed_ns, t0, &existing_start);
	pthread_mutex_unlock(&pt->lock);
	free_list(pt, gone);
	if (a == SNAP_SKIP)
		return;
	if (a == SNAP_REFUSED) {
		count_refusal(pt, pid, "over the per-second, per-process or held budget");
		return;
	}
	s = snapshot_read(pt, pid, a == SNAP_RECHECK, existing_start);
	/* the budget is the consumer's CPU time: a preempted snapshot costs the host nothing */
	insert(pt, s, clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
	/* its load may have been refused by the request budget: it is gone after that */
	if (s)
		tracker_request_unqueued(pt, pid, 0);
}

struct proc_snapshot *snapshot_take(struct proc_tracker *pt, uint32_t pid)
{
	struct proc_snapshot **pp, *s = NULL;

	pthread_mutex_lock(&pt->lock);
	pp = find_locked(pt, pid);
	if (*pp)
		s = unlink_locked(pt, pp);
	pthread_mutex_unlock(&pt->lock);
	return s;
}

struct proc_snapshot *snapshot_check(struct proc_tracker *pt, struct proc_snapshot *s,
				     const struct proc_stat_info *stat)
{
	if (s && (stat ? s->start_time != stat->start_time
		       : mono_ns() - s->taken_ns >= SNAPSHOT_TTL_NS)) {
		snapshot_free(pt, s);
		return NULL;
	}
	return s;
}

/* The entry of snap for the very mapping e (same range, offset and file): its index, or -1. */
static int find_entry(const struct proc_snapshot *snap, const struct maps_entry *e)
{
	uint32_t lo = 0, hi = snap->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct maps_entry *x = &snap->ents[mid];

		if (x->start < e->start) {
			lo = mid + 1;
		} else if (x->start > e->start) {
			hi = mid;
		} else {
			bool same = x->end == e->end && x->offset == e->offset &&
				    x->inode == e->inode && x->dev_major == e->dev_major &&
				    x->dev_minor == e->dev_minor;

			return same ? (int)mid : -1;
		}
	}
	return -1;
}

int snapshot_mapping_open(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
			  struct stat *st, const struct proc_snapshot *snap)
{
	int k, fd;

	if (!snap)
		return mapping_open(pt, pid, e, st);
	k = find_entry(snap, e);
	if (k >= 0 && snap->fds[k] >= 0) {
		fd = fcntl(snap->fds[k], F_DUPFD_CLOEXEC, 0);
		if (fd >= 0 && !fstat(fd, st))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	/* the pid may be another process's by now: nothing of it is opened */
	if (snap->only_source)
		return -1;
	return mapping_open(pt, pid, e, st);
}

void snapshot_note_exit_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc_snapshot *s = *find_locked(pt, pid);

	if (s)
		s->exit_seen = true;
}

void snapshots_free_all(struct proc_tracker *pt)
{
	struct proc_snapshot *all = pt->snap.snaps;

	pt->snap.snaps = NULL;
	pt->snap.nr_snaps = 0;
	pt->snap.snap_fds = 0;
	free_list(pt, all);
}

/*
 * The paths of a snapshot made from the kernel's list: one block after the
 * entries, as proc_maps_read lays them out, so snapshot_free frees both.
 */
struct exit_block {
	struct maps_entry ents[CFI_MAPS_MAX];
	char paths[CFI_MAPS_MAX][256];
};

/*
 * lock held: for each entry of s, the file the consumer's snapshot of the
 * same process (old) holds for the very same mapping, if any.
 */
static void files_from_snapshot_locked(struct proc_snapshot *s, struct exit_block *blk,
				       const struct proc_snapshot *old)
{
	for (uint32_t i = 0; old && old->start_time == s->start_time && i < s->nr; i++) {
		int k = find_entry(old, &s->ents[i]);

		if (k < 0 || old->fds[k] < 0)
			continue;
		s->fds[i] = fcntl(old->fds[k], F_DUPFD_CLOEXEC, 0);
		snprintf(blk->paths[i], sizeof(blk->paths[i]), "%s", old->ents[k].path);
	}
}

/*
 * A copy of the profiler's own vDSO when it is as big as the one a gone
 * process mapped (a 64-bit process of the same kernel: the same image), or -1.
 */
static int own_vdso_copy(uint64_t size)
{
	struct maps_entry *ents = NULL;
	int n = proc_maps_read(getpid(), true, &ents), fd = -1;

	for (int i = 0; i < n; i++) {
		if (!strcmp(ents[i].path, "[vdso]") && ents[i].end - ents[i].start == size)
			fd = vdso_copy_fd((uint32_t)getpid(), ents[i].start, ents[i].end);
	}
	free(ents);
	return fd;
}

void proc_tracker_snapshot_at_exit(struct proc_tracker *pt, const struct exit_list *l)
{
	struct proc_snapshot *s, *gone = NULL;
	struct exit_block *blk;
	uint32_t i, unknown = 0;
	long tick = sysconf(_SC_CLK_TCK);

	if (!l->nr || l->nr > CFI_MAPS_MAX)
		return;
	s = calloc(1, sizeof(*s));
	blk = calloc(1, sizeof(*blk));
	if (!s || !blk || !(s->fds = malloc(l->nr * sizeof(*s->fds)))) {
		free(blk);
		snapshot_free(pt, s);
		return;
	}
	s->pid = l->pid;
	/* gone: nothing is read of the pid in /proc, which may be another process's now */
	s->only_source = true;
	s->at_exit = true;
	/* the mappings as they were at the exit: later than any change before it */
	s->taken_ns = l->time_ns;
	s->start_time = l->start_boottime_ns / (uint64_t)(1000000000 / (tick > 0 ? tick : 100));
	s->ents = blk->ents;
	s->nr = l->nr;
	for (i = 0; i < l->nr; i++) {
		const struct cfi_maps_entry *k = &l->ents[i];
		struct maps_entry *e = &blk->ents[i];

		s->fds[i] = -1;
		/* the kernel walks them in address order: anything else is not its list */
		if (k->start >= k->end || (i && k->start < l->ents[i - 1].end)) {
			s->nr = i;
			snapshot_free(pt, s);
			return;
		}
		e->start = k->start;
		e->end = k->end;
		e->offset = k->pgoff;
		e->inode = k->ino;
		e->dev_major = k->dev >> 20;
		e->dev_minor = k->dev & 0xfffff;
		e->read = e->exec = e->priv = true;
		e->path = blk->paths[i];
		if (k->flags & CFI_MAPS_ENTRY_VDSO)
			snprintf(blk->paths[i], sizeof(blk->paths[i]), "[vdso]");
	}
	/* the consumer's snapshot, if it came in time, holds the process's own files */
	pthread_mutex_lock(&pt->lock);
	expire_locked(pt, mono_ns(), &gone);
	files_from_snapshot_locked(s, blk, *find_locked(pt, l->pid));
	pthread_mutex_unlock(&pt->lock);
	free_list(pt, gone);
	for (i = 0; i < s->nr; i++) {
		struct maps_entry *e = &blk->ents[i];

		if (s->fds[i] < 0 && (l->ents[i].flags & CFI_MAPS_ENTRY_VDSO))
			s->fds[i] = own_vdso_copy(e->end - e->start);
		else if (s->fds[i] < 0)
			s->fds[i] = file_index_open(&pt->snap.files, e->dev_major, e->dev_minor,
						    e->inode, blk->paths[i], sizeof(blk->paths[i]));
		/* no load opened it: a path of its own, so it is not taken for anonymous code */
		if (s->fds[i] < 0 && !(l->ents[i].flags & CFI_MAPS_ENTRY_VDSO)) {
			snprintf(blk->paths[i], sizeof(blk->paths[i]), "[inode %u:%u:%" PRIu64 "]",
				 e->dev_major, e->dev_minor, e->inode);
			unknown++;
		} else if (s->fds[i] >= 0) {
			s->nr_fds++;
		}
	}
	TRACKER_COUNT(pt, snapshots_at_exit, 1);
	TRACKER_COUNT(pt, exit_files_unknown, unknown);
	insert(pt, s, 0);
	/*
	 * Its exit event may be queued before it: a load must come after this
	 * (one under way now took no snapshot).
	 */
	tracker_request_unqueued(pt, l->pid, WORK_LOAD);
}

/* The list being gathered for pid (a free slot if none, the oldest one's if all are taken). */
static struct exit_list *gathering(struct proc_tracker *pt, uint32_t pid)
{
	struct exit_list *free_slot = NULL;
	uint32_t i, oldest = 0;

	for (i = 0; i < EXIT_LISTS_GATHERED; i++) {
		struct exit_list *l = &pt->snap.exit_lists[i];

		if (l->pid == pid)
			return l;
		if (!l->pid && !free_slot)
			free_slot = l;
		if (l->time_ns < pt->snap.exit_lists[oldest].time_ns)
			oldest = i;
	}
	if (!free_slot) {
		/* more processes exiting at once than CPUs: an end was lost */
		free_slot = &pt->snap.exit_lists[oldest];
		TRACKER_COUNT(pt, exit_lists_dropped, 1);
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->pid = pid;
	/* the order of arrival, for the slot to give up first */
	free_slot->time_ns = mono_ns();
	return free_slot;
}

void proc_tracker_exit_record(struct proc_tracker *pt, const void *data, size_t size)
{
	const struct cfi_maps_entry_record *er = data;
	const struct cfi_maps_end_record *end = data;
	struct exit_list *l;

	if (size < sizeof(*end) || !end->pid || !pt->snap.exit_lists ||
	    (er->type == RECORD_MAPS_ENTRY && size < sizeof(*er)))
		return;
	l = gathering(pt, er->pid);
	if (er->type == RECORD_MAPS_ENTRY) {
		if (l->nr < CFI_MAPS_MAX)
			l->ents[l->nr++] = er->e;
		else
			l->truncated = true;
		return;
	}
	l->time_ns = end->time_ns;
	l->start_boottime_ns = end->start_boottime_ns;
	l->truncated |= end->lost != 0;
	/* what came still serves: a mapping missing from it is walked with frame pointers */
	if (l->truncated)
		TRACKER_COUNT(pt, exit_lists_partial, 1);
	proc_tracker_snapshot_at_exit(pt, l);
	l->pid = 0;
}
