// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The queue of samples waiting for their tables (user/unwind/deferred_queue.c),
 * over a one-rule world: a sample is finished only once its process's mappings
 * were read after they last changed before it and its tables are in; otherwise it waits, and
 * past the timeout (or at the end, or when the queue is full) it is handed on
 * as the kernel left it, counted by cause.  Every sample received comes out
 * exactly once; malformed records are counted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/go_func.h"
#include "tests/lib/harness.h"
#include "tests/lib/replay.h"
#include "user/session/runtimes.h"
#include "user/track/proc_tracker.h"
#include "user/unwind/deferred_queue.h"

#define PID 77
#define PC  0x401234ull
#define SP  0x7ff000001010ull
#define NS  1000000ull /* 1 ms */
#define KPC 0xffffffff81000000ull

struct emitted {
	int n, deferred, pending, complete;
	uint16_t nr_user, nr_rt;
	uint8_t reason;
	uint64_t user[3]; /* the first three user pcs */
	uint64_t kernel_pc;
	struct cfi_interp_frame py[2]; /* the first two */
	uint32_t taken_gen;
};

static void emit(void *ctx, const struct cfi_sample_record *r, size_t size,
		 const struct cfi_sample_record *taken)
{
	struct emitted *e = ctx;

	CHECK(size == sizeof(*r) + (r->nr_kernel + r->nr_user) * sizeof(__u64) +
			  r->nr_rt * sizeof(struct cfi_interp_frame),
	      "emitted record size %zu for %u+%u pcs, %u Python frames", size, r->nr_kernel,
	      r->nr_user, r->nr_rt);
	e->nr_rt = r->nr_rt;
	memcpy(e->py, r->pcs + r->nr_kernel + r->nr_user,
	       (r->nr_rt < 2 ? r->nr_rt : 2) * sizeof(struct cfi_interp_frame));
	e->taken_gen = taken->generation;
	e->n++;
	e->deferred += !!(r->flags & SAMPLE_DEFERRED);
	e->pending += r->reason == STOP_TABLES_PENDING;
	e->complete += r->reason == STOP_COMPLETE;
	e->nr_user = r->nr_user;
	e->reason = r->reason;
	memcpy(e->user, r->pcs + r->nr_kernel, (r->nr_user < 3 ? r->nr_user : 3) * sizeof(__u64));
	e->kernel_pc = r->nr_kernel ? r->pcs[0] : 0;
}

/* One object whose only row says "outermost frame": a walk from PC completes at once. */
static void world(struct replay_env *env)
{
	static struct cfi_rule rules[2];
	static struct cfi_row rows[1] = {{0, 1}};
	static struct cfi_page pages[1] = {{0x40, 0, 1}};
	struct cfi_table t = {.rules = rules,
			      .nr_rules = 2,
			      .rows = rows,
			      .nr_rows = 1,
			      .pages = pages,
			      .nr_pages = 1};

	memset(rules, 0, sizeof(rules));
	rules[1].cfa_kind = CFI_CFA_RSP;
	rules[1].cfa_off = 8;
	rules[1].ra_kind = CFI_REG_UNDEFINED;
	replay_env_init(env, PID);
	env->proc_known = 0;
	CHECK(replay_add_table(env, 1, &t) == 0, "table");
	replay_add_mapping(env, 0x400000, 0x410000, 1, CFI_MAPPING_CFI, 0);
}

/* A RECORD_DEFERRED as the kernel sends it: the leaf emitted, its tables were missing. */
static size_t record(uint64_t *buf, uint64_t time_ns)
{
	struct cfi_deferred_record *d = (struct cfi_deferred_record *)buf;
	struct cfi_sample_record *r;

	memset(buf, 0, sizeof(*d) + DEFER_CHUNK + sizeof(*r) + 16);
	d->type = RECORD_DEFERRED;
	d->stack_max = DEFER_CHUNK;
	d->stack_base = SP & ~(uint64_t)(DEFER_CHUNK - 1);
	d->stack_len = DEFER_CHUNK;
	d->ip = PC;
	d->sp = SP;
	d->bp_valid = 1;
	/* the library was mapped a millisecond before the sample */
	d->changed_ns = time_ns - NS;
	r = (struct cfi_sample_record *)((char *)(d + 1) + DEFER_CHUNK);
	r->type = RECORD_SAMPLE;
	r->pid = PID;
	r->time_ns = time_ns;
	r->reason = STOP_TABLES_PENDING;
	r->nr_kernel = 1;
	r->nr_user = 1;
	r->pcs[0] = KPC;
	r->pcs[1] = PC;
	return sizeof(*d) + DEFER_CHUNK + sizeof(*r) + 2 * sizeof(__u64);
}

static uint64_t buf[(sizeof(struct cfi_deferred_record) + DEFER_CHUNK + 256) / 8];

static void setup(struct deferred_queue *q, struct replay_env *env, struct emitted *e,
		  uint64_t max_bytes)
{
	struct walk_maps m;

	memset(e, 0, sizeof(*e));
	world(env);
	replay_walk_maps(env, &m);
	CHECK(deferred_queue_init(q, &m, 127, max_bytes, 1000 * NS, emit, e) == 0, "init");
}

static void test_finished_once_mappings_read(void)
{
	static struct replay_env env;
	struct deferred_queue q;
	struct emitted e;

	setup(&q, &env, &e, 1 << 20);
	deferred_queue_add(&q, buf, record(buf, 100 * NS));
	deferred_queue_run(&q, 101 * NS, false);
	CHECK(e.n == 0 && q.stats.waiting == 1,
	      "unknown process: handed on (%d) instead of waiting", e.n);
	/* mappings read before they changed (the library's mmap): it may not be in them */
	env.proc_known = 1;
	env.proc.loaded_ns = 98 * NS;
	deferred_queue_run(&q, 102 * NS, false);
	CHECK(e.n == 0, "finished with mappings read before they changed");
	/* read after the change (even before the sample), but the keys are being rewritten */
	env.proc.loaded_ns = 99 * NS + 1;
	env.proc.flags = CFI_PROC_UPDATING;
	deferred_queue_run(&q, 103 * NS, false);
	CHECK(e.n == 0, "finished while the process's keys were being rewritten");
	env.proc.flags = 0;
	deferred_queue_run(&q, 104 * NS, false);
	CHECK(e.n == 1 && e.deferred == 1 && e.complete == 1 && e.nr_user == 1 &&
		  e.kernel_pc == KPC,
	      "want one finished complete sample with its kernel pc: %d emitted, %d deferred, %d "
	      "complete",
	      e.n, e.deferred, e.complete);
	CHECK(q.stats.finished == 1 && q.stats.waiting == 0 && q.stats.bytes == 0 &&
		  q.stats.by_reason[STOP_COMPLETE] == 1,
	      "stats: finished %lu waiting %lu bytes %lu", (unsigned long)q.stats.finished,
	      (unsigned long)q.stats.waiting, (unsigned long)q.stats.bytes);
	CHECK(q.stats.latency_ns_max == 4 * NS, "latency %lu ns",
	      (unsigned long)q.stats.latency_ns_max);
	deferred_queue_free(&q);
	replay_env_free(&env);
}

/*
 * A sample whose first load saw none of the process's mappings (its library
 * unmapped at that moment): it is queued and run once at that load.  Returns
 * how many mappings env had, to put back when "a later load" maps them.
 */
static size_t add_before_mapped(struct deferred_queue *q, struct replay_env *env)
{
	size_t nr_maps = env->nr_maps;

	env->nr_maps = 0;
	env->proc_known = 1;
	env->proc.loaded_ns = 100 * NS;
	env->proc.generation = 5;
	deferred_queue_add(q, buf, record(buf, 100 * NS));
	deferred_queue_run(q, 101 * NS, false);
	return nr_maps;
}

/*
 * The load after the sample read the maps while its library was unmapped
 * (dlclose, then dlopen again): the walk ends at no mapping and is repeated
 * after a later load, not in the same one, and finishes once the library is
 * back.  A pc no load covers is handed on at no mapping at the timeout,
 * walked once.
 */
static void test_no_mapping_walked_again(void)
{
	static struct replay_env env;
	struct deferred_queue q;
	struct emitted e;
	size_t nr_maps;
	uint32_t i;

	setup(&q, &env, &e, 1 << 20);
	nr_maps = add_before_mapped(&q, &env);
	CHECK(e.n == 0 && q.stats.waiting == 1 && q.stats.rewalked == 1,
	      "no mapping in the first load: %d handed on, %lu walked again", e.n,
	      (unsigned long)q.stats.rewalked);
	deferred_queue_run(&q, 102 * NS, false);
	CHECK(e.n == 0 && q.stats.rewalked == 1, "walked again in the same load (%lu walks)",
	      (unsigned long)q.stats.rewalked);
	env.nr_maps = nr_maps;
	env.proc.generation = 6;
	deferred_queue_run(&q, 103 * NS, false);
	CHECK(e.n == 1 && e.complete == 1 && e.deferred == 1,
	      "library back in the next load: %d handed on, %d complete", e.n, e.complete);

	/* never covered: walked once, handed on at no mapping at the timeout */
	env.nr_maps = 0;
	env.proc.loaded_ns = 200 * NS;
	deferred_queue_add(&q, buf, record(buf, 200 * NS));
	for (i = 0; i < 10; i++) {
		env.proc.generation++;
		deferred_queue_run(&q, (201 + i) * NS, false);
	}
	CHECK(e.n == 1 && q.stats.waiting == 1 && q.stats.rewalked == 2,
	      "a pc no load covers, 10 loads: %d handed on, %lu walks at no mapping", e.n,
	      (unsigned long)q.stats.rewalked);
	deferred_queue_run(&q, 1200 * NS, false);
	CHECK(e.n == 2 && q.stats.by_reason[STOP_NO_MAPPING] == 1,
	      "a pc no load covers, at the timeout: %d handed on, %lu at no mapping", e.n,
	      (unsigned long)q.stats.by_reason[STOP_NO_MAPPING]);
	CHECK(q.stats.waiting == 0, "%lu still waiting", (unsigned long)q.stats.waiting);

	/*
	 * The process exits while its walk waits for a later load: the walk it
	 * had is handed on at once (no-mapping, its frames), not kept
	 * tables-pending as "process gone".
	 */
	env.proc.loaded_ns = 300 * NS;
	deferred_queue_add(&q, buf, record(buf, 300 * NS));
	deferred_queue_run(&q, 301 * NS, false);
	CHECK(e.n == 2 && q.stats.waiting == 1, "no mapping, waiting: %d handed on", e.n);
	env.proc_known = 0;
	deferred_queue_run(&q, 302 * NS, false);
	CHECK(e.n == 3 && q.stats.by_reason[STOP_NO_MAPPING] == 2 && q.stats.gave_up_gone == 0 &&
		  e.deferred == 3,
	      "process gone while waiting: %d handed on, %lu at no mapping, %lu given up gone",
	      e.n, (unsigned long)q.stats.by_reason[STOP_NO_MAPPING],
	      (unsigned long)q.stats.gave_up_gone);
	CHECK(q.stats.waiting == 0 && q.stats.bytes == 0, "%lu still waiting, %lu bytes",
	      (unsigned long)q.stats.waiting, (unsigned long)q.stats.bytes);
	env.nr_maps = nr_maps;
	deferred_queue_free(&q);
	replay_env_free(&env);
}

static void count_reload(void *ctx, uint32_t pid, uint64_t now_ns)
{
	(void)now_ns;
	CHECK(pid == PID, "load asked for pid %u", pid);
	(*(int *)ctx)++;
}

/*
 * A process mapping and unmapping its library in a loop asks for loads by
 * its own changes, and they read the maps while the library is unmapped,
 * many times over (lazybind: 4 in 40 ms, the sample handed on at no
 * mapping).  The walk waits for a load that maps its pc, however many come
 * first, asking for loads meanwhile; and is repeated only then.
 */
static void test_no_mapping_waits_for_its_pc(void)
{
	static struct replay_env env;
	struct deferred_queue q;
	struct emitted e;
	int asked = 0;
	size_t nr_maps;
	uint32_t i;

	setup(&q, &env, &e, 1 << 20);
	deferred_queue_set_reload(&q, count_reload, &asked);
	nr_maps = add_before_mapped(&q, &env);
	CHECK(e.n == 0 && asked == 1, "no mapping in the first load: %d handed on, %d loads asked",
	      e.n, asked);
	for (i = 0; i < 20; i++) {
		env.proc.generation += 2;
		deferred_queue_run(&q, (102 + i) * NS, false);
	}
	CHECK(e.n == 0 && q.stats.waiting == 1,
	      "20 loads without its library: %d handed on (%lu at no mapping)", e.n,
	      (unsigned long)q.stats.by_reason[STOP_NO_MAPPING]);
	CHECK(q.stats.rewalked == 1, "%lu walks while its pc was in no mapping",
	      (unsigned long)q.stats.rewalked);
	CHECK(asked == 21, "%d loads asked for in 21 passes", asked);
	env.nr_maps = nr_maps;
	env.proc.generation += 2;
	deferred_queue_run(&q, 130 * NS, false);
	CHECK(e.n == 1 && e.complete == 1 && e.deferred == 1 && q.stats.waiting == 0,
	      "library back: %d handed on, %d complete", e.n, e.complete);
	CHECK(asked == 21, "%d loads asked for, one after it finished", asked);
	deferred_queue_free(&q);
	replay_env_free(&env);
}

/*
 * A Python process's sample: the frames the kernel read at sample time
 * follow the PCs of the finished walk (one more PC than the kernel emitted
 * here), and the emitter learns the generation they were named under.
 */
static void test_python_frames_follow(void)
{
	static const struct cfi_interp_frame py[2] = {{0x7f0000001000ull, 0x50, 0, 0, 0},
						      {0x7f0000002000ull, 0x90, 1, 0, 0}};
	static struct replay_env env;
	struct cfi_sample_record *r;
	struct deferred_queue q;
	struct emitted e;
	size_t size;

	setup(&q, &env, &e, 1 << 20);
	size = record(buf, 100 * NS);
	r = (struct cfi_sample_record *)((char *)buf + sizeof(struct cfi_deferred_record) +
					 DEFER_CHUNK);
	/* the kernel emitted no user PC; its Python frames follow the kernel PC */
	r->nr_user = 0;
	r->generation = 3;
	r->nr_rt = 2;
	r->runtime = RT_PYTHON;
	memcpy(r->pcs + 1, py, sizeof(py));
	size = size - sizeof(__u64) + sizeof(py);
	deferred_queue_add(&q, buf, size - 1);
	CHECK(q.stats.malformed == 1, "a record short of its Python frames is taken");
	deferred_queue_add(&q, buf, size);
	env.proc_known = 1;
	env.proc.loaded_ns = 100 * NS;
	env.proc.generation = 5;
	deferred_queue_run(&q, 101 * NS, false);
	CHECK(e.n == 1 && e.complete == 1 && e.nr_user == 1 && e.nr_rt == 2 &&
		  !memcmp(e.py, py, sizeof(py)) && e.taken_gen == 3,
	      "finished: %d emitted, %u user PCs, %u Python frames (%s), taken in generation %u",
	      e.n, e.nr_user, e.nr_rt, memcmp(e.py, py, sizeof(py)) ? "changed" : "intact",
	      e.taken_gen);
	deferred_queue_free(&q);
	replay_env_free(&env);
}

static void test_gives_up_by_cause(void)
{
	static struct replay_env env;
	struct deferred_queue q;
	struct emitted e;

	/* tables still pending past the timeout */
	setup(&q, &env, &e, 1 << 20);
	env.proc_known = 1;
	env.proc.loaded_ns = 200 * NS;
	env.maps[0].val.flags = CFI_MAPPING_PENDING;
	deferred_queue_add(&q, buf, record(buf, 100 * NS));
	deferred_queue_run(&q, 500 * NS, false);
	CHECK(e.n == 0, "gave up before the timeout");
	deferred_queue_run(&q, 1100 * NS, false);
	CHECK(e.n == 1 && e.pending == 1 && e.deferred == 0 && q.stats.gave_up_timeout == 1,
	      "timeout: %d emitted, %d pending, timeout count %lu", e.n, e.pending,
	      (unsigned long)q.stats.gave_up_timeout);
	deferred_queue_free(&q);
	replay_env_free(&env);

	/* the process never loaded: gone, at the end of the session */
	setup(&q, &env, &e, 1 << 20);
	deferred_queue_add(&q, buf, record(buf, 100 * NS));
	deferred_queue_add(&q, buf, record(buf, 101 * NS));
	deferred_queue_run(&q, 102 * NS, true);
	CHECK(e.n == 2 && e.pending == 2 && q.stats.gave_up_gone == 2 && q.stats.waiting == 0,
	      "final: %d emitted, %lu gone", e.n, (unsigned long)q.stats.gave_up_gone);
	deferred_queue_free(&q);
	replay_env_free(&env);

	/* room for one: the second is handed on at once */
	setup(&q, &env, &e, 6000);
	deferred_queue_add(&q, buf, record(buf, 100 * NS));
	deferred_queue_add(&q, buf, record(buf, 101 * NS));
	CHECK(e.n == 1 && e.pending == 1 && q.stats.gave_up_full == 1 && q.stats.waiting == 1,
	      "full: %d emitted, %lu full, %lu waiting", e.n, (unsigned long)q.stats.gave_up_full,
	      (unsigned long)q.stats.waiting);
	CHECK(q.stats.bytes < 6000 && q.stats.bytes > DEFER_CHUNK, "queued bytes %lu",
	      (unsigned long)q.stats.bytes);
	deferred_queue_run(&q, 102 * NS, true);
	CHECK(e.n == 2 && q.stats.received == 2, "every sample received comes out once");
	deferred_queue_free(&q);
	replay_env_free(&env);
}

#define VDSO	    0x7ff7f0000000ull
#define VDSO_PC	    (VDSO + 0xb66)
#define VDSO_RA	    (VDSO + 0xb70) /* into the exported clock_gettime from its helper */
#define NOW_RA	    0x401240ull	   /* the return address into the function that switched stacks */
#define OTHER_STACK 0x3fc184197263e267ull
#define GO_END	    0x470000ull /* gofib_stripped's text ends below */

/*
 * A Go program (gofib_stripped) and its vDSO: the vDSO's rule finds its
 * caller at the stack pointer; the caller's, as Go's tables give it for a
 * frame that switched to g0's stack, finds a word of that stack.
 */
static void go_world(struct replay_env *env, uint64_t now_pc)
{
	static struct cfi_rule rules[3];
	static struct cfi_row go_rows[1] = {{0, 1}}, vdso_rows[1] = {{0, 2}};
	static struct cfi_page go_pages[2] = {{0x40, 0, 1}, {0, 0, 1}}, vdso_pages[1] = {{0, 0, 1}};
	struct cfi_table go = {.rules = rules,
			       .nr_rules = 3,
			       .rows = go_rows,
			       .nr_rows = 1,
			       .pages = go_pages,
			       .nr_pages = 2},
			 vdso = go;

	/* the program's time.now (the switcher) has the same rule */
	go_pages[1].page = now_pc >> CFI_PAGE_SHIFT;
	vdso.rows = vdso_rows;
	vdso.pages = vdso_pages;
	vdso.nr_pages = 1;
	memset(rules, 0, sizeof(rules));
	rules[1] = (struct cfi_rule){
	    .cfa_kind = CFI_CFA_RSP, .cfa_off = 16, .ra_kind = CFI_REG_AT_CFA, .ra_off = -8};
	rules[2] = (struct cfi_rule){
	    .cfa_kind = CFI_CFA_RSP, .cfa_off = 8, .ra_kind = CFI_REG_AT_CFA, .ra_off = -8};
	replay_env_init(env, PID);
	CHECK(replay_add_table(env, 1, &go) == 0 && replay_add_table(env, 2, &vdso) == 0, "tables");
	replay_add_mapping(env, 0x400000, GO_END, 1, CFI_MAPPING_CFI, 0);
	replay_add_mapping(env, VDSO, VDSO + 0x2000, 2, CFI_MAPPING_CFI | CFI_MAPPING_VDSO, VDSO);
	env->proc.loaded_ns = 100 * NS;
}

/*
 * The kernel's deferral of a sample at @pc of process @pid: its leaf
 * emitted, its tables not loaded; *@stack the copy's words from the sp on.
 */
static size_t leaf_record(uint64_t *b, uint32_t pid, uint64_t pc, uint64_t **stack)
{
	size_t size = record(b, 100 * NS);
	struct cfi_deferred_record *d = (struct cfi_deferred_record *)b;
	struct cfi_sample_record *r = (struct cfi_sample_record *)((char *)(d + 1) + DEFER_CHUNK);

	*stack = (uint64_t *)(void *)(d + 1) + (SP - d->stack_base) / 8;
	d->ip = pc;
	r->pcs[1] = pc;
	r->pid = pid;
	return size;
}

/*
 * A sample in the vDSO: @word where the switcher's rule finds its return
 * address.  @nested: the leaf in a helper the vDSO's clock_gettime called (a
 * frame more in the vDSO, as on a guest whose clock is read by a function of
 * its own).
 */
static size_t vdso_record_at(uint64_t *b, uint32_t pid, uint64_t word, bool nested)
{
	uint64_t *stack;
	size_t size = leaf_record(b, pid, VDSO_PC, &stack);

	if (nested)
		*stack++ = VDSO_RA;
	stack[0] = NOW_RA;
	stack[2] = word;
	return size;
}

static size_t vdso_record(uint64_t *b, uint32_t pid, uint64_t word)
{
	return vdso_record_at(b, pid, word, false);
}

/* The same at @pc in the switcher past its switch: its rule finds @word, g0's. */
static size_t switcher_record(uint64_t *b, uint32_t pid, uint64_t pc, uint64_t word)
{
	uint64_t *stack;
	size_t size = leaf_record(b, pid, pc, &stack);

	stack[1] = word;
	return size;
}

/*
 * A sample taken in the vDSO before its process was known to run Go (its
 * first milliseconds): the kernel could not step out of the vDSO call with
 * m.vdsoPC / m.vdsoSP, and user space cannot read them after the fact.  Its
 * walk ends past the vDSO's caller, runtime-pending, not with a word of g0's
 * stack as a frame (test_go_names:vdso's intermittent failure); a process
 * Go does not know keeps its walk.
 */
static void test_go_vdso_before_detection(void)
{
	static struct replay_env env;
	struct session_runtimes sr = {0};
	struct proc_mapping maps[1] = {{.start = 0x400000, .end = GO_END}};
	uint64_t now = 0, now_end = 0, entry = 0, entry_end;
	struct deferred_queue q;
	struct walk_maps m;
	struct emitted e = {0};
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/progs/gofib_stripped",
		 getenv("OUT") ? getenv("OUT") : "build");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "cannot open %s", path);
	CHECK(go_func_range(path, "time.now", &now, &now_end) && now_end < GO_END &&
		  go_func_range(path, "_rt0_amd64_linux", &entry, &entry_end),
	      "no time.now below %#llx or _rt0_amd64_linux in %s", GO_END, path);
	CHECK(session_runtimes_start(&sr, -1, 0) == 0, "runtimes");
	if (fd < 0)
		return;
	/* what a load of the process tells the runtimes: its objects, then its mappings */
	snprintf(maps[0].key, sizeof(maps[0].key), "gofib-key");
	for (uint32_t i = 0; i < sr.nr_hooks; i++) {
		if (sr.hooks[i].object)
			sr.hooks[i].object(sr.hooks[i].ctx, maps[0].key, path, fd);
		if (sr.hooks[i].proc)
			sr.hooks[i].proc(sr.hooks[i].ctx, PID, maps, 1, 100 * NS);
	}
	close(fd);
	go_world(&env, now);
	env.proc_known = 1;
	replay_walk_maps(&env, &m);
	CHECK(deferred_queue_init(&q, &m, 127, 1 << 20, 1000 * NS, emit, &e) == 0, "init");
	deferred_queue_set_units(&q, session_runtimes_deferred_units, &sr);

	deferred_queue_add(&q, buf, vdso_record(buf, PID, OTHER_STACK));
	deferred_queue_run(&q, 101 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_RUNTIME_PENDING && e.nr_user == 2 &&
		  e.user[0] == VDSO_PC && e.user[1] == NOW_RA,
	      "Go: %d emitted, reason %u, %u user pcs (%#llx %#llx %#llx): want the vDSO leaf "
	      "and its caller, runtime-pending",
	      e.n, e.reason, e.nr_user, (unsigned long long)e.user[0],
	      (unsigned long long)e.user[1], (unsigned long long)e.user[2]);
	CHECK(q.stats.by_reason[STOP_RUNTIME_PENDING] == 1, "counted under runtime-pending");
	/*
	 * the leaf in a helper of the vDSO's: its frames, then the switcher (a
	 * clean clone's run kept two frames, the switcher lost)
	 */
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, vdso_record_at(buf, PID, OTHER_STACK, true));
	deferred_queue_run(&q, 101 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_RUNTIME_PENDING && e.nr_user == 3 &&
		  e.user[0] == VDSO_PC && e.user[1] == VDSO_RA && e.user[2] == NOW_RA,
	      "Go, two vDSO frames: %d emitted, reason %u, %u user pcs (%#llx %#llx %#llx): "
	      "want both and their caller, runtime-pending",
	      e.n, e.reason, e.nr_user, (unsigned long long)e.user[0],
	      (unsigned long long)e.user[1], (unsigned long long)e.user[2]);
	/*
	 * the switcher itself past its switch (time.now on g0's stack): its
	 * caller, a word of g0's stack, is no code; runtime-pending, as the
	 * kernel would have stepped to m.vdsoPC (a clean clone's run ended it
	 * at no-mapping, [unknown] its caller)
	 */
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, switcher_record(buf, PID, now + 0x20, OTHER_STACK));
	deferred_queue_run(&q, 101 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_RUNTIME_PENDING && e.nr_user == 1 &&
		  e.user[0] == now + 0x20,
	      "Go, in the switcher: %d emitted, reason %u, %u user pcs (%#llx %#llx): want the "
	      "leaf alone, runtime-pending",
	      e.n, e.reason, e.nr_user, (unsigned long long)e.user[0],
	      (unsigned long long)e.user[1]);
	/*
	 * elsewhere in Go's code, no caller found is no-mapping: the program's
	 * entry (a sample at its first instruction, argc where its rule looks)
	 */
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, switcher_record(buf, PID, entry, OTHER_STACK));
	deferred_queue_run(&q, 101 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_NO_MAPPING && e.nr_user == 2,
	      "Go, at its entry: %d emitted, reason %u, %u user pcs: want no-mapping", e.n,
	      e.reason, e.nr_user);
	/*
	 * a zero where the switcher's return address was looked for, which
	 * ends a walk as complete: not the outermost frame, as no Go function
	 * that calls the vDSO is one (a run of test_go_names:vdso named
	 * runtime.nanotime1 a root)
	 */
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, vdso_record(buf, PID, 0));
	deferred_queue_run(&q, 101 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_RUNTIME_PENDING && e.nr_user == 2,
	      "Go, a zero past the switcher: %d emitted, reason %u, %u user pcs: want "
	      "runtime-pending",
	      e.n, e.reason, e.nr_user);

	/* another process with the same tables: no runtime, the walk as it went */
	env.pid = PID + 1;
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, vdso_record(buf, PID + 1, OTHER_STACK));
	deferred_queue_run(&q, 102 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_NO_MAPPING && e.nr_user >= 2,
	      "no runtime: %d emitted, reason %u, %u user pcs", e.n, e.reason, e.nr_user);
	memset(&e, 0, sizeof(e));
	deferred_queue_add(&q, buf, switcher_record(buf, PID + 1, now + 0x20, OTHER_STACK));
	deferred_queue_run(&q, 102 * NS, true);
	CHECK(e.n == 1 && e.reason == STOP_NO_MAPPING && e.nr_user == 2,
	      "no runtime, a leaf in its code: %d emitted, reason %u, %u user pcs", e.n, e.reason,
	      e.nr_user);
	deferred_queue_free(&q);
	replay_env_free(&env);
	session_runtimes_free(&sr);
}

static void test_malformed(void)
{
	static struct replay_env env;
	struct deferred_queue q;
	struct emitted e;
	size_t n;

	setup(&q, &env, &e, 1 << 20);
	n = record(buf, 100 * NS);
	deferred_queue_add(&q, buf, n - 1);
	deferred_queue_add(&q, buf, 8);
	{
		struct cfi_deferred_record *d = (struct cfi_deferred_record *)(void *)buf;

		d->stack_len = DEFER_CHUNK + 1;
	}
	deferred_queue_add(&q, buf, n);
	CHECK(q.stats.malformed == 3 && q.stats.received == 0 && e.n == 0,
	      "malformed: %lu counted, %d emitted", (unsigned long)q.stats.malformed, e.n);
	deferred_queue_free(&q);
	replay_env_free(&env);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_finished_once_mappings_read);
	RUN_TEST(test_no_mapping_walked_again);
	RUN_TEST(test_no_mapping_waits_for_its_pc);
	RUN_TEST(test_python_frames_follow);
	RUN_TEST(test_gives_up_by_cause);
	RUN_TEST(test_go_vdso_before_detection);
	RUN_TEST(test_malformed);
	return HARNESS_DONE();
}
