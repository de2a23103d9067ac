// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reload storms (issue 12, item 6): a process whose mappings did not change
 * is reloaded without a new generation (which would wipe its rule cache in
 * BPF), and pairing old and new mappings stays linear with thousands of them.
 * The process is the test itself, loaded over real BPF maps (needs root).
 */
#include <bpf/bpf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/profile/frame_names.h"
#include "user/track/proc_maps.h"
#include "user/track/tracker_internal.h"

#define PAGE 4096ul

static uint32_t self(void)
{
	return (uint32_t)getpid();
}

static int exec_mappings(void)
{
	struct maps_entry *ents = NULL;
	int n = proc_maps_read(getpid(), true, &ents);

	free(ents);
	return n;
}

/* The generation user space and BPF agree on; 0 when they do not. */
static uint32_t generation(struct tracker_world *w)
{
	struct proc *p = proc_tracker_find(w->pt, self());
	uint32_t pid = self();
	struct cfi_proc_val pv = {0};

	if (!p || bpf_map_lookup_elem(w->procs_fd, &pid, &pv) || pv.generation != p->generation ||
	    pv.flags)
		return 0;
	return p->generation;
}

/*
 * Loads this process until a load leaves nothing past its time (at most 8
 * loads): on a loaded machine 4,000 mappings take over a load's 1.5 s, and
 * the next loads read the names it ran out of time for, each a change.
 */
static bool load_complete(struct tracker_world *w)
{
	struct tracker_stats st;
	uint64_t over;

	for (int i = 0; i < 8; i++) {
		proc_tracker_stats(w->pt, &st);
		over = st.over_load_time;
		if (proc_tracker_load_now(w->pt, self()))
			return false;
		proc_tracker_stats(w->pt, &st);
		if (st.over_load_time == over)
			return true;
	}
	return false;
}

/* The BPF clock time of the mappings BPF knows user space loaded. */
static uint64_t loaded_ns(struct tracker_world *w)
{
	uint32_t pid = self();
	struct cfi_proc_val pv = {0};

	return bpf_map_lookup_elem(w->procs_fd, &pid, &pv) ? 0 : pv.loaded_ns;
}

/*
 * nr pages of exe_fd mapped at every other page of a fresh reservation (no
 * two adjacent: nr mappings the kernel cannot merge): its base, NULL when it
 * could not be reserved; *mapped how many were.
 */
static char *map_exe_apart(int exe_fd, unsigned int nr, unsigned int *mapped)
{
	char *base =
	    mmap(NULL, 2 * (size_t)nr * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int i;

	*mapped = 0;
	CHECK(base != MAP_FAILED, "reserve");
	if (base == MAP_FAILED)
		return NULL;
	for (i = 0; i < nr; i++)
		*mapped += mmap(base + 2 * i * PAGE, PAGE, PROT_READ | PROT_EXEC,
				MAP_PRIVATE | MAP_FIXED, exe_fd, 0) != MAP_FAILED;
	return base;
}

static void test_unchanged_reload(struct tracker_world *w, int exe_fd)
{
	struct tracker_stats st;
	uint32_t g1, g2, g3, g4;
	uint64_t t1, t2;
	void *lib;

	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "first load");
	g1 = generation(w);
	t1 = loaded_ns(w);
	CHECK(g1 > 0, "a generation after the first load");
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload");
	g2 = generation(w);
	t2 = loaded_ns(w);
	CHECK(g2 == g1, "nothing changed, yet the generation went from %u to %u", g1, g2);
	/* what BPF knows: the mappings were read again (a change before that is not pending) */
	CHECK(t2 > t1, "loaded_ns %" PRIu64 " -> %" PRIu64, t1, t2);
	proc_tracker_stats(w->pt, &st);
	CHECK(st.loads == 1 && st.reloads == 1, "loads %" PRIu64 ", reloads %" PRIu64, st.loads,
	      st.reloads);

	/* a new executable mapping is a change: a new generation, and the mapping is found */
	lib = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, exe_fd, 0);
	CHECK(lib != MAP_FAILED, "mmap of the test binary");
	if (lib == MAP_FAILED)
		return;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after mmap");
	g3 = generation(w);
	CHECK(g3 > g2, "mmap: generation %u -> %u", g2, g3);
	CHECK(proc_find_mapping(proc_tracker_find(w->pt, self()), (uintptr_t)lib + 8) != NULL,
	      "the new mapping is known");
	munmap(lib, PAGE);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after munmap");
	g4 = generation(w);
	CHECK(g4 > g3, "munmap: generation %u -> %u", g3, g4);
	CHECK(proc_find_mapping(proc_tracker_find(w->pt, self()), (uintptr_t)lib + 8) == NULL,
	      "the unmapped range is gone");
}

/*
 * Thousands of one-page executable mappings of the test binary, a page apart
 * (so the kernel cannot merge them): pairing them with the previous load is a
 * merge of two sorted lists, a few steps per mapping, not a scan per mapping.
 */
static void test_pairing_linear(struct tracker_world *w, int exe_fd)
{
	const unsigned int nr = 4000;
	uint64_t steps;
	uint32_t g1, g2, g3;
	unsigned int i, mapped;
	char *base;
	int n;

	base = map_exe_apart(exe_fd, nr, &mapped);
	if (!base)
		return;
	CHECK(mapped == nr, "%u of %u mappings", mapped, nr);
	n = exec_mappings();
	CHECK(n >= (int)nr, "%d executable mappings", n);

	CHECK(load_complete(w), "load %d mappings, all within a load's time", n);
	g1 = generation(w);
	steps = w->pt->pair_steps;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload %d mappings", n);
	steps = w->pt->pair_steps - steps;
	g2 = generation(w);
	CHECK(g2 == g1, "unchanged %d mappings: generation %u -> %u", n, g1, g2);
	CHECK(steps <= 4 * (uint64_t)n,
	      "pairing %d mappings with themselves took %" PRIu64 " steps", n, steps);
	printf("pairing %d unchanged mappings: %" PRIu64 " steps\n", n, steps);

	/* every other one goes: still a merge */
	for (i = 0; i < nr; i += 2)
		munmap(base + 2 * i * PAGE, PAGE);
	steps = w->pt->pair_steps;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after munmap");
	steps = w->pt->pair_steps - steps;
	g3 = generation(w);
	CHECK(g3 > g2, "half unmapped: generation %u -> %u", g2, g3);
	CHECK(steps <= 4 * (uint64_t)n, "pairing %d with %d mappings took %" PRIu64 " steps", n,
	      exec_mappings(), steps);
	CHECK(proc_find_mapping(proc_tracker_find(w->pt, self()), (uintptr_t)base + 8) == NULL &&
		  proc_find_mapping(proc_tracker_find(w->pt, self()),
				    (uintptr_t)base + 2 * PAGE + 8) != NULL,
	      "unmapped ones gone, the others kept");
	/*
	 * Only what is still ours: a page given back above may hold someone
	 * else's memory by now (the allocator put the tracker's own map set
	 * there, and a munmap of the whole range took it away under ASan).
	 */
	for (i = 0; i < 2 * nr; i += 4)
		munmap(base + (i + 1) * PAGE, 3 * PAGE);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after the last munmap");
}

/* A function of this binary's own, for a pc to name. */
__attribute__((noinline)) static int cut_marker(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

/*
 * A load that runs out of time leaves its mappings without tables or names
 * (table_cut, names_cut); a later load reads them.  Samples taken under the
 * cut load's set are named like the others: a clean-clone run had 4 swarm
 * samples of test_deferred:exit_lists whose libc frames stayed
 * "libc.so.6+0x27304" (their process's first load cut, its exit's load
 * complete).  Fails on the old code with "cfiprof_tracker_reload+0x...".
 */
static void test_cut_load_named(struct tracker_world *w)
{
	uint64_t pc = (uintptr_t)cut_marker;
	const struct proc_mapping *m;
	struct tracker_stats st;
	struct frame_namer fn;
	const char *name;
	uint32_t g1, g2;
	char buf[256];

	w->pt->load_budget_ns = 1;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "a load with 1 ns of time");
	w->pt->load_budget_ns = 0;
	proc_tracker_stats(w->pt, &st);
	CHECK(st.over_load_time > 0, "a load with 1 ns of time cut nothing");
	m = proc_find_mapping(proc_tracker_find(w->pt, self()), pc);
	CHECK(m && !m->sym && (m->table_cut || m->names_cut),
	      "this binary's mapping after the cut load: %s", m ? "named" : "not found");
	g1 = proc_tracker_find(w->pt, self()) ? proc_tracker_find(w->pt, self())->generation : 0;
	CHECK(load_complete(w), "the loads after the cut one");
	g2 = generation(w);
	CHECK(g1 && g2 > g1, "generations %u (cut) and %u (complete)", g1, g2);
	m = proc_find_mapping(proc_tracker_find(w->pt, self()), pc);
	CHECK(m && m->sym, "this binary named by the complete load");

	frame_namer_init(&fn, w->pt, NULL);
	name = frame_name_user(&fn, self(), g2, pc, true, buf, sizeof(buf));
	CHECK(streq(name, "cut_marker"), "a sample of the complete load: '%s'", name);
	name = frame_name_user(&fn, self(), g1, pc, true, buf, sizeof(buf));
	CHECK(streq(name, "cut_marker"), "a sample taken under the cut load: '%s'", name);
	frame_namer_free(&fn);
	CHECK(cut_marker(1) == 2, "cut_marker");
}

/* The mapping at pc that names a sample of generation gen: 0 none, 1 exe's, 2 other's. */
static int named_file(struct tracker_world *w, uint32_t gen, uint64_t pc, const char *other)
{
	struct map_set *ref;
	const struct proc_mapping *m = proc_tracker_mapping_for(w->pt, self(), gen, NULL, pc, &ref);
	int which = !m ? 0 : strstr(m->path, other) ? 2 : 1;

	map_set_put(ref);
	return which;
}

/*
 * dlopen/dlclose churn: two files mapped in turn at the same address, far
 * more loads than PROC_HISTORY.  Each sample is named by the file mapped
 * when it was taken, or, once its set is gone, by none: never by the other
 * file a later set maps there.  Sets samples wait on are kept past
 * PROC_HISTORY, up to PROC_HISTORY_MAX (the oldest then go, counted).  Fails
 * on the old code: the newest set mapping the pc named every old sample.
 */
static void test_churn_names(struct tracker_world *w, int exe_fd)
{
	enum { ROUNDS = 48 };
	static const char other_path[] = "/usr/bin/true";
	int other = open(other_path, O_RDONLY | O_CLOEXEC), right = 0, wrong = 0, unnamed = 0;
	uint32_t right_sampled = 0;
	uint32_t gens[ROUNDS] = {0}, sampled = 0;
	struct tracker_stats st0, st;
	char *at;

	CHECK(other >= 0, "open %s", other_path);
	at = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(at != MAP_FAILED, "reserve");
	if (other < 0 || at == MAP_FAILED)
		return;
	proc_tracker_stats(w->pt, &st0);
	for (int k = 0; k < ROUNDS; k++) {
		CHECK(mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
			   k & 1 ? other : exe_fd, 0) == at,
		      "round %d: mmap", k);
		CHECK(proc_tracker_load_now(w->pt, self()) == 0, "round %d: load", k);
		gens[k] = generation(w);
		/* a quarter of the rounds has no sample: their sets may go */
		if (k % 4 != 3) {
			proc_tracker_note_sample(w->pt, self(), gens[k], 0, true);
			sampled++;
		}
		CHECK(mmap(at, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
			  at,
		      "round %d: unmap", k);
		CHECK(proc_tracker_load_now(w->pt, self()) == 0, "round %d: load after", k);
	}
	for (int k = 0; k < ROUNDS; k++) {
		int f = named_file(w, gens[k], (uintptr_t)at + 8, other_path);

		if (!f)
			unnamed++;
		else if (f == (k & 1 ? 2 : 1))
			right++, right_sampled += k % 4 != 3;
		else
			wrong++;
	}
	proc_tracker_stats(w->pt, &st);
	printf("churn: %d rounds (%u sampled): %d named right, %d wrong, %d unnamed; %" PRIu64
	       " sets with samples dropped\n",
	       ROUNDS, sampled, right, wrong, unnamed, st.map_sets_dropped - st0.map_sets_dropped);
	CHECK(wrong == 0, "%d samples named by the other file mapped at their pc", wrong);
	/*
	 * A sampled set is kept or its drop counted: each sampled round is named
	 * right or counted.  A full history drops one set, then the set leaving
	 * the PROC_HISTORY newest goes if no sample waits on it: at least
	 * PROC_HISTORY_MAX - 1 sets stay, the older ones all sampled.
	 */
	CHECK(right_sampled + (st.map_sets_dropped - st0.map_sets_dropped) == sampled &&
		  right_sampled >= PROC_HISTORY_MAX - 1 - PROC_HISTORY,
	      "%u sampled rounds named, %" PRIu64 " sampled sets dropped (want %u in all, at "
	      "least %u named)",
	      right_sampled, st.map_sets_dropped - st0.map_sets_dropped, sampled,
	      PROC_HISTORY_MAX - 1 - PROC_HISTORY);
	/* a sample arriving for a set gone is counted */
	proc_tracker_note_sample(w->pt, self(), gens[0], 0, true);
	proc_tracker_stats(w->pt, &st);
	CHECK(st.samples_set_gone == st0.samples_set_gone + 1, "%" PRIu64 " samples of a gone set",
	      st.samples_set_gone - st0.samples_set_gone);
	munmap(at, PAGE);
	close(other);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after the last munmap");
}

/*
 * Code mapped after a load and sampled before the next (a library mapped
 * late, or found only in the kernel's list at the process's exit): the
 * sample's generation has no mapping at its pc, and the first later set that
 * maps it names it, not a newer one that maps another file there.  Fails
 * on dc4fe1a's code, which named it by no set (test_process_edges:
 * exit_late_lib's [unknown] leaf in a clean clone).
 */
static void test_mapped_late(struct tracker_world *w, int exe_fd)
{
	static const char other_path[] = "/usr/bin/true";
	int other = open(other_path, O_RDONLY | O_CLOEXEC), f1, f2;
	uint32_t g0;
	char *at;

	at = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(other >= 0 && at != MAP_FAILED, "open %s, reserve", other_path);
	if (other < 0 || at == MAP_FAILED)
		return;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "load before the mapping");
	g0 = generation(w);
	/* mapped now, sampled under g0 (BPF found the page in its maps: the kernel's list) */
	mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, exe_fd, 0);
	proc_tracker_note_sample(w->pt, self(), g0, 0, true);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "the load that sees it");
	mmap(at, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, other, 0);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "a load that sees another file there");
	f1 = named_file(w, g0, (uintptr_t)at + 8, other_path);
	f2 = named_file(w, generation(w), (uintptr_t)at + 8, other_path);
	CHECK(f1 == 1 && f2 == 2,
	      "a sample of generation %u named by file %d (want 1, the first set mapping it), "
	      "the newest generation's by %d (want 2)",
	      g0, f1, f2);
	munmap(at, PAGE);
	close(other);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after the munmap");
}

/*
 * The older sets kept for their samples hold PROC_HISTORY_OLD_MAPS mappings at
 * most: a process of a thousand code mappings remapping one page many times,
 * a sample under every set, keeps the budget, the sets past it dropped and
 * counted (its memory is what the budget says, not 32 sets of it).
 */
static void test_history_budget(struct tracker_world *w, int exe_fd)
{
	enum { PAGES = 1000, ROUNDS = 20 };
	struct tracker_stats st0, st;
	unsigned int i, mapped;
	uint64_t old = 0;
	struct proc *p;
	char *base;

	base = map_exe_apart(exe_fd, PAGES, &mapped);
	if (!base)
		return;
	CHECK(mapped == PAGES, "%u of %u mappings", mapped, PAGES);
	CHECK(load_complete(w), "load %u mappings", PAGES);
	proc_tracker_stats(w->pt, &st0);
	for (i = 0; i < ROUNDS; i++) {
		/* the first page unmapped and mapped again in turn: a new set each time */
		if (i & 1)
			mmap(base, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, exe_fd, 0);
		else
			mmap(base, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		CHECK(proc_tracker_load_now(w->pt, self()) == 0, "round %u: load", i);
		proc_tracker_note_sample(w->pt, self(), generation(w), 0, true);
	}
	proc_tracker_stats(w->pt, &st);
	p = proc_tracker_find(w->pt, self());
	for (i = 0; p && i + PROC_HISTORY < p->nr_history; i++)
		old += p->history[i]->nr_maps;
	printf("history budget: %u sets kept, %" PRIu64 " mappings in the older ones, %" PRIu64
	       " sets dropped\n",
	       p ? p->nr_history : 0, old, st.map_sets_dropped - st0.map_sets_dropped);
	/* each set holds ~1,000 mappings: 4 fit the budget, the others of 20 are dropped */
	CHECK(p && old <= PROC_HISTORY_OLD_MAPS && p->nr_history > PROC_HISTORY &&
		  st.map_sets_dropped - st0.map_sets_dropped >= ROUNDS - PROC_HISTORY - 4,
	      "%u sets, %" PRIu64 " mappings in the older ones (budget %u), %" PRIu64 " dropped",
	      p ? p->nr_history : 0, old, PROC_HISTORY_OLD_MAPS,
	      st.map_sets_dropped - st0.map_sets_dropped);
	munmap(base, 2 * PAGES * PAGE);
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload after the last munmap");
}

int main(void)
{
	struct tracker_world w;
	int exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	CHECK(exe_fd >= 0, "open /proc/self/exe");
	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return HARNESS_DONE();
	}
	if (exe_fd >= 0) {
		test_unchanged_reload(&w, exe_fd);
		test_pairing_linear(&w, exe_fd);
		test_churn_names(&w, exe_fd);
		test_mapped_late(&w, exe_fd);
		test_history_budget(&w, exe_fd);
		close(exe_fd);
	}
	tracker_world_free(&w);
	/* a tracker of its own: the loads above left theirs complete */
	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return HARNESS_DONE();
	}
	test_cut_load_named(&w);
	tracker_world_free(&w);
	return HARNESS_DONE();
}
