// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ELF symbol tables, one per object, cached by object key: function symbols
 * of .symtab and .dynsym (or of a separate debug file) as sorted ranges.
 */
#include "elf/safe_open.h"
#include "user/symbolize/symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "elf/build_id.h"
#include "user/symbolize/sym_table.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

struct load_seg {
	uint64_t offset, vaddr, filesz;
};

struct sym_obj {
	struct sym_obj *next; /* hash chain */
	struct sym_cache *cache;
	char *key;
	bool failed;
	struct sym_table tab;
	/* Demangled names, filled lazily; NOT_MANGLED marks names kept raw. */
	char **dem;
	struct load_seg *segs;
	size_t nsegs;
	char *debug_file;
	char build_id[ELF_BUILD_ID_HEX_LEN];
};

struct sym_cache {
	struct sym_obj **buckets;
	size_t nbuckets, count;
	char *debug_root;
	enum sym_demangle_mode demangle;
};

static char not_mangled[1];
#define NOT_MANGLED not_mangled

/* A function symbol as read, before aliases are merged. */
struct cand {
	uint64_t addr, size;
	/* End of the containing section: the limit for a zero-sized symbol. */
	uint64_t sec_end;
	const char *name;
	int bind_rank;
	bool plt; /* synthesized for a PLT stub */
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

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
	c->debug_root = strdup(DEFAULT_DEBUG_ROOT);
	if (!c->buckets || !c->debug_root)
		goto err;
	c->demangle = SYM_DEMANGLE_FULL;
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
	free_dem(o);
	sym_table_release(&o->tab);
	free(o->segs);
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

/* ---- reading symbols ---- */

static int cands_push(struct cands *cs, const struct cand *cd)
{
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 1024;
		struct cand *p = realloc(cs->v, cap * sizeof(*p));

		if (!p)
			return -1;
		cs->v = p;
		cs->cap = cap;
	}
	cs->v[cs->n++] = *cd;
	return 0;
}

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/*
 * Appends the defined function symbols of every section of @type.
 * Returns the number of such sections found, or -1 on ENOMEM.
 */
static int collect(Elf *e, Elf64_Word type, struct cands *cs)
{
	uint64_t *sec_end = NULL;
	Elf_Scn *scn = NULL;
	size_t shnum, i;
	int found = 0;

	if (elf_getshdrnum(e, &shnum) != 0)
		return 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data, *xdata = NULL;
		size_t nsym;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		found++;
		if (!sec_end) {
			/* Section ends, indexed by section number, for the zero-size rule. */
			sec_end = calloc(shnum ? shnum : 1, sizeof(*sec_end));
			if (!sec_end)
				return -1;
			for (i = 1; i < shnum; i++) {
				GElf_Shdr s;

				if (gelf_getshdr(elf_getscn(e, i), &s) && (s.sh_flags & SHF_ALLOC))
					sec_end[i] = s.sh_addr + s.sh_size;
			}
		}
		/* Symbols whose section index does not fit in st_shndx keep it here. */
		{
			Elf_Scn *x = NULL;

			while ((x = elf_nextscn(e, x)) != NULL) {
				GElf_Shdr xs;

				if (gelf_getshdr(x, &xs) && xs.sh_type == SHT_SYMTAB_SHNDX &&
				    xs.sh_link == elf_ndxscn(scn)) {
					xdata = elf_getdata(x, NULL);
					break;
				}
			}
		}
		nsym = shdr.sh_size / shdr.sh_entsize;
		for (i = 1; i < nsym; i++) {
			GElf_Sym sym;
			Elf32_Word xndx = 0;
			struct cand cd;
			unsigned char st;
			size_t ndx;

			if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
				break;
			st = GELF_ST_TYPE(sym.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_value == 0)
				continue;
			cd.name = elf_strptr(e, shdr.sh_link, sym.st_name);
			if (!cd.name || !cd.name[0])
				continue;
			ndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
			cd.addr = sym.st_value;
			cd.size = sym.st_size;
			cd.sec_end = 0;
			if ((sym.st_shndx < SHN_LORESERVE || sym.st_shndx == SHN_XINDEX) &&
			    ndx < shnum)
				cd.sec_end = sec_end[ndx];
			if (cd.sec_end <= cd.addr)
				cd.sec_end = 0;
			cd.bind_rank = bind_rank(GELF_ST_BIND(sym.st_info));
			cd.plt = false;
			if (cands_push(cs, &cd) < 0) {
				free(sec_end);
				return -1;
			}
		}
	}
	free(sec_end);
	return found;
}

/* The section named name, or NULL. */
static Elf_Scn *section_by_name(Elf *e, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(e, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

#define PLT_ENTRY 16
#define R_JUMP_SLOT 7 /* R_X86_64_JUMP_SLOT */

/*
 * PLT stubs have no symbols; name them "func@plt" as perf and objdump do.
 * Relocation i of .rela.plt belongs to stub i of .plt.sec (IBT) or to stub
 * i + 1 of .plt (entry 0 calls the lazy resolver).  The names are allocated
 * in *arena (freed by the caller after the table is built); local binding,
 * so a real symbol at the same address wins.  Returns -1 on ENOMEM only.
 */
static int collect_plt(Elf *e, struct cands *cs, char **arena)
{
	GElf_Shdr rela_sh, plt_sh, sym_sh;
	Elf_Scn *rela = section_by_name(e, ".rela.plt", &rela_sh), *plt, *syms;
	Elf_Data *rdata, *sdata;
	size_t n, i, used = 0, cap = 0, first = 0;
	char *names = NULL;

	*arena = NULL;
	if (!rela || rela_sh.sh_type != SHT_RELA || !rela_sh.sh_entsize)
		return 0;
	plt = section_by_name(e, ".plt.sec", &plt_sh);
	if (!plt) {
		plt = section_by_name(e, ".plt", &plt_sh);
		first = 1;
	}
	syms = elf_getscn(e, rela_sh.sh_link);
	if (!plt || !syms || !gelf_getshdr(syms, &sym_sh) || sym_sh.sh_type != SHT_DYNSYM)
		return 0;
	rdata = elf_getdata(rela, NULL);
	sdata = elf_getdata(syms, NULL);
	n = rela_sh.sh_size / rela_sh.sh_entsize;
	/* a PLT that does not hold one stub per relocation is not one we understand */
	if (!rdata || !sdata || (n + first) * PLT_ENTRY > plt_sh.sh_size)
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		struct cand cd;
		size_t len;

		if (!gelf_getrela(rdata, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_JUMP_SLOT ||
		    !gelf_getsym(sdata, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		name = elf_strptr(e, sym_sh.sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		len = strlen(name) + sizeof("@plt");
		if (used + len > cap) {
			/* names are found again by offset: cands hold offsets until the end */
			char *p = realloc(names, cap = (cap + len) * 2);

			if (!p) {
				free(names);
				return -1;
			}
			names = p;
		}
		snprintf(names + used, len, "%s@plt", name);
		cd.addr = plt_sh.sh_addr + (i + first) * PLT_ENTRY;
		cd.size = PLT_ENTRY;
		cd.sec_end = plt_sh.sh_addr + plt_sh.sh_size;
		cd.name = (const char *)(uintptr_t)used;
		cd.bind_rank = 2;
		cd.plt = true;
		if (cands_push(cs, &cd) < 0) {
			free(names);
			return -1;
		}
		used += len;
	}
	/* the arena moved while it grew: offsets become pointers now */
	for (i = 0; i < cs->n; i++) {
		if (cs->v[i].plt)
			cs->v[i].name = names + (uintptr_t)cs->v[i].name;
	}
	*arena = names;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * Alias rule, applied to symbols at one address, first difference wins:
 * global (or unique) over weak over local binding; fewer leading
 * underscores (malloc over __libc_malloc); shorter name; strcmp order.
 * The result depends only on the set of symbols, never on file order.
 */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->bind_rank != y->bind_rank)
		return x->bind_rank - y->bind_rank;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int build_table(struct sym_table *t, struct cands *cs)
{
	size_t i = 0, j;

	if (cs->n)
		qsort(cs->v, cs->n, sizeof(*cs->v), cand_cmp);
	while (i < cs->n) {
		const struct cand *best = &cs->v[i];
		uint64_t end = 0, sec_end = 0;
		int64_t name;

		for (j = i; j < cs->n && cs->v[j].addr == best->addr; j++) {
			if (cs->v[j].size && best->addr + cs->v[j].size > end)
				end = best->addr + cs->v[j].size;
			if (cs->v[j].sec_end > sec_end)
				sec_end = cs->v[j].sec_end;
		}
		if (!end) {
			/*
			 * Zero-sized (hand-written assembly without .size): assume it
			 * runs to the next function but never out of its section.
			 */
			end = j < cs->n ? cs->v[j].addr : UINT64_MAX;
			if (sec_end && sec_end < end)
				end = sec_end;
			if (end == UINT64_MAX)
				end = best->addr + 1;
		}
		name = sym_table_intern(t, best->name, strlen(best->name));
		if (name < 0 || sym_table_add(t, best->addr, end, (uint32_t)name, 0) < 0)
			return -1;
		i = j;
	}
	sym_table_finish(t);
	return 0;
}

/* ---- separate debug files ---- */

static int file_crc32(int fd, uint32_t *out)
{
	static unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	if (n < 0)
		return -1;
	*out = (uint32_t)crc;
	return 0;
}

static bool has_section_type(Elf *e, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == type)
			return true;
	return false;
}

/*
 * Opens @path as the debug file of an object with build-id @want_id (may be
 * "") and debuglink CRC @crc (checked only when @check_crc and the build-ids
 * cannot decide). Skips the object itself (@self). Returns the fd with *@out
 * set, or -1.
 */
static int open_debug_candidate(const char *path, const char *want_id, bool check_crc, uint32_t crc,
				const struct stat *self, Elf **out)
{
	char id[ELF_BUILD_ID_HEX_LEN];
	struct stat st;
	uint32_t got;
	Elf *e = NULL;
	int fd;

	fd = open_regular(path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino))
		goto fail;
	if (want_id[0] && elf_build_id_hex_fd(fd, id, sizeof(id)) == 0) {
		/* A stale debug file from another build would name the wrong code. */
		if (strcmp(id, want_id) != 0)
			goto fail;
	} else if (check_crc) {
		if (file_crc32(fd, &got) < 0 || got != crc)
			goto fail;
	} else if (want_id[0]) {
		goto fail;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !has_section_type(e, SHT_SYMTAB))
		goto fail;
	*out = e;
	return fd;
fail:
	if (e)
		elf_end(e);
	close(fd);
	return -1;
}

/* Reads .gnu_debuglink: file name and CRC. Returns 0 or -1 when absent. */
static int read_debuglink(Elf *e, const char **name, uint32_t *crc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, len, off;
	GElf_Shdr shdr;
	Elf_Data *d;
	const char *sn, *buf;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -1;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
			continue;
		sn = elf_strptr(e, shstrndx, shdr.sh_name);
		if (!sn || strcmp(sn, ".gnu_debuglink") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return -1;
		buf = d->d_buf;
		len = strnlen(buf, d->d_size);
		/* The CRC follows the NUL, 4-byte aligned, in the file's byte order. */
		off = (len + 1 + 3) & ~(size_t)3;
		if (len == 0 || len == d->d_size || off + 4 > d->d_size)
			return -1;
		memcpy(crc, buf + off, 4);
		*name = buf;
		return 0;
	}
	return -1;
}

/* snprintf that refuses to truncate: a cut path could open some other file. */
__attribute__((format(printf, 3, 4))) static bool path_fmt(char *buf, size_t len, const char *fmt,
							   ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

static int find_debug_file(struct sym_cache *c, struct sym_obj *o, Elf *e, const char *path, int fd,
			   Elf **de)
{
	const char *link, *slash;
	char cand[4096], dir[4096];
	struct stat self;
	uint32_t crc;
	int dfd;

	if (fstat(fd, &self) < 0)
		return -1;
	if (o->build_id[0] && c->debug_root && strlen(o->build_id) > 2 &&
	    path_fmt(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", c->debug_root, o->build_id,
		     o->build_id + 2)) {
		dfd = open_debug_candidate(cand, o->build_id, false, 0, &self, de);
		if (dfd >= 0)
			goto found;
	}
	if (!path || read_debuglink(e, &link, &crc) < 0 || strchr(link, '/'))
		return -1;
	slash = strrchr(path, '/');
	if (!path_fmt(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		      slash ? path : "."))
		return -1;
	/* gdb's order: next to the object, its .debug/, then the global tree. */
	if (path_fmt(cand, sizeof(cand), "%s/%s", dir, link)) {
		dfd = open_debug_candidate(cand, o->build_id, true, crc, &self, de);
		if (dfd >= 0)
			goto found;
	}
	if (path_fmt(cand, sizeof(cand), "%s/.debug/%s", dir, link)) {
		dfd = open_debug_candidate(cand, o->build_id, true, crc, &self, de);
		if (dfd >= 0)
			goto found;
	}
	if (c->debug_root && dir[0] == '/' &&
	    path_fmt(cand, sizeof(cand), "%s%s/%s", c->debug_root, dir, link)) {
		dfd = open_debug_candidate(cand, o->build_id, true, crc, &self, de);
		if (dfd >= 0)
			goto found;
	}
	return -1;
found:
	o->debug_file = strdup(cand);
	return dfd;
}

static int read_segments(struct sym_obj *o, Elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0 || n == 0)
		return 0;
	o->segs = calloc(n, sizeof(*o->segs));
	if (!o->segs)
		return -1;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		o->segs[o->nsegs++] = (struct load_seg){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	return 0;
}

static int load_obj(struct sym_cache *c, struct sym_obj *o, const char *path, int fd)
{
	struct cands cs = {0};
	char *plt_names = NULL;
	int own_fd = -1, dfd = -1, ret = -1, nsymtab;
	Elf *e = NULL, *de = NULL;

	if (!elf_ready())
		return -1;
	if (fd < 0) {
		if (!path)
			return -1;
		fd = own_fd = open_regular(path);
		if (fd < 0)
			return -1;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto out;
	if (elf_build_id_hex(e, o->build_id, sizeof(o->build_id)) < 0)
		o->build_id[0] = '\0';
	if (read_segments(o, e) < 0)
		goto out;
	nsymtab = collect(e, SHT_SYMTAB, &cs);
	if (nsymtab < 0 || collect(e, SHT_DYNSYM, &cs) < 0 || collect_plt(e, &cs, &plt_names) < 0)
		goto out;
	/* Only a stripped object needs its debug file: .symtab is all we read there. */
	if (nsymtab == 0) {
		dfd = find_debug_file(c, o, e, path, fd, &de);
		if (dfd >= 0 && collect(de, SHT_SYMTAB, &cs) < 0)
			goto out;
	}
	/* Names point into the mapped files: build before elf_end. */
	ret = build_table(&o->tab, &cs);
out:
	free(plt_names);
	free(cs.v);
	if (de)
		elf_end(de);
	if (dfd >= 0)
		close(dfd);
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

struct sym_obj *sym_cache_get(struct sym_cache *c, const char *key, const char *path, int fd)
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
	if (load_obj(c, o, path, fd) < 0) {
		/* Keep only the verdict: a failed object costs one attempt. */
		sym_table_release(&o->tab);
		free(o->segs);
		o->segs = NULL;
		o->nsegs = 0;
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
	size_t i;

	for (i = 0; i < o->nsegs; i++) {
		const struct load_seg *s = &o->segs[i];

		if (file_offset >= s->offset && file_offset - s->offset < s->filesz) {
			*vaddr = file_offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -1;
}

int sym_format_frame(char *buf, size_t len, const char *obj_basename, const char *name,
		     uint64_t obj_offset)
{
	const char *slash;

	if (name)
		return snprintf(buf, len, "%s", name);
	if (!obj_basename || !obj_basename[0])
		return snprintf(buf, len, "[unknown]");
	/* Accept a full path too: a frame names the file, not where it lives. */
	slash = strrchr(obj_basename, '/');
	if (slash && slash[1])
		obj_basename = slash + 1;
	return snprintf(buf, len, "%s+0x%" PRIx64, obj_basename, obj_offset);
}
