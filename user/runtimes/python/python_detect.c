// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython interpreters in the processes a load reads.  Debian's python3.11
 * has no debug information but exports _PyRuntime (the runtime state, root
 * of the interpreters and their threads) and Py_Version (PY_VERSION_HEX,
 * 3.11 on) in .dynsym; both are read from the mapped file itself, never from
 * the process.  The object's answer is cached by its mapping key, the
 * process's in a pid table; the kernel learns (runtime address, the
 * version's offsets) through python_procs.
 */
#include <bpf/bpf.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/hash.h"
#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_tracker.h"
#include "user/track/runtime_hooks.h"
#include "user/track/runtime_procs.h"
#include "user/runtimes/python/python_detect.h"

#define PY_OBJS	   64 /* objects remembered: interpreters are few */
#define PY_BUCKETS 1024

struct py_obj {
	char key[PROC_MAPPING_KEY_LEN];
	uint16_t version;
	uint64_t runtime_vaddr;
};

struct py_proc {
	struct py_proc *next;
	uint32_t pid;
	const struct python_offsets *off; /* NULL: unsupported */
};

struct python_detect {
	int map_fd;
	pthread_mutex_t lock;
	struct py_obj objs[PY_OBJS];
	uint32_t nr_objs, next_obj;
	struct py_proc *buckets[PY_BUCKETS];
	struct python_detect_stats stats;
};

struct python_detect *python_detect_new(int python_procs_fd)
{
	struct python_detect *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	pd->map_fd = python_procs_fd;
	pthread_mutex_init(&pd->lock, NULL);
	return pd;
}

void python_detect_free(struct python_detect *pd)
{
	struct py_proc *p, *n;
	uint32_t b;

	if (!pd)
		return;
	for (b = 0; b < PY_BUCKETS; b++)
		for (p = pd->buckets[b]; p; p = n) {
			n = p->next;
			free(p);
		}
	pthread_mutex_destroy(&pd->lock);
	free(pd);
}

/* "python3.11", "libpython3.11.so.1.0", "python3.11d": 0x030b; 0 when the name is none of them. */
static uint16_t version_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned int minor;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python3.%u", &minor) == 1 && minor < 256)
		return (uint16_t)(0x0300 | minor);
	return 0;
}

static bool may_be_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/*
 * Symbol bytes read from one object (tables and their strings): python3.11's
 * .dynsym and .dynstr are 0.3 MiB, a debug build's .symtab a few MiB.
 */
#define PY_READ_MAX (64ull << 20)

int python_elf_info(int fd, const char *path, uint16_t *version, uint64_t *runtime_vaddr)
{
	uint64_t left = PY_READ_MAX;
	struct stat st;
	Elf *e;
	static const char *const names[] = {"_PyRuntime", "Py_Version"};
	uint64_t values[2], py_version;
	uint32_t hex;

	*version = 0;
	*runtime_vaddr = 0;
	/* never mapped: a file truncated under a mapping is SIGBUS (elf/elf_read.h) */
	e = fstat(fd, &st) < 0 ? NULL : elf_read_begin(fd);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return -1;
	}
	elf_find_symbols(e, names, values, 2, &left);
	*runtime_vaddr = values[0];
	py_version = values[1];
	/* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final */
	if (py_version && !elf_read_vaddr(e, fd, py_version, &hex, sizeof(hex)) && hex >> 24 == 3)
		*version = (uint16_t)(hex >> 16);
	else
		*version = version_from_name(path);
	elf_end(e);
	/* cut while read: the symbols found may be anything's */
	if (elf_read_truncated(fd, (uint64_t)st.st_size)) {
		*runtime_vaddr = 0;
		return -1;
	}
	return 0;
}

static struct py_obj *find_obj(struct python_detect *pd, const char *key)
{
	uint32_t i;

	for (i = 0; i < pd->nr_objs; i++)
		if (!strcmp(pd->objs[i].key, key))
			return &pd->objs[i];
	return NULL;
}

void python_detect_object(struct python_detect *pd, const char *key, const char *path, int fd)
{
	struct py_obj o = {0}, *slot;

	if (!pd || fd < 0 || !may_be_python(path))
		return;
	pthread_mutex_lock(&pd->lock);
	slot = find_obj(pd, key);
	pthread_mutex_unlock(&pd->lock);
	if (slot || python_elf_info(fd, path, &o.version, &o.runtime_vaddr))
		return;
	if (!o.version)
		return; /* python-something, not an interpreter */
	snprintf(o.key, sizeof(o.key), "%s", key);
	pthread_mutex_lock(&pd->lock);
	/* a ring of the newest: a host runs a few interpreters, not 64 */
	pd->objs[pd->next_obj] = o;
	pd->next_obj = (pd->next_obj + 1) % PY_OBJS;
	if (pd->nr_objs < PY_OBJS)
		pd->nr_objs++;
	pthread_mutex_unlock(&pd->lock);
}

static struct py_proc **find_proc(struct python_detect *pd, uint32_t pid)
{
	struct py_proc **pp = &pd->buckets[pid % PY_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* Its PID namespace, for its threads' ids as it sees them; left 0 if unreadable. */
static void pidns_of(uint32_t pid, struct cfi_python_proc *val)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	if (stat(path, &st))
		return;
	val->pidns_dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	val->pidns_ino = st.st_ino;
}

/* A process of an unsupported version: its version kept for the summary (the first few). */
static void count_unsupported(struct python_detect_stats *st, uint16_t version)
{
	uint32_t i;

	st->unsupported++;
	for (i = 0; i < st->nr_unsup_versions && st->unsup_version[i] != version; i++)
		;
	if (i == PY_UNSUPPORTED_VERSIONS)
		return;
	if (i == st->nr_unsup_versions) {
		st->unsup_version[i] = version;
		st->nr_unsup_versions++;
	}
	st->unsup_procs[i]++;
}

void python_detect_describe_unsupported(const struct python_detect_stats *st, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = 0;
	if (!st->unsupported || !len)
		return;
	n += (size_t)snprintf(buf, len, "%" PRIu64 " Python process%s of unsupported version%s",
			      st->unsupported, st->unsupported == 1 ? "" : "es",
			      st->nr_unsup_versions > 1 ? "s" : "");
	for (i = 0; i < st->nr_unsup_versions && n < len; i++) {
		n += (size_t)snprintf(buf + n, len - n, "%s %u.%u", i ? "," : "",
				      st->unsup_version[i] >> 8, st->unsup_version[i] & 0xff);
		if (st->nr_unsup_versions > 1 && n < len)
			n += (size_t)snprintf(buf + n, len - n, " (%" PRIu64 ")",
					      st->unsup_procs[i]);
	}
}

/* early: nothing is removed when the mappings hold no interpreter. */
static void detect_proc(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr, bool early, uint64_t read_ns)
{
	const struct python_offsets *off = NULL;
	struct cfi_python_proc val;
	const struct py_obj *o = NULL, *found = NULL;
	struct py_proc **pp, *p;
	uint64_t bias = 0;
	uint32_t i;
	bool fresh;

	if (!pd)
		return;
	pthread_mutex_lock(&pd->lock);
	/* no interpreter seen yet (most hosts): no scan of every mapping */
	for (i = 0; pd->nr_objs && i < nr && !(found && found->runtime_vaddr); i++) {
		o = find_obj(pd, maps[i].key);
		if (o && (!found || o->runtime_vaddr)) {
			found = o;
			bias = maps[i].bias;
		}
	}
	/*
	 * A program named python3.N without _PyRuntime runs an interpreter of
	 * a libpython (pyenv's, --enable-shared): that one, once it is mapped,
	 * is the interpreter; the program alone is none, supported or not.
	 */
	if (found && !found->runtime_vaddr)
		found = NULL;
	if (!found && early) {
		pthread_mutex_unlock(&pd->lock);
		return;
	}
	if (found && found->runtime_vaddr)
		off = python_offsets_find(found->version);
	pp = find_proc(pd, pid);
	p = *pp;
	fresh = !p;
	if (!found) {
		if (p) {
			*pp = p->next;
			free(p);
		}
	} else {
		if (!p) {
			p = calloc(1, sizeof(*p));
			if (p) {
				p->pid = pid;
				p->next = pd->buckets[pid % PY_BUCKETS];
				pd->buckets[pid % PY_BUCKETS] = p;
			}
		}
		/* counted once per process, and again when an exec changes its interpreter */
		if (p && (fresh || p->off != off)) {
			if (off)
				pd->stats.procs++;
			else
				count_unsupported(&pd->stats, found->version);
		}
		if (p)
			p->off = off;
	}
	if (off) {
		val = off->bpf;
		val.runtime = bias + found->runtime_vaddr;
		val.maps_read_ns = read_ns;
	}
	pthread_mutex_unlock(&pd->lock);
	if (pd->map_fd < 0)
		return;
	if (off) {
		pidns_of(pid, &val);
		runtime_procs_put(pd->map_fd, pid, RT_PYTHON, &val, sizeof(val));
	} else
		runtime_procs_drop(pd->map_fd, pid, RT_PYTHON);
}

void python_detect_proc(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr)
{
	detect_proc(pd, pid, maps, nr, false, UINT64_MAX);
}

void python_detect_proc_read_at(struct python_detect *pd, uint32_t pid,
				const struct proc_mapping *maps, uint32_t nr, uint64_t read_ns)
{
	detect_proc(pd, pid, maps, nr, false, read_ns);
}

void python_detect_early(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			 const struct maps_entry *ents, const int *fds, uint32_t nr,
			 uint64_t read_ns)
{
	uint32_t i;

	if (!pd)
		return;
	for (i = 0; i < nr; i++)
		if (fds[i] >= 0)
			python_detect_object(pd, maps[i].key, ents[i].path, fds[i]);
	/* a kept mapping's key is still "": it matches no interpreter */
	detect_proc(pd, pid, maps, nr, true, read_ns);
}

void python_detect_unload(struct python_detect *pd, uint32_t pid)
{
	if (pd && pd->map_fd >= 0)
		runtime_procs_drop(pd->map_fd, pid, RT_PYTHON);
}

void python_detect_forget(struct python_detect *pd, uint32_t pid)
{
	struct py_proc **pp, *p;

	if (!pd)
		return;
	pthread_mutex_lock(&pd->lock);
	pp = find_proc(pd, pid);
	p = *pp;
	if (p)
		*pp = p->next;
	pthread_mutex_unlock(&pd->lock);
	free(p);
}

const struct python_offsets *python_detect_offsets(void *pd, uint32_t pid)
{
	return python_detect_lookup(pd, pid);
}

const struct python_offsets *python_detect_lookup(struct python_detect *pd, uint32_t pid)
{
	const struct python_offsets *off = NULL;
	struct py_proc *p;

	if (!pd)
		return NULL;
	pthread_mutex_lock(&pd->lock);
	p = *find_proc(pd, pid);
	if (p)
		off = p->off;
	pthread_mutex_unlock(&pd->lock);
	return off;
}

void python_detect_stats(struct python_detect *pd, struct python_detect_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pd)
		return;
	pthread_mutex_lock(&pd->lock);
	*out = pd->stats;
	pthread_mutex_unlock(&pd->lock);
}

static void hook_object(void *ctx, const char *key, const char *path, int fd)
{
	python_detect_object(ctx, key, path, fd);
}

static void hook_early(void *ctx, uint32_t pid, const struct proc_mapping *maps,
		       const struct maps_entry *ents, const int *fds, uint32_t nr, uint64_t read_ns)
{
	python_detect_early(ctx, pid, maps, ents, fds, nr, read_ns);
}

static void hook_proc(void *ctx, uint32_t pid, const struct proc_mapping *maps, uint32_t nr,
		      uint64_t read_ns)
{
	python_detect_proc_read_at(ctx, pid, maps, nr, read_ns);
}

static void hook_unload(void *ctx, uint32_t pid)
{
	python_detect_unload(ctx, pid);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	python_detect_forget(ctx, pid);
}

void python_detect_hooks(struct python_detect *pd, struct runtime_hooks *out)
{
	*out = (struct runtime_hooks){.ctx = pd,
				      .object = hook_object,
				      .early = hook_early,
				      .proc = hook_proc,
				      .unload = hook_unload,
				      .forget = hook_forget};
}
