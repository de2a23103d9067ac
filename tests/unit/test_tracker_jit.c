// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT rows of a runtime (user/track/runtime_hooks.h's jit_key, jit_build,
 * jit_pid, jit_stale), as HotSpot's code cache gets them: anonymous
 * executable memory of this process claimed by a fake runtime, loaded over
 * real BPF maps (needs root) as a file's tables are, keyed with bias 0 and
 * CFI_MAPPING_JIT; its table built once per key, a new key on every change,
 * a mapping read before the runtime had rows claimed at the next load, and
 * the load thread loading again what jit_stale names.  file_code: only a
 * named file's mapping is flagged CFI_MAPPING_FILE (never a JIT's code, for
 * V8's walk), not anonymous memory nor a memfd's (a JIT's double mapping).
 */
#include <bpf/bpf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tracker_world.h"
#include "user/runtimes/hotspot/hotspot_rows.h"
#include "user/track/mapping_keys.h"
#include "user/track/runtime_hooks.h"

#define JIT_BYTES (64ul << 10)

/* The fake runtime: rows for [code, code + JIT_BYTES) once it has any (has_rows). */
static struct {
	uint64_t code;
	bool has_rows;
	uint32_t version; /* of its code: a new key each */
	uint32_t keys, builds, stale_asked;
	bool stale; /* jit_stale names this process once */
	bool watching; /* what jit_watching says */
	uint32_t stale_calls;
} rt;

static uint32_t self(void)
{
	return (uint32_t)getpid();
}

static int jit_key(void *ctx, uint32_t pid, uint64_t start, uint64_t end, char *key)
{
	(void)ctx;
	if (pid != self() || !rt.has_rows || start > rt.code || end <= rt.code)
		return -1;
	rt.keys++;
	snprintf(key, JIT_KEY_LEN, "jit:test:%u:%u", pid, rt.version);
	return 0;
}

/* One blob of a 4-word frame at the code's start: hotspot_rows' table of absolute addresses. */
static struct cfi_table *jit_build(void *ctx, uint32_t pid, const char *key, int *err)
{
	struct hotspot_blob b = {.addr = rt.code,
				 .code_begin = rt.code,
				 .code_end = rt.code + 0x100,
				 .size = 0x100,
				 .frame_size = 4,
				 .frame_complete = 8,
				 .is_nmethod = true};
	struct hotspot_code code = {.blob = &b, .n = 1};
	struct cfi_table *t = NULL;

	(void)ctx;
	(void)pid;
	(void)key;
	rt.builds++;
	*err = hotspot_rows_build(&code, NULL, &t, NULL, NULL);
	return t;
}

static bool jit_pid(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == self() && rt.has_rows;
}

static uint32_t jit_stale(void *ctx, uint32_t *pids, uint32_t max)
{
	(void)ctx;
	rt.stale_calls++;
	if (!rt.stale || !max)
		return 0;
	rt.stale = false;
	rt.stale_asked++;
	pids[0] = self();
	return 1;
}

static bool jit_watching(void *ctx)
{
	(void)ctx;
	return rt.watching;
}

static const struct runtime_hooks hooks = {.jit_key = jit_key,
					   .jit_build = jit_build,
					   .jit_pid = jit_pid,
					   .jit_stale = jit_stale,
					   .jit_watching = jit_watching};

/* The code's mapping as the tracker holds it (NULL: none). */
static const struct proc_mapping *code_mapping(struct tracker_world *w)
{
	return proc_find_mapping(proc_tracker_find(w->pt, self()), rt.code + 8);
}

/* This process's BPF mapping value at addr: 0, or -1 when the trie has none. */
static int val_at(struct tracker_world *w, uint64_t addr, struct cfi_mapping_val *v)
{
	struct cfi_mapping_key k = {
	    .prefixlen = 96, .pid = self(), .addr_be = __builtin_bswap64(addr)};

	return bpf_map_lookup_elem(w->maps_fd, &k, v) ? -1 : 0;
}

/* The code's BPF mapping value: 0, or -1 when the trie has none. */
static int code_val(struct tracker_world *w, struct cfi_mapping_val *v)
{
	return val_at(w, rt.code + 8, v);
}

static void test_file_code(struct tracker_world *w)
{
	struct cfi_mapping_val file = {0}, anon = {0}, mfd = {0};
	int fd = memfd_create("jit-double-map", MFD_CLOEXEC);
	void *code = MAP_FAILED;

	if (fd >= 0 && !ftruncate(fd, 4096))
		code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	CHECK(code != MAP_FAILED, "a memfd's executable mapping");
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "load");
	CHECK(!val_at(w, (uintptr_t)test_file_code, &file) && (file.flags & CFI_MAPPING_FILE) &&
		  (file.flags & CFI_MAPPING_CFI),
	      "this program's text: flags %#x", file.flags);
	CHECK(!val_at(w, rt.code + 8, &anon) && !(anon.flags & CFI_MAPPING_FILE),
	      "anonymous code: flags %#x", anon.flags);
	CHECK(code != MAP_FAILED && !val_at(w, (uintptr_t)code, &mfd) &&
		  !(mfd.flags & CFI_MAPPING_FILE),
	      "a memfd's code: flags %#x", mfd.flags);
	if (code != MAP_FAILED)
		munmap(code, 4096);
	if (fd >= 0)
		close(fd);
}

static void test_rows(struct tracker_world *w)
{
	const struct proc_mapping *m;
	struct cfi_mapping_val v;
	struct tracker_stats st;
	char key1[PROC_MAPPING_KEY_LEN] = "";
	uint32_t id1;

	/* read before the runtime has rows (a JVM starting): frame pointers, as before */
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "first load");
	m = code_mapping(w);
	CHECK(m && !m->obj && m->flags == CFI_MAPPING_FP, "the code before its rows: flags %#x",
	      m ? m->flags : 0);
	/* rows now, the mappings as they were: the load claims the code all the same */
	rt.has_rows = true;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload with rows");
	m = code_mapping(w);
	CHECK(m && m->obj && m->obj->state == OBJ_LOADED && m->bias == 0 &&
		  m->flags == (CFI_MAPPING_CFI | CFI_MAPPING_JIT) &&
		  !strncmp(m->key, "jit:test:", 9),
	      "the code's mapping: key '%s', flags %#x, bias %#" PRIx64, m ? m->key : "",
	      m ? m->flags : 0, m ? m->bias : 0);
	CHECK(!code_val(w, &v) && m && v.obj_id == m->obj->id && v.bias == 0 &&
		  v.flags == (CFI_MAPPING_CFI | CFI_MAPPING_JIT),
	      "BPF: obj %u flags %#x bias %#llx", v.obj_id, v.flags, (unsigned long long)v.bias);
	CHECK(rt.builds == 1, "%u builds for one key", rt.builds);
	id1 = m ? m->obj->id : 0;
	snprintf(key1, sizeof(key1), "%s", m ? m->key : "");
	/* the same code: its key again, its table from the store */
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload, the same code");
	m = code_mapping(w);
	CHECK(rt.builds == 1 && m && m->obj && m->obj->id == id1,
	      "the same key: %u builds, obj %u (was %u)", rt.builds, m && m->obj ? m->obj->id : 0,
	      id1);
	/* new code: a new key, a new table under a new id, BPF pointed at it */
	rt.version++;
	CHECK(proc_tracker_load_now(w->pt, self()) == 0, "reload, new code");
	m = code_mapping(w);
	CHECK(rt.builds == 2 && m && m->obj && m->obj->id != id1 && !code_val(w, &v) &&
		  v.obj_id == m->obj->id,
	      "new code: %u builds, obj %u (was %u), BPF's %u", rt.builds,
	      m && m->obj ? m->obj->id : 0, id1, v.obj_id);
	/* the old rows go with their last mapping: no later load asks for them */
	CHECK(!table_store_has(&w->ts, key1), "the old rows (%s) kept idle", key1);
	proc_tracker_stats(w->pt, &st);
	CHECK(st.reloads_unchanged == 0, "%" PRIu64 " reloads kept the JIT mapping",
	      st.reloads_unchanged);
}

/* Voluntary context switches of this process's thread named name (-1: none). */
static long thread_wakeups(const char *name)
{
	char dir[320], path[400], *status, *key;
	long n;

	if (!thread_dir(getpid(), name, dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/status", dir);
	status = slurp(path);
	key = status ? strstr(status, "\nvoluntary_ctxt_switches:") : NULL;
	n = key ? strtol(key + strlen("\nvoluntary_ctxt_switches:"), NULL, 10) : -1;
	free(status);
	return n;
}

/*
 * The load thread loads again what jit_stale names, every JIT_POLL_MS while
 * the runtime watches JIT code; while it watches none, jit_stale is not asked
 * and the idle thread sleeps (it woke every JIT_POLL_MS before: 20 times a
 * second on every host, with or without a JVM).
 */
static void test_stale(struct tracker_world *w)
{
	struct tracker_stats before, after;
	long wake0, wake1;
	double deadline;

	proc_tracker_stats(w->pt, &before);
	rt.watching = false;
	rt.stale_calls = 0;
	CHECK(proc_tracker_start(w->pt) == 0, "load thread");
	/* the thread's start: its first pass */
	sleep_s(0.2);
	wake0 = thread_wakeups("cfiprof-load");
	sleep_s(2.0);
	wake1 = thread_wakeups("cfiprof-load");
	/*
	 * Over 2 s idle: at most one wakeup a JIT_IDLE_MS (1 s) for a runtime that
	 * may start watching and one a second for the idle tables' expiry, 4 in
	 * all (a slower machine only wakes less); JIT_POLL_MS gave 40.
	 */
	CHECK(rt.stale_calls == 0 && wake0 >= 0 && wake1 - wake0 <= 6,
	      "idle, not watching: jit_stale asked %u times, %ld wakeups in 2 s", rt.stale_calls,
	      wake1 - wake0);
	rt.watching = true;
	rt.version++;
	rt.stale = true;
	deadline = mono_sec() + 30;
	do {
		sleep_s(0.05);
		proc_tracker_stats(w->pt, &after);
	} while (after.reloads == before.reloads && mono_sec() < deadline);
	proc_tracker_drain(w->pt);
	CHECK(rt.stale_asked == 1 && after.reloads > before.reloads && rt.builds == 3,
	      "jit_stale asked %u, reloads %" PRIu64 " -> %" PRIu64 ", %u builds", rt.stale_asked,
	      before.reloads, after.reloads, rt.builds);
	proc_tracker_stop(w->pt, false);
}

int main(void)
{
	struct tracker_world w;
	void *code = mmap(NULL, JIT_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(code != MAP_FAILED, "anonymous executable memory");
	if (code == MAP_FAILED)
		return HARNESS_DONE();
	rt.code = (uintptr_t)code;
	if (tracker_world_init(&w)) {
		CHECK(0, "tracker over BPF maps (root?)");
		return HARNESS_DONE();
	}
	/* tables no process maps stay a minute, as record's default keeps them: not JIT rows */
	w.ts.idle_ttl_ns = 60ull * 1000 * 1000 * 1000;
	/* the world's tracker, with the fake runtime's hooks */
	proc_tracker_free(w.pt);
	w.pt = proc_tracker_new(&(struct proc_tracker_opts){.ts = &w.ts,
							    .syms = w.syms,
							    .procs_fd = w.procs_fd,
							    .mappings_fd = w.maps_fd,
							    .runtimes = &hooks,
							    .nr_runtimes = 1});
	CHECK(w.pt != NULL, "tracker with a runtime");
	if (w.pt) {
		test_file_code(&w);
		test_rows(&w);
		test_stale(&w);
	}
	tracker_world_free(&w);
	munmap(code, JIT_BYTES);
	return HARNESS_DONE();
}
