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

#include "common/hash.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "elf/safe_open.h"
#include "elf/segments.h"
#include "user/symbolize/elf_symbols.h"
#include "user/symbolize/src_lines.h"
#include "user/symbolize/sym_table.h"

struct sym_obj {
	struct sym_obj *next; /* hash chain */
	struct sym_cache *cache;
	char *key;
	bool failed;
	struct sym_table tab;
	/* Demangled names, filled lazily; NOT_MANGLED marks names kept raw. */
	char **dem;
	struct elf_segments segs;
	char *debug_file;
	char build_id[ELF_BUILD_ID_HEX_LEN];
	struct src_lines *lines; /* NULL: no DWARF, or lines were off when loaded */
};

struct sym_cache {
	struct sym_obj **buckets;
	size_t nbuckets, count;
	char *debug_root;
	enum sym_demangle_mode demangle;
	bool lines_on;
	struct src_lines_ctx lines;
};

static char not_mangled[1];
#define NOT_MANGLED not_mangled

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

static void free_dem(struct sym_obj *o)
{
	size_t i;

	if (!o->dem)
		return;
	for (i = 0; i < o->tab.n; i++)
		if (o->dem[i] != NOT_MANGLED)
			free(o->dem[i]);
	free(o->dem);
	o->dem = NULL;
}

static void obj_free(struct sym_obj *o)
{
	src_lines_free(&o->cache->lines, o->lines);
	free_dem(o);
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
	for (i = 0; i < c->nbuckets; i++) {
		struct sym_obj *o = c->buckets[i], *next;

		for (; o; o = next) {
			next = o->next;
			obj_free(o);
		}
	}
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

		for (o = c->buckets[i]; o; o = o->next)
			free_dem(o);
	}
}

size_t sym_cache_count(const struct sym_cache *c)
{
	return c->count;
}

/* ---- loading ---- */

static int load_obj(struct sym_cache *c, struct sym_obj *o, const char *path, int fd, uint32_t pid)
{
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
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || fstat(fd, &self) < 0)
		goto out;
	if (elf_build_id_hex(e, o->build_id, sizeof(o->build_id)) < 0)
		o->build_id[0] = '\0';
	if (elf_segments_read(e, &o->segs) < 0)
		goto out;
	ret = elf_symbols_read(&o->tab, e, path, &self, c->debug_root, pid, &o->debug_file);
	if (!ret && c->lines_on) {
		struct debug_file_search s = {
		    .root = c->debug_root, .obj_path = path, .pid = pid, .self = &self};

		/* now, while the process and its root exist: lookups come later */
		o->lines = src_lines_attach(&c->lines, e, fd, &s);
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
		elf_segments_free(&o->segs);
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

int sym_obj_lookup(struct sym_obj *o, uint64_t elf_vaddr, const char **name, uint64_t *offset)
{
	enum sym_demangle_mode mode = o->cache->demangle;
	const char *raw;
	long i;

	i = sym_table_find(&o->tab, elf_vaddr);
	if (i < 0)
		return -1;
	raw = sym_table_name(&o->tab, i);
	if (offset)
		*offset = elf_vaddr - o->tab.r[i].start;
	if (!name)
		return 0;
	*name = raw;
	if (mode == SYM_DEMANGLE_NONE)
		return 0;
	if (!o->dem) {
		/* Lazily: most symbols of a big library are never sampled. */
		o->dem = calloc(o->tab.n, sizeof(*o->dem));
		if (!o->dem)
			return 0;
	}
	if (!o->dem[i]) {
		o->dem[i] = sym_demangle(raw, mode);
		if (!o->dem[i])
			o->dem[i] = NOT_MANGLED;
	}
	if (o->dem[i] != NOT_MANGLED)
		*name = o->dem[i];
	return 0;
}

size_t sym_obj_count(const struct sym_obj *o)
{
	return o->tab.n;
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
	*frames = NULL;
	if (!o->lines)
		return 0;
	return src_lines_lookup(&o->cache->lines, o->lines, elf_vaddr, frames);
}

bool sym_obj_has_lines(const struct sym_obj *o)
{
	return o->lines != NULL;
}

int sym_obj_lookup_raw(struct sym_obj *o, uint64_t elf_vaddr, const char **raw)
{
	long i = sym_table_find(&o->tab, elf_vaddr);

	if (i < 0)
		return -1;
	*raw = sym_table_name(&o->tab, i);
	return 0;
}

char *sym_obj_demangle(const struct sym_obj *o, const char *raw)
{
	enum sym_demangle_mode mode = o->cache->demangle;

	return mode == SYM_DEMANGLE_NONE ? NULL : sym_demangle(raw, mode);
}
