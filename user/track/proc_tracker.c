// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The process tracker's registry: one entry per pid seen, with its current
 * mappings and the sets of earlier generations kept to name older samples.
 * Loading, eviction and forgetting live beside it (see tracker_internal.h).
 */
#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/tracker_internal.h"

/*
 * One process may hold 1/16 of the mappings trie (16,384 keys of 262,144): a
 * range takes a few keys (4.5 per executable mapping over this machine's
 * processes, 168 for the largest), so that is ~100 times the largest real
 * process, and no process can fill the trie for the others.
 */
static void set_keys_quota(struct proc_tracker *pt)
{
	struct bpf_map_info info = {0};
	uint32_t len = sizeof(info);

	if (pt->opts.mappings_fd < 0 || bpf_obj_get_info_by_fd(pt->opts.mappings_fd, &info, &len))
		return;
	pt->stats.keys_capacity = info.max_entries;
	pt->keys_per_pid = info.max_entries / 16;
}

struct proc_tracker *proc_tracker_new(const struct proc_tracker_opts *o)
{
	struct proc_tracker *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->work.queue = calloc(QUEUE_CAP, sizeof(*pt->work.queue));
	if (!pt->work.queue) {
		free(pt);
		return NULL;
	}
	pt->opts.ts = o->ts;
	if (pt->opts.ts) { /* report mode has no tables */
		pt->opts.ts->reclaim = tracker_reclaim_for_tables;
		pt->opts.ts->reclaim_ctx = pt;
	}
	pt->opts.syms = o->syms;
	pt->opts.procs_fd = o->procs_fd;
	pt->opts.mappings_fd = o->mappings_fd;
	pt->opts.table_cache = o->table_cache;
	pt->opts.runtimes = o->runtimes;
	pt->opts.nr_runtimes = o->nr_runtimes;
	pt->opts.max_procs = o->max_procs;
	set_keys_quota(pt);
	pt->opts.build_workers = o->build_workers ? o->build_workers : build_workers_default();
	pthread_mutex_init(&pt->lock, NULL);
	pthread_mutex_init(&pt->load_lock, NULL);
	pthread_cond_init(&pt->work.work_cond, NULL);
	pthread_cond_init(&pt->work.idle_cond, NULL);
	/* a quarter of one load's files: a process with thousands keeps the others' */
	pt->snap.exit_lists = calloc(EXIT_LISTS_GATHERED, sizeof(*pt->snap.exit_lists));
	if (!pt->snap.exit_lists || file_index_init(&pt->snap.files, FILES_HELD)) {
		free(pt->snap.exit_lists);
		free(pt->work.queue);
		free(pt);
		return NULL;
	}
	return pt;
}

struct proc *tracker_find_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;

	for (p = pt->buckets[pid % NR_BUCKETS]; p; p = p->next) {
		if (p->pid == pid)
			return p;
	}
	return NULL;
}

struct proc *tracker_get_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p = tracker_find_locked(pt, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = pt->buckets[pid % NR_BUCKETS];
	pt->buckets[pid % NR_BUCKETS] = p;
	pt->nr_procs++;
	return p;
}

struct proc *proc_tracker_find(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	return p;
}

bool proc_tracker_identity(struct proc_tracker *pt, uint32_t pid, struct proc_identity *out)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p)
		*out = (struct proc_identity){p->ns_pid, p->uid, p->same_tmp};
	pthread_mutex_unlock(&pt->lock);
	return p != NULL;
}

struct map_set *map_set_new(uint32_t nr)
{
	struct map_set *s = calloc(1, sizeof(*s) + (size_t)nr * sizeof(s->maps[0]));

	if (!s)
		return NULL;
	s->refs = 1;
	s->nr_maps = nr;
	return s;
}

void map_set_put(struct map_set *s)
{
	if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(s);
}

const struct proc_mapping *map_set_find(const struct map_set *s, uint64_t pc)
{
	uint32_t lo = 0, hi = s ? s->nr_maps : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pc < s->maps[mid].start)
			hi = mid;
		else if (pc >= s->maps[mid].end)
			lo = mid + 1;
		else
			return &s->maps[mid];
	}
	return NULL;
}

const struct proc_mapping *proc_find_mapping(const struct proc *p, uint64_t pc)
{
	return p ? map_set_find(p->cur, pc) : NULL;
}

/*
 * pt->lock held: the set samples of generation gen were taken under; NULL
 * when it is gone.  A generation newer than the current set's is a load's
 * update window, or a load not committed yet: the current set.
 */
static struct map_set *maps_of_generation(const struct proc *p, uint32_t gen)
{
	uint32_t i;

	if (!gen || gen == p->generation || !p->cur || gen >= p->cur->first_generation)
		return p->cur;
	for (i = p->nr_history; i > 0; i--) {
		struct map_set *s = p->history[i - 1];

		if (gen > s->generation)
			return NULL;
		if (gen >= s->first_generation)
			return s;
	}
	return NULL;
}

/* pt->lock held: the set published right before s, if kept. */
static struct map_set *set_before(const struct proc *p, const struct map_set *s)
{
	uint32_t i;

	if (!s || !s->first_generation)
		return NULL;
	for (i = p->nr_history; i > 0; i--) {
		if (p->history[i - 1]->generation + 1 == s->first_generation)
			return p->history[i - 1];
	}
	return NULL;
}

static bool same_file_mapped(const struct proc_mapping *a, const struct proc_mapping *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && !strcmp(a->path, b->path);
}

/*
 * pt->lock held: gen's set is gone.  The sets kept map pc to one and the
 * same file (a program's own code, libc), or to nothing: that file names pc
 * (the newest set); sets that disagree (dlopen/dlclose reusing the address)
 * leave it unnamed rather than named by the wrong file.
 */
static struct map_set *unanimous_set(const struct proc *p, uint64_t pc)
{
	const struct proc_mapping *m, *seen = NULL;
	struct map_set *s = NULL;
	uint32_t i;

	for (i = p->nr_history + 1; i > 0; i--) {
		struct map_set *h = i > p->nr_history ? p->cur : p->history[i - 1];

		m = map_set_find(h, pc);
		if (!m)
			continue;
		if (seen && !same_file_mapped(seen, m))
			return NULL;
		if (!seen)
			s = h;
		seen = m;
	}
	return s;
}

/* pt->lock held: the first set published after s that maps pc, if one is kept. */
static struct map_set *first_later_set(const struct proc *p, const struct map_set *s, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i <= p->nr_history; i++) {
		struct map_set *h = i < p->nr_history ? p->history[i] : p->cur;

		if (h && h->first_generation > s->generation && map_set_find(h, pc))
			return h;
	}
	return NULL;
}

/*
 * pc in none of gen's mappings: a sample of a load's update window (the
 * walker read half-updated keys) whose pc is in a mapping the load removed,
 * named by the set published before gen's; else code mapped after gen's
 * load and before the sample (a library mapped late, found by the next
 * load or the kernel's list at the process's exit), named by the first
 * later set that maps pc: a newer one may map another file there
 * (dlopen/dlclose reusing addresses).  gen's set gone: unanimous_set.
 */
struct map_set *proc_tracker_get_maps_at(struct proc_tracker *pt, uint32_t pid, uint32_t gen,
					 uint64_t pc)
{
	struct map_set *s = NULL, *other;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p) {
		s = maps_of_generation(p, gen);
		if (s && !map_set_find(s, pc)) {
			/* only a generation before the set's own is its load's update window */
			other = gen < s->generation ? set_before(p, s) : NULL;
			if (!other || !map_set_find(other, pc))
				other = first_later_set(p, s, pc);
			if (other)
				s = other;
		}
		if (!s)
			s = unanimous_set(p, pc);
	}
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pt->lock);
	return s;
}

/* n is m as a later load saw it, names read. */
static bool same_mapping_named(const struct proc_mapping *n, const struct proc_mapping *m)
{
	return n && n->sym && same_file_mapped(n, m);
}

/* m, or the same mapping named in a later set (*ref: that set, referenced). */
static const struct proc_mapping *named_mapping(struct proc_tracker *pt, uint32_t pid,
						const struct proc_mapping *m, struct map_set **ref)
{
	const struct proc_mapping *n = NULL;
	struct map_set *s = NULL;
	struct proc *p;
	uint32_t i;

	*ref = NULL;
	if (!pt || !m || m->sym || !(m->names_cut || m->table_cut))
		return m;
	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p && same_mapping_named(map_set_find(p->cur, m->start), m))
		s = p->cur;
	for (i = p ? p->nr_history : 0; !s && i > 0; i--)
		if (same_mapping_named(map_set_find(p->history[i - 1], m->start), m))
			s = p->history[i - 1];
	if (s) {
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
		n = map_set_find(s, m->start);
	}
	pthread_mutex_unlock(&pt->lock);
	*ref = s;
	return s ? n : m;
}

const struct proc_mapping *proc_tracker_mapping_for(struct proc_tracker *pt, uint32_t pid,
						    uint32_t gen, const struct map_set *maps,
						    uint64_t pc, struct map_set **ref)
{
	const struct proc_mapping *m = map_set_find(maps, pc), *n;
	struct map_set *other = NULL, *named;

	if (!m && pt) {
		other = proc_tracker_get_maps_at(pt, pid, gen, pc);
		m = map_set_find(other, pc);
	}
	n = named_mapping(pt, pid, m, &named);
	if (named)
		map_set_put(other);
	*ref = named ? named : other;
	return n;
}

struct map_set *proc_tracker_get_maps(struct proc_tracker *pt, uint32_t pid, uint32_t gen)
{
	struct map_set *s = NULL;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p)
		s = maps_of_generation(p, gen);
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pt->lock);
	return s;
}

/* The set s follows the newest the process has (first: it names every earlier sample). */
static void link_generations(const struct proc *p, struct map_set *s)
{
	const struct map_set *newest = p->cur	       ? p->cur
				       : p->nr_history ? p->history[p->nr_history - 1]
						       : NULL;

	if (!s->first_generation)
		s->first_generation = newest ? newest->generation + 1 : 1;
}

/* The oldest set past the PROC_HISTORY newest that no sample waits on, or nr_history. */
static uint32_t idle_old_set(const struct proc *p)
{
	uint32_t i;

	for (i = 0; i + PROC_HISTORY < p->nr_history; i++) {
		if (!p->history[i]->sampled)
			return i;
	}
	return p->nr_history;
}

/* Mappings held by the sets past the PROC_HISTORY newest. */
static uint64_t old_sets_maps(const struct proc *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i + PROC_HISTORY < p->nr_history; i++)
		n += p->history[i]->nr_maps;
	return n;
}

static void drop_set(struct proc *p, uint32_t i)
{
	map_set_put(p->history[i]);
	memmove(&p->history[i], &p->history[i + 1],
		(p->nr_history - i - 1) * sizeof(p->history[0]));
	p->nr_history--;
}

/* The oldest set goes though samples wait on it (named only where the kept sets agree). */
static void drop_waited_on(struct proc_tracker *pt, struct proc *p)
{
	drop_set(p, 0);
	if (pt)
		TRACKER_COUNT(pt, map_sets_dropped, 1);
}

void proc_trim_history(struct proc *p)
{
	uint32_t i;

	while ((i = idle_old_set(p)) < p->nr_history)
		drop_set(p, i);
}

/*
 * Past PROC_HISTORY the older sets no sample waits on go; a full history
 * makes room with one of those, else with its oldest, and the older sets
 * hold PROC_HISTORY_OLD_MAPS mappings at most (counted: the samples waiting
 * on a set dropped are named only where the sets kept agree).
 */
void proc_retire_maps(struct proc_tracker *pt, struct proc *p, struct map_set *s)
{
	if (!s)
		return;
	/* generation 0 named no samples */
	if (!s->nr_maps || !s->generation) {
		map_set_put(s);
		return;
	}
	link_generations(p, s);
	/* room first: an idle older set goes before one a sample waits on */
	if (p->nr_history == PROC_HISTORY_MAX && idle_old_set(p) == p->nr_history)
		drop_waited_on(pt, p);
	proc_trim_history(p);
	p->history[p->nr_history++] = s;
	proc_trim_history(p);
	while (p->nr_history > PROC_HISTORY && old_sets_maps(p) > PROC_HISTORY_OLD_MAPS)
		drop_waited_on(pt, p);
}

void proc_publish_maps(struct proc_tracker *pt, struct proc *p, struct map_set *s)
{
	if (s) {
		link_generations(p, s);
		if (p->sampled_ahead >= s->first_generation && p->sampled_ahead <= s->generation)
			s->sampled = true;
	}
	proc_retire_maps(pt, p, p->cur);
	p->cur = s;
}

void proc_destroy(struct proc *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_history; i++)
		map_set_put(p->history[i]);
	map_set_put(p->cur);
	free(p->saved);
	free(p);
}

void proc_tracker_note_exec(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p) {
		p->exec_ns = time_ns;
		p->first_complete_ns = 0;
		p->tables_loaded_ns = 0;
	}
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_note_sample(struct proc_tracker *pt, uint32_t pid, uint32_t gen, uint64_t time_ns,
			      bool complete)
{
	struct map_set *s;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_find_locked(pt, pid);
	if (p && time_ns > p->last_sample_ns)
		p->last_sample_ns = time_ns;
	/*
	 * The set it was taken under stays until it is named (a set no sample
	 * needs may go).  BPF knows a generation before its set is published:
	 * such a sample marks the set to come, and the current one (a sample
	 * of the update window may be named by the set before).
	 */
	s = p && gen ? maps_of_generation(p, gen) : NULL;
	if (s)
		s->sampled = true;
	if (p && gen && (!p->cur || gen > p->cur->generation))
		p->sampled_ahead = gen > p->sampled_ahead ? gen : p->sampled_ahead;
	else if (p && gen && !s)
		TRACKER_COUNT(pt, samples_set_gone, 1);
	/* a deferred sample arrives after later ones: keep the earliest */
	if (p && complete && p->exec_ns && time_ns >= p->exec_ns &&
	    (!p->first_complete_ns || time_ns < p->first_complete_ns))
		p->first_complete_ns = time_ns;
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_stats(struct proc_tracker *pt, struct tracker_stats *out)
{
	const uint64_t *from = (const uint64_t *)&pt->stats;
	uint64_t *to = (uint64_t *)out;
	size_t i;

	_Static_assert(sizeof(*out) % sizeof(uint64_t) == 0, "counters only");
	for (i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

void proc_tracker_counts(struct proc_tracker *pt, uint32_t *live, uint32_t *retained)
{
	pthread_mutex_lock(&pt->lock);
	*live = pt->nr_live;
	*retained = pt->nr_procs;
	pthread_mutex_unlock(&pt->lock);
}

struct proc *proc_tracker_first(struct proc_tracker *pt, uint32_t *bucket)
{
	for (*bucket = 0; *bucket < NR_BUCKETS; (*bucket)++) {
		if (pt->buckets[*bucket])
			return pt->buckets[*bucket];
	}
	return NULL;
}

struct proc *proc_tracker_next(struct proc_tracker *pt, struct proc *p, uint32_t *bucket)
{
	if (p->next)
		return p->next;
	for ((*bucket)++; *bucket < NR_BUCKETS; (*bucket)++) {
		if (pt->buckets[*bucket])
			return pt->buckets[*bucket];
	}
	return NULL;
}

void proc_tracker_free(struct proc_tracker *pt)
{
	uint32_t b;

	if (!pt)
		return;
	proc_tracker_stop(pt, true);
	for (b = 0; b < NR_BUCKETS; b++) {
		struct proc *p = pt->buckets[b], *n;

		for (; p; p = n) {
			n = p->next;
			if (p->tables_held)
				mappings_release(pt, p->pid, p->cur->maps, p->cur->nr_maps, false);
			proc_destroy(p);
		}
	}
	snapshots_free_all(pt);
	file_index_free(&pt->snap.files);
	free(pt->snap.exit_lists);
	free(pt->work.queue);
	pthread_mutex_destroy(&pt->lock);
	pthread_mutex_destroy(&pt->load_lock);
	pthread_cond_destroy(&pt->work.work_cond);
	pthread_cond_destroy(&pt->work.idle_cond);
	free(pt);
}
