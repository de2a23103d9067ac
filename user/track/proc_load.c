// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One load of a process (tracker_load_proc): what /proc says of it now, its
 * mappings paired with the ones it had, the tables it lacks built, the BPF
 * keys swapped, its names read, all within a time budget; what the budget
 * cuts off is resumed by a later load.  The thread that runs loads is
 * load_thread.c.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hash.h"
#include "user/track/proc_stat.h"
#include "user/track/tracker_internal.h"

/* One load of a process: what /proc says now, and the mapping set that replaces the old one. */
struct proc_load {
	uint32_t pid;
	bool exec; /* the address space was replaced: nothing carries over */
	uint64_t time_ns;
	uint64_t read_ns; /* when /proc was read (bpf clock), 0 for a snapshot */
	struct proc_stat_info stat;
	struct cfi_proc_val pv;
	struct maps_entry *ents; /* sorted by start */
	uint32_t nr;		 /* entries in ents, and mappings in the new set */
	struct proc *p;
	bool was_live;
	const struct map_set *old; /* the current set (NULL: none): changes only under load_lock */
	uint32_t nr_old;
	uint32_t nr_kept;
	uint32_t nr_names_due;	/* kept ones an earlier load left without names */
	bool *kept;		/* per old mapping: carried over to the new set */
	uint32_t *reuse;	/* per new mapping: index + 1 of the old one it keeps */
	struct map_set *set;	/* the new set, one mapping per entry */
	int *fds;		/* per new mapping: the file, kept open to load its symbols */
	uint32_t nr_fds;	/* of those open now: at most fds_per_load() */
	uint32_t nr_named;	/* new mappings before this one were opened and named up front */
	struct build_job *jobs; /* the tables built up front, at once */
	uint32_t nr_jobs;
	uint32_t *job_of;  /* per new mapping: index + 1 of the job building its object */
	uint64_t deadline; /* load_budget() after the load began */
	uint32_t over;	   /* mappings left unresolved or unnamed past it */
	uint32_t done;	   /* tables resolved and objects named within it */
	bool stat_read;	   /* stat holds what /proc/PID/stat says now */
	/* the consumer's early read of the process: its files, or all of it when it is gone */
	struct proc_snapshot *snap;
	bool from_snapshot; /* ents are the snapshot's: the process was gone */
	bool snap_at_exit;  /* ...the kernel's list at its exit: its last mappings */
};

/* An fd closed to stay within fds_per_load(): opened again to load the symbols. */
#define FD_REOPEN (-2)

/*
 * Files one load keeps open at once: a quarter of the limit, so that a process
 * mapping 60,000 files leaves the agent fds for everything else (perf maps,
 * output files, /metrics).  Past it, files are closed and opened again for
 * their symbols.
 */
uint32_t files_held_now(void)
{
	return fds_per_load() / 4 < FILES_HELD ? fds_per_load() / 4 : FILES_HELD;
}

uint32_t fds_per_load(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	if (rl.rlim_cur / 4 < 16)
		return 16;
	return rl.rlim_cur / 4 > 1024 ? 1024 : (uint32_t)(rl.rlim_cur / 4);
}

static int by_start(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* What a read of /proc found: only a process gone (or exiting) is loaded from its snapshot. */
enum proc_read {
	PROC_READ_OK,
	PROC_READ_GONE,	 /* no such process, or exiting: a snapshot may stand in */
	PROC_READ_EMPTY, /* alive without user mappings (a kernel thread): nothing to load */
};

/* Whether pid still is the process stat describes, alive. */
static bool same_and_alive(uint32_t pid, const struct proc_stat_info *stat)
{
	struct proc_stat_info now;

	return !proc_stat_read(pid, &now) && now.start_time == stat->start_time &&
	       !proc_stat_dying(&now);
}

/* What /proc says of the process now (what is not PROC_READ_OK is counted). */
static enum proc_read read_proc(struct proc_tracker *pt, struct proc_load *l)
{
	bool alive = true;
	int n, tries;

	if (proc_stat_read(l->pid, &l->stat)) {
		TRACKER_COUNT(pt, vanished, 1);
		return PROC_READ_GONE;
	}
	l->stat_read = true;
	/* mapping changes the BPF side sees after this are newer than what we load */
	l->pv.loaded_ns = mono_ns();
	/* a sample or mapping change seen while it exits: loading it would leak its tables */
	if (proc_stat_dying(&l->stat)) {
		TRACKER_COUNT(pt, dying, 1);
		return PROC_READ_GONE;
	}
	/*
	 * maps opened before an exec replaced the address space reads empty (the
	 * file holds the old one): the process is alive, its new image is read
	 * by opening it again.  Taken for gone, it was loaded from the snapshot of
	 * the old image and marked exited, and no later load was made.
	 */
	for (tries = 0; tries < 2 && alive; tries++) {
		n = proc_maps_read((int)l->pid, true, &l->ents);
		if (n != 0)
			break;
		alive = same_and_alive(l->pid, &l->stat);
	}
	if (n < 0) {
		TRACKER_COUNT(pt, vanished, 1);
		return PROC_READ_GONE;
	}
	if (n == 0) {
		TRACKER_COUNT(pt, no_user, 1); /* kernel thread: nothing to unwind */
		return alive ? PROC_READ_EMPTY : PROC_READ_GONE;
	}
	l->nr = (uint32_t)n;
	/* the kernel lists them in order; the pairing and the lookups rely on it */
	qsort(l->ents, l->nr, sizeof(*l->ents), by_start);
	return PROC_READ_OK;
}

/*
 * The process is gone (or exiting) before its load: the snapshot the
 * consumer took of it, if any, stands in for /proc.  true when there is one.
 */
static bool read_snapshot(struct proc_tracker *pt, struct proc_load *l)
{
	struct proc_snapshot *s = snapshot_check(pt, l->snap, l->stat_read ? &l->stat : NULL);

	l->snap = s;
	if (!s)
		return false;
	s->only_source = true;
	l->from_snapshot = true;
	l->snap_at_exit = s->at_exit;
	l->ents = s->ents; /* sorted; freed with the snapshot */
	l->nr = s->nr;
	l->stat.start_time = s->start_time;
	/* BPF learns the mappings as of the snapshot: samples of later changes keep waiting */
	l->pv.loaded_ns = s->taken_ns;
	return true;
}

/* The registry entry to load into; NULL (counted when dying) if there is none. */
static struct proc *claim_entry(struct proc_tracker *pt, struct proc_load *l)
{
	bool stale_entry = false, same;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_get_locked(pt, l->pid);
	same = p && p->start_time == l->stat.start_time;
	/*
	 * Gone, its exit handled: a snapshot the consumer took must not bring it
	 * back (it may be of the image before an exec).  The kernel's list at
	 * the exit is loaded: its last mappings, to name its last samples.  Read
	 * alive from /proc it is loaded: a thread other than the leader that
	 * exec'd makes the leader's exit event come first, and the process keeps
	 * its start time.
	 */
	if (p && p->exited && !p->evicted && l->from_snapshot && !l->snap_at_exit && same) {
		pthread_mutex_unlock(&pt->lock);
		TRACKER_COUNT(pt, dying, 1);
		return NULL;
	}
	/* a reused pid, like an exec, has nothing in common with what we knew */
	if (p && p->exited && !(l->snap_at_exit && same))
		l->exec = true;
	if (p && l->exec && l->time_ns) {
		p->exec_ns = l->time_ns;
		p->first_complete_ns = 0;
		p->tables_loaded_ns = 0;
	}
	l->was_live = p && is_live(p);
	/* a new process under the pid: its old tables are released with the old maps */
	stale_entry = p && clear_unload_due(pt, p);
	pthread_mutex_unlock(&pt->lock);
	if (stale_entry)
		bpf_map_delete_elem(pt->opts.procs_fd, &l->pid);
	if (p) {
		l->old = p->cur;
		l->nr_old = p->cur ? p->cur->nr_maps : 0;
	}
	return p;
}

/* Which mappings carry over: none after an exec, or when the old tables are gone. */
static int pair_mappings(struct proc_tracker *pt, struct proc_load *l)
{
	uint32_t i;

	l->kept = calloc(l->nr_old + 1, sizeof(*l->kept));
	l->reuse = calloc(l->nr, sizeof(*l->reuse));
	if (!l->kept || !l->reuse)
		return -ENOMEM;
	if (!l->exec && l->p->tables_held && l->old)
		l->nr_kept =
		    mappings_pair(l->old->maps, l->nr_old, l->ents, l->nr,
				  mapping_jit_pid(pt, l->pid), l->reuse, l->kept, &pt->pair_steps);
	for (i = 0; l->nr_kept && i < l->nr; i++)
		l->nr_names_due += l->reuse[i] && l->old->maps[l->reuse[i] - 1].names_cut;
	return 0;
}

static int alloc_new_set(struct proc_load *l)
{
	uint32_t i;

	l->set = map_set_new(l->nr);
	l->fds = malloc(l->nr * sizeof(*l->fds));
	l->jobs = calloc(l->nr, sizeof(*l->jobs));
	l->job_of = calloc(l->nr, sizeof(*l->job_of));
	for (i = 0; l->fds && i < l->nr; i++)
		l->fds[i] = -1;
	return l->set && l->fds && l->jobs && l->job_of ? 0 : -ENOMEM;
}

/* The job already building the object of key in this load: index + 1, or 0. */
static uint32_t find_job(const struct proc_load *l, const char *key, uint32_t hash)
{
	uint32_t k;

	for (k = 0; k < l->nr_jobs; k++) {
		if (l->jobs[k].key_hash == hash && !strcmp(l->jobs[k].key, key))
			return k + 1;
	}
	return 0;
}

/* A job for the object of new mapping i, unless the store has it or a job builds it. */
static void add_job(struct proc_tracker *pt, struct proc_load *l, uint32_t i, uint64_t size)
{
	const struct proc_mapping *m = &l->set->maps[i];
	uint32_t hash = hash_str(m->key);
	struct build_job *j;

	if (table_store_has(pt->opts.ts, m->key))
		return;
	l->job_of[i] = find_job(l, m->key, hash);
	if (l->job_of[i])
		return;
	j = &l->jobs[l->nr_jobs++];
	*j = (struct build_job){.key = m->key,
				.name = l->ents[i].path,
				.key_hash = hash,
				.pid = l->pid,
				.fd = l->fds[i],
				.start = m->start,
				.end = m->end,
				.size = size};
	l->job_of[i] = l->nr_jobs;
}

/*
 * Opens and names the new mappings, then builds the tables none of them has
 * yet, side by side (table_builds.c).  Stops where the load would keep more
 * files open than fds_per_load() allows, or past its time: swap_mappings
 * resolves the rest one by one, as it always did.  Before mark_updating:
 * samples taken meanwhile still walk with the old keys.
 */
/*
 * Past its time, or a discarding stop under way (nothing of the load will be
 * used: the stop must not wait for the rest of its builds and names, which
 * for a process mapping libLLVM are seconds on a loaded machine).
 */
static bool load_cut_short(struct proc_tracker *pt, const struct proc_load *l)
{
	return mono_ns() > l->deadline || builds_cancelled(pt);
}

static void prepare_tables(struct proc_tracker *pt, struct proc_load *l)
{
	uint32_t i, max_fds = fds_per_load();
	struct stat st;

	for (i = 0; pt->opts.ts && i < l->nr && l->nr_fds < max_fds && !load_cut_short(pt, l); i++) {
		if (l->reuse[i])
			continue;
		l->fds[i] = mapping_identify(pt, l->pid, &l->ents[i], &l->set->maps[i], &st,
					     l->snap);
		if (l->fds[i] < 0)
			continue;
		l->nr_fds++;
		add_job(pt, l, i, (uint64_t)st.st_size);
	}
	l->nr_named = i;
	/* an interpreter among the new mappings (kept ones get their keys later: known already) */
	FOR_EACH_RUNTIME(pt, h)
	if (h->early)
		h->early(h->ctx, l->pid, l->set->maps, l->ents, l->fds, l->nr_named, l->read_ns);
	table_builds_run(pt, l->jobs, l->nr_jobs, l->deadline);
}

/*
 * Samples taken while the keys change get a generation of their own: rule
 * cache entries made from half-updated keys then never match again, and
 * those samples are named with the new mappings, not the old ones.
 */
static void mark_updating(struct proc_tracker *pt, struct proc_load *l)
{
	if (!l->nr_old)
		return;
	l->pv.generation = ++pt->generation;
	l->pv.flags = CFI_PROC_UPDATING;
	bpf_map_update_elem(pt->opts.procs_fd, &l->pid, &l->pv, BPF_ANY);
	l->pv.flags = 0;
}

/* Says once per process that it is over a per-process quota (each refusal is counted). */
static void log_over_quota(struct proc_tracker *pt, struct proc_load *l,
			   const struct table_charge *c, uint32_t keys_refused)
{
	bool first;

	if (!c->refused && !keys_refused)
		return;
	pthread_mutex_lock(&pt->lock);
	first = !l->p->quota_logged;
	l->p->quota_logged = true;
	pthread_mutex_unlock(&pt->lock);
	if (!first)
		return;
	TRACKER_COUNT(pt, procs_over_quota, 1);
	fprintf(stderr,
		"cfiprof: pid %u: over its share of the unwind maps: %u objects refused (%s), "
		"%u mapping keys refused (quota %u): those use frame pointers; logged once\n",
		l->pid, c->refused, c->refused ? table_refusal_name(c->cause) : "none",
		keys_refused, pt->keys_per_pid);
}

/*
 * The BPF keys and tables of the old set are replaced by those of the new
 * one.  What the process keeps is charged first, so a quota refuses only
 * what it adds.
 */
/*
 * What one process's load may take, files opened and tables built: thousands
 * of mapped files must not keep every other process (and the agent's stop)
 * waiting.  Real processes take far less; the largest objects (a cold
 * libLLVM) a small fraction of it.
 */
#define LOAD_TIME_BUDGET_NS (1500ull * 1000 * 1000)

static uint64_t load_budget(const struct proc_tracker *pt)
{
	return pt->load_budget_ns ? pt->load_budget_ns : LOAD_TIME_BUDGET_NS;
}
/* Loads in a row for what the ones before ran out of time for. */
#define LOADS_RESUMED_MAX 3

/* New mapping i gets its object; its fd stays open for its symbols while fds_per_load() allows. */
static void resolve_new(struct proc_tracker *pt, struct proc_load *l, uint32_t i,
			struct table_charge *charge, uint32_t max_fds)
{
	struct build_job *job = l->job_of[i] ? &l->jobs[l->job_of[i] - 1] : NULL;
	bool named = i < l->nr_named;

	/* past its time, a process's other mappings go by frame pointers, unnamed */
	if (load_cut_short(pt, l) && (!named || (job && !job->done))) {
		if (l->fds[i] >= 0) {
			close(l->fds[i]);
			l->nr_fds--;
		}
		mapping_init(&l->ents[i], &l->set->maps[i]);
		l->set->maps[i].table_cut = true;
		l->fds[i] = -1;
		l->over++;
		return;
	}
	l->done++;
	if (named) {
		/* opened and named up front (its fd counted), its table built if it lacked one */
		if (l->fds[i] >= 0)
			mapping_acquire(pt, l->pid, &l->ents[i], &l->set->maps[i], l->fds[i], job,
					charge);
		else
			mapping_jit(pt, l->pid, &l->ents[i], &l->set->maps[i], charge);
		return;
	}
	l->fds[i] = mapping_resolve(pt, l->pid, &l->ents[i], &l->set->maps[i], charge, l->snap);
	if (l->fds[i] < 0)
		mapping_jit(pt, l->pid, &l->ents[i], &l->set->maps[i], charge);
	if (l->fds[i] >= 0 && l->nr_fds >= max_fds) {
		close(l->fds[i]);
		l->fds[i] = FD_REOPEN;
	} else if (l->fds[i] >= 0) {
		l->nr_fds++;
	}
}

static void swap_mappings(struct proc_tracker *pt, struct proc_load *l)
{
	const struct proc_mapping *old = l->old ? l->old->maps : NULL;
	bool held = l->p->tables_held, charged;
	struct table_charge charge;
	uint32_t i, j, pid_keys = 0, keys_refused = 0, max_fds = fds_per_load();
	uint64_t quota_refused = __atomic_load_n(&pt->stats.keys_refused_quota, __ATOMIC_RELAXED);

	charged = pt->opts.ts && !table_charge_begin(pt->opts.ts, &charge);
	/* refusals carry over with the mappings kept (their keys are not asked for again) */
	if (!l->nr_kept)
		__atomic_store_n(&l->p->keys_quota, false, __ATOMIC_RELAXED);
	/*
	 * Stale keys go first: a new mapping (dlopen after dlclose, an exec) often
	 * reuses the same range, hence the same LPM prefixes, and deleting the old
	 * ones afterwards would delete the new ones with them.
	 */
	for (j = 0; held && j < l->nr_old; j++) {
		if (!l->kept[j])
			mapping_del_keys(pt, l->pid, &old[j]);
	}
	for (i = 0; i < l->nr; i++) {
		if (!l->reuse[i])
			continue;
		l->set->maps[i] = old[l->reuse[i] - 1];
		/* its names, which an earlier load ran out of time for: read with the new ones */
		if (l->set->maps[i].names_cut) {
			l->set->maps[i].names_cut = false;
			l->fds[i] = FD_REOPEN;
		}
		pid_keys += l->set->maps[i].nr_keys;
		if (charged)
			table_charge_keep(pt->opts.ts, &charge, l->set->maps[i].obj);
	}
	for (i = 0; i < l->nr; i++) {
		if (l->reuse[i])
			continue;
		resolve_new(pt, l, i, charged ? &charge : NULL, max_fds);
		/*
		 * Discarded: the rest get no keys (nr_keys 0, as if refused).  A
		 * process with 18,000 mappings is 18,000 map updates, seconds on
		 * a loaded host, that the agent's stop would wait for.
		 */
		if (!builds_cancelled(pt))
			keys_refused += mapping_add_keys(pt, l->pid, &l->set->maps[i], &pid_keys);
	}
	/* the load thread alone adds keys: a change of the count is this load's */
	if (__atomic_load_n(&pt->stats.keys_refused_quota, __ATOMIC_RELAXED) != quota_refused)
		__atomic_store_n(&l->p->keys_quota, true, __ATOMIC_RELAXED);
	/* objects are released after the new ones are acquired: shared tables stay loaded */
	for (j = 0; held && j < l->nr_old; j++) {
		if (!l->kept[j])
			mappings_release(pt, l->pid, &old[j], 1, false);
	}
	if (charged) {
		log_over_quota(pt, l, &charge, keys_refused);
		table_charge_end(&charge);
	}
}

/* The walker can unwind with the keys in the map from here on: BPF learns the generation. */
static void publish_generation(struct proc_tracker *pt, struct proc_load *l)
{
	l->pv.flags = l->p->keys_quota ? CFI_PROC_KEYS_QUOTA : 0;
	if (bpf_map_update_elem(pt->opts.procs_fd, &l->pid, &l->pv, BPF_ANY))
		TRACKER_COUNT(pt, map_update_errors, 1);
}

static void load_new_symbols(struct proc_tracker *pt, struct proc_load *l)
{
	struct stat st;
	uint32_t i;

	for (i = 0; i < l->nr; i++) {
		/* names count against the load's time too: thousands of files must not stall it */
		if (l->fds[i] != -1 && load_cut_short(pt, l)) {
			if (l->fds[i] >= 0)
				close(l->fds[i]);
			l->fds[i] = -1;
			l->set->maps[i].names_cut = true;
			l->over++;
			continue;
		}
		if (l->fds[i] == FD_REOPEN)
			l->fds[i] = snapshot_mapping_open(pt, l->pid, &l->ents[i], &st, l->snap);
		if (l->fds[i] >= 0) {
			mapping_load_symbols(pt, l->pid, &l->set->maps[i], l->ents[i].path,
					     l->fds[i]);
			FOR_EACH_RUNTIME(pt, h)
			if (h->object)
				h->object(h->ctx, l->set->maps[i].key, l->ents[i].path, l->fds[i]);
			close(l->fds[i]);
			l->fds[i] = -1;
			l->done++;
		}
	}
	if (!l->over)
		l->p->loads_resumed = 0;
	/* a discarding stop cut it short: nothing of it is kept, nothing is over its time */
	if (!l->over || builds_cancelled(pt))
		return;
	TRACKER_COUNT(pt, over_load_time, l->over);
	fprintf(stderr,
		"cfiprof: pid %u: %u of its %u mappings without tables or names: its load took "
		"over %.1f s (frame pointers used until a later load resolves them)\n",
		l->pid, l->over, l->nr, load_budget(pt) / 1e9);
	/*
	 * The cut ones get a load of their own once no other work is queued:
	 * unchanged mappings are not reloaded, so without it a process mapping
	 * thousands of files would keep the last ones (its own library, mapped
	 * above them all) unnamed for good on a slow machine.  Only after
	 * progress (a load that got nothing done in its time would only take
	 * that time again), a few times in a row, and never before another
	 * process's work: a hostile process must not take the load thread's
	 * time from the others load after load.
	 */
	if (l->done && !l->from_snapshot && l->p->loads_resumed < LOADS_RESUMED_MAX) {
		bool held = false;

		pthread_mutex_lock(&pt->lock);
		for (uint32_t k = 0; k < pt->work.nr_resumes && !held; k++)
			held = pt->work.resume_pids[k] == l->pid;
		if (!held && pt->work.nr_resumes < RESUMES_HELD) {
			pt->work.resume_pids[pt->work.nr_resumes++] = l->pid;
			held = true;
		}
		pthread_mutex_unlock(&pt->lock);
		if (held) {
			l->p->loads_resumed++;
			TRACKER_COUNT(pt, loads_resumed, 1);
		}
	}
}

/*
 * The new set (if the mappings changed) becomes the current one; the old one
 * is kept to name its samples.
 */
static void commit_load(struct proc_tracker *pt, struct proc_load *l)
{
	struct proc *p = l->p;
	uint64_t now = mono_ns();

	uint32_t uid = 0;
	bool same_tmp = false;

	/* a gone process's pid may be another's by now: nothing more is read of it */
	if (l->set && !l->from_snapshot)
		l->set->ns_pid = proc_ns_pid(l->pid);
	/* whose process it is, for its perf map: read before the lock, like ns_pid */
	if (l->from_snapshot || proc_read_identity(l->pid, &uid, &same_tmp))
		same_tmp = false;
	pthread_mutex_lock(&pt->lock);
	if (l->set) {
		proc_publish_maps(pt, p, l->set);
		p->generation = l->set->generation;
		p->tables_loaded_ns = now;
		p->ns_pid = l->set->ns_pid;
		l->set = NULL;
	}
	p->uid = uid;
	p->same_tmp = same_tmp;
	p->tables_held = true;
	p->exit_seen = false;
	p->exited = false;
	p->evicted = false;
	p->start_time = l->stat.start_time;
	p->maps_read_ns = l->pv.loaded_ns;
	/* loading is a use: a process is not the first to go before its first sample */
	if (p->last_sample_ns < now)
		p->last_sample_ns = now;
	if (p->loaded)
		TRACKER_COUNT(pt, reloads, 1);
	else
		TRACKER_COUNT(pt, loads, 1);
	p->loaded = true;
	if (!l->was_live)
		pt->nr_live++;
	pthread_mutex_unlock(&pt->lock);
	/* gone already: it goes like any exited process, its tables after the usual delay */
	if (l->from_snapshot) {
		TRACKER_COUNT(pt, snapshots_used, 1);
		exit_proc(pt, l->pid);
	}
}

/*
 * Loads (or reloads) the mappings of pid and their tables.  When they did not
 * change, the generation stays, and with it the pid's rule cache in BPF: a
 * process that keeps asking for reloads (a library mapped and unmapped in a
 * loop) costs a read of its maps, not its cache.
 */
void tracker_load_proc(struct proc_tracker *pt, uint32_t pid, bool exec, uint64_t time_ns,
		       const struct work_item *w)
{
	struct proc_load l = {.pid = pid,
			      .exec = exec,
			      .time_ns = time_ns,
			      .deadline = mono_ns() + load_budget(pt)};
	uint32_t i;

	if (tracker_yield_big_load(pt, w, -1))
		return;
	/* taken before /proc is read: a snapshot newer than that read stays for the next load */
	l.snap = snapshot_take(pt, pid);
	/* an exec after this is one these mappings may predate (0: a snapshot's, older) */
	l.read_ns = mono_ns();
	switch (read_proc(pt, &l)) {
	case PROC_READ_OK:
		l.snap = snapshot_check(pt, l.snap, &l.stat);
		break;
	case PROC_READ_GONE:
		if (read_snapshot(pt, &l))
			break;
		goto cleanup;
	case PROC_READ_EMPTY:
		goto cleanup;
	}
	if (l.from_snapshot)
		l.read_ns = 0;
	if (tracker_yield_big_load(pt, w, (int64_t)l.nr))
		goto cleanup;
	l.p = claim_entry(pt, &l);
	if (!l.p)
		goto cleanup;
	pt->loading_pid = pid;
	if (!l.was_live)
		evict_for_new_proc(pt);
	if (pair_mappings(pt, &l))
		goto cleanup;
	if (l.nr_kept == l.nr && l.nr == l.nr_old && !l.nr_names_due) {
		/* BPF learns the mappings were read again: a change before now is not pending */
		l.pv.generation = l.p->generation;
		publish_generation(pt, &l);
		TRACKER_COUNT(pt, reloads_unchanged, 1);
		commit_load(pt, &l);
		goto cleanup;
	}
	if (alloc_new_set(&l))
		goto cleanup;
	prepare_tables(pt, &l);
	mark_updating(pt, &l);
	swap_mappings(pt, &l);
	l.set->generation = l.pv.generation = ++pt->generation;
	publish_generation(pt, &l);
	load_new_symbols(pt, &l);
	FOR_EACH_RUNTIME(pt, h)
	if (h->proc)
		h->proc(h->ctx, pid, l.set->maps, l.set->nr_maps, l.read_ns);
	commit_load(pt, &l);
cleanup:
	pt->loading_pid = 0;
	for (i = 0; l.fds && i < l.nr; i++) {
		if (l.fds[i] >= 0)
			close(l.fds[i]);
	}
	for (i = 0; l.jobs && i < l.nr_jobs; i++)
		cfi_table_free(l.jobs[i].table); /* built, then not taken: past the deadline */
	free(l.jobs);
	free(l.job_of);
	free(l.fds);
	free(l.reuse);
	free(l.kept);
	free(l.set); /* never published (out of memory) */
	if (!l.from_snapshot)
		free(l.ents);
	snapshot_free(pt, l.snap);
}
