// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The process tracker.  Table builds are slow (tens of ms for a large
 * library) so they run on a loader thread, away from the ring-buffer
 * consumer: a slow build must never make the ring buffer overflow.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elf/open_in_root.h"
#include "elf/build_id.h"
#include "user/track/mapping_keys.h"
#include "common/clock.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_stat.h"
#include "user/track/proc_tracker.h"

#define QUEUE_CAP 65536
#define NR_BUCKETS 4096

struct work_item {
	uint32_t pid;
	uint32_t kind;
	uint64_t time_ns;
};

struct proc_tracker {
	struct table_store *ts;
	struct sym_cache *syms;
	int procs_fd, mappings_fd;

	pthread_mutex_t lock;
	pthread_mutex_t load_lock; /* one load / exit at a time, whichever thread asks */
	pthread_cond_t work_cond, idle_cond;
	struct work_item *queue;
	uint32_t q_head, q_len;
	bool stopping, discard, busy, started;
	pthread_t thread;

	struct proc *buckets[NR_BUCKETS];
	uint32_t generation;
	uint32_t nr_procs, nr_live, max_procs;
	uint32_t nr_unload_due; /* exited processes whose tables are still loaded */
	uint64_t next_expire_ns; /* next check of idle tables past their ttl */
	uint32_t loading_pid; /* never the one unloaded to make room for its own tables */
	struct tracker_stats stats;
};

static bool reclaim_for_tables(void *ctx);

struct proc_tracker *proc_tracker_new(struct table_store *ts, struct sym_cache *syms,
				      int procs_fd, int mappings_fd)
{
	struct proc_tracker *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->queue = calloc(QUEUE_CAP, sizeof(*pt->queue));
	if (!pt->queue) {
		free(pt);
		return NULL;
	}
	pt->ts = ts;
	if (ts) { /* report mode has no tables */
		ts->reclaim = reclaim_for_tables;
		ts->reclaim_ctx = pt;
	}
	pt->syms = syms;
	pt->procs_fd = procs_fd;
	pt->mappings_fd = mappings_fd;
	pthread_mutex_init(&pt->lock, NULL);
	pthread_mutex_init(&pt->load_lock, NULL);
	pthread_cond_init(&pt->work_cond, NULL);
	pthread_cond_init(&pt->idle_cond, NULL);
	return pt;
}

static struct proc *find_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;

	for (p = pt->buckets[pid % NR_BUCKETS]; p; p = p->next) {
		if (p->pid == pid)
			return p;
	}
	return NULL;
}

static struct proc *get_locked(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p = find_locked(pt, pid);

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
	p = find_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	return p;
}

static const struct proc_mapping *find_in(const struct proc_mapping *maps, uint32_t nr,
					  uint64_t pc)
{
	uint32_t lo = 0, hi = nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pc < maps[mid].start)
			hi = mid;
		else if (pc >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

const struct proc_mapping *proc_find_mapping(const struct proc *p, uint64_t pc)
{
	return p ? find_in(p->maps, p->nr_maps, pc) : NULL;
}

const struct proc_mapping *proc_find_mapping_gen(const struct proc *p, uint32_t gen, uint64_t pc)
{
	uint32_t i;

	if (!p)
		return NULL;
	/*
	 * A set with generation G was in force for samples of generations up to G
	 * (the update window gets a generation of its own, see load_proc): the
	 * oldest set whose generation is >= gen.
	 */
	if (gen && gen != p->generation) {
		for (i = 0; i < p->nr_history; i++) {
			if (p->history[i].generation >= gen)
				return find_in(p->history[i].maps, p->history[i].nr_maps, pc);
		}
	}
	return find_in(p->maps, p->nr_maps, pc);
}

/* Keeps the replaced mapping set for naming its samples; the oldest goes when full. */
static void retire_maps(struct proc *p, struct proc_mapping *maps, uint32_t nr, uint32_t gen)
{
	uint32_t i;

	if (!maps || !nr || !gen) {
		free(maps);
		return;
	}
	for (i = 0; i < nr; i++)
		maps[i].obj = NULL; /* the tables belong to the current set, or are released */
	if (p->nr_history == PROC_HISTORY) {
		free(p->history[0].maps);
		memmove(&p->history[0], &p->history[1], (PROC_HISTORY - 1) * sizeof(p->history[0]));
		p->nr_history--;
	}
	p->history[p->nr_history++] = (struct map_set){gen, nr, maps};
}

static void free_history(struct proc *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_history; i++)
		free(p->history[i].maps);
	p->nr_history = 0;
}

/* ---- BPF map updates ---- */

static void mapping_keys_apply(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m,
			       bool add)
{
	struct mapping_key keys[MAPPING_KEYS_MAX];
	struct mapping_val val = {
		.obj_id = m->obj ? m->obj->id : 0, .flags = m->flags, .bias = m->bias};
	int i, n = mapping_keys_for_range(pid, m->start, m->end, keys);

	for (i = 0; i < n; i++) {
		int err = add ? bpf_map_update_elem(pt->mappings_fd, &keys[i], &val, BPF_ANY)
			      : bpf_map_delete_elem(pt->mappings_fd, &keys[i]);

		if (err && add)
			pt->stats.map_update_errors++;
	}
	if (add)
		pt->stats.mapping_keys += (uint64_t)n;
}

/* ---- objects behind mappings ---- */

struct build_ctx {
	int fd;
	const char *name;
	const struct cfi_table *prebuilt;
};

static struct cfi_table *build_from_fd(void *arg, int *err)
{
	struct build_ctx *bc = arg;
	struct cfi_build_opts opts = {.display_name = bc->name};
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	unsigned int i;

	*err = cfi_table_build_fd(bc->fd, &opts, &t, &diag);
	/* malformed FDEs are skipped; say so once per object, not per FDE */
	for (i = 0; i < diag.count && i < 2; i++)
		fprintf(stderr, "cfiprof: warning: %s\n", diag.msg[i]);
	if (diag.count > 2)
		fprintf(stderr, "cfiprof: warning: %s: %u more CFI problems\n", bc->name,
			diag.count - 2);
	return t;
}

/* The vDSO exists only in memory: copy it into a memfd so both tables and symbols can read it. */
static int vdso_fd(uint32_t pid, uint64_t start, uint64_t end)
{
	char path[64];
	size_t len = end - start;
	void *buf;
	int mem, fd = -1;

	if (len > (16 << 20))
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return -1;
	buf = malloc(len);
	if (buf && pread(mem, buf, len, (off_t)start) == (ssize_t)len) {
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, buf, len) != (ssize_t)len) {
			close(fd);
			fd = -1;
		}
	}
	free(buf);
	close(mem);
	return fd;
}

/* ELF virtual address of a file offset, from the PT_LOAD segment that maps it. */
static int offset_to_vaddr(Elf *e, uint64_t off, uint64_t *vaddr)
{
	GElf_Phdr ph;
	size_t n, i;
	int err = -1;

	if (!elf_getphdrnum(e, &n)) {
		for (i = 0; i < n; i++) {
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
				*vaddr = ph.p_vaddr + (off - ph.p_offset);
				err = 0;
				break;
			}
		}
	}
	return err;
}

/* Resolves the object behind a mapping; returns an fd for symbol loading, or -1. */
static int resolve_mapping(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
			   struct proc_mapping *m)
{
	char fpath[96], bid[ELF_BUILD_ID_HEX_LEN];
	struct build_ctx bc;
	struct stat st;
	uint64_t vaddr;
	bool vdso = !strcmp(e->path, "[vdso]");
	Elf *elf;
	int fd = -1;

	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	m->offset = e->offset;
	m->inode = e->inode;
	m->bias = e->start - e->offset;
	m->flags = MAPPING_FP;
	snprintf(m->path, sizeof(m->path), "%.255s", e->path[0] ? e->path : "[anon]");
	if (!vdso && (e->path[0] == 0 || e->path[0] == '['))
		return -1; /* anonymous executable memory: JIT code, walked with frame pointers */
	if (vdso) {
		fd = vdso_fd(pid, e->start, e->end);
		m->flags |= MAPPING_VDSO;
	} else {
		/* map_files works for deleted files and files in other mount namespaces */
		snprintf(fpath, sizeof(fpath), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
			 e->start, e->end);
		fd = open(fpath, O_RDONLY | O_CLOEXEC);
		/* without map_files (no CAP_SYS_ADMIN): the path as the process sees it */
		if (fd < 0)
			fd = open_in_proc_root(pid, e->path);
	}
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* one ELF handle for the build-id and the load bias */
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_build_id_hex(elf, bid, sizeof(bid)))
		snprintf(m->key, sizeof(m->key), "%s%s", vdso ? "vdso:" : "", bid);
	else
		snprintf(m->key, sizeof(m->key), "%" PRIx64 ":%" PRIu64 ":%" PRId64 ":%" PRId64,
			 (uint64_t)st.st_dev, (uint64_t)st.st_ino, (int64_t)st.st_size,
			 (int64_t)st.st_mtime);
	if (elf && !offset_to_vaddr(elf, e->offset, &vaddr))
		m->bias = e->start - vaddr;
	if (elf)
		elf_end(elf);
	bc.fd = fd;
	bc.name = m->path;
	m->obj = table_store_acquire(pt->ts, m->key, m->path, build_from_fd, &bc);
	if (m->obj && m->obj->state == OBJ_LOADED)
		m->flags = MAPPING_CFI | (m->flags & MAPPING_VDSO);
	return fd;
}

/* Symbols are only needed for output: load them after the walker can already unwind. */
static void load_symbols(struct proc_tracker *pt, struct proc_mapping *m, const char *path, int fd)
{
	bool vdso = (m->flags & MAPPING_VDSO) != 0;

	m->sym = sym_cache_get(pt->syms, m->key, vdso ? NULL : path, fd);
}

static bool same_mapping(const struct proc_mapping *m, const struct maps_entry *e)
{
	return m->start == e->start && m->end == e->end && m->offset == e->offset &&
	       m->inode == e->inode;
}

static void release_mappings(struct proc_tracker *pt, uint32_t pid, struct proc_mapping *maps,
			     uint32_t n, bool bpf_too)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bpf_too)
			mapping_keys_apply(pt, pid, &maps[i], false);
		table_store_release(pt->ts, maps[i].obj);
		maps[i].obj = NULL;
	}
}

/* The pid in the innermost PID namespace (the last NSpid field), 0 if unknown. */
static uint32_t read_ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			ns = (uint32_t)strtoul(tok, NULL, 10);
		break;
	}
	fclose(f);
	return ns;
}

static bool is_live(const struct proc *p)
{
	return p->loaded && !p->exited;
}

/*
 * The exit event comes before the kernel tears the address space down, and
 * samples of that teardown (a large program's exit_mmap takes a while) still
 * have the user stack of the exit call: its tables stay this long.
 */
#define EXIT_UNLOAD_DELAY_NS (250ull * 1000 * 1000)

/* BPF entries and tables go; the mapping list stays for naming samples.  load_lock held. */
static void drop_kernel_state(struct proc_tracker *pt, struct proc *p)
{
	bpf_map_delete_elem(pt->procs_fd, &p->pid);
	release_mappings(pt, p->pid, p->maps, p->nr_maps, true);
}

/* Call with pt->lock held: the pending unload is done now, or by whoever clears it. */
static bool clear_unload_due(struct proc_tracker *pt, struct proc *p)
{
	if (!p->unload_due_ns)
		return false;
	p->unload_due_ns = 0;
	pt->nr_unload_due--;
	return true;
}

/* Unloads a process at once (evicted, or found gone by a sweep).  load_lock held. */
static void unload_proc(struct proc_tracker *pt, struct proc *p, bool evict)
{
	pthread_mutex_lock(&pt->lock);
	if (is_live(p))
		pt->nr_live--;
	clear_unload_due(pt, p);
	p->exited = true;
	p->exit_seen = false;
	p->evicted = evict;
	pthread_mutex_unlock(&pt->lock);
	drop_kernel_state(pt, p);
}

static void exit_proc(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;
	bool live;

	pthread_mutex_lock(&pt->lock);
	p = find_locked(pt, pid);
	if (!p || (p->exited && !p->evicted)) {
		/* never loaded, or already unloaded by a sweep */
		pthread_mutex_unlock(&pt->lock);
		bpf_map_delete_elem(pt->procs_fd, &pid);
		return;
	}
	live = is_live(p);
	if (live) {
		pt->nr_live--;
		p->unload_due_ns = mono_ns() + EXIT_UNLOAD_DELAY_NS;
		pt->nr_unload_due++;
	}
	p->exited = true;
	p->exit_seen = false;
	p->evicted = false; /* an evicted one has nothing loaded */
	pthread_mutex_unlock(&pt->lock);
	pt->stats.exits++;
}

/* Exited processes whose delay has passed lose their tables.  load_lock held. */
static void unload_due(struct proc_tracker *pt, uint64_t now)
{
	struct proc *p;
	uint32_t b;

	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			bool due;

			pthread_mutex_lock(&pt->lock);
			due = p->unload_due_ns && p->unload_due_ns <= now && clear_unload_due(pt, p);
			pthread_mutex_unlock(&pt->lock);
			if (due)
				drop_kernel_state(pt, p);
		}
	}
}

/* The live process sampled least recently, other than the one being loaded. */
static struct proc *least_recently_sampled(struct proc_tracker *pt)
{
	struct proc *p, *best = NULL;
	uint32_t b;

	pthread_mutex_lock(&pt->lock);
	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			if (is_live(p) && p->pid != pt->loading_pid &&
			    (!best || p->last_sample_ns < best->last_sample_ns))
				best = p;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	return best;
}

/* table_store's reclaim callback: one process's tables go per call. */
static bool reclaim_for_tables(void *ctx)
{
	struct proc_tracker *pt = ctx;
	struct proc *victim = least_recently_sampled(pt);

	if (!victim)
		return false;
	unload_proc(pt, victim, true);
	pt->stats.evicted_tables++;
	return true;
}

void proc_tracker_set_max_procs(struct proc_tracker *pt, uint32_t max_procs)
{
	pt->max_procs = max_procs;
}

static void load_proc(struct proc_tracker *pt, uint32_t pid, bool exec, uint64_t time_ns)
{
	struct maps_entry *ents = NULL;
	struct proc_mapping *old, *nmaps = NULL;
	struct proc_val pv = {0};
	struct proc_stat_info stat;
	uint32_t nr_old, i, j;
	bool was_live;
	bool *kept = NULL;
	uint32_t *reuse = NULL; /* per new mapping: index + 1 of the old one it keeps */
	int *fds = NULL;
	struct proc *p;
	int n;

	if (proc_stat_read(pid, &stat)) {
		pt->stats.vanished++;
		return;
	}
	/* mapping changes the BPF side sees after this are newer than what we load */
	pv.loaded_ns = mono_ns();
	/* a sample or mapping change seen while it exits: loading it would leak its tables */
	if (proc_stat_dying(&stat)) {
		pt->stats.dying++;
		return;
	}
	n = proc_maps_read((int)pid, true, &ents);
	if (n < 0) {
		pt->stats.vanished++;
		return;
	}
	if (n == 0) {
		pt->stats.no_user++; /* kernel thread: nothing to unwind */
		free(ents);
		return;
	}
	pthread_mutex_lock(&pt->lock);
	p = get_locked(pt, pid);
	if (p && p->exited && !p->evicted && p->start_time == stat.start_time) {
		pthread_mutex_unlock(&pt->lock);
		pt->stats.dying++;
		goto out;
	}
	/* a reused pid, like an exec, has nothing in common with what we knew */
	if (p && p->exited)
		exec = true;
	if (p && exec && time_ns) {
		p->exec_ns = time_ns;
		p->first_complete_ns = 0;
	}
	was_live = p && is_live(p);
	/* a new process under the pid: its old tables are released below with the old maps */
	if (p && clear_unload_due(pt, p))
		bpf_map_delete_elem(pt->procs_fd, &pid);
	pthread_mutex_unlock(&pt->lock);
	if (!p)
		goto out;
	pt->loading_pid = pid;
	if (!was_live && pt->max_procs) {
		while (pt->nr_live >= pt->max_procs) {
			struct proc *victim = least_recently_sampled(pt);

			if (!victim)
				break;
			unload_proc(pt, victim, true);
			pt->stats.evicted_procs++;
		}
	}
	old = p->maps;
	nr_old = p->nr_maps;
	nmaps = calloc((size_t)n, sizeof(*nmaps));
	kept = calloc(nr_old + 1, sizeof(*kept));
	reuse = calloc((size_t)n, sizeof(*reuse));
	fds = malloc((size_t)n * sizeof(*fds));
	if (!nmaps || !kept || !fds || !reuse)
		goto out;
	for (i = 0; i < (uint32_t)n; i++)
		fds[i] = -1;
	/*
	 * Samples taken while the keys change get a generation of their own: rule
	 * cache entries made from half-updated keys then never match again, and
	 * those samples are named with the new mappings, not the old ones.
	 */
	if (nr_old) {
		pv.generation = ++pt->generation;
		pv.flags = PROC_UPDATING;
		bpf_map_update_elem(pt->procs_fd, &pid, &pv, BPF_ANY);
		pv.flags = 0;
	}
	/* exec replaces the whole address space; otherwise keep what did not change */
	for (i = 0; i < (uint32_t)n; i++) {
		for (j = 0; !exec && j < nr_old; j++) {
			if (!kept[j] && same_mapping(&old[j], &ents[i])) {
				kept[j] = true;
				reuse[i] = j + 1;
				break;
			}
		}
	}
	/*
	 * Stale keys go first: a new mapping (dlopen after dlclose, an exec) often
	 * reuses the same range, hence the same LPM prefixes, and deleting the old
	 * ones afterwards would delete the new ones with them.
	 */
	for (j = 0; j < nr_old; j++) {
		if (!kept[j])
			mapping_keys_apply(pt, pid, &old[j], false);
	}
	for (i = 0; i < (uint32_t)n; i++) {
		if (reuse[i]) {
			nmaps[i] = old[reuse[i] - 1];
			continue;
		}
		fds[i] = resolve_mapping(pt, pid, &ents[i], &nmaps[i]);
		mapping_keys_apply(pt, pid, &nmaps[i], true);
	}
	/* objects are released after the new ones are acquired: shared tables stay loaded */
	for (j = 0; j < nr_old; j++) {
		if (!kept[j])
			release_mappings(pt, pid, &old[j], 1, false);
	}
	pv.generation = ++pt->generation;
	if (bpf_map_update_elem(pt->procs_fd, &pid, &pv, BPF_ANY))
		pt->stats.map_update_errors++;
	for (i = 0; i < (uint32_t)n; i++) {
		if (fds[i] >= 0) {
			load_symbols(pt, &nmaps[i], ents[i].path, fds[i]);
			close(fds[i]);
			fds[i] = -1;
		}
	}
	pthread_mutex_lock(&pt->lock);
	retire_maps(p, old, nr_old, p->generation);
	p->maps = nmaps;
	p->nr_maps = (uint32_t)n;
	p->generation = pv.generation;
	p->ns_pid = read_ns_pid(pid);
	p->exit_seen = false;
	p->exited = false;
	p->evicted = false;
	p->start_time = stat.start_time;
	/* loading is a use: a process is not the first to go before its first sample */
	if (p->last_sample_ns < mono_ns())
		p->last_sample_ns = mono_ns();
	if (p->loaded)
		pt->stats.reloads++;
	else
		pt->stats.loads++;
	p->loaded = true;
	if (!was_live)
		pt->nr_live++;
	pthread_mutex_unlock(&pt->lock);
	nmaps = NULL;
out:
	pt->loading_pid = 0;
	for (i = 0; fds && i < (uint32_t)n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	free(fds);
	free(reuse);
	free(nmaps);
	free(kept);
	free(ents);
}

static void *loader_main(void *arg)
{
	struct proc_tracker *pt = arg;

	/*
	 * Loads are short bursts that decide how many samples of a new process or
	 * library go unwound: run them ahead of the CPU-bound programs being
	 * profiled (needs CAP_SYS_NICE; without it the default priority stays).
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	pthread_mutex_lock(&pt->lock);
	for (;;) {
		struct work_item w = {0};
		bool timed_out = false;

		while (!pt->q_len && !pt->stopping && !timed_out) {
			if (!pt->nr_unload_due) {
				pthread_cond_wait(&pt->work_cond, &pt->lock);
			} else {
				/* exited processes wait for their unload: wake for them */
				struct timespec until = realtime_after_ms(50);

				timed_out = pthread_cond_timedwait(&pt->work_cond, &pt->lock,
								   &until) == ETIMEDOUT;
			}
		}
		if (pt->stopping && (!pt->q_len || pt->discard))
			break;
		if (pt->q_len) {
			w = pt->queue[pt->q_head];
			pt->q_head = (pt->q_head + 1) % QUEUE_CAP;
			pt->q_len--;
		}
		pt->busy = true;
		pthread_mutex_unlock(&pt->lock);
		pthread_mutex_lock(&pt->load_lock);
		if (w.kind == WORK_EXIT)
			exit_proc(pt, w.pid);
		else if (w.kind)
			load_proc(pt, w.pid, w.kind == WORK_EXEC, w.time_ns);
		if (pt->nr_unload_due)
			unload_due(pt, mono_ns());
		/* idle tables past their ttl: checked at most once a second */
		if (pt->ts && pt->ts->stats.idle_now && mono_ns() >= pt->next_expire_ns) {
			table_store_expire(pt->ts, mono_ns());
			pt->next_expire_ns = mono_ns() + 1000000000ull;
		}
		pthread_mutex_unlock(&pt->load_lock);
		pthread_mutex_lock(&pt->lock);
		pt->busy = false;
		if (!pt->q_len)
			pthread_cond_broadcast(&pt->idle_cond);
	}
	pt->busy = false;
	pthread_cond_broadcast(&pt->idle_cond);
	pthread_mutex_unlock(&pt->lock);
	return NULL;
}

int proc_tracker_start(struct proc_tracker *pt)
{
	int err = pthread_create(&pt->thread, NULL, loader_main, pt);

	if (err)
		return -err;
	pt->started = true;
	return 0;
}

void proc_tracker_request(struct proc_tracker *pt, uint32_t pid, enum tracker_work w,
			  uint64_t time_ns)
{
	pthread_mutex_lock(&pt->lock);
	/* a load already waiting will read the newest mappings anyway */
	if (w == WORK_LOAD) {
		uint32_t k, n = pt->q_len < 64 ? pt->q_len : 64;

		for (k = 0; k < n; k++) {
			const struct work_item *q = &pt->queue[(pt->q_head + pt->q_len - 1 - k) % QUEUE_CAP];

			if (q->pid == pid && q->kind == WORK_LOAD) {
				pt->stats.loads_merged++;
				pthread_mutex_unlock(&pt->lock);
				return;
			}
		}
	}
	if (pt->q_len == QUEUE_CAP) {
		pt->stats.queue_dropped++;
	} else {
		pt->queue[(pt->q_head + pt->q_len) % QUEUE_CAP] =
			(struct work_item){.pid = pid, .kind = w, .time_ns = time_ns};
		pt->q_len++;
		pthread_cond_signal(&pt->work_cond);
	}
	pthread_mutex_unlock(&pt->lock);
}

int proc_tracker_load_now(struct proc_tracker *pt, uint32_t pid)
{
	struct proc *p;

	pthread_mutex_lock(&pt->load_lock);
	load_proc(pt, pid, false, 0);
	pthread_mutex_unlock(&pt->load_lock);
	p = proc_tracker_find(pt, pid);
	return p && p->loaded ? 0 : -ESRCH;
}

void proc_tracker_drain(struct proc_tracker *pt)
{
	pthread_mutex_lock(&pt->lock);
	while (pt->started && (pt->q_len || pt->busy))
		pthread_cond_wait(&pt->idle_cond, &pt->lock);
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_stop(struct proc_tracker *pt, bool discard)
{
	if (!pt->started)
		return;
	pthread_mutex_lock(&pt->lock);
	pt->stopping = true;
	pt->discard = discard;
	pthread_cond_broadcast(&pt->work_cond);
	pthread_mutex_unlock(&pt->lock);
	pthread_join(pt->thread, NULL);
	pt->started = false;
}

void proc_tracker_note_exec(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = find_locked(pt, pid);
	if (p) {
		p->exec_ns = time_ns;
		p->first_complete_ns = 0;
	}
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_note_sample(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns,
			      bool complete)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = find_locked(pt, pid);
	if (p && time_ns > p->last_sample_ns)
		p->last_sample_ns = time_ns;
	if (p && complete && p->exec_ns && !p->first_complete_ns && time_ns >= p->exec_ns)
		p->first_complete_ns = time_ns;
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker_stats(struct proc_tracker *pt, struct tracker_stats *out)
{
	pthread_mutex_lock(&pt->lock);
	*out = pt->stats;
	pthread_mutex_unlock(&pt->lock);
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
			release_mappings(pt, p->pid, p->maps, p->nr_maps, false);
			free_history(p);
			free(p->maps);
			free(p);
		}
	}
	free(pt->queue);
	pthread_mutex_destroy(&pt->lock);
	pthread_mutex_destroy(&pt->load_lock);
	pthread_cond_destroy(&pt->work_cond);
	pthread_cond_destroy(&pt->idle_cond);
	free(pt);
}

/*
 * Report mode: a recorded vDSO is named from our own when the build-ids match
 * (the same kernel), since the recorded process's copy is gone.
 */
static struct sym_obj *saved_vdso_symbols(struct proc_tracker *pt, const char *build_id)
{
	char bid[ELF_BUILD_ID_HEX_LEN], key[ELF_BUILD_ID_HEX_LEN + 8];
	struct maps_entry *ents = NULL;
	struct sym_obj *o = NULL;
	int n, i, fd = -1;

	n = proc_maps_read((int)getpid(), true, &ents);
	for (i = 0; i < n && fd < 0; i++) {
		if (!strcmp(ents[i].path, "[vdso]"))
			fd = vdso_fd((uint32_t)getpid(), ents[i].start, ents[i].end);
	}
	free(ents);
	if (fd < 0)
		return NULL;
	if (!elf_build_id_hex_fd(fd, bid, sizeof(bid)) && !strcmp(bid, build_id)) {
		snprintf(key, sizeof(key), "vdso:%s", bid);
		o = sym_cache_get(pt->syms, key, NULL, fd);
	}
	close(fd);
	return o;
}

int proc_tracker_add_saved(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m)
{
	struct proc_mapping *n;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = get_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	if (!p)
		return -ENOMEM;
	n = realloc(p->maps, (p->nr_maps + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->maps = n;
	n = &p->maps[p->nr_maps++];
	*n = *m;
	n->obj = NULL;
	n->sym = NULL;
	if (!strcmp(m->path, "[vdso]") && m->key[0])
		n->sym = saved_vdso_symbols(pt, m->key);
	/* files that are gone leave the mapping unsymbolized (object+offset), not an error */
	if (strcmp(m->path, "[vdso]") && m->path[0] == '/') {
		if (!access(m->path, R_OK)) {
			n->sym = sym_cache_get(pt->syms, m->key[0] ? m->key : m->path, m->path, -1);
		} else if (m->key[0]) {
			/* a file only in a container's mount namespace: still there if the process is */
			char fpath[96], bid[ELF_BUILD_ID_HEX_LEN];
			int fd;

			snprintf(fpath, sizeof(fpath), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
				 m->start, m->end);
			fd = open(fpath, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && !elf_build_id_hex_fd(fd, bid, sizeof(bid)) && !strcmp(bid, m->key))
				n->sym = sym_cache_get(pt->syms, m->key, m->path, fd);
			if (fd >= 0)
				close(fd);
		}
	}
	p->loaded = true;
	p->exited = true;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct proc_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void proc_tracker_sort(struct proc_tracker *pt)
{
	uint32_t b;
	struct proc *p;

	/* a process named only by a proc or gen line has no mappings at all */
	for (p = proc_tracker_first(pt, &b); p; p = proc_tracker_next(pt, p, &b)) {
		if (p->nr_maps)
			qsort(p->maps, p->nr_maps, sizeof(*p->maps), by_start);
	}
}

/* Live processes that are gone, or another process under the same pid, are unloaded. */
static void sweep_gone(struct proc_tracker *pt)
{
	struct proc_stat_info stat;
	struct proc **live;
	uint32_t b, n = 0, i;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	live = malloc((pt->nr_live + 1) * sizeof(*live));
	for (b = 0; live && b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p && n < pt->nr_live; p = p->next) {
			if (is_live(p))
				live[n++] = p;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	/* processes leave the lists only below, on this thread, with load_lock held */
	for (i = 0; i < n; i++) {
		p = live[i];
		if (!proc_stat_read(p->pid, &stat) && stat.start_time == p->start_time &&
		    !proc_stat_dying(&stat))
			continue;
		unload_proc(pt, p, false);
		pt->stats.exits_swept++;
	}
	free(live);
}

/* Whether a process kept after this forget pass maps key (now, or in a generation kept for names). */
static bool key_still_mapped(struct proc_tracker *pt, const char *key)
{
	uint32_t b, m;
	struct proc *p;

	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			uint32_t h;

			if (p->forget)
				continue;
			for (m = 0; m < p->nr_maps; m++) {
				if (!strcmp(p->maps[m].key, key))
					return true;
			}
			for (h = 0; h < p->nr_history; h++) {
				for (m = 0; m < p->history[h].nr_maps; m++) {
					if (!strcmp(p->history[h].maps[m].key, key))
						return true;
				}
			}
		}
	}
	return false;
}

static void drop_symbols(struct proc_tracker *pt, const struct proc_mapping *maps, uint32_t n)
{
	uint32_t m;

	for (m = 0; m < n; m++) {
		if (maps[m].sym && maps[m].key[0] && !key_still_mapped(pt, maps[m].key))
			sym_cache_remove(pt->syms, maps[m].key);
	}
}

size_t proc_tracker_forget_exited(struct proc_tracker *pt)
{
	size_t n = 0;
	uint32_t b, m;
	struct proc *p;

	pthread_mutex_lock(&pt->load_lock);
	sweep_gone(pt);
	if (pt->ts)
		table_store_expire(pt->ts, mono_ns());
	pthread_mutex_lock(&pt->lock);
	/*
	 * Which processes go is decided first: symbols are shared by key, and one
	 * kept process that maps a key (an exited one kept for naming included)
	 * keeps its symbols alive.
	 */
	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			p->forget = p->exited && p->exit_seen;
			p->exit_seen = p->exited;
			/* an interval shorter than the unload delay: unload it now */
			if (p->forget && clear_unload_due(pt, p))
				drop_kernel_state(pt, p);
		}
	}
	for (b = 0; b < NR_BUCKETS; b++) {
		struct proc **pp = &pt->buckets[b];

		while (*pp) {
			p = *pp;
			if (!p->forget) {
				pp = &p->next;
				continue;
			}
			drop_symbols(pt, p->maps, p->nr_maps);
			for (m = 0; m < p->nr_history; m++)
				drop_symbols(pt, p->history[m].maps, p->history[m].nr_maps);
			*pp = p->next;
			free_history(p);
			free(p->maps);
			free(p);
			pt->nr_procs--;
			n++;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	pthread_mutex_unlock(&pt->load_lock);
	return n;
}

void proc_tracker_saved_generation(struct proc_tracker *pt, uint32_t pid, uint32_t gen)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = get_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	if (!p)
		return;
	if (p->nr_maps) {
		qsort(p->maps, p->nr_maps, sizeof(*p->maps), by_start);
		retire_maps(p, p->maps, p->nr_maps, p->generation);
		p->maps = NULL;
		p->nr_maps = 0;
	}
	p->generation = gen;
}

void proc_tracker_saved_ns_pid(struct proc_tracker *pt, uint32_t pid, uint32_t ns_pid)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = get_locked(pt, pid);
	if (p)
		p->ns_pid = ns_pid;
	pthread_mutex_unlock(&pt->lock);
}
