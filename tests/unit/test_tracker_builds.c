// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Parallel table builds (issue 13, item 3): the objects one load lacks are
 * built side by side on the build workers, and what lands in the table store
 * is exactly what a serial load puts there.  Deferred samples make their
 * process's load and the object they stopped in go first.  The process
 * loaded is the test itself, mapping copies of libz (each its own inode,
 * hence its own object), over real BPF maps (needs root).
 * Loads cut short at a point the test chooses (a build hook sleeping past
 * the load's time) resume what they left, a bounded number of times.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/track/tracker_internal.h"

#define LIBZ   "/lib/x86_64-linux-gnu/libz.so.1"
#define COPIES 6
#define PAGE   4096ul

static char dir[64];

/* The copies mapped executable (one page each); false if any is missing. */
static bool map_copies(int n, void **at)
{
	char path[96];
	bool ok = true;

	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/c%d.so", dir, i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		at[i] = fd < 0 ? MAP_FAILED
			       : mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		ok = ok && at[i] != MAP_FAILED;
		if (fd >= 0)
			close(fd);
	}
	return ok;
}

/* What the build hook saw: builds in flight now and at most, and the order they started in. */
struct observed {
	int in_flight, peak;
	bool wait_for_company; /* hold each build until another one runs (or 5 s pass) */
	int nr_started;
	char first[256];
};

static void observe(void *ctx, const char *name, bool start)
{
	struct observed *o = ctx;
	uint64_t until = mono_ns() + 5000000000ull;
	int now, peak, nth;

	if (!start) {
		__atomic_fetch_sub(&o->in_flight, 1, __ATOMIC_SEQ_CST);
		return;
	}
	now = __atomic_add_fetch(&o->in_flight, 1, __ATOMIC_SEQ_CST);
	nth = __atomic_fetch_add(&o->nr_started, 1, __ATOMIC_SEQ_CST);
	if (!nth)
		snprintf(o->first, sizeof(o->first), "%s", name);
	peak = __atomic_load_n(&o->peak, __ATOMIC_SEQ_CST);
	while (now > peak && !__atomic_compare_exchange_n(&o->peak, &peak, now, false,
							  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	/* a build takes a millisecond: without this, one worker may finish all before the next
	 * starts */
	while (o->wait_for_company && __atomic_load_n(&o->peak, __ATOMIC_SEQ_CST) < 2 &&
	       mono_ns() < until)
		usleep(1000);
}

/* A tracker building with workers threads, its builds seen by o (NULL: not watched). */
static bool world_open(struct tracker_world *w, uint32_t workers, struct observed *o)
{
	if (tracker_world_init(w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return false;
	}
	w->pt->opts.build_workers = workers;
	if (o) {
		w->pt->build_hook = observe;
		w->pt->build_hook_ctx = o;
	}
	return true;
}

static uint32_t self(void)
{
	return (uint32_t)getpid();
}

/* The objects of the copies: all loaded with CFI? */
static int copies_with_cfi(struct tracker_world *w, void **at, int n)
{
	struct proc *p = proc_tracker_find(w->pt, self());
	int k = 0;

	for (int i = 0; p && i < n; i++) {
		const struct proc_mapping *m = proc_find_mapping(p, (uintptr_t)at[i] + 8);

		k += m && m->obj && m->obj->state == OBJ_LOADED && (m->flags & CFI_MAPPING_CFI);
	}
	return k;
}

static void test_builds_concurrently(void)
{
	struct observed o = {.wait_for_company = true};
	struct tracker_world w;
	struct tracker_stats st;
	void *at[COPIES];

	CHECK(map_copies(COPIES, at), "map %d copies of %s", COPIES, LIBZ);
	if (!world_open(&w, 4, &o))
		return;
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "load");
	proc_tracker_stats(w.pt, &st);
	printf("%d builds, at most %d at once; %" PRIu64 " prebuilt, %" PRIu64 " in parallel\n",
	       o.nr_started, o.peak, st.tables_prebuilt, st.tables_built_parallel);
	CHECK(o.peak >= 2, "at most %d build at once with 4 workers", o.peak);
	CHECK(st.tables_built_parallel >= COPIES, "%" PRIu64 " tables built in parallel",
	      st.tables_built_parallel);
	CHECK(copies_with_cfi(&w, at, COPIES) == COPIES, "%d of %d copies unwind with CFI",
	      copies_with_cfi(&w, at, COPIES), COPIES);
	tracker_world_free(&w);
}

/* Two worlds hold the same tables when every mapping names the same rows, and the rows match. */
static void compare_worlds(struct tracker_world *a, struct tracker_world *b)
{
	struct proc *pa = proc_tracker_find(a->pt, self()), *pb = proc_tracker_find(b->pt, self());
	uint32_t i, same = 0, loaded = 0;

	CHECK(pa && pb && pa->cur && pb->cur && pa->cur->nr_maps == pb->cur->nr_maps,
	      "both loaded, with as many mappings");
	if (!pa || !pb || !pa->cur || !pb->cur || pa->cur->nr_maps != pb->cur->nr_maps)
		return;
	for (i = 0; i < pa->cur->nr_maps; i++) {
		const struct proc_mapping *x = &pa->cur->maps[i], *y = &pb->cur->maps[i];
		const struct obj_entry *ox = x->obj, *oy = y->obj;
		bool eq =
		    x->flags == y->flags && x->bias == y->bias && !strcmp(x->key, y->key) &&
		    !ox == !oy &&
		    (!ox || (ox->id == oy->id && ox->state == oy->state &&
			     ox->first_row == oy->first_row && ox->nr_rows == oy->nr_rows &&
			     ox->nr_pages == oy->nr_pages && ox->nr_rule_ids == oy->nr_rule_ids));

		same += eq;
		loaded += ox && ox->state == OBJ_LOADED;
		CHECK(eq, "mapping %u (%s) differs", i, x->path);
	}
	CHECK(loaded >= COPIES, "%u objects loaded", loaded);
	CHECK(!memcmp(a->rows, b->rows, TRACKER_WORLD_ROWS * sizeof(*a->rows)), "rows differ");
	CHECK(!memcmp(a->rules, b->rules, TRACKER_WORLD_RULES * sizeof(*a->rules)), "rules differ");
	CHECK(a->ts.stats.rows_used == b->ts.stats.rows_used &&
		  a->ts.stats.pages_used == b->ts.stats.pages_used,
	      "rows %" PRIu64 "/%" PRIu64 ", pages %" PRIu64 "/%" PRIu64, a->ts.stats.rows_used,
	      b->ts.stats.rows_used, a->ts.stats.pages_used, b->ts.stats.pages_used);
	printf("%u mappings, %u objects loaded: the same serially and in parallel\n", same, loaded);
}

static void test_same_as_serial(void)
{
	struct tracker_world serial, parallel;
	struct observed o = {.wait_for_company = true};
	void *at[COPIES];

	CHECK(map_copies(COPIES, at), "map %d copies", COPIES);
	if (!world_open(&serial, 1, NULL) || !world_open(&parallel, 4, &o))
		return;
	CHECK(proc_tracker_load_now(serial.pt, self()) == 0, "serial load");
	CHECK(proc_tracker_load_now(parallel.pt, self()) == 0, "parallel load");
	CHECK(o.peak >= 2, "the parallel load built %d at once", o.peak);
	compare_worlds(&serial, &parallel);
	/* a change afterwards (one copy gone, one new): a reload builds only the new one */
	munmap(at[0], PAGE);
	CHECK(map_copies(1, at), "map c0 again");
	CHECK(proc_tracker_load_now(serial.pt, self()) == 0, "serial reload");
	CHECK(proc_tracker_load_now(parallel.pt, self()) == 0, "parallel reload");
	compare_worlds(&serial, &parallel);
	tracker_world_free(&parallel);
	tracker_world_free(&serial);
}

/*
 * Fewer fds than mappings: the first are built up front, the rest one by one;
 * no fd leaks (the files the indexes hold for exit lists aside, at most a
 * quarter of a load's, as the limit is now).
 */
static void test_fd_budget(void)
{
	struct rlimit rl = {.rlim_cur = 64, .rlim_max = 64};
	struct tracker_world serial, parallel;
	struct tracker_stats st;
	void *at[24];
	int fds_before, fds_after;

	CHECK(map_copies(24, at), "map 24 copies");
	if (!world_open(&serial, 1, NULL) || !world_open(&parallel, 4, NULL))
		return;
	/* fds_per_load: a quarter of the limit, at least 16 */
	CHECK(!setrlimit(RLIMIT_NOFILE, &rl), "RLIMIT_NOFILE 64");
	fds_before = open_fd_count();
	CHECK(proc_tracker_load_now(serial.pt, self()) == 0, "serial load");
	CHECK(proc_tracker_load_now(parallel.pt, self()) == 0, "parallel load");
	fds_after = open_fd_count();
	CHECK(serial.pt->snap.files.nr <= 4 && parallel.pt->snap.files.nr <= 4,
	      "the file indexes hold %u and %u files (16 fds a load: 4 at most)",
	      serial.pt->snap.files.nr, parallel.pt->snap.files.nr);
	CHECK(fds_after == fds_before + (int)(serial.pt->snap.files.nr + parallel.pt->snap.files.nr),
	      "%d fds open before, %d after, %u held by the file indexes", fds_before, fds_after,
	      serial.pt->snap.files.nr + parallel.pt->snap.files.nr);
	proc_tracker_stats(parallel.pt, &st);
	CHECK(st.tables_prebuilt > 0 && st.tables_prebuilt <= 16,
	      "%" PRIu64 " tables built up front (16 fds)", st.tables_prebuilt);
	CHECK(copies_with_cfi(&parallel, at, 24) == 24, "%d of 24 copies with CFI",
	      copies_with_cfi(&parallel, at, 24));
	compare_worlds(&serial, &parallel);
	tracker_world_free(&parallel);
	tracker_world_free(&serial);
}

/* The object deferred samples stopped in is built before bigger ones. */
static void test_waited_for_first(void)
{
	struct observed o = {0};
	struct tracker_world w;
	void *at[COPIES];
	char want[96];

	CHECK(map_copies(COPIES, at), "map %d copies", COPIES);
	if (!world_open(&w, 1, &o))
		return;
	proc_tracker_note_waiting(w.pt, self(), (uintptr_t)at[3] + 16);
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "load");
	snprintf(want, sizeof(want), "%s/c3.so", dir);
	CHECK(streq(o.first, want), "first built: %s, not %s", o.first, want);
	printf("first of %d builds: %s\n", o.nr_started, o.first);
	tracker_world_free(&w);

	/* without a hint: the biggest file first (libz copies are small next to libc) */
	memset(&o, 0, sizeof(o));
	if (!world_open(&w, 1, &o))
		return;
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "load");
	CHECK(!strstr(o.first, dir), "no hint, yet a small copy went first: %s", o.first);
	tracker_world_free(&w);
}

/* A process whose samples wait has its queued load moved ahead of the others'. */
static void test_waiting_process_first(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	struct proc_tracker *pt;

	if (!world_open(&w, 1, NULL))
		return;
	pt = w.pt; /* the load thread is not started: the queue stays as set */
	proc_tracker_request(pt, 101, WORK_LOAD, 0);
	proc_tracker_request(pt, 102, WORK_EXEC, 0);
	proc_tracker_request(pt, 103, WORK_EXIT, 0);
	proc_tracker_request(pt, 103, WORK_LOAD, 0);
	proc_tracker_request(pt, 104, WORK_EXEC, 0);
	proc_tracker_note_waiting(pt, 104, 0x1000);
	CHECK(pt->work.queue[pt->work.q_head].pid == 104 && pt->work.queue[pt->work.q_head].kind == WORK_EXEC,
	      "head: pid %u", pt->work.queue[pt->work.q_head].pid);
	CHECK(pt->work.queue[pt->work.q_head + 1].pid == 101 && pt->work.queue[pt->work.q_head + 2].pid == 102,
	      "the others keep their order");
	/* an exit queued before its load is a pid reused: the new process's load stays behind it */
	proc_tracker_note_waiting(pt, 103, 0x1000);
	CHECK(pt->work.queue[pt->work.q_head].pid == 104, "head: pid %u", pt->work.queue[pt->work.q_head].pid);
	CHECK(pt->work.queue[pt->work.q_head + 3].kind == WORK_EXIT && pt->work.queue[pt->work.q_head + 4].pid == 103,
	      "103's exit, then its load");
	/* the head itself stays */
	proc_tracker_note_waiting(pt, 104, 0x2000);
	proc_tracker_stats(pt, &st);
	CHECK(st.loads_hurried == 1, "%" PRIu64 " loads hurried", st.loads_hurried);
	CHECK(pt->work.q_len == 5, "%u queued", pt->work.q_len);
	tracker_world_free(&w);
}

/*
 * Loads asked for by deferred walks waiting at no mapping: one per process
 * per RELOAD_FOR_WALKS_GAP_NS, none for a process not loaded, none while a
 * load is queued (its own reads the maps anyway; others' go first), and
 * RELOADS_FOR_WALKS_PER_SLOT per slot for all.
 */
static void test_reload_for_walk_bounded(void)
{
	const uint64_t t = 1000 * RELOAD_SLOT_NS, gap = RELOAD_FOR_WALKS_GAP_NS;
	struct tracker_world w;
	struct tracker_stats st;
	struct proc_tracker *pt;

	if (!world_open(&w, 1, NULL))
		return;
	pt = w.pt; /* the load thread is not started: the queue stays as set */
	CHECK(proc_tracker_load_now(pt, self()) == 0, "load");
	proc_tracker_reload_for_walk(pt, 1u << 30, t);
	CHECK(pt->work.q_len == 0, "a load queued for an unknown pid");
	proc_tracker_reload_for_walk(pt, self(), t);
	CHECK(pt->work.q_len == 1 && pt->work.queue[pt->work.q_head].pid == self(), "%u loads queued", pt->work.q_len);
	/* as if the load thread had taken it */
	pt->work.q_head = (pt->work.q_head + 1) % QUEUE_CAP;
	pt->work.q_len = 0;
	proc_tracker_reload_for_walk(pt, self(), t + gap - 1);
	CHECK(pt->work.q_len == 0, "a second load within %" PRIu64 " ns", gap);
	proc_tracker_request(pt, 1u << 30, WORK_LOAD, 0);
	proc_tracker_reload_for_walk(pt, self(), t + gap);
	CHECK(pt->work.q_len == 1, "asked ahead of another process's queued load");
	pt->work.q_head = (pt->work.q_head + 1) % QUEUE_CAP;
	pt->work.q_len = 0;
	proc_tracker_reload_for_walk(pt, self(), t + gap);
	CHECK(pt->work.q_len == 1, "none after a gap, the queue empty");
	pt->work.q_head = (pt->work.q_head + 1) % QUEUE_CAP;
	pt->work.q_len = 0;
	/* all processes' share of the slot spent: none more until the next slot */
	pt->reload.reload_slot_used = RELOADS_FOR_WALKS_PER_SLOT;
	proc_tracker_reload_for_walk(pt, self(), t + 3 * gap);
	CHECK(pt->work.q_len == 0, "asked over the bound for all");
	proc_tracker_reload_for_walk(pt, self(), t + RELOAD_SLOT_NS);
	proc_tracker_stats(pt, &st);
	CHECK(pt->work.q_len == 1 && st.reloads_for_walks == 3,
	      "%u queued in the next slot, %" PRIu64 " asked in all", pt->work.q_len,
	      st.reloads_for_walks);
	tracker_world_free(&w);
}

/* Queued items of pid, and how many of them were sent behind the others. */
static int queued_of(struct proc_tracker *pt, uint32_t pid, int *yielded)
{
	int n = 0;

	*yielded = 0;
	for (uint32_t k = 0; k < pt->work.q_len; k++) {
		const struct work_item *q = &pt->work.queue[(pt->work.q_head + k) % QUEUE_CAP];

		n += q->pid == pid;
		*yielded += q->pid == pid && q->yielded;
	}
	return n;
}

/* Takes the head of the queue and runs it as the load thread would. */
static void run_head(struct proc_tracker *pt)
{
	struct work_item w = pt->work.queue[pt->work.q_head];

	pt->work.q_head = (pt->work.q_head + 1) % QUEUE_CAP;
	pt->work.q_len--;
	pthread_mutex_lock(&pt->load_lock);
	tracker_load_proc(pt, w.pid, w.kind == WORK_EXEC, w.time_ns, &w);
	pthread_mutex_unlock(&pt->load_lock);
}

/*
 * A process with thousands of mappings is loaded behind the others, and stays
 * there: its samples waiting do not hurry it back to the front, and a request
 * for it while its load waits at the back costs no read of its maps.  Seen
 * in the hostile suite: a process mapping one file 18,000 times was hurried
 * back four times in a row at the agent's start (600-3,400 ms each, its maps
 * read each time) while 130 other loads waited, the ordinary program's among them.
 */
static void test_big_load_stays_behind(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	struct proc_tracker *pt;
	pid_t big = spawn_mapping_child(1100);
	int n, yielded;

	CHECK(big > 0, "a child with 1100 executable mappings");
	if (big <= 0 || !world_open(&w, 1, NULL))
		goto out;
	pt = w.pt; /* the load thread is not started: the queue stays as set */
	/* two requests for it, further apart than the merge scan, others between */
	proc_tracker_request(pt, (uint32_t)big, WORK_LOAD, 0);
	for (uint32_t i = 0; i < 80; i++)
		proc_tracker_request(pt, (1u << 30) + i, WORK_LOAD, 0);
	proc_tracker_request(pt, (uint32_t)big, WORK_LOAD, 0);
	run_head(pt);
	proc_tracker_stats(pt, &st);
	n = queued_of(pt, (uint32_t)big, &yielded);
	CHECK(st.big_loads_yielded == 1 && n == 2 && yielded == 1 &&
		  pt->work.queue[(pt->work.q_head + pt->work.q_len - 1) % QUEUE_CAP].yielded,
	      "the big load sent to the back: %" PRIu64 " yielded, %d queued", st.big_loads_yielded,
	      n);
	/* its samples wait: the other request comes first, and is sent back unread */
	proc_tracker_note_waiting(pt, (uint32_t)big, 0x1000);
	CHECK(pt->work.queue[pt->work.q_head].pid == (uint32_t)big && !pt->work.queue[pt->work.q_head].yielded,
	      "the request not sent back is hurried: head pid %u", pt->work.queue[pt->work.q_head].pid);
	run_head(pt);
	proc_tracker_stats(pt, &st);
	n = queued_of(pt, (uint32_t)big, &yielded);
	CHECK(n == 1 && yielded == 1 && st.big_loads_yielded == 1,
	      "%d loads of the big process queued (%d sent back); its maps read and sent back "
	      "%" PRIu64 " times",
	      n, yielded, st.big_loads_yielded);
	/* the one sent back stays behind, however its samples wait */
	proc_tracker_note_waiting(pt, (uint32_t)big, 0x1000);
	CHECK(pt->work.queue[pt->work.q_head].pid == 1u << 30, "the big load hurried to the front: pid %u",
	      pt->work.queue[pt->work.q_head].pid);
	tracker_world_free(&w);
out:
	if (big > 0) {
		kill(big, SIGKILL);
		waitpid(big, NULL, 0);
	}
}

/* Signals the first build's start, then lets it run. */
static void note_start(void *ctx, const char *name, bool start)
{
	(void)name;
	if (start)
		__atomic_store_n((int *)ctx, 1, __ATOMIC_SEQ_CST);
}

/*
 * A stop that discards its work ends the build under way within
 * milliseconds: it used to wait it out (libLLVM: 100+ ms idle, seconds on a
 * loaded machine), and the agent overran its unit's stop timeout.
 */
static void test_stop_cancels_build(void)
{
	const char *big = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	struct tracker_world w;
	int fd = open(big, O_RDONLY | O_CLOEXEC), started = 0;
	void *at =
	    fd < 0 ? MAP_FAILED : mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	uint64_t t0, until;
	double stop_ms;

	CHECK(at != MAP_FAILED, "map %s (clang-14 is a build dependency)", big);
	if (fd >= 0)
		close(fd);
	if (at == MAP_FAILED || !world_open(&w, 2, NULL))
		return;
	w.pt->build_hook = note_start;
	w.pt->build_hook_ctx = &started;
	CHECK(proc_tracker_start(w.pt) == 0, "start the load thread");
	proc_tracker_request(w.pt, self(), WORK_LOAD, mono_ns());
	for (until = mono_ns() + 5000000000ull;
	     !__atomic_load_n(&started, __ATOMIC_SEQ_CST) && mono_ns() < until;)
		usleep(200);
	CHECK(__atomic_load_n(&started, __ATOMIC_SEQ_CST), "no build started within 5 s");
	t0 = mono_ns();
	proc_tracker_stop(w.pt, true);
	stop_ms = (double)(mono_ns() - t0) / 1e6;
	printf("stop during the build of %s: %.1f ms; %" PRIu64 " objects over the build budget\n",
	       big, stop_ms, w.ts.stats.objects_over_budget);
	/* the build ended as cancelled (not finished), well within a build's own time */
	CHECK(w.ts.stats.objects_over_budget >= 1, "the build was not cancelled");
	CHECK(stop_ms < 1000, "stop took %.1f ms", stop_ms);
	tracker_world_free(&w);
	munmap(at, PAGE);
}

/* Copy k of the copies, mapped executable (one page); MAP_FAILED if it cannot be. */
static void *map_copy(int k)
{
	char path[96];
	void *at;
	int fd;

	snprintf(path, sizeof(path), "%s/c%d.so", dir, k);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MAP_FAILED;
	at = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return at;
}

/*
 * Each build ends past its load's time: the load began before the build, so
 * a sleep of the whole budget after it puts the deadline behind, however fast
 * the machine is.  The loads are cut at a point the test chooses, not by
 * chance.
 */
struct stall {
	uint64_t ns; /* slept after each build (0: none) */
	int builds;
};

static void stall_after_build(void *ctx, const char *name, bool start)
{
	struct stall *s = ctx;
	struct timespec ts;

	(void)name;
	if (start || !s->ns)
		return;
	s->builds++;
	ts.tv_sec = (time_t)(s->ns / 1000000000ull);
	ts.tv_nsec = (long)(s->ns % 1000000000ull);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A load's time in the tests below: the stall after a build is that and a millisecond more. */
#define CUT_BUDGET_NS (300ull * 1000 * 1000)

/* Is pid held for a load of its own once the queue is empty (a resumed load)? */
static bool resume_held(struct proc_tracker *pt, uint32_t pid)
{
	bool held = false;

	pthread_mutex_lock(&pt->lock);
	for (uint32_t k = 0; k < pt->work.nr_resumes; k++)
		held = held || pt->work.resume_pids[k] == pid;
	pthread_mutex_unlock(&pt->lock);
	return held;
}

/*
 * A load that built an object's table, then ran out of time for its names
 * (names_cut), leaves its mappings unchanged: the next load must read those
 * names, and one is asked for by itself.  Before eb6a2e6 that load saw the
 * mappings unchanged and did nothing: a process mapping thousands of files
 * kept its own library, mapped last, unnamed for good.
 */
static void test_names_cut_resolved_later(void)
{
	struct stall s = {0};
	struct tracker_world w;
	struct tracker_stats st;
	const struct proc_mapping *m;
	uint64_t resumed0;
	void *at;

	if (!world_open(&w, 1, NULL))
		return;
	/* complete: a load cut short on a loaded host leaves work the cut load below would do */
	for (int i = 0; i < 8; i++) {
		uint64_t over;

		proc_tracker_stats(w.pt, &st);
		over = st.over_load_time;
		CHECK(proc_tracker_load_now(w.pt, self()) == 0, "a first load");
		proc_tracker_stats(w.pt, &st);
		if (st.over_load_time == over)
			break;
	}
	/* the one new mapping: its table is built (then the stall), its names are past the time */
	at = map_copy(20);
	CHECK(at != MAP_FAILED, "map c20");
	if (at == MAP_FAILED)
		goto out;
	proc_tracker_stats(w.pt, &st);
	resumed0 = st.loads_resumed;
	w.pt->build_hook = stall_after_build;
	w.pt->build_hook_ctx = &s;
	w.pt->load_budget_ns = CUT_BUDGET_NS;
	s.ns = CUT_BUDGET_NS + 1000000;
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "the load cut after c20's table");
	s.ns = 0;
	w.pt->load_budget_ns = 0;
	m = proc_find_mapping(proc_tracker_find(w.pt, self()), (uintptr_t)at + 8);
	CHECK(s.builds == 1 && m && m->obj && m->names_cut && !m->sym,
	      "after the cut load: %d builds, c20 %s, table %s, names %s (want 1, a table, cut)",
	      s.builds, m ? "known" : "not known", m && m->obj ? "built" : "none",
	      !m	     ? "-"
	      : m->sym	     ? "read"
	      : m->names_cut ? "cut"
			     : "none");
	CHECK(resume_held(w.pt, self()),
	      "no load asked for the names the load ran out of time for");
	proc_tracker_stats(w.pt, &st);
	CHECK(st.loads_resumed == resumed0 + 1, "%" PRIu64 " loads resumed (want %" PRIu64 ")",
	      st.loads_resumed, resumed0 + 1);

	/* the maps are the same as the cut load saw them: only its names are due */
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "the later load");
	m = proc_find_mapping(proc_tracker_find(w.pt, self()), (uintptr_t)at + 8);
	CHECK(m && m->obj && m->sym && !m->names_cut,
	      "after the later load: c20's table %s, names %s (want both)",
	      m && m->obj ? "built" : "none",
	      !m       ? "-"
	      : m->sym ? "read"
		       : "none");
	munmap(at, PAGE);
out:
	tracker_world_free(&w);
}

/*
 * Resumed loads come at most LOADS_RESUMED_MAX (3) in a row, the count reset
 * by a complete load: a process whose every load is cut with some progress
 * (here: each build ends past the time, one object built per load) must not
 * have the load thread to itself load after load (4e473a4: big objects over
 * their quota rebuilt each time kept two other attackers unloaded for 12 s).
 */
static void test_resumed_loads_bounded(void)
{
	struct stall s = {0};
	struct tracker_world w;
	struct tracker_stats st;
	struct proc *p;
	void *at[COPIES];
	int k;

	CHECK(map_copies(COPIES, at), "map %d copies", COPIES);
	if (!world_open(&w, 1, NULL))
		return;
	w.pt->build_hook = stall_after_build;
	w.pt->build_hook_ctx = &s;
	w.pt->load_budget_ns = CUT_BUDGET_NS;
	s.ns = CUT_BUDGET_NS + 1000000;
	/* over a dozen objects unbuilt, one built per load: five loads, each cut with progress */
	for (k = 1; k <= 5; k++) {
		uint64_t over;

		proc_tracker_stats(w.pt, &st);
		over = st.over_load_time;
		CHECK(proc_tracker_load_now(w.pt, self()) == 0, "cut load %d", k);
		proc_tracker_stats(w.pt, &st);
		p = proc_tracker_find(w.pt, self());
		CHECK(s.builds == k && st.over_load_time > over,
		      "load %d: %d builds so far, %" PRIu64
		      " mappings over its time (want %d, > 0)",
		      k, s.builds, st.over_load_time - over, k);
		CHECK(p && p->loads_resumed == (k < 3 ? k : 3) &&
			  st.loads_resumed == (uint64_t)(k < 3 ? k : 3),
		      "after %d cut loads: %d resumed in a row, %" PRIu64 " in all (want %d)", k,
		      p ? p->loads_resumed : -1, st.loads_resumed, k < 3 ? k : 3);
	}
	/* a complete load ends the row: the next cut one may be resumed again */
	s.ns = 0;
	w.pt->load_budget_ns = 0;
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "a complete load");
	p = proc_tracker_find(w.pt, self());
	CHECK(p && p->loads_resumed == 0, "after a complete load: %d resumed in a row",
	      p ? p->loads_resumed : -1);
	printf("five loads cut with progress: %" PRIu64 " resumed\n", st.loads_resumed);
	tracker_world_free(&w);
}

/*
 * A discarding stop (cancel_builds, as proc_tracker_stop(pt, true) sets it)
 * adds no more keys: the rest of a load's mappings get none, as if refused.
 * The hostile suite's 18,005 mappings were 235,000 map updates the agent's
 * stop waited for (4e473a4).
 */
static void test_discarding_stop_adds_no_keys(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	const struct proc_mapping *m;
	void *at[COPIES];

	CHECK(map_copies(COPIES, at), "map %d copies", COPIES);
	if (!world_open(&w, 1, NULL))
		return;
	__atomic_store_n(&w.pt->work.cancel_builds, 1, __ATOMIC_SEQ_CST);
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "a load under a discarding stop");
	proc_tracker_stats(w.pt, &st);
	m = proc_find_mapping(proc_tracker_find(w.pt, self()), (uintptr_t)at[0] + 8);
	/* the load ran (its mappings are known), yet not one key reached the map */
	CHECK(m && !m->obj, "c0 after the stopped load: %s",
	      !m       ? "not known"
	      : m->obj ? "with a table"
		       : "known");
	CHECK(st.mapping_keys == 0 && st.keys_in_map == 0,
	      "the stopped load added %" PRIu64 " keys (%" PRIu64 " in the map)", st.mapping_keys,
	      st.keys_in_map);
	tracker_world_free(&w);
}

int main(int argc, char **argv)
{
	bool ok;

	harness_init(argc, argv);
	snprintf(dir, sizeof(dir), "/tmp/cfiprof-builds.%d", getpid());
	ok = !mkdir(dir, 0700) && copy_file_n(LIBZ, dir, 24);
	CHECK(ok, "copies of %s in %s", LIBZ, dir);
	RUN_TEST(test_builds_concurrently);
	RUN_TEST(test_same_as_serial);
	RUN_TEST(test_fd_budget);
	RUN_TEST(test_waited_for_first);
	RUN_TEST(test_waiting_process_first);
	RUN_TEST(test_big_load_stays_behind);
	RUN_TEST(test_reload_for_walk_bounded);
	RUN_TEST(test_stop_cancels_build);
	RUN_TEST(test_names_cut_resolved_later);
	RUN_TEST(test_resumed_loads_bounded);
	RUN_TEST(test_discarding_stop_adds_no_keys);
	tmpdir_done(dir, false);
	return HARNESS_DONE();
}
