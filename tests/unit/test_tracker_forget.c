// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Forgetting exited processes (issue 12, item 7) while the consumer needs the
 * tracker lock for every sample: the lock is held only to pick and unlink
 * what goes; the BPF deletes, table releases, symbol scans and frees happen
 * outside it.  N children, each mapping the shared libraries of the test and
 * a library of its own (a copy of the test binary with its own build-id),
 * are loaded over real BPF maps (needs root), exit, and are forgotten while
 * their tables are still due to be unloaded: the forget does all the work.
 */
#include <bpf/bpf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/build_id.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/profile/frame_names.h"
#include "user/track/tracker_internal.h"

#define NR_CHILDREN 48

static char tmpdir[64] = "/tmp/cfiprof-forget.XXXXXX";

/* The test binary's raw build-id and where it sits in the file. */
static int own_build_id(const uint8_t *img, size_t len, size_t *at, size_t *idlen)
{
	unsigned char id[ELF_BUILD_ID_MAX];
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *e;
	int n = -1;
	const uint8_t *p;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e)
		n = elf_build_id(e, id, sizeof(id));
	if (e)
		elf_end(e);
	close(fd);
	if (n <= 0)
		return -1;
	p = memmem(img, len, id, (size_t)n);
	if (!p)
		return -1;
	*at = (size_t)(p - img);
	*idlen = (size_t)n;
	return 0;
}

/* Copies of the test binary, each with a build-id of its own: objects no other process maps. */
static int write_libraries(char paths[NR_CHILDREN][96])
{
	size_t len, at, idlen;
	uint8_t *img;
	int i, err = -1;
	FILE *f;

	img = (uint8_t *)slurp_len("/proc/self/exe", &len);
	if (!len || !mkdtemp(tmpdir) || own_build_id(img, len, &at, &idlen))
		goto out;
	for (i = 0; i < NR_CHILDREN; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/lib%d.so", tmpdir, i);
		memset(img + at, 0xa0 + i, idlen);
		f = fopen(paths[i], "we");
		if (!f || fwrite(img, 1, len, f) != len) {
			if (f)
				fclose(f);
			goto out;
		}
		fclose(f);
	}
	err = 0;
out:
	free(img);
	return err;
}

/* A child that maps its library executable, says so, and waits to be killed. */
static pid_t spawn_child(const char *lib, int ready_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(lib, O_RDONLY | O_CLOEXEC);
		void *m = fd < 0 ? MAP_FAILED
				 : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED || write(ready_fd, "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	return pid;
}

/* BPF entries (procs, mapping keys) left for pids other than ours. */
static int foreign_entries(struct tracker_world *w)
{
	struct cfi_mapping_key k, next;
	uint32_t pid, npid;
	int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(w->procs_fd, prev, &npid)) {
		n += npid != (uint32_t)getpid();
		pid = npid;
		prev = &pid;
	}
	prev = NULL;
	while (!bpf_map_get_next_key(w->maps_fd, prev, &next)) {
		n += next.pid != (uint32_t)getpid();
		k = next;
		prev = &k;
	}
	return n;
}

/*
 * NR_CHILDREN children, each mapping a library of its own, loaded by w's
 * tracker, then killed and reaped: their pids in kids.
 */
static void loaded_children_killed(struct tracker_world *w, pid_t kids[NR_CHILDREN])
{
	char libs[NR_CHILDREN][96], buf[1];
	int pipefd[2], i, loaded = 0, ready = 0;

	CHECK(write_libraries(libs) == 0, "libraries in %s", tmpdir);
	CHECK(pipe2(pipefd, O_CLOEXEC) == 0, "pipe");
	for (i = 0; i < NR_CHILDREN; i++)
		kids[i] = spawn_child(libs[i], pipefd[1]);
	for (i = 0; i < NR_CHILDREN && read(pipefd[0], buf, 1) == 1; i++)
		ready++;
	CHECK(ready == NR_CHILDREN, "%d of %d children ready", ready, NR_CHILDREN);
	for (i = 0; i < NR_CHILDREN; i++)
		loaded += kids[i] > 0 && proc_tracker_load_now(w->pt, (uint32_t)kids[i]) == 0;
	CHECK(loaded == NR_CHILDREN, "%d of %d children loaded", loaded, NR_CHILDREN);
	for (i = 0; i < NR_CHILDREN; i++) {
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

int forget_marker(int x);
__attribute__((noinline)) int forget_marker(int x)
{
	return x * 3 + 1;
}

static void test_forget_lock_time(void)
{
	pid_t kids[NR_CHILDREN];
	struct tracker_world w;
	struct frame_namer fn;
	uint64_t t0, total_ns, lock_ns;
	size_t syms_before, syms_after, dropped, first;
	int i, entries;
	char buf[256];
	const char *name;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	CHECK(proc_tracker_load_now(w.pt, (uint32_t)getpid()) == 0, "load self");
	/* their symbols stay until they are forgotten */
	loaded_children_killed(&w, kids);
	syms_before = sym_cache_count(w.syms);
	/* the exit events: their tables are due to go in 250 ms, the forget goes first */
	CHECK(proc_tracker_start(w.pt) == 0, "start");
	for (i = 0; i < NR_CHILDREN; i++)
		proc_tracker_request(w.pt, (uint32_t)kids[i], WORK_EXIT, 0);
	proc_tracker_drain(w.pt);
	proc_tracker_stop(w.pt, false);
	CHECK(w.pt->nr_unload_due == NR_CHILDREN, "%u exits pending unload", w.pt->nr_unload_due);

	first = proc_tracker_forget_exited(w.pt);
	CHECK(first == 0, "the first forget after the exits keeps them (%zu dropped)", first);
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	dropped = proc_tracker_forget_exited(w.pt);
	total_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	lock_ns = w.pt->forget_lock_cpu_ns;
	CHECK(dropped == NR_CHILDREN, "%zu of %d exited processes forgotten", dropped, NR_CHILDREN);
	entries = foreign_entries(&w);
	CHECK(entries == 0, "%d BPF entries of the children left", entries);
	CHECK(w.pt->nr_unload_due == 0, "%u unloads still due", w.pt->nr_unload_due);
	/* the libraries only the children mapped lose their symbols; the shared ones stay */
	syms_after = sym_cache_count(w.syms);
	CHECK(syms_after == syms_before - NR_CHILDREN, "symbol objects %zu -> %zu (want -%d)",
	      syms_before, syms_after, NR_CHILDREN);
	frame_namer_init(&fn, w.pt, NULL);
	name = frame_name_user(&fn, (uint32_t)getpid(), 0, (uintptr_t)&forget_marker, true, buf,
			       sizeof(buf));
	CHECK(!strcmp(name, "forget_marker"), "our own code named '%s' after the forget", name);
	frame_namer_free(&fn);
	/*
	 * the lock covered picking and unlinking, not the BPF work nor the frees:
	 * CPU times, which a loaded host's preemptions do not stretch (the wall's
	 * did: 1.9 ms of 17 ms once)
	 */
	CHECK(lock_ns * 10 < total_ns, "the forget held the lock %.3f ms of %.3f ms CPU",
	      lock_ns / 1e6, total_ns / 1e6);
	printf("forget of %d processes: %.3f ms CPU, %.3f ms of it holding the lock\n", NR_CHILDREN,
	       total_ns / 1e6, lock_ns / 1e6);
	CHECK(forget_marker(1) == 4, "marker");
	tracker_world_free(&w);
	tmpdir_done(tmpdir, harness_failed);
}

/*
 * The exited wait EXIT_UNLOAD_DELAY_NS for their unload, and the load thread
 * looks for the due ones after every work item: it looked at every process
 * of the registry each time (a swarm's exits, one work item each, made it
 * quadratic: 31 s of make test's CPU in unload_due_procs alone).  The due
 * ones are a queue in due order now: a look at one that is not due yet ends
 * the pass.  NR_CHILDREN exits pending, 100 passes before any is due, then
 * one past all of them.
 */
static void test_unload_due_queue(void)
{
	pid_t kids[NR_CHILDREN];
	struct tracker_world w;
	uint64_t steps;
	int i, entries;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfiprof-forget.XXXXXX");
	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	loaded_children_killed(&w, kids);
	pthread_mutex_lock(&w.pt->load_lock);
	for (i = 0; i < NR_CHILDREN; i++)
		exit_proc(w.pt, (uint32_t)kids[i]);
	CHECK(w.pt->nr_unload_due == NR_CHILDREN, "%u exits pending unload", w.pt->nr_unload_due);
	steps = w.pt->unload_steps;
	/* now 0: before any is due */
	for (i = 0; i < 100; i++)
		unload_due_procs(w.pt, 0);
	steps = w.pt->unload_steps - steps;
	CHECK(w.pt->nr_unload_due == NR_CHILDREN && steps <= 100,
	      "100 passes before any was due looked at %" PRIu64 " processes (want 100 at most), "
	      "%u still due",
	      steps, w.pt->nr_unload_due);
	steps = w.pt->unload_steps;
	unload_due_procs(w.pt, UINT64_MAX);
	steps = w.pt->unload_steps - steps;
	pthread_mutex_unlock(&w.pt->load_lock);
	entries = foreign_entries(&w);
	CHECK(w.pt->nr_unload_due == 0 && entries == 0 && steps <= NR_CHILDREN + 1,
	      "a pass past all: %u still due, %d BPF entries of the children left, %" PRIu64
	      " processes looked at (want %d at most)",
	      w.pt->nr_unload_due, entries, steps, NR_CHILDREN + 1);
	tracker_world_free(&w);
	tmpdir_done(tmpdir, harness_failed);
}

static void *hold_load_lock(void *arg)
{
	struct proc_tracker *pt = arg;

	pthread_mutex_lock(&pt->load_lock);
	sleep_s(1.5);
	pthread_mutex_unlock(&pt->load_lock);
	return NULL;
}

/*
 * A load that takes long (a process mapping thousands of files) held the
 * agent's interval in proc_tracker_forget_exited, which waited for the load
 * lock: no profile, and no reaction to SIGTERM, for as long as it ran.  The
 * forget is put off instead (counted) and done at the next interval.
 */
static void test_forget_beside_long_load(void)
{
	struct tracker_world w;
	struct tracker_stats st;
	pthread_t t;
	double t0, took;
	size_t n;

	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return;
	}
	CHECK(pthread_create(&t, NULL, hold_load_lock, w.pt) == 0, "thread");
	sleep_s(0.1);
	t0 = mono_sec();
	n = proc_tracker_forget_exited(w.pt);
	took = mono_sec() - t0;
	proc_tracker_stats(w.pt, &st);
	CHECK(took < 0.2 && n == 0 && st.forgets_deferred == 1,
	      "a forget beside a load under way took %.2f s (%zu forgotten, %" PRIu64
	      " deferred): want at once, put off",
	      took, n, st.forgets_deferred);
	pthread_join(t, NULL);
	proc_tracker_forget_exited(w.pt);
	proc_tracker_stats(w.pt, &st);
	CHECK(st.forgets_deferred == 1, "a forget with no load under way was put off");
	tracker_world_free(&w);
}

int main(void)
{
	test_forget_lock_time();
	test_forget_beside_long_load();
	test_unload_due_queue();
	return HARNESS_DONE();
}
