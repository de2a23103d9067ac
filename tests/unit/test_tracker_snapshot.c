// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Snapshots of processes whose samples wait (issue 13, "process gone"): a
 * process that exits before the load thread reaches it is loaded from the
 * mappings and files the consumer read when its first deferred samples came.
 * Over real BPF maps (needs root), with forked children standing in for the
 * short processes: a load after the child is reaped comes from the snapshot,
 * its frames are named, its exit leaves the entry until its unload is due and
 * then nothing of it stays; a snapshot of another start time is not used; the
 * budget refuses (and counts) what is over it.
 */
#include <bpf/bpf.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/profile/frame_names.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_stat.h"
#include "user/track/tracker_internal.h"

int snap_marker(int x);
__attribute__((noinline)) int snap_marker(int x)
{
	return x * 5 + 2;
}

/* Kills and reaps *pid once (a reaped pid may be another process's by now). */
static void reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

/* BPF entries (procs, mapping keys) of pid. */
static int entries_of(struct tracker_world *w, uint32_t pid)
{
	struct cfi_mapping_key k, next;
	struct cfi_proc_val pv;
	void *prev = NULL;
	int n = !bpf_map_lookup_elem(w->procs_fd, &pid, &pv);

	while (!bpf_map_get_next_key(w->maps_fd, prev, &next)) {
		n += next.pid == pid;
		k = next;
		prev = &k;
	}
	return n;
}

static uint32_t nr_snaps(struct proc_tracker *pt)
{
	uint32_t n;

	pthread_mutex_lock(&pt->lock);
	n = pt->snap.nr_snaps;
	pthread_mutex_unlock(&pt->lock);
	return n;
}

/* A tracker over BPF maps and a child snapshotted as its first deferred samples come: its pid. */
static uint32_t world_with_snapshot(struct tracker_world *w, pid_t *kid)
{
	*kid = -1;
	if (tracker_world_init(w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return 0;
	}
	*kid = spawn_mapping_child(0);
	CHECK(*kid > 0, "child");
	if (*kid > 0)
		proc_tracker_snapshot(w->pt, (uint32_t)*kid, 0);
	return *kid > 0 ? (uint32_t)*kid : 0;
}

/*
 * The load comes after the child is gone: from the snapshot, its entry and
 * keys published with the snapshot's time, its frames named; it is marked
 * exited at once, its exit event does not delete the entry its samples still
 * need, and the unload and the forget leave nothing.
 */
static void test_load_gone_from_snapshot(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	struct cfi_proc_val pv;
	struct frame_namer fn;
	uint64_t taken_ns = 0;
	uint32_t pid;
	const char *name;
	struct proc *p;
	char buf[256];
	pid_t kid;
	int n;

	pid = world_with_snapshot(&w, &kid);
	if (!pid) {
		tracker_world_free(&w);
		return;
	}
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_taken == 1 && nr_snaps(w.pt) == 1, "%" PRIu64 " snapshots taken",
	      st.snapshots_taken);
	pthread_mutex_lock(&w.pt->lock);
	if (w.pt->snap.snaps)
		taken_ns = w.pt->snap.snaps->taken_ns;
	CHECK(w.pt->snap.snap_fds > 0, "the snapshot holds %u files", w.pt->snap.snap_fds);
	pthread_mutex_unlock(&w.pt->lock);
	/* asked again for mappings it has read since: nothing new */
	proc_tracker_snapshot(w.pt, pid, taken_ns);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_taken == 1, "a second snapshot of unchanged mappings was taken");
	reap(&kid);

	CHECK(proc_tracker_load_now(w.pt, pid) == 0, "load of the reaped child");
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_used == 1 && nr_snaps(w.pt) == 0 && w.pt->snap.snap_fds == 0,
	      "snapshots used %" PRIu64 ", %u left, %u fds held", st.snapshots_used, nr_snaps(w.pt),
	      w.pt->snap.snap_fds);
	CHECK(!bpf_map_lookup_elem(w.procs_fd, &pid, &pv) && pv.loaded_ns == taken_ns,
	      "procs entry with the snapshot's time (%" PRIu64 ", want %" PRIu64 ")",
	      (uint64_t)pv.loaded_ns, taken_ns);
	n = entries_of(&w, pid);
	CHECK(n > 1, "%d BPF entries for the gone child", n);
	p = proc_tracker_find(w.pt, pid);
	CHECK(p && p->exited && p->unload_due_ns && w.pt->nr_live == 0,
	      "loaded from a snapshot: exited, its unload due, not live (%u live)", w.pt->nr_live);
	/* a fork of this program: our code at the same address, named from the snapshot */
	frame_namer_init(&fn, w.pt, NULL);
	name = frame_name_user(&fn, pid, 0, (uintptr_t)&snap_marker, true, buf, sizeof(buf));
	CHECK(!strcmp(name, "snap_marker"), "the gone child's frame named '%s'", name);
	frame_namer_free(&fn);

	/* its exit event after the load: the entry stays until the unload is due */
	pthread_mutex_lock(&w.pt->load_lock);
	exit_proc(w.pt, pid);
	pthread_mutex_unlock(&w.pt->load_lock);
	CHECK(entries_of(&w, pid) == n, "the exit event removed entries its samples need");
	pthread_mutex_lock(&w.pt->load_lock);
	unload_due_procs(w.pt, UINT64_MAX);
	pthread_mutex_unlock(&w.pt->load_lock);
	CHECK(entries_of(&w, pid) == 0, "%d BPF entries left after the unload",
	      entries_of(&w, pid));
	proc_tracker_forget_exited(w.pt);
	proc_tracker_forget_exited(w.pt);
	CHECK(proc_tracker_find(w.pt, pid) == NULL, "the gone child still in the registry");
	CHECK(snap_marker(1) == 7, "marker");
	tracker_world_free(&w);
}

/*
 * A live process whose maps read empty is not gone: its snapshot is not
 * loaded and it is not marked exited.  maps opened just before an exec
 * replaced the address space reads empty (the file holds the old one); taken
 * for gone, the exec'd process was loaded from the snapshot of its old image,
 * marked exited, and no later load was made: every sample tables-pending
 * (`record -- sh -c "exec node ..."` on a loaded machine).  That race is in
 * the kernel; a kernel thread (kthreadd, pid 2) reads empty too, alive, and
 * stands in for it here with a snapshot given its pid and start time.
 */
static void test_empty_maps_alive(void)
{
	struct proc_stat_info kstat;
	struct maps_entry *ents = NULL;
	struct tracker_world w;
	struct tracker_stats st;
	struct proc *p;
	uint32_t pid;
	pid_t kid;

	pid = world_with_snapshot(&w, &kid);
	if (!pid) {
		tracker_world_free(&w);
		return;
	}
	CHECK(proc_stat_read(2, &kstat) == 0 && !proc_stat_dying(&kstat) &&
		  proc_maps_read(2, true, &ents) == 0,
	      "pid 2 is no live kernel thread without mappings");
	free(ents);
	pthread_mutex_lock(&w.pt->lock);
	CHECK(w.pt->snap.snaps && !w.pt->snap.snaps->next, "one snapshot");
	if (w.pt->snap.snaps) {
		w.pt->snap.snaps->pid = 2;
		w.pt->snap.snaps->start_time = kstat.start_time;
	}
	pthread_mutex_unlock(&w.pt->lock);
	CHECK(proc_tracker_load_now(w.pt, 2) != 0, "a process without mappings was loaded");
	proc_tracker_stats(w.pt, &st);
	p = proc_tracker_find(w.pt, 2);
	CHECK(st.snapshots_used == 0 && (!p || (!p->loaded && !p->exited)),
	      "alive, it was loaded from its snapshot (%" PRIu64 " used) and marked exited",
	      st.snapshots_used);
	reap(&kid);
	tracker_world_free(&w);
}

/*
 * A pid reused: a snapshot of another start time is never used for the
 * process alive under the pid (it is dropped, its files closed), and once the
 * pid's exit was seen a deferred sample of it takes a new snapshot if the
 * process is another one.
 */
static void test_pid_reuse(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	uint64_t real_start = 0;
	uint32_t pid;
	struct proc *p;
	pid_t kid;

	pid = world_with_snapshot(&w, &kid);
	if (!pid) {
		tracker_world_free(&w);
		return;
	}
	pthread_mutex_lock(&w.pt->lock);
	if (w.pt->snap.snaps) {
		real_start = w.pt->snap.snaps->start_time;
		w.pt->snap.snaps->start_time += 1000; /* as if an earlier process had the pid */
	}
	pthread_mutex_unlock(&w.pt->lock);
	CHECK(real_start > 0, "snapshot taken");

	/* the pid's exit was seen: a later sample of it may be another process's */
	proc_tracker_request(w.pt, pid, WORK_EXIT, 0);
	/*
	 * a budget of its own (test_budget's matter): under TSan the first
	 * snapshot alone spent the 20 ms a second (a clean-clone run: 1 taken)
	 */
	pthread_mutex_lock(&w.pt->lock);
	w.pt->snap.snap_window_spent_ns = 0;
	w.pt->snap.snap_window_taken = 0;
	pthread_mutex_unlock(&w.pt->lock);
	proc_tracker_snapshot(w.pt, pid, 0);
	proc_tracker_stats(w.pt, &st);
	pthread_mutex_lock(&w.pt->lock);
	CHECK(st.snapshots_taken == 2 && w.pt->snap.nr_snaps == 1 && w.pt->snap.snaps &&
		  w.pt->snap.snaps->start_time == real_start && !w.pt->snap.snaps->exit_seen,
	      "after an exit, the new process under the pid snapshotted anew (%" PRIu64 " taken)",
	      st.snapshots_taken);
	/* the other way round: a stale snapshot meets the live process at its load */
	if (w.pt->snap.snaps)
		w.pt->snap.snaps->start_time += 1000;
	pthread_mutex_unlock(&w.pt->lock);
	CHECK(proc_tracker_load_now(w.pt, pid) == 0, "load of the live child");
	proc_tracker_stats(w.pt, &st);
	p = proc_tracker_find(w.pt, pid);
	CHECK(st.snapshots_used == 0 && nr_snaps(w.pt) == 0 && w.pt->snap.snap_fds == 0,
	      "a snapshot of another start time: used %" PRIu64 ", %u left, %u fds",
	      st.snapshots_used, nr_snaps(w.pt), w.pt->snap.snap_fds);
	CHECK(p && !p->exited && p->start_time == real_start && p->cur && p->cur->ns_pid,
	      "the live process loaded from /proc");
	reap(&kid);
	tracker_world_free(&w);
}

/*
 * The window of the per-second budget pinned at now, with nothing of its CPU
 * time spent: what the next ask meets is the count budget alone.
 */
static void pin_window(struct proc_tracker *pt, uint64_t spent_ns)
{
	pthread_mutex_lock(&pt->lock);
	pt->snap.snap_window_ns = mono_ns();
	pt->snap.snap_window_spent_ns = spent_ns;
	pthread_mutex_unlock(&pt->lock);
}

/*
 * Every process may be hostile: at most 64 snapshots a second, none of a
 * process with over 64 executable mappings; what is refused is counted, and
 * the files held stay bounded.  The window is pinned and its CPU time zeroed
 * before each ask: how many fit in a real second, and in 20 ms of CPU, is
 * this machine's speed (one snapshot of a fork of a ThreadSanitizer build
 * takes 5 to 18 ms), not the budget; test_window_budget covers those
 * budgets on a pinned window.
 */
static void test_budget_refusals(void)
{
	enum { KIDS = 72 };
	struct tracker_world w;
	struct tracker_stats st;
	pid_t kids[KIDS], many;
	uint32_t per_kid;
	uint64_t taken;
	int i;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	many = spawn_mapping_child(70);
	CHECK(many > 0, "child with 70 executable mappings");
	proc_tracker_snapshot(w.pt, (uint32_t)many, 0);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_refused == 1 && st.snapshots_taken == 0,
	      "70 executable mappings: %" PRIu64 " refused, %" PRIu64 " taken",
	      st.snapshots_refused, st.snapshots_taken);
	reap(&many);

	for (i = 0; i < KIDS; i++)
		kids[i] = spawn_mapping_child(0);
	for (i = 0; i < KIDS; i++) {
		if (kids[i] <= 0)
			continue;
		pin_window(w.pt, 0);
		proc_tracker_snapshot(w.pt, (uint32_t)kids[i], 0);
	}
	proc_tracker_stats(w.pt, &st);
	taken = st.snapshots_taken;
	per_kid = taken ? w.pt->snap.snap_fds / (uint32_t)taken : 0;
	printf("%d processes: %" PRIu64 " snapshots taken, %" PRIu64 " refused, %u fds held "
	       "(at most %u)\n",
	       KIDS, taken, st.snapshots_refused - 1, w.pt->snap.snap_fds, fds_per_load() / 2);
	/* 64, unless the files held came first: then one more would be over them */
	CHECK(taken <= SNAPSHOTS_PER_SEC &&
		  (taken == SNAPSHOTS_PER_SEC ||
		   (per_kid && w.pt->snap.snap_fds + per_kid > fds_per_load() / 2)),
	      "%" PRIu64 " snapshots taken in a window (want %d, or as many as %u files allow)",
	      taken, SNAPSHOTS_PER_SEC, fds_per_load() / 2);
	CHECK(taken + st.snapshots_refused - 1 == KIDS,
	      "%" PRIu64 " taken + %" PRIu64 " refused of %d", taken, st.snapshots_refused - 1,
	      KIDS);
	CHECK(w.pt->snap.snap_fds <= fds_per_load() / 2 && w.pt->snap.nr_snaps == taken,
	      "%u fds held (at most %u), %u snapshots", w.pt->snap.snap_fds, fds_per_load() / 2,
	      w.pt->snap.nr_snaps);
	for (i = 0; i < KIDS; i++)
		reap(&kids[i]);
	tracker_world_free(&w);
}

/*
 * The per-second budget itself, on a pinned window: the 64th snapshot is
 * taken and the 65th refused; a window that has spent its 20 ms of the
 * consumer's CPU time refuses, what a snapshot (refused ones too) costs is
 * added, and the next second starts afresh.
 */
static void test_window_budget(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	uint64_t spent, taken;
	pid_t kid, kid2, many;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	kid = spawn_mapping_child(0);
	kid2 = spawn_mapping_child(0);
	many = spawn_mapping_child(70);
	CHECK(kid > 0 && kid2 > 0 && many > 0, "children");
	if (kid <= 0 || kid2 <= 0 || many <= 0)
		goto out;
	pin_window(w.pt, 0);
	pthread_mutex_lock(&w.pt->lock);
	w.pt->snap.snap_window_taken = SNAPSHOTS_PER_SEC - 1;
	pthread_mutex_unlock(&w.pt->lock);
	proc_tracker_snapshot(w.pt, (uint32_t)kid, 0);
	pin_window(w.pt, 0);
	proc_tracker_snapshot(w.pt, (uint32_t)kid2, 0);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_taken == 1 && st.snapshots_refused == 1 && nr_snaps(w.pt) == 1,
	      "the %dth and the next: %" PRIu64 " taken, %" PRIu64 " refused", SNAPSHOTS_PER_SEC,
	      st.snapshots_taken, st.snapshots_refused);

	/* the count far from its budget, the CPU time at it */
	pin_window(w.pt, SNAPSHOT_NS_PER_SEC);
	pthread_mutex_lock(&w.pt->lock);
	w.pt->snap.snap_window_taken = 1;
	pthread_mutex_unlock(&w.pt->lock);
	proc_tracker_snapshot(w.pt, (uint32_t)kid2, 0);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_refused == 2 && st.snapshots_taken == 1,
	      "20 ms spent: %" PRIu64 " refused, %" PRIu64 " taken", st.snapshots_refused,
	      st.snapshots_taken);

	/* refused for its mappings after reading them: their time is spent all the same */
	pin_window(w.pt, 0);
	proc_tracker_snapshot(w.pt, (uint32_t)many, 0);
	pthread_mutex_lock(&w.pt->lock);
	spent = w.pt->snap.snap_window_spent_ns;
	pthread_mutex_unlock(&w.pt->lock);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_refused == 3 && spent > 0,
	      "70 mappings: %" PRIu64 " refused, %" PRIu64 " ns counted", st.snapshots_refused,
	      spent);

	/* a second later: the window starts again, whatever the last one took and spent */
	pthread_mutex_lock(&w.pt->lock);
	w.pt->snap.snap_window_ns = mono_ns() - 1000000000ull;
	w.pt->snap.snap_window_spent_ns = SNAPSHOT_NS_PER_SEC;
	w.pt->snap.snap_window_taken = SNAPSHOTS_PER_SEC;
	pthread_mutex_unlock(&w.pt->lock);
	proc_tracker_snapshot(w.pt, (uint32_t)kid2, 0);
	proc_tracker_stats(w.pt, &st);
	pthread_mutex_lock(&w.pt->lock);
	taken = w.pt->snap.snap_window_taken;
	spent = w.pt->snap.snap_window_spent_ns;
	pthread_mutex_unlock(&w.pt->lock);
	CHECK(st.snapshots_taken == 2 && taken == 1 && spent > 0,
	      "the next window: %" PRIu64 " taken (%" PRIu64 " in it), %" PRIu64 " ns spent",
	      st.snapshots_taken, taken, spent);
out:
	reap(&kid);
	reap(&kid2);
	reap(&many);
	tracker_world_free(&w);
}

/* A process whose mappings keep changing gets 8 snapshots; the rest are refused, counted. */
static void test_per_process_cap(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	pid_t kid;
	int i;

	if (!world_with_snapshot(&w, &kid)) {
		tracker_world_free(&w);
		return;
	}
	for (i = 0; i < 11; i++) {
		/* only this cap: the time one takes under a sanitizer is not the point here */
		pthread_mutex_lock(&w.pt->lock);
		w.pt->snap.snap_window_spent_ns = 0;
		pthread_mutex_unlock(&w.pt->lock);
		proc_tracker_snapshot(w.pt, (uint32_t)kid, mono_ns());
	}
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_taken == 8 && st.snapshots_refused == 4 && nr_snaps(w.pt) == 1,
	      "12 asks of one changing process: %" PRIu64 " taken, %" PRIu64 " refused",
	      st.snapshots_taken, st.snapshots_refused);
	reap(&kid);
	tracker_world_free(&w);
}

struct snapper {
	struct proc_tracker *pt;
	pid_t kids[8];
	int n;
};

static void *snap_loop(void *arg)
{
	struct snapper *s = arg;
	int r, i;

	for (r = 0; r < 50; r++) {
		for (i = 0; i < s->n; i++) {
			proc_tracker_snapshot(s->pt, (uint32_t)s->kids[i], mono_ns());
			proc_tracker_request(s->pt, (uint32_t)s->kids[i], WORK_LOAD, 0);
		}
	}
	return NULL;
}

/*
 * The consumer takes snapshots while the load thread takes them off (and the
 * children exit under it): under ThreadSanitizer, and the fds held always
 * those of the snapshots listed.
 */
static void test_snapshots_beside_loads(void)
{
	enum { KIDS = 6 };
	struct tracker_world w;
	struct snapper sn;
	struct proc_snapshot *s;
	pid_t kids[KIDS];
	uint32_t fds = 0;
	pthread_t t;
	int i;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	for (i = 0; i < KIDS; i++)
		kids[i] = spawn_mapping_child(0);
	sn = (struct snapper){.pt = w.pt, .n = KIDS};
	memcpy(sn.kids, kids, sizeof(kids));
	CHECK(proc_tracker_start(w.pt) == 0, "start");
	CHECK(pthread_create(&t, NULL, snap_loop, &sn) == 0, "thread");
	for (i = 0; i < KIDS; i += 2)
		reap(&kids[i]);
	pthread_join(t, NULL);
	proc_tracker_drain(w.pt);
	proc_tracker_stop(w.pt, false);
	pthread_mutex_lock(&w.pt->lock);
	for (s = w.pt->snap.snaps; s; s = s->next)
		fds += s->nr_fds;
	CHECK(fds == w.pt->snap.snap_fds, "%u fds in the snapshots, %u counted", fds, w.pt->snap.snap_fds);
	pthread_mutex_unlock(&w.pt->lock);
	/* the live ones; a reaped one may have gone before its first snapshot */
	for (i = 1; i < KIDS; i += 2) {
		struct proc *p = proc_tracker_find(w.pt, (uint32_t)kids[i]);

		CHECK(p && p->loaded, "child %d never loaded", i);
	}
	for (i = 0; i < KIDS; i++)
		reap(&kids[i]);
	tracker_world_free(&w);
}

/* What the BPF side sends as pid exits: its executable file mappings, read from /proc here. */
static bool exit_list_of(pid_t pid, struct exit_list *l)
{
	struct proc_stat_info stat;
	struct maps_entry *ents;
	int n, i;

	memset(l, 0, sizeof(*l));
	n = proc_maps_read(pid, true, &ents);
	if (n <= 0 || proc_stat_read((uint32_t)pid, &stat)) {
		if (n > 0)
			free(ents);
		return false;
	}
	l->pid = (uint32_t)pid;
	l->time_ns = mono_ns();
	l->start_boottime_ns = stat.start_time * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	for (i = 0; i < n && l->nr < CFI_MAPS_MAX; i++) {
		struct cfi_maps_entry *k = &l->ents[l->nr];

		/* the kernel lists file mappings only: the vDSO has no file */
		if (!ents[i].inode)
			continue;
		k->start = ents[i].start;
		k->end = ents[i].end;
		k->pgoff = ents[i].offset;
		k->ino = ents[i].inode;
		k->dev = ents[i].dev_major << 20 | ents[i].dev_minor;
		l->nr++;
	}
	free(ents);
	return l->nr > 0;
}

/* l as the BPF side sends it: one record per entry, then the end. */
static void send_exit_list(struct proc_tracker *pt, const struct exit_list *l)
{
	struct cfi_maps_end_record end = {.type = RECORD_MAPS_END,
					  .pid = l->pid,
					  .time_ns = l->time_ns,
					  .start_boottime_ns = l->start_boottime_ns};

	for (uint32_t i = 0; i < l->nr; i++) {
		struct cfi_maps_entry_record r = {
		    .type = RECORD_MAPS_ENTRY, .pid = l->pid, .e = l->ents[i]};

		proc_tracker_exit_record(pt, &r, sizeof(r));
	}
	proc_tracker_exit_record(pt, &end, sizeof(end));
}

/*
 * Issue 13: a short process gone before the consumer read its maps (a
 * build's as, sh) had its deferred samples kept tables-pending.  The kernel
 * now sends its mappings as it exits; with the files an earlier load of the
 * same program opened, it is loaded like one from a snapshot: its entry
 * published with the exit's time, its frames named.  A file no load opened
 * leaves its mapping without tables (counted); the consumer's own snapshot
 * of the process, taken in time, lends its files.
 */
static void test_load_gone_from_exit_list(void)
{
	struct exit_list rec, other;
	struct tracker_world w;
	struct tracker_stats st;
	struct cfi_proc_val pv;
	struct frame_namer fn;
	pid_t first, kid, third;
	const char *name;
	uint32_t pid;
	char buf[256];

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	/* an earlier process of the same program, loaded: its files are held */
	first = spawn_mapping_child(0);
	CHECK(first > 0 && proc_tracker_load_now(w.pt, (uint32_t)first) == 0, "first child's load");
	kid = spawn_mapping_child(0);
	CHECK(kid > 0 && exit_list_of(kid, &rec), "the child's exit list");
	pid = (uint32_t)kid;
	reap(&kid);
	send_exit_list(w.pt, &rec);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_at_exit == 1 && st.exit_files_unknown == 0 && nr_snaps(w.pt) == 1,
	      "%" PRIu64 " snapshots from exit lists, %" PRIu64 " files unknown, %u held",
	      st.snapshots_at_exit, st.exit_files_unknown, nr_snaps(w.pt));
	CHECK(proc_tracker_load_now(w.pt, pid) == 0, "load of the gone child");
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_used == 1 && nr_snaps(w.pt) == 0, "snapshots used %" PRIu64,
	      st.snapshots_used);
	CHECK(!bpf_map_lookup_elem(w.procs_fd, &pid, &pv) && pv.loaded_ns == rec.time_ns,
	      "procs entry with the exit's time (%" PRIu64 ", want %" PRIu64 ")",
	      (uint64_t)pv.loaded_ns, (uint64_t)rec.time_ns);
	CHECK(entries_of(&w, pid) > 1, "%d BPF entries for the gone child", entries_of(&w, pid));
	frame_namer_init(&fn, w.pt, NULL);
	name = frame_name_user(&fn, pid, 0, (uintptr_t)&snap_marker, true, buf, sizeof(buf));
	CHECK(!strcmp(name, "snap_marker"), "the gone child's frame named '%s'", name);
	frame_namer_free(&fn);

	/* a file no load opened: that mapping goes without tables, counted */
	third = spawn_mapping_child(0);
	CHECK(third > 0 && exit_list_of(third, &other), "third child's exit list");
	other.ents[0].ino ^= 0x5a5a5a;
	reap(&third);
	proc_tracker_snapshot_at_exit(w.pt, &other);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_at_exit == 2 && st.exit_files_unknown == 1,
	      "%" PRIu64 " files unknown (want 1)", st.exit_files_unknown);
	/* out of order: not the kernel's list */
	other.pid++;
	other.ents[1].start = other.ents[0].start;
	proc_tracker_snapshot_at_exit(w.pt, &other);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.snapshots_at_exit == 2, "a malformed exit list was taken");

	/*
	 * The consumer's own snapshot, taken in time, lends its files: a process
	 * whose program no load opened still gets them all.
	 */
	reap(&first);
	file_index_free(&w.pt->snap.files);
	file_index_init(&w.pt->snap.files, 0);
	kid = spawn_mapping_child(0);
	if (kid > 0 && exit_list_of(kid, &rec)) {
		struct proc_snapshot *snap;
		uint64_t unknown = st.exit_files_unknown;

		proc_tracker_snapshot(w.pt, (uint32_t)kid, 0);
		proc_tracker_snapshot_at_exit(w.pt, &rec);
		proc_tracker_stats(w.pt, &st);
		snap = snapshot_take(w.pt, (uint32_t)kid);
		CHECK(st.snapshots_at_exit == 3 && st.exit_files_unknown == unknown && snap &&
			  snap->nr == rec.nr && snap->nr_fds == rec.nr,
		      "exit list beside the consumer's snapshot: %u of %u files, %" PRIu64
		      " unknown",
		      snap ? snap->nr_fds : 0, rec.nr, st.exit_files_unknown - unknown);
		snapshot_free(w.pt, snap);
	}
	reap(&kid);
	CHECK(snap_marker(1) == 7, "marker");
	tracker_world_free(&w);
}

/*
 * The kernel's list of a process's mappings at its exit comes after its exit
 * event (the two are sent from the same tracepoint, on two ring buffers):
 * with the exit still queued, a load is queued behind it; with the exit
 * handled (the process marked exited), the list still loads: it is the
 * process's last mappings, not an image before an exec.  Before, the queued
 * exit took the place of the load and a handled one refused it (dying): the
 * exiting samples of a process that mapped a library after its last load
 * kept an unnamed leaf (test_process_edges:exit_late_lib).
 */
static void test_exit_list_after_exit(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	struct exit_list rec;
	const struct work_item *last = NULL;
	uint64_t dying;
	uint32_t pid;
	struct proc *p;
	pid_t kid;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	kid = spawn_mapping_child(0);
	CHECK(kid > 0 && proc_tracker_load_now(w.pt, (uint32_t)kid) == 0, "the child's load");
	CHECK(kid > 0 && exit_list_of(kid, &rec), "the child's exit list");
	pid = (uint32_t)kid;
	reap(&kid);
	proc_tracker_request(w.pt, pid, WORK_EXIT, 0);
	send_exit_list(w.pt, &rec);
	pthread_mutex_lock(&w.pt->lock);
	if (w.pt->work.q_len == 2)
		last = &w.pt->work.queue[(w.pt->work.q_head + 1) % QUEUE_CAP];
	CHECK(last && last->pid == pid && last->kind == WORK_LOAD, "%u items queued, the last %s",
	      w.pt->work.q_len,
	      last && last->kind == WORK_LOAD ? "a load" : "not a load of the pid");
	pthread_mutex_unlock(&w.pt->lock);

	pthread_mutex_lock(&w.pt->load_lock);
	exit_proc(w.pt, pid);
	pthread_mutex_unlock(&w.pt->load_lock);
	proc_tracker_stats(w.pt, &st);
	dying = st.dying;
	CHECK(proc_tracker_load_now(w.pt, pid) == 0, "load of the exited child");
	proc_tracker_stats(w.pt, &st);
	p = proc_tracker_find(w.pt, pid);
	CHECK(st.snapshots_used == 1 && st.dying == dying && nr_snaps(w.pt) == 0,
	      "exit list after the exit: used %" PRIu64 ", refused as dying %" PRIu64,
	      st.snapshots_used, st.dying - dying);
	CHECK(p && p->exited && p->cur && p->cur->nr_maps > 1,
	      "loaded from the exit list: exited, %u mappings", p && p->cur ? p->cur->nr_maps : 0);
	tracker_world_free(&w);
}

/*
 * Exit lists arrive one record per mapping, interleaved between processes
 * exiting on other CPUs: each is gathered by pid and taken at its end; past
 * 64 mappings the rest is left out (counted), more lists at once than kept
 * drop the oldest (counted).
 */
static void test_exit_list_records(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	struct proc_snapshot *a, *b;
	uint32_t i;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	for (i = 0; i < 70; i++) {
		struct cfi_maps_entry_record r = {.type = RECORD_MAPS_ENTRY,
						  .e = {.start = 0x10000 + i * 0x2000,
							.end = 0x11000 + i * 0x2000,
							.ino = 1000 + i,
							.dev = 8 << 20 | 1}};

		r.pid = 4000001;
		proc_tracker_exit_record(w.pt, &r, sizeof(r));
		/* the other process's entries come between */
		if (i < 3) {
			r.pid = 4000002;
			proc_tracker_exit_record(w.pt, &r, sizeof(r));
		}
	}
	{
		struct cfi_maps_end_record end = {
		    .type = RECORD_MAPS_END, .pid = 4000002, .time_ns = mono_ns()};

		proc_tracker_exit_record(w.pt, &end, sizeof(end));
		end.pid = 4000001;
		proc_tracker_exit_record(w.pt, &end, sizeof(end));
		/* short: ignored */
		proc_tracker_exit_record(w.pt, &end, sizeof(end) - 1);
	}
	a = snapshot_take(w.pt, 4000001);
	b = snapshot_take(w.pt, 4000002);
	proc_tracker_stats(w.pt, &st);
	CHECK(a && a->nr == CFI_MAPS_MAX && b && b->nr == 3 && st.exit_lists_partial == 1,
	      "gathered %u and %u entries (want 64, 3), %" PRIu64 " partial", a ? a->nr : 0,
	      b ? b->nr : 0, st.exit_lists_partial);
	snapshot_free(w.pt, a);
	snapshot_free(w.pt, b);
	/* ends lost: the oldest lists go */
	for (i = 0; i < EXIT_LISTS_GATHERED + 2; i++) {
		struct cfi_maps_entry_record r = {
		    .type = RECORD_MAPS_ENTRY,
		    .pid = 5000000 + i,
		    .e = {.start = 0x10000, .end = 0x11000, .ino = 7}};

		proc_tracker_exit_record(w.pt, &r, sizeof(r));
	}
	proc_tracker_stats(w.pt, &st);
	CHECK(st.exit_lists_dropped == 2, "%" PRIu64 " lists dropped (want 2)",
	      st.exit_lists_dropped);
	tracker_world_free(&w);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_load_gone_from_snapshot);
	RUN_TEST(test_pid_reuse);
	RUN_TEST(test_empty_maps_alive);
	RUN_TEST(test_budget_refusals);
	RUN_TEST(test_window_budget);
	RUN_TEST(test_per_process_cap);
	RUN_TEST(test_snapshots_beside_loads);
	RUN_TEST(test_load_gone_from_exit_list);
	RUN_TEST(test_exit_list_after_exit);
	RUN_TEST(test_exit_list_records);
	return HARNESS_DONE();
}
