// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The JVMs of a session and their code caches' unwind rows; see
 * hotspot_jit.h.
 *
 * The rows follow hotspot_rows.c's keying: the code cache's anonymous
 * mappings get one table of the process's own (its key names the digest of
 * the walk it stands for: a new key is new rows, loaded under a new obj_id
 * while the old table is released, with the process's generation bumped
 * by the load as for any mapping that changed).  Costs are bounded before
 * they are spent: a walk stops at its budget (blocks, reads, time), a
 * process's rows are rebuilt at most once per HOTSPOT_RELOAD_GAP_NS, the
 * table store's quotas bound the rows as any object's, and a JVM's code is
 * looked at every 50 ms while it changes, every 500 ms once it settled (a
 * digest walk: no code read).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/hotspot/hotspot_rows.h"

/* distinct layouts a session keeps: one per JDK build on the host */
#define HOTSPOT_LAYOUTS 16
/*
 * A process's rows are rebuilt at most this often, however often its code
 * changes; its code is looked at (a digest walk) every HOTSPOT_BUSY_NS
 * while it changed in the last HOTSPOT_BUSY_FOR_NS (a JVM starting
 * compiles hundreds of methods in its first seconds, and a sample in code
 * without rows is a stack lost), every HOTSPOT_QUIET_NS once it settled.
 */
#define HOTSPOT_RELOAD_GAP_NS (100ull * 1000 * 1000)
#define HOTSPOT_BUSY_NS	      (50ull * 1000 * 1000)
#define HOTSPOT_BUSY_FOR_NS   (2000ull * 1000 * 1000)
#define HOTSPOT_QUIET_NS      (500ull * 1000 * 1000)
/*
 * The digest walks of one poll stop once they took this long (on the
 * tracker's load thread, which loads wait for); the next poll starts with
 * the JVM after the last one looked at, so each gets its turn.
 */
#define HOTSPOT_POLL_NS (20ull * 1000 * 1000)
/* a load asks for its key once per code cache mapping: one digest serves them all */
#define HOTSPOT_DIGEST_REUSE_NS (20ull * 1000 * 1000)
/*
 * A JVM's digest walks take at most 1 / HOTSPOT_WALK_SHARE of the time: the
 * poll waits that many times its last walk's length.  A code cache of
 * 10,000 nmethods still compiling would otherwise be walked every 50 ms
 * for minutes; new code in the meantime asks for its rows from BPF anyway.
 */
#define HOTSPOT_WALK_SHARE 10

struct jvm {
	uint32_t pid;
	uint16_t layout;
	bool used;
	uint64_t nmethod_name;	/* CodeBlob::_name of an nmethod, once a walk saw one */
	uint64_t interp_name;	/* ... of the interpreter's blob */
	uint64_t loaded_digest; /* of the code the rows its last load keyed stand for */
	uint64_t seen_digest;	/* the last walk's */
	uint64_t seen_ns, reload_ns;
	uint64_t changed_ns; /* when a walk last found the digest moved */
	uint64_t walk_ns;    /* how long the last walk took */
};

static struct hotspot_layout layouts[HOTSPOT_LAYOUTS];
static uint16_t nr_layouts;
static struct jvm jvms[HOTSPOT_JVMS_MAX];
static struct hotspot_jit_stats stats;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const struct hotspot_layout *hotspot_layout_at(uint16_t index)
{
	const struct hotspot_layout *l = NULL;

	pthread_mutex_lock(&lock);
	if (index < nr_layouts)
		l = &layouts[index];
	pthread_mutex_unlock(&lock);
	return l;
}

/* lock held: l's index among the layouts kept (added when new); -1 when there is no room */
static int layout_index_locked(const struct hotspot_layout *l)
{
	for (uint16_t i = 0; i < nr_layouts; i++)
		if (!memcmp(&layouts[i], l, sizeof(*l)))
			return i;
	if (nr_layouts >= HOTSPOT_LAYOUTS)
		return -1;
	layouts[nr_layouts] = *l;
	return nr_layouts++;
}

/* lock held: pid's entry, or NULL */
static struct jvm *find_locked(uint32_t pid)
{
	for (int i = 0; i < HOTSPOT_JVMS_MAX; i++)
		if (jvms[i].used && jvms[i].pid == pid)
			return &jvms[i];
	return NULL;
}

/* pid's entry copied into *out (its layout into *l): false when it is none of ours */
static bool jvm_copy(uint32_t pid, struct jvm *out, struct hotspot_layout *l)
{
	struct jvm *j;

	pthread_mutex_lock(&lock);
	j = find_locked(pid);
	if (j) {
		*out = *j;
		*l = layouts[j->layout];
	}
	pthread_mutex_unlock(&lock);
	return j != NULL;
}

bool hotspot_jvm_layout(uint32_t pid, struct hotspot_layout *l)
{
	struct jvm j;

	return jvm_copy(pid, &j, l);
}

/* The heaps' entries BPF reads: those of the first heap's segment size (all of them in JDK 17). */
static void bpf_heaps(const struct hotspot_heaps *h, struct cfi_hotspot_proc *out)
{
	out->nr_heaps = 0;
	for (uint32_t i = 0; i < h->n && out->nr_heaps < HOTSPOT_BPF_HEAPS; i++) {
		const struct hotspot_heap *x = &h->heap[i];

		if (x->log2_segment != h->heap[0].log2_segment || x->high_boundary <= x->low ||
		    x->high_boundary - x->low > (1ull << 31))
			continue;
		out->heap[out->nr_heaps].low = x->low;
		out->heap[out->nr_heaps].segmap = x->segmap;
		out->size[out->nr_heaps] = (uint32_t)(x->high_boundary - x->low);
		out->nr_heaps++;
	}
	out->log2_segment = h->n ? h->heap[0].log2_segment : 0;
}

int hotspot_jvm_note(uint32_t pid, const struct hotspot_layout *l, struct cfi_hotspot_proc *out)
{
	struct hotspot_heaps h;
	struct jvm *j;
	int index, i;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&lock);
	index = layout_index_locked(l);
	j = index < 0 ? NULL : find_locked(pid);
	for (i = 0; index >= 0 && !j && i < HOTSPOT_JVMS_MAX; i++) {
		if (!jvms[i].used) {
			j = &jvms[i];
			*j = (struct jvm){.pid = pid, .used = true};
			stats.jvms++;
		}
	}
	if (j) {
		/* a pid reused by another JVM of another build */
		if (j->layout != index)
			*j = (struct jvm){.pid = pid, .used = true};
		j->layout = (uint16_t)index;
		out->nmethod_name = j->nmethod_name;
		out->interp_name = j->interp_name;
	}
	pthread_mutex_unlock(&lock);
	if (!j)
		return -1;
	/* a JVM starting has no code heaps yet: none until a later load */
	if (!hotspot_heaps_read(pid, l, &h))
		bpf_heaps(&h, out);
	out->layout = (uint16_t)index;
	out->block_size = l->heap_block_size;
	out->off_name = l->blob_name.off;
	out->off_method = l->nm_method.off;
	out->off_compile_id = l->nm_compile_id.off;
	out->off_method_const = l->method_const.off;
	out->off_const_pool = l->const_pool.off;
	out->off_pool_holder = l->pool_holder.off;
	out->off_klass_name = l->klass_name.off;
	out->off_name_index = l->const_name_index.off;
	out->off_sig_index = l->const_sig_index.off;
	out->const_size = l->const_method_size;
	out->off_frame_size = l->blob_frame_size.off;
	out->off_symbol_length = l->symbol_length.off;
	out->off_symbol_body = l->symbol_body.off;
	out->off_symbol_hash =
	    l->symbol_hash.flags & HOTSPOT_F_FOUND ? l->symbol_hash.off : HOTSPOT_NO_FIELD;
	return 0;
}

/* What one walk may spend: a few ms for a code cache of thousands of blobs. */
static const struct hotspot_walk_budget walk_budget = {
    .blocks = 200000, .reads = 400000, .ns = 50ull * 1000 * 1000};

/*
 * A walk of pid's code cache into *code (its pid set: the nmethods' code
 * read too), the digest of what it found into *digest: 0, or -1.
 */
static int walk(uint32_t pid, const struct hotspot_layout *l, struct hotspot_code *code,
		uint64_t *digest)
{
	struct hotspot_walk_stats ws;
	struct hotspot_heaps h;
	uint64_t name = 0, interp = 0, t0 = mono_ns();
	struct jvm *j;
	int rc;

	if (hotspot_heaps_read(pid, l, &h) || !h.n)
		return -1;
	rc = hotspot_blobs_walk(pid, l, &h, &walk_budget, hotspot_code_add, code, &ws);
	if (rc < 0)
		return -1;
	hotspot_code_seen(code, mono_ns());
	for (size_t i = 0; i < code->n; i++) {
		if (code->blob[i].is_nmethod && !strcmp(code->blob[i].name, "nmethod"))
			name = code->blob[i].name_addr;
		if (code->blob[i].is_interpreter)
			interp = code->blob[i].name_addr;
	}
	*digest = hotspot_code_digest(code);
	pthread_mutex_lock(&lock);
	stats.walks_cut += rc > 0;
	j = find_locked(pid);
	if (j && name)
		j->nmethod_name = name;
	if (j && interp)
		j->interp_name = interp;
	if (j) {
		if (j->seen_digest != *digest)
			j->changed_ns = mono_ns();
		j->seen_digest = *digest;
		j->seen_ns = mono_ns();
		j->walk_ns = j->seen_ns - t0;
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

/* The digest of pid's code now (a walk reading no code, or one just made). */
static int digest_now(uint32_t pid, const struct jvm *j, const struct hotspot_layout *l, bool reuse,
		      uint64_t *digest)
{
	struct hotspot_code code = {0};
	int rc;

	if (reuse && j->seen_ns && mono_ns() - j->seen_ns < HOTSPOT_DIGEST_REUSE_NS) {
		*digest = j->seen_digest;
		return 0;
	}
	rc = walk(pid, l, &code, digest);
	hotspot_code_free(&code);
	return rc;
}

static int jit_key(void *ctx, uint32_t pid, uint64_t start, uint64_t end, char *key)
{
	struct hotspot_layout l;
	struct hotspot_heaps h;
	uint64_t digest;
	struct jvm j, *jp;
	bool in = false;

	(void)ctx;
	if (!jvm_copy(pid, &j, &l) || hotspot_heaps_read(pid, &l, &h))
		return -1;
	for (uint32_t i = 0; i < h.n; i++)
		in |= start < h.heap[i].high_boundary && end > h.heap[i].low_boundary;
	if (!in || digest_now(pid, &j, &l, true, &digest))
		return -1;
	snprintf(key, JIT_KEY_LEN, "jit:hotspot:%u:%016" PRIx64, pid, digest);
	pthread_mutex_lock(&lock);
	jp = find_locked(pid);
	if (jp) {
		jp->loaded_digest = digest;
		jp->reload_ns = mono_ns();
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

/*
 * The walk each JVM's last rows were built from: a rebuild reads the code of
 * new nmethods only (a JVM of 10,000 nmethods compiling is rebuilt every
 * 100 ms, and reading all their code each time was most of the agent's CPU
 * time).  Under build_lock; freed when the JVM is gone (hotspot_jit_sweep).
 */
static struct last_walk {
	uint32_t pid;
	uint64_t used_ns;
	struct hotspot_code code;
} last_walks[HOTSPOT_JVMS_MAX];
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

/* build_lock held: pid's last walk, or the slot its next one goes to (pid 0 or another's). */
static struct last_walk *last_walk_of(uint32_t pid)
{
	struct last_walk *oldest = &last_walks[0];

	for (int i = 0; i < HOTSPOT_JVMS_MAX; i++) {
		if (last_walks[i].pid == pid)
			return &last_walks[i];
		if (last_walks[i].used_ns < oldest->used_ns)
			oldest = &last_walks[i];
	}
	return oldest;
}

static struct cfi_table *jit_build(void *ctx, uint32_t pid, const char *key, int *err)
{
	struct hotspot_code code = {.pid = pid, .arch = HOTSPOT_NATIVE_ARCH};
	struct hotspot_rows_stats rs = {0};
	struct cfi_table *t = NULL;
	struct hotspot_layout l;
	struct last_walk *lw;
	uint64_t digest;
	struct jvm j;

	(void)ctx;
	(void)key;
	*err = CFI_ERR_IO;
	pthread_mutex_lock(&build_lock);
	lw = last_walk_of(pid);
	code.prev = lw->pid == pid ? &lw->code : NULL;
	if (!jvm_copy(pid, &j, &l) || walk(pid, &l, &code, &digest)) {
		hotspot_code_free(&code);
		pthread_mutex_unlock(&build_lock);
		return NULL;
	}
	/*
	 * The rows are of this walk, a moment newer than the key's: code
	 * compiled in between has rows already, and the next poll sees the
	 * digest moved and keys them anew.
	 */
	*err = hotspot_rows_build(&code, NULL, &t, &rs, NULL);
	code.prev = NULL;
	hotspot_code_free(&lw->code);
	lw->code = code;
	lw->pid = pid;
	lw->used_ns = mono_ns();
	pthread_mutex_unlock(&build_lock);
	pthread_mutex_lock(&lock);
	stats.nmethods_read += code.scanned;
	stats.nmethods_kept += code.reused;
	stats.builds += !*err;
	if (!*err)
		stats.rows_blobs = rs.sized + rs.fp;
	pthread_mutex_unlock(&lock);
	return *err ? NULL : t;
}

bool hotspot_jit_seen_before(uint32_t pid, const struct hotspot_blob *b, uint64_t t_ns)
{
	struct hotspot_code *c = NULL;
	bool seen = false;
	size_t at;

	pthread_mutex_lock(&build_lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX && !c; i++)
		if (last_walks[i].pid == pid)
			c = &last_walks[i].code;
	at = c ? hotspot_code_find(c, b->code_begin) : 0;
	if (at) {
		const struct hotspot_blob *q = &c->blob[at - 1];

		seen = q->addr == b->addr && q->code_end == b->code_end &&
		       q->compile_id == b->compile_id && q->is_nmethod == b->is_nmethod &&
		       c->seen_ns[at - 1] <= t_ns;
	}
	pthread_mutex_unlock(&build_lock);
	return seen;
}

static uint32_t jit_stale(void *ctx, uint32_t *pids, uint32_t max)
{
	static uint32_t first; /* where the next poll starts: load thread only */
	uint32_t n = 0, list[HOTSPOT_JVMS_MAX], nr = 0, k;
	uint64_t start = mono_ns(), digest;
	struct hotspot_layout l;
	struct jvm j, *jp;

	(void)ctx;
	hotspot_jit_sweep();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX; i++)
		if (jvms[i].used)
			list[nr++] = jvms[i].pid;
	pthread_mutex_unlock(&lock);
	for (k = 0; k < nr && n < max && mono_ns() - start < HOTSPOT_POLL_NS; k++) {
		uint32_t i = (first + k) % nr;
		uint64_t now = mono_ns(), every;

		if (!jvm_copy(list[i], &j, &l))
			continue;
		every =
		    now - j.changed_ns < HOTSPOT_BUSY_FOR_NS ? HOTSPOT_BUSY_NS : HOTSPOT_QUIET_NS;
		if (every < j.walk_ns * HOTSPOT_WALK_SHARE)
			every = j.walk_ns * HOTSPOT_WALK_SHARE;
		if (now - j.seen_ns < every || digest_now(list[i], &j, &l, false, &digest))
			continue;
		if (digest == j.loaded_digest)
			continue;
		pthread_mutex_lock(&lock);
		jp = find_locked(list[i]);
		if (jp && mono_ns() - jp->reload_ns >= HOTSPOT_RELOAD_GAP_NS) {
			/* asked once: the load's own key sets it again */
			jp->reload_ns = mono_ns();
			pids[n++] = list[i];
			stats.reloads++;
		} else if (jp) {
			stats.held_back++;
		}
		pthread_mutex_unlock(&lock);
	}
	first = nr ? (first + k) % nr : 0;
	return n;
}

/* a JVM whose layout was read: its code cache is claimed (or its heaps not made yet) */
static bool jit_pid(void *ctx, uint32_t pid)
{
	bool found;

	(void)ctx;
	pthread_mutex_lock(&lock);
	found = find_locked(pid) != NULL;
	pthread_mutex_unlock(&lock);
	return found;
}

/* a JVM read, or one gone whose last walk jit_stale's sweep has yet to free */
static bool jit_watching(void *ctx)
{
	bool any = false;

	(void)ctx;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX && !any; i++)
		any = jvms[i].used;
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&build_lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX && !any; i++)
		any = last_walks[i].pid != 0;
	pthread_mutex_unlock(&build_lock);
	return any;
}

void hotspot_jit_hooks(struct runtime_hooks *out)
{
	out->jit_watching = jit_watching;
	out->jit_key = jit_key;
	out->jit_pid = jit_pid;
	out->jit_build = jit_build;
	out->jit_stale = jit_stale;
}

void hotspot_jit_stats(struct hotspot_jit_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

void hotspot_jit_sweep(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX; i++)
		if (jvms[i].used && kill((pid_t)jvms[i].pid, 0) && errno == ESRCH)
			jvms[i].used = false;
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&build_lock);
	for (int i = 0; i < HOTSPOT_JVMS_MAX; i++) {
		if (last_walks[i].pid && kill((pid_t)last_walks[i].pid, 0) && errno == ESRCH) {
			hotspot_code_free(&last_walks[i].code);
			last_walks[i] = (struct last_walk){0};
		}
	}
	pthread_mutex_unlock(&build_lock);
}
