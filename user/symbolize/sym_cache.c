// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The symbolizer's ELF objects, loaded once per object key (build-id, or
 * dev:ino:size:mtime) and kept in a hash table; names demangled on demand.
 */
#include "user/symbolize/sym_cache.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hash.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "elf/segments.h"
#include "tables/cfi_table.h"
#include "user/symbolize/elf_symbols.h"
#include "user/symbolize/go_names.h"
#include "user/symbolize/sym_fetch.h"
#include "user/symbolize/src_lines.h"
#include "user/symbolize/src_lines_warm.h"
#include "user/symbolize/sym_table.h"

struct sym_obj {
	struct sym_obj *next; /* hash chain */
	struct sym_cache *cache;
	char *key;
	bool failed;
	struct sym_table tab;
	struct sym_dem_cache dem;
	/* stripped: its debug file asked from debuginfod (NULL: not asked, or refused) */
	struct sym_fetched *fetched;
	/* function starts from the FDEs that no symbol covers (names unused) */
	struct sym_table fde;
	struct elf_segments segs;
	char *debug_file;
	char build_id[ELF_BUILD_ID_HEX_LEN];
	struct src_lines *lines; /* NULL: no DWARF, or lines were off when loaded */
	/* no .symtab: Go's functions from .gopclntab (empty when it has none) */
	struct go_names go;
	struct sym_dem_cache go_dem;
};

struct sym_cache {
	struct sym_obj **buckets;
	size_t nbuckets, count;
	char *debug_root;
	enum sym_demangle_mode demangle;
	struct sym_fetch *fetch; /* NULL: no debuginfod */
	struct sym_cache_stats stats;
	bool lines_on;
	struct src_lines_ctx lines;
	struct src_lines_warm *warm; /* NULL: each object's DWARF opens at its first lookup */
};

static bool elf_ready(void)
{
	static bool ok;

	if (!ok)
		ok = elf_version(EV_CURRENT) != EV_NONE;
	return ok;
}

struct sym_cache *sym_cache_new(void)
{
	struct sym_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nbuckets = 256;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	c->debug_root = strdup(DEBUG_ROOT_DEFAULT);
	if (!c->buckets || !c->debug_root)
		goto err;
	c->demangle = SYM_DEMANGLE_FULL;
	src_lines_ctx_init(&c->lines);
	return c;
err:
	free(c->buckets);
	free(c->debug_root);
	free(c);
	return NULL;
}

static void obj_free(struct sym_obj *o)
{
	if (o->cache->warm)
		src_lines_warm_free(o->cache->warm, o->lines);
	else
		src_lines_free(&o->cache->lines, o->lines);
	sym_dem_cache_free(&o->dem);
	sym_dem_cache_free(&o->go_dem);
	go_names_free(&o->go);
	sym_fetched_put(o->fetched);
	sym_table_release(&o->fde);
	sym_table_release(&o->tab);
	elf_segments_free(&o->segs);
	free(o->debug_file);
	free(o->key);
	free(o);
}

void sym_cache_free(struct sym_cache *c)
{
	size_t i;

	if (!c)
		return;
	src_lines_warm_stop(c->warm);
	src_lines_opener_stop(&c->lines);
	for (i = 0; i < c->nbuckets; i++) {
		struct sym_obj *o = c->buckets[i], *next;

		for (; o; o = next) {
			next = o->next;
			obj_free(o);
		}
	}
	src_lines_warm_destroy(c->warm);
	free(c->buckets);
	free(c->debug_root);
	free(c);
}

int sym_cache_set_debug_root(struct sym_cache *c, const char *root)
{
	char *dup = NULL;

	if (root && root[0]) {
		dup = strdup(root);
		if (!dup)
			return -1;
	}
	free(c->debug_root);
	c->debug_root = dup;
	return 0;
}

void sym_cache_set_demangle(struct sym_cache *c, enum sym_demangle_mode mode)
{
	size_t i;

	if (mode == c->demangle)
		return;
	c->demangle = mode;
	/* Names demangled under the old mode would now be wrong. */
	for (i = 0; i < c->nbuckets; i++) {
		struct sym_obj *o;

		for (o = c->buckets[i]; o; o = o->next) {
			struct sym_dem_cache *dem;

			sym_dem_cache_free(&o->dem);
			sym_dem_cache_free(&o->go_dem);
			if (sym_fetched_table(o->fetched, &dem))
				sym_dem_cache_free(dem);
		}
	}
}

void sym_cache_set_fetch(struct sym_cache *c, struct sym_fetch *f)
{
	c->fetch = f;
}

void sym_cache_get_stats(const struct sym_cache *c, struct sym_cache_stats *out)
{
	out->fde_ns = __atomic_load_n(&c->stats.fde_ns, __ATOMIC_RELAXED);
	out->fde_ranges = __atomic_load_n(&c->stats.fde_ranges, __ATOMIC_RELAXED);
	out->fde_refused = __atomic_load_n(&c->stats.fde_refused, __ATOMIC_RELAXED);
}

size_t sym_cache_count(const struct sym_cache *c)
{
	return c->count;
}

/* ---- loading ---- */

/*
 * The function starts of code no symbol covers, from the object's FDEs: a
 * stripped object's static functions are then one frame each, named by their
 * start, rather than one per address.  Bounded like a table build but tighter
 * (it runs on the load thread); past the bound the object keeps its symbols.
 */
static void read_function_starts(struct sym_cache *c, struct sym_obj *o, int fd)
{
	struct cfi_budget b = {.max_ns = SYM_FDE_MAX_NS, .max_fdes = SYM_FDE_MAX};
	struct cfi_range *r = NULL;
	uint64_t n = 0, i, t0 = mono_ns();
	int err;

	err = cfi_fde_ranges_fd(fd, &b, &r, &n, NULL);
	if (err == CFI_ERR_BUDGET || err == CFI_ERR_NOMEM)
		__atomic_fetch_add(&c->stats.fde_refused, 1, __ATOMIC_RELAXED);
	for (i = 0; !err && i < n; i++) {
		if (sym_table_find(&o->tab, r[i].start) >= 0)
			continue;
		/* names are the object's and the start: the arena holds one empty name */
		if (sym_table_add(&o->fde, r[i].start, r[i].end, 0, 0) < 0) {
			sym_table_release(&o->fde);
			break;
		}
	}
	if (o->fde.n && sym_table_intern(&o->fde, "", 0) == 0)
		sym_table_finish(&o->fde);
	else
		sym_table_release(&o->fde);
	free(r);
	__atomic_fetch_add(&c->stats.fde_ranges, o->fde.n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->stats.fde_ns, mono_ns() - t0, __ATOMIC_RELAXED);
}

static int load_obj(struct sym_cache *c, struct sym_obj *o, const char *path, int fd, uint32_t pid)
{
	struct elf_symbols_info info;
	int own_fd = -1, ret = -1;
	struct stat self;
	Elf *e = NULL;

	if (!elf_ready())
		return -1;
	if (fd < 0) {
		if (!path)
			return -1;
		fd = own_fd = pid ? open_in_proc_root(pid, path) : open_regular(path);
		if (fd < 0)
			return -1;
	}
	/* the size first: a file cut after it is one read short (elf_read_truncated) */
	if (fstat(fd, &self) < 0)
		goto out;
	/* never mapped: a file truncated under a mapping is SIGBUS (elf/elf_read.h) */
	e = elf_read_begin(fd);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto out;
	if (elf_build_id_hex(e, o->build_id, sizeof(o->build_id)) < 0)
		o->build_id[0] = '\0';
	if (elf_segments_read(e, &o->segs) < 0)
		goto out;
	ret = elf_symbols_read(&o->tab, e, path, &self, c->debug_root, pid, &info);
	o->debug_file = info.debug_file;
	/* cut while read: what was read may be the start of anything */
	if (ret >= 0 && elf_read_truncated(fd, (uint64_t)self.st_size))
		ret = -1;
	if (ret < 0)
		goto out;
	/* no .symtab anywhere local: ask debuginfod (never waits), group by FDE meanwhile */
	if (!info.symtab && c->fetch && o->build_id[0] && strncmp(o->key, "vdso:", 5))
		o->fetched = sym_fetch_want(c->fetch, o->build_id);
	if (!info.symtab)
		read_function_starts(c, o, fd);
	/* a stripped Go binary: its own table names it (a refusal is counted, not fatal) */
	if (!info.symtab)
		go_names_read(&o->go, e, fd, c->lines_on);
	else
		go_names_read_text(&o->go, e, fd); /* which of its frames are Go's */
	if (c->lines_on) {
		struct debug_file_search s = {
		    .root = c->debug_root, .obj_path = path, .pid = pid, .self = &self};

		/* now, while the process and its root exist: lookups come later */
		o->lines = src_lines_attach(&c->lines, e, fd, &s);
		if (o->lines && c->warm)
			src_lines_warm_add(c->warm, o->lines);
	}
out:
	if (e)
		elf_end(e);
	if (own_fd >= 0)
		close(own_fd);
	return ret;
}

/* ---- cache ---- */

static int grow(struct sym_cache *c)
{
	size_t n = c->nbuckets * 2, i;
	struct sym_obj **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (i = 0; i < c->nbuckets; i++) {
		struct sym_obj *o = c->buckets[i], *next;

		for (; o; o = next) {
			size_t h = hash_str(o->key) & (n - 1);

			next = o->next;
			o->next = b[h];
			b[h] = o;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
	return 0;
}

struct sym_obj *sym_cache_get(struct sym_cache *c, const char *key, const char *path, int fd,
			      uint32_t pid)
{
	struct sym_obj *o;
	size_t h;

	if (!key)
		key = path;
	if (!key)
		return NULL;
	h = hash_str(key) & (c->nbuckets - 1);
	for (o = c->buckets[h]; o; o = o->next)
		if (strcmp(o->key, key) == 0)
			return o->failed ? NULL : o;

	if (c->count >= c->nbuckets && grow(c) == 0)
		h = hash_str(key) & (c->nbuckets - 1);
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->cache = c;
	o->key = strdup(key);
	if (!o->key) {
		free(o);
		return NULL;
	}
	if (load_obj(c, o, path, fd, pid) < 0) {
		/* Keep only the verdict: a failed object costs one attempt. */
		sym_table_release(&o->tab);
		sym_table_release(&o->fde);
		go_names_free(&o->go);
		elf_segments_free(&o->segs);
		sym_fetched_put(o->fetched);
		o->fetched = NULL;
		o->failed = true;
	}
	o->next = c->buckets[h];
	c->buckets[h] = o;
	c->count++;
	return o->failed ? NULL : o;
}

int sym_cache_remove(struct sym_cache *c, const char *key)
{
	struct sym_obj **pp;
	size_t h = hash_str(key) & (c->nbuckets - 1);

	for (pp = &c->buckets[h]; *pp; pp = &(*pp)->next) {
		struct sym_obj *o = *pp;

		if (strcmp(o->key, key) == 0) {
			*pp = o->next;
			obj_free(o);
			c->count--;
			return 0;
		}
	}
	return -1;
}

/* ---- lookups ---- */

/* The symbol of @t covering @addr, as the cache's mode shows it; -1 when none. */
static int table_lookup(struct sym_table *t, struct sym_dem_cache *dem, enum sym_demangle_mode mode,
			uint64_t addr, const char **name, uint64_t *offset)
{
	long i = sym_table_find(t, addr);

	if (i < 0)
		return -1;
	if (offset)
		*offset = addr - t->r[i].start;
	if (name)
		*name = sym_dem_cache_get(dem, t->n, (size_t)i, sym_table_name(t, i), mode);
	return 0;
}

int sym_obj_lookup(struct sym_obj *o, uint64_t elf_vaddr, const char **name, uint64_t *offset)
{
	struct sym_dem_cache *dem;
	struct sym_table *fetched = sym_fetched_table(o->fetched, &dem);

	/* a fetched .symtab knows every function; the object's own, its PLT stubs too */
	if (fetched && !table_lookup(fetched, dem, o->cache->demangle, elf_vaddr, name, offset))
		return 0;
	if (!table_lookup(&o->tab, &o->dem, o->cache->demangle, elf_vaddr, name, offset))
		return 0;
	return table_lookup(&o->go.fns, &o->go_dem, o->cache->demangle, elf_vaddr, name, offset);
}

int sym_obj_function_start(const struct sym_obj *o, uint64_t elf_vaddr, uint64_t *start)
{
	long i = sym_table_find(&o->fde, elf_vaddr);

	if (i < 0)
		return -1;
	*start = o->fde.r[i].start;
	return 0;
}

size_t sym_obj_count(const struct sym_obj *o)
{
	return o->tab.n + o->go.fns.n;
}

const char *sym_obj_build_id(const struct sym_obj *o)
{
	return o->build_id;
}

const char *sym_obj_debug_file(const struct sym_obj *o)
{
	return o->debug_file;
}

int sym_obj_offset_to_vaddr(const struct sym_obj *o, uint64_t file_offset, uint64_t *vaddr)
{
	return elf_segments_offset_to_vaddr(&o->segs, file_offset, vaddr);
}

/* ---- source lines ---- */

void sym_cache_set_lines(struct sym_cache *c, bool on)
{
	c->lines_on = on;
}

void sym_cache_warm_lines(struct sym_cache *c)
{
	if (c->lines_on && !c->warm)
		c->warm = src_lines_warm_start(&c->lines);
}

uint64_t sym_cache_lines_warmed(struct sym_cache *c)
{
	return src_lines_warm_opened(c->warm);
}

bool sym_cache_lines_warming(struct sym_cache *c)
{
	return src_lines_warm_busy(c->warm);
}

bool sym_cache_lines_on(const struct sym_cache *c)
{
	return c->lines_on;
}

struct src_lines_ctx *sym_cache_lines_ctx(struct sym_cache *c)
{
	return &c->lines;
}

int sym_obj_lines(struct sym_obj *o, uint64_t elf_vaddr, const struct src_frame **frames)
{
	int n;

	*frames = NULL;
	if (!o->lines)
		return go_names_lines(&o->go, elf_vaddr, frames);
	/* the lookups have begun: they alone use the handles from now on */
	src_lines_warm_stop(o->cache->warm);
	n = src_lines_lookup(&o->cache->lines, o->lines, elf_vaddr, frames);
	/* DWARF that does not cover Go's code (a cgo binary's C parts only) */
	return n == 0 ? go_names_lines(&o->go, elf_vaddr, frames) : n;
}

bool sym_obj_is_go(const struct sym_obj *o, uint64_t elf_vaddr)
{
	return go_names_is_go(&o->go, elf_vaddr);
}

bool sym_obj_has_lines(const struct sym_obj *o)
{
	return o->lines != NULL || o->go.tab != NULL;
}

int sym_obj_lookup_raw(struct sym_obj *o, uint64_t elf_vaddr, const char **raw)
{
	const struct sym_table *t = &o->tab;
	long i = sym_table_find(t, elf_vaddr);

	if (i < 0) {
		t = &o->go.fns;
		i = sym_table_find(t, elf_vaddr);
	}
	if (i < 0)
		return -1;
	*raw = sym_table_name(t, i);
	return 0;
}

char *sym_obj_demangle(const struct sym_obj *o, const char *raw)
{
	enum sym_demangle_mode mode = o->cache->demangle;

	return mode == SYM_DEMANGLE_NONE ? NULL : sym_demangle(raw, mode);
}
