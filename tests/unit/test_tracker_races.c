// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tracker shared by its threads (issue 12, item 2), raced on purpose and
 * meant to run under ThreadSanitizer (build/tsan) and ASan (build/asan):
 *  - the table load thread reloads this process while a mutator thread keeps
 *    mapping and unmapping a file-backed executable region (a hostile process
 *    does that to a privileged profiler), and loads it synchronously too;
 *  - a symbolizer thread does what the agent's interval flush does: builds
 *    profiles of stacks of this process in every generation, old ones
 *    included, then forgets exited processes;
 *  - a consumer thread notes samples and queues the loads and exits of short
 *    child processes, and another reads the statistics and drains the queue.
 * Our own function must be named right in every generation; nothing may read
 * freed memory or race.  Real BPF maps: needs root.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/profile/aggregate.h"
#include "user/profile/profile.h"
#include "user/profile/frame_names.h"

/*
 * The threads race for at least RUN_SECONDS and until each has done enough
 * rounds to have raced at all; a slow machine (tsan, CPUs oversubscribed)
 * runs longer instead of failing.  STUCK_SECONDS only ends a thread that
 * makes no progress.
 */
#define RUN_SECONDS   2.0
#define STUCK_SECONDS 120.0
#define MIN_ROUNDS    6
#define MIN_PROFILES  6
#define MIN_CHILDREN  3
#define MIN_RELOADS   6
#define PAGE	      4096ul

static struct tracker_world w;
static atomic_bool done;
static atomic_uintptr_t region; /* the mutator's mapping now, 0 when unmapped */
static int exe_fd;
static atomic_ulong rounds, children, profiles;

int race_marker(int x);
__attribute__((noinline)) int race_marker(int x)
{
	return x * 7 + 3;
}

static uint32_t self(void)
{
	return (uint32_t)getpid();
}

/* Maps and unmaps the test binary executable, asking for a load after each change. */
static void *mutator_main(void *arg)
{
	(void)arg;
	while (!done) {
		void *m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, exe_fd, 0);

		if (m == MAP_FAILED)
			break;
		region = (uintptr_t)m;
		proc_tracker_request(w.pt, self(), WORK_LOAD, mono_ns());
		usleep(300);
		if (rounds % 16 == 0)
			proc_tracker_load_now(w.pt, self());
		region = 0;
		munmap(m, 4 * PAGE);
		proc_tracker_request(w.pt, self(), WORK_LOAD, mono_ns());
		usleep(300);
		rounds++;
	}
	return NULL;
}

static void add_stack(struct aggregator *a, uint32_t pid, uint32_t gen, uint64_t pc0, uint64_t pc1)
{
	static _Thread_local union {
		struct cfi_sample_record r;
		char buf[sizeof(struct cfi_sample_record) + 2 * sizeof(uint64_t)];
	} rec;

	memset(&rec, 0, sizeof(rec));
	rec.r.type = RECORD_SAMPLE;
	rec.r.pid = pid;
	rec.r.tid = pid;
	rec.r.generation = gen;
	rec.r.reason = STOP_COMPLETE;
	rec.r.nr_user = 2;
	rec.r.pcs[0] = pc0;
	rec.r.pcs[1] = pc1;
	snprintf(rec.r.comm, sizeof(rec.r.comm), "race");
	agg_add(a, &rec.r, sizeof(rec));
}

struct symbolizer {
	unsigned long misnamed;
};

/* What the agent's flush does: profiles of every generation, then a forget. */
static void *symbolizer_main(void *arg)
{
	struct symbolizer *sy = arg;
	uint64_t marker = (uintptr_t)&race_marker;
	uint32_t gen = 0;

	while (!done) {
		struct frame_namer fn;
		struct aggregator a;
		struct profile p;
		uintptr_t r = region;
		char buf[256];
		size_t i;
		int g;

		if (agg_init(&a, 1024))
			break;
		/* old generations, the current one (0) and ones not seen yet */
		for (g = 0; g < 16; g++)
			add_stack(&a, self(), g ? gen + (uint32_t)g * 3 : 0, marker,
				  r ? r + PAGE + 16 : marker + 1);
		frame_namer_init(&fn, w.pt, NULL);
		if (!profile_build(&p, &a, &fn, NULL)) {
			for (i = 0; i < p.nr_locs; i++)
				if (p.locs[i].addr == marker &&
				    strcmp(p.locs[i].function, "race_marker"))
					sy->misnamed++;
			profile_free(&p);
			profiles++;
		}
		if (strcmp(frame_name_user(&fn, self(), gen, marker, true, buf, sizeof(buf)),
			   "race_marker"))
			sy->misnamed++;
		frame_namer_free(&fn);
		agg_free(&a);
		proc_tracker_forget_exited(w.pt);
		gen += 5;
		if (gen > 4000)
			gen = 0;
	}
	return NULL;
}

/* The ring-buffer consumer: samples, and the loads and exits of short children. */
static void *consumer_main(void *arg)
{
	(void)arg;
	while (!done) {
		pid_t kid = fork();
		int i;

		if (kid == 0) {
			pause();
			_exit(0);
		}
		if (kid < 0)
			break;
		proc_tracker_request(w.pt, (uint32_t)kid, WORK_LOAD, mono_ns());
		for (i = 0; i < 200; i++) {
			proc_tracker_note_sample(w.pt, self(), 0, mono_ns(), true);
			proc_tracker_note_sample(w.pt, (uint32_t)kid, 0, mono_ns(), i & 1);
		}
		usleep(2000);
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		proc_tracker_request(w.pt, (uint32_t)kid, WORK_EXIT, mono_ns());
		children++;
	}
	return NULL;
}

/* The metrics endpoint and the end of an interval: statistics and drains. */
static void *observer_main(void *arg)
{
	(void)arg;
	while (!done) {
		struct tracker_stats st;
		uint32_t live, retained;

		proc_tracker_stats(w.pt, &st);
		proc_tracker_counts(w.pt, &live, &retained);
		proc_tracker_drain(w.pt);
		usleep(1000);
	}
	/* while the main thread stops the load thread */
	proc_tracker_drain(w.pt);
	return NULL;
}

static uint64_t reloads(void)
{
	struct tracker_stats st;

	proc_tracker_stats(w.pt, &st);
	return st.reloads;
}

int main(void)
{
	pthread_t mutator, symbolizer, consumer, observer;
	struct symbolizer sy = {0};
	struct tracker_stats st;
	double start = mono_sec();

	exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(exe_fd >= 0, "open /proc/self/exe");
	if (exe_fd < 0 || tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return HARNESS_DONE();
	}
	CHECK(race_marker(1) == 10, "marker");
	CHECK(proc_tracker_load_now(w.pt, self()) == 0, "load self");
	CHECK(proc_tracker_start(w.pt) == 0, "start the load thread");
	pthread_create(&mutator, NULL, mutator_main, NULL);
	pthread_create(&symbolizer, NULL, symbolizer_main, &sy);
	pthread_create(&consumer, NULL, consumer_main, NULL);
	pthread_create(&observer, NULL, observer_main, NULL);
	while (mono_sec() < start + STUCK_SECONDS &&
	       (mono_sec() < start + RUN_SECONDS || rounds < MIN_ROUNDS ||
		profiles < MIN_PROFILES || children < MIN_CHILDREN || reloads() < MIN_RELOADS))
		usleep(10000);
	done = true;
	pthread_join(mutator, NULL);
	pthread_join(consumer, NULL);
	pthread_join(symbolizer, NULL);
	proc_tracker_stop(w.pt, false);
	pthread_join(observer, NULL);
	proc_tracker_stats(w.pt, &st);
	printf("%lu map/unmap rounds, %lu children, %lu profiles, %" PRIu64 " loads, %" PRIu64
	       " reloads in %.1f s\n",
	       (unsigned long)rounds, (unsigned long)children, (unsigned long)profiles, st.loads,
	       st.reloads, mono_sec() - start);
	CHECK(rounds >= MIN_ROUNDS && profiles >= MIN_PROFILES && children >= MIN_CHILDREN,
	      "the threads ran (%.0f s at most): %lu rounds, %lu profiles, %lu children",
	      STUCK_SECONDS, (unsigned long)rounds, (unsigned long)profiles,
	      (unsigned long)children);
	CHECK(st.reloads >= MIN_RELOADS, "%" PRIu64 " reloads", st.reloads);
	CHECK(sy.misnamed == 0, "our own function misnamed %lu times", sy.misnamed);
	tracker_world_free(&w);
	close(exe_fd);
	return HARNESS_DONE();
}
