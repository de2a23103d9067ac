// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process's executable mappings resolved to the objects behind them: the
 * file (or the vDSO), its key (cfi_file_key: build-id and file identity), its load
 * bias, its tables in the table store, and the LPM keys that let the BPF
 * walker find them.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/segments.h"
#include "elf/build_id.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "common/clock.h"
#include "common/escape.h"
#include "user/track/mapping_keys.h"
#include "user/track/tracker_internal.h"

uint32_t mapping_add_keys(struct proc_tracker *pt, uint32_t pid, struct proc_mapping *m,
			  uint32_t *pid_keys)
{
	struct cfi_mapping_key keys[MAPPING_KEYS_MAX];
	struct cfi_mapping_val val = {
	    .obj_id = m->obj ? m->obj->id : 0, .flags = m->flags, .bias = m->bias};
	int i, n = mapping_keys_for_range(pid, m->start, m->end, keys);

	m->nr_keys = 0;
	if (pt->keys_per_pid && *pid_keys + (uint32_t)n > pt->keys_per_pid) {
		TRACKER_COUNT(pt, keys_refused_quota, n);
		return (uint32_t)n;
	}
	for (i = 0; i < n; i++) {
		if (!bpf_map_update_elem(pt->opts.mappings_fd, &keys[i], &val, BPF_ANY))
			continue;
		if (errno == ENOSPC || errno == E2BIG)
			TRACKER_COUNT(pt, keys_refused_full, n);
		else
			TRACKER_COUNT(pt, map_update_errors, 1);
		/* a mapping covered in part would unwind some pcs and not others */
		while (i-- > 0)
			bpf_map_delete_elem(pt->opts.mappings_fd, &keys[i]);
		return (uint32_t)n;
	}
	m->nr_keys = (uint32_t)n;
	*pid_keys += (uint32_t)n;
	TRACKER_COUNT(pt, mapping_keys, n);
	TRACKER_COUNT(pt, keys_in_map, n);
	return 0;
}

void mapping_del_keys(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m)
{
	struct cfi_mapping_key keys[MAPPING_KEYS_MAX];
	int i, n;

	if (!m->nr_keys)
		return;
	n = mapping_keys_for_range(pid, m->start, m->end, keys);
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(pt->opts.mappings_fd, &keys[i]);
	__atomic_fetch_sub(&pt->stats.keys_in_map, (uint64_t)m->nr_keys, __ATOMIC_RELAXED);
}

struct cfi_table *mapping_build_table(struct proc_tracker *pt, uint32_t pid, const char *name,
				      const char *key, int fd, int *err)
{
	/* display_name is the path in the process's root: its debug files are there too */
	struct cfi_build_opts opts = {
	    .display_name = name,
	    .root_pid = pid,
	    .native_only = 1,
	    /* a table the store could never hold is given up as it grows */
	    .budget = {.cancel = &pt->work.cancel_builds,
		       .max_bytes = pt->opts.ts ? pt->opts.ts->max_bytes : 0}};
	build_hook_fn hook = pt->build_hook;
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	uint64_t t0 = mono_ns();
	unsigned int i;

	if (hook)
		hook(pt->build_hook_ctx, name, true);
	/* the key names the very file opened: an entry under it is this file's table */
	if (pt->opts.table_cache && !cfi_table_cache_load(pt->opts.table_cache, key, &t)) {
		if (t->arch == CFI_ARCH_NATIVE) {
			t->stats.build_ns = mono_ns() - t0;
			*err = 0;
			goto out;
		}
		/* the cache's files are the agent's own, but a table is never walked on another
		 * machine */
		cfi_table_free(t);
		t = NULL;
	}
	*err = cfi_table_build_fd(fd, &opts, &t, &diag);
	if (t && pt->opts.table_cache)
		cfi_table_cache_store(pt->opts.table_cache, key, t);
	/* malformed FDEs are skipped; say so once per object, not per FDE */
	for (i = 0; i < diag.count && i < 2; i++)
		fprintf(stderr, "cfiprof: warning: %s\n", diag.msg[i]);
	if (diag.count > 2)
		fprintf(stderr, "cfiprof: warning: %s: %u more CFI problems\n",
			str_escape((char[512]){0}, 512, name, NULL), diag.count - 2);
out:
	if (hook)
		hook(pt->build_hook_ctx, name, false);
	return t;
}

struct build_ctx {
	struct proc_tracker *pt;
	int fd;
	uint32_t pid;
	const char *name;
	const char *key;
	struct build_job *job; /* built already (NULL: build now) */
};

static struct cfi_table *build_or_take(void *arg, int *err)
{
	struct build_ctx *bc = arg;
	struct cfi_table *t;

	/* a second mapping of the object finds it in the store (unless refused to its process) */
	if (!bc->job || !bc->job->done || bc->job->taken)
		return mapping_build_table(bc->pt, bc->pid, bc->name, bc->key, bc->fd, err);
	t = bc->job->table;
	*err = bc->job->err;
	bc->job->table = NULL;
	bc->job->taken = true;
	return t;
}

/* The vDSO exists only in memory: a copy in a memfd lets both tables and symbols read it. */
int vdso_copy_fd(uint32_t pid, uint64_t start, uint64_t end)
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

/* map_files works for deleted files and files in other mount namespaces (needs CAP_SYS_ADMIN). */
int map_file_open(uint32_t pid, uint64_t start, uint64_t end, const struct file_id *want)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	/* a device can be mapped too: its handle is looked at before any open */
	return open_regular_as(path, want);
}

/*
 * A device, FIFO or symlink where a library was is planted: said, at most once
 * a second (a process can make one a reload).  Another file there is not: an
 * upgrade replaces libraries under running processes.
 */
static void log_planted(uint32_t pid, const char *path, int err)
{
	static uint64_t next_ns;
	uint64_t now = mono_ns(), next = __atomic_load_n(&next_ns, __ATOMIC_RELAXED);

	if (now < next || !__atomic_compare_exchange_n(&next_ns, &next, now + 1000000000ull, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	fprintf(stderr,
		"cfiprof: pid %u: its mapped %s is now %s: refused, frame pointers used (logged "
		"at most once a second; counted by cause)\n",
		pid, str_escape((char[512]){0}, 512, path, NULL),
		err == -ELOOP ? "a symlink" : "not a regular file");
}

static bool is_vdso(const struct maps_entry *e)
{
	return !strcmp(e->path, "[vdso]");
}

/* a memfd may hold a JIT's code (a double mapping): only a named file is never one */
static bool is_file_code(const struct maps_entry *e)
{
	return e->inode && e->path[0] == '/' && strncmp(e->path, "/memfd:", 7);
}

int mapping_open(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e, struct stat *st)
{
	/* the path may name another file by now (renamed over, replaced): only the mapped one */
	const struct file_id want = {makedev(e->dev_major, e->dev_minor), (ino_t)e->inode};
	bool vdso = is_vdso(e);
	int fd;

	if (!vdso && (e->path[0] == 0 || e->path[0] == '['))
		return -1; /* anonymous executable memory: JIT code, walked with frame pointers */
	if (vdso) {
		errno = 0;
		fd = vdso_copy_fd(pid, e->start, e->end);
		if (fd < 0)
			fd = errno ? -errno : -1;
	} else {
		fd = map_file_open(pid, e->start, e->end, &want);
		/* without map_files (no CAP_SYS_ADMIN): the path as the process sees it */
		if (fd < 0)
			fd = open_in_proc_root_as(pid, e->path, &want);
		/* a FIFO, device, symlink or another file where the library was: planted */
		if (fd == -EINVAL || fd == -ELOOP || fd == -ESTALE)
			TRACKER_COUNT(pt, files_refused, 1);
		if (fd == -EINVAL || fd == -ELOOP)
			log_planted(pid, e->path, fd);
	}
	/* out of file descriptors: this mapping goes without tables and names */
	if (fd == -EMFILE || fd == -ENFILE)
		TRACKER_COUNT(pt, no_fds, 1);
	if (fd < 0 || fstat(fd, st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void mapping_init(const struct maps_entry *e, struct proc_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	m->offset = e->offset;
	m->inode = e->inode;
	m->bias = e->start - e->offset;
	m->flags = CFI_MAPPING_FP | (is_vdso(e) ? CFI_MAPPING_VDSO : 0) |
		   (is_file_code(e) ? CFI_MAPPING_FILE : 0);
	snprintf(m->path, sizeof(m->path), "%.255s", e->path[0] ? e->path : "[anon]");
}

int mapping_identify(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		     struct proc_mapping *m, struct stat *st, const struct proc_snapshot *snap)
{
	char bid[ELF_BUILD_ID_HEX_LEN];
	uint64_t vaddr;
	bool vdso = is_vdso(e);
	Elf *elf;
	int fd;

	mapping_init(e, m);
	fd = snapshot_mapping_open(pt, pid, e, st, snap);
	if (fd < 0)
		return -1;
	if (!vdso)
		file_index_note(&pt->snap.files, st, fd, e->path, files_held_now());
	/*
	 * One ELF handle for the build-id and the load bias, read with pread, not
	 * mapped: each munmap at elf_end is a TLB shootdown across the agent's
	 * threads, and for a process mapping one file 18,000 times those were
	 * most of its load.
	 */
	elf = elf_read_begin(fd);
	/*
	 * Tables and names are shared by key.  A build-id alone is a claim the
	 * file makes about itself: a fake library carrying a real one's id would
	 * lend its CFI and names to every process mapping the real one.  So a
	 * file is the build-id plus the identity of what was actually opened;
	 * the vDSO comes from the kernel and is shared by its build-id.
	 */
	if (!elf || elf_build_id_hex(elf, bid, sizeof(bid)))
		bid[0] = '\0';
	if (vdso && bid[0])
		snprintf(m->key, sizeof(m->key), "vdso:%s", bid);
	else if (cfi_file_key(fd, bid, m->key, sizeof(m->key)))
		m->key[0] = '\0';
	if (elf && !elf_offset_to_vaddr(elf, e->offset, &vaddr))
		m->bias = e->start - vaddr;
	if (elf)
		elf_end(elf);
	/* no key, nothing to share it by: frame pointers */
	if (!m->key[0]) {
		close(fd);
		return -1;
	}
	return fd;
}

void mapping_acquire(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		     struct proc_mapping *m, int fd, struct build_job *job,
		     struct table_charge *charge)
{
	/* e->path whole: m->path is cut to fit */
	struct build_ctx bc = {
	    .pt = pt, .fd = fd, .pid = pid, .name = e->path, .key = m->key, .job = job};

	m->obj = table_store_acquire(pt->opts.ts, m->key, m->path, build_or_take, &bc, charge);
	if (m->obj && m->obj->state == OBJ_LOADED)
		m->flags = CFI_MAPPING_CFI | (m->flags & (CFI_MAPPING_VDSO | CFI_MAPPING_FILE));
}

/* What a runtime's JIT rows are built from: the runtime's hook, for the mapping's process. */
struct jit_build_ctx {
	const struct runtime_hooks *h;
	uint32_t pid;
	const char *key;
};

static struct cfi_table *jit_build(void *arg, int *err)
{
	struct jit_build_ctx *bc = arg;

	return bc->h->jit_build(bc->h->ctx, bc->pid, bc->key, err);
}

bool mapping_jit_pid(struct proc_tracker *pt, uint32_t pid)
{
	FOR_EACH_RUNTIME(pt, h)
	if (h->jit_pid && h->jit_pid(h->ctx, pid))
		return true;
	return false;
}

bool mapping_jit(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		 struct proc_mapping *m, struct table_charge *charge)
{
	char key[JIT_KEY_LEN];

	/* anonymous memory only: a file's mapping has the file's tables */
	if (!pt->opts.ts || e->path[0] || e->inode)
		return false;
	FOR_EACH_RUNTIME(pt, h)
	{
		struct jit_build_ctx bc = {.h = h, .pid = pid, .key = key};

		if (!h->jit_key || !h->jit_build || h->jit_key(h->ctx, pid, e->start, e->end, key))
			continue;
		snprintf(m->key, sizeof(m->key), "%s", key);
		/* the rows' addresses are the process's own */
		m->bias = 0;
		m->obj = table_store_acquire(pt->opts.ts, m->key, m->path, jit_build, &bc, charge);
		if (m->obj && m->obj->state == OBJ_LOADED)
			m->flags = CFI_MAPPING_CFI | CFI_MAPPING_JIT;
		return true;
	}
	return false;
}

int mapping_resolve(struct proc_tracker *pt, uint32_t pid, const struct maps_entry *e,
		    struct proc_mapping *m, struct table_charge *charge,
		    const struct proc_snapshot *snap)
{
	struct stat st;
	int fd = mapping_identify(pt, pid, e, m, &st, snap);

	if (fd >= 0)
		mapping_acquire(pt, pid, e, m, fd, NULL, charge);
	return fd;
}

void mapping_load_symbols(struct proc_tracker *pt, uint32_t pid, struct proc_mapping *m,
			  const char *path, int fd)
{
	bool vdso = (m->flags & CFI_MAPPING_VDSO) != 0;

	m->sym = sym_cache_get(pt->opts.syms, m->key, vdso ? NULL : path, fd, pid);
}

/*
 * The same range of the same file: its object and keys carry over to a
 * reload.  One its load left without a table is resolved anew (one left
 * without names carries over: the reload reads them).
 */
static bool mapping_unchanged(const struct proc_mapping *m, const struct maps_entry *e, bool jit)
{
	/*
	 * A runtime's JIT rows are asked for again at every load (its code
	 * changes), and so is anonymous memory a runtime has rows for now (a
	 * JVM's code cache read first before the JVM had one).
	 */
	return m->start == e->start && m->end == e->end && m->offset == e->offset &&
	       m->inode == e->inode && !m->table_cut && strncmp(m->key, "jit:", 4) &&
	       !(jit && !e->inode && !e->path[0]);
}

uint32_t mappings_pair(const struct proc_mapping *old, uint32_t nr_old,
		       const struct maps_entry *ents, uint32_t nr, bool jit, uint32_t *reuse,
		       bool *kept, uint64_t *steps)
{
	uint32_t i = 0, j = 0, n = 0;

	while (i < nr && j < nr_old) {
		(*steps)++;
		if (old[j].start < ents[i].start) {
			j++;
		} else if (ents[i].start < old[j].start) {
			i++;
		} else {
			if (mapping_unchanged(&old[j], &ents[i], jit)) {
				kept[j] = true;
				reuse[i] = j + 1;
				n++;
			}
			i++;
			j++;
		}
	}
	return n;
}

void mappings_release(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *maps,
		      uint32_t n, bool bpf_too)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bpf_too)
			mapping_del_keys(pt, pid, &maps[i]);
		table_store_release(pt->opts.ts, maps[i].obj);
	}
}
