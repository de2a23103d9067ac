// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Entry points of the table compiler: open the ELF (and its separate debug
 * file), hand every CFI section to the parser, compact, and answer lookups.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "internal.h"

void diag_add(struct diag_ctx *d, const char *section, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	char *m;
	int n;

	if (!d || !d->diag)
		return;
	if (d->diag->count < CFI_DIAG_KEEP) {
		m = d->diag->msg[d->diag->count];
		n = snprintf(m, sizeof(d->diag->msg[0]), "%s: %s+0x%llx: ", d->file, section,
			     (unsigned long long)offset);
		if (n >= 0 && (size_t)n < sizeof(d->diag->msg[0])) {
			va_start(ap, fmt);
			vsnprintf(m + n, sizeof(d->diag->msg[0]) - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	d->diag->count++;
}

/* ---- ELF access ---- */

struct elf_obj {
	Elf *elf;
	int fd;
	size_t shstrndx;
	char build_id[41];
};

static int elf_obj_open(struct elf_obj *o, int fd, void *mem, size_t len, struct diag_ctx *dc)
{
	GElf_Ehdr eh;

	memset(o, 0, sizeof(*o));
	o->fd = fd;
	elf_version(EV_CURRENT);
	o->elf = mem ? elf_memory(mem, len) : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!o->elf) {
		diag_add(dc, "ELF", 0, "%s", elf_errmsg(-1));
		return CFI_ERR_ELF;
	}
	if (elf_kind(o->elf) != ELF_K_ELF || !gelf_getehdr(o->elf, &eh)) {
		diag_add(dc, "ELF", 0, "not an ELF file");
		goto bad;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		diag_add(dc, "ELF", 0, "not an x86-64 ELF64 object");
		goto bad;
	}
	if (elf_getshdrstrndx(o->elf, &o->shstrndx)) {
		diag_add(dc, "ELF", 0, "no section name table: %s", elf_errmsg(-1));
		goto bad;
	}
	return 0;
bad:
	elf_end(o->elf);
	o->elf = NULL;
	return CFI_ERR_ELF;
}

static Elf_Scn *find_section(struct elf_obj *o, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(o->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(o->elf, o->shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Section bytes, decompressed if needed; NULL for SHT_NOBITS or unreadable. */
static Elf_Data *section_data(Elf_Scn *scn, GElf_Shdr *sh, const char *name, struct diag_ctx *dc)
{
	Elf_Data *d;

	if (sh->sh_type == SHT_NOBITS)
		return NULL;
	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) {
		diag_add(dc, name, 0, "cannot decompress: %s", elf_errmsg(-1));
		return NULL;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		if (!d)
			diag_add(dc, name, 0, "unreadable section: %s", elf_errmsg(-1));
		return NULL;
	}
	gelf_getshdr(scn, sh);
	return d;
}

static int read_vaddr(void *ctx, uint64_t vaddr, uint64_t *out)
{
	struct elf_obj *o = ctx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(o->elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr + 8 > sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || vaddr - sh.sh_addr + 8 > d->d_size)
			return -1;
		memcpy(out, (const char *)d->d_buf + (vaddr - sh.sh_addr), 8);
		return 0;
	}
	return -1;
}

static void read_build_id(struct elf_obj *o)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	o->build_id[0] = 0;
	while ((scn = elf_nextscn(o->elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off, i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)d->d_buf + name_off;
			const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 || memcmp(name, "GNU", 4) ||
			    nh.n_descsz == 0 || nh.n_descsz > 20)
				continue;
			for (i = 0; i < nh.n_descsz; i++)
				snprintf(o->build_id + 2 * i, 3, "%02x", desc[i]);
			return;
		}
	}
}

/*
 * Paths come from outside (debug links, recordings): a FIFO or device there
 * must neither block the build nor be read, so only regular files open.
 */
static int open_regular_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), flags;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* ---- separate debug file ---- */

static int try_debug_file(const char *path, const struct stat *self, const char *want_id,
			  struct elf_obj *dbg, struct diag_ctx *dc)
{
	struct stat st;
	int fd = open_regular_file(path);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) ||
	    elf_obj_open(dbg, fd, NULL, 0, NULL)) {
		close(fd);
		return -1;
	}
	read_build_id(dbg);
	if (want_id[0] && dbg->build_id[0] && strcmp(want_id, dbg->build_id)) {
		diag_add(dc, ".gnu_debuglink", 0, "%s has a different build-id: ignored", path);
		elf_end(dbg->elf);
		dbg->elf = NULL;
		close(fd);
		return -1;
	}
	return 0;
}

static int find_debug_file(struct elf_obj *o, const char *self_path, const struct stat *self,
			   const char *root, struct elf_obj *dbg, struct diag_ctx *dc)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *link;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;

	if (o->build_id[0] && strlen(o->build_id) > 2) {
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, o->build_id,
			     o->build_id + 2) < (int)sizeof(path) &&
		    !try_debug_file(path, self, o->build_id, dbg, dc))
			return 0;
	}
	scn = find_section(o, ".gnu_debuglink", &sh);
	if (!scn || !self_path || self_path[0] != '/')
		return -1;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size || !memchr(d->d_buf, 0, d->d_size))
		return -1;
	link = d->d_buf;
	if (strchr(link, '/'))
		return -1; /* a debuglink is a bare file name; anything else is suspicious */
	if (snprintf(dir, sizeof(dir), "%s", self_path) >= (int)sizeof(dir))
		return -1;
	dirname(dir);
	if (snprintf(path, sizeof(path), "%s/%s", dir, link) < (int)sizeof(path) &&
	    !try_debug_file(path, self, o->build_id, dbg, dc))
		return 0;
	if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, link) < (int)sizeof(path) &&
	    !try_debug_file(path, self, o->build_id, dbg, dc))
		return 0;
	if (snprintf(path, sizeof(path), "%s%s/%s", root, dir, link) < (int)sizeof(path) &&
	    !try_debug_file(path, self, o->build_id, dbg, dc))
		return 0;
	return -1;
}

/* ---- building ---- */

static void fill_section(struct cfi_section *cs, struct elf_obj *o, Elf_Data *d,
			 const GElf_Shdr *sh, const char *name, enum cfi_source src)
{
	GElf_Shdr other;

	memset(cs, 0, sizeof(*cs));
	cs->data = d->d_buf;
	cs->size = d->d_size;
	cs->vaddr = sh->sh_addr;
	cs->is_eh = src == CFI_SRC_EH_FRAME;
	cs->source = src;
	cs->name = name;
	cs->read_addr = read_vaddr;
	cs->read_ctx = o;
	if (find_section(o, ".got", &other))
		cs->datarel = other.sh_addr;
	if (find_section(o, ".text", &other))
		cs->textrel = other.sh_addr;
}

static int add_debug_frame(struct cfi_parse *p, struct elf_obj *o, enum cfi_source src,
			   struct cfi_section *cs, struct cfi_table *t)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(o, ".debug_frame", &sh);
	Elf_Data *d;

	if (!scn)
		return 1;
	d = section_data(scn, &sh, ".debug_frame", p->diag);
	if (!d)
		return 1;
	fill_section(cs, o, d, &sh, src == CFI_SRC_EH_FRAME ? ".eh_frame" : ".debug_frame", src);
	t->stats.sources |= 1 << src;
	return cfi_parse_section(p, cs);
}

static int build(struct elf_obj *o, const char *path, const struct stat *self,
		 const struct cfi_build_opts *opts, struct cfi_table **out, struct diag_ctx *dc)
{
	struct cfi_section eh = {0}, dbg_own = {0}, dbg_sep = {0};
	struct elf_obj dbg = {.elf = NULL, .fd = -1};
	struct cfi_parse p = {0};
	struct rule_dict dict;
	struct cfi_table *t;
	uint64_t start = mono_ns();
	GElf_Shdr sh, hsh;
	Elf_Scn *scn, *hscn;
	Elf_Data *d, *hd;
	int err, have_dbg;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t || rule_dict_init(&dict)) {
		free(t);
		return CFI_ERR_NOMEM;
	}
	p.diag = dc;
	p.stats = &t->stats;
	{
		GElf_Ehdr eh;

		if (gelf_getehdr(o->elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
		    eh.e_entry < CFI_MAX_ADDR)
			p.entry = eh.e_entry;
	}
	read_build_id(o);
	memcpy(t->build_id, o->build_id, sizeof(t->build_id));

	scn = find_section(o, ".eh_frame", &sh);
	if (scn && (d = section_data(scn, &sh, ".eh_frame", dc))) {
		fill_section(&eh, o, d, &sh, ".eh_frame", CFI_SRC_EH_FRAME);
		t->stats.sources |= 1 << CFI_SRC_EH_FRAME;
		hscn = find_section(o, ".eh_frame_hdr", &hsh);
		hd = hscn ? section_data(hscn, &hsh, ".eh_frame_hdr", dc) : NULL;
		if (hd)
			err = cfi_parse_eh_frame_hdr(&p, &eh, hd->d_buf, hd->d_size, hsh.sh_addr);
		else
			err = cfi_parse_section(&p, &eh);
		if (err)
			goto out;
	}
	have_dbg = 1;
	if (!opts || !opts->no_debug_frame) {
		have_dbg = add_debug_frame(&p, o, CFI_SRC_DEBUG_FRAME, &dbg_own, t);
		if (have_dbg < 0) {
			err = have_dbg;
			goto out;
		}
	}
	if (have_dbg && (!opts || (!opts->no_debug_frame && !opts->no_separate_debug)) &&
	    !find_debug_file(o, path, self, opts && opts->debug_root ? opts->debug_root : "/usr/lib/debug",
			     &dbg, dc)) {
		err = add_debug_frame(&p, &dbg, CFI_SRC_DEBUG_FRAME_SEP, &dbg_sep, t);
		if (err < 0)
			goto out;
	}
	if (!t->stats.sources) {
		diag_add(dc, "ELF", 0, "no .eh_frame or .debug_frame");
		err = CFI_ERR_NO_CFI;
		goto out;
	}
	err = build_compact(&p, &dict, t, dc);
	if (err)
		goto out;
	if (!t->nr_rows && t->stats.fdes_bad) {
		err = CFI_ERR_MALFORMED;
		goto out;
	}
	t->rules = dict.rules;
	t->nr_rules = dict.nr;
	dict.rules = NULL;
	t->stats.bytes_rows = (uint64_t)t->nr_rows * sizeof(struct cfi_row);
	t->stats.bytes_index =
		(uint64_t)t->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
	t->stats.bytes_rules = (uint64_t)t->nr_rules * sizeof(struct cfi_rule);
	t->stats.bytes_total = t->stats.bytes_rows + t->stats.bytes_index + t->stats.bytes_rules;
	t->stats.build_ns = mono_ns() - start;
	*out = t;
	t = NULL;
	err = 0;
out:
	if (dbg.elf) {
		elf_end(dbg.elf);
		close(dbg.fd);
	}
	cfi_parse_free(&p);
	rule_dict_free(&dict);
	cfi_table_free(t);
	return err;
}

int cfi_table_build_fd(int fd, const struct cfi_build_opts *opts, struct cfi_table **out,
		       struct cfi_diag *diag)
{
	const char *name = opts && opts->display_name ? opts->display_name : "<fd>";
	struct diag_ctx dc = {diag, name};
	struct elf_obj o;
	struct stat st;
	int err;

	*out = NULL;
	if (fstat(fd, &st)) {
		diag_add(&dc, "ELF", 0, "fstat: %s", strerror(errno));
		return CFI_ERR_IO;
	}
	err = elf_obj_open(&o, fd, NULL, 0, &dc);
	if (err)
		return err;
	err = build(&o, opts ? opts->display_name : NULL, &st, opts, out, &dc);
	elf_end(o.elf);
	return err;
}

int cfi_table_build_file(const char *path, const struct cfi_build_opts *opts,
			 struct cfi_table **out, struct cfi_diag *diag)
{
	struct cfi_build_opts o = opts ? *opts : (struct cfi_build_opts){0};
	struct diag_ctx dc = {diag, path};
	int fd, err;

	*out = NULL;
	fd = open_regular_file(path);
	if (fd < 0) {
		diag_add(&dc, "ELF", 0, "open: %s",
			 errno == EINVAL ? "not a regular file" : strerror(errno));
		return CFI_ERR_IO;
	}
	if (!o.display_name)
		o.display_name = path;
	err = cfi_table_build_fd(fd, &o, out, diag);
	close(fd);
	return err;
}

int cfi_table_build_mem(const void *buf, size_t len, const struct cfi_build_opts *opts,
			struct cfi_table **out, struct cfi_diag *diag)
{
	struct cfi_build_opts o = opts ? *opts : (struct cfi_build_opts){0};
	struct diag_ctx dc = {diag, o.display_name ? o.display_name : "<memory>"};
	struct elf_obj eo;
	void *copy;
	int err;

	*out = NULL;
	/* libelf may write to the image (e.g. decompression bookkeeping): give it a copy */
	copy = malloc(len ? len : 1);
	if (!copy)
		return CFI_ERR_NOMEM;
	memcpy(copy, buf, len);
	err = elf_obj_open(&eo, -1, copy, len, &dc);
	if (!err) {
		o.no_separate_debug = 1;
		err = build(&eo, NULL, NULL, &o, out, &dc);
		elf_end(eo.elf);
	}
	free(copy);
	return err;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rules);
	free(t->rows);
	free(t->pages);
	free(t);
}

const struct cfi_rule *cfi_table_lookup(const struct cfi_table *t, uint64_t addr)
{
	uint64_t page = addr >> CFI_PAGE_SHIFT;
	uint16_t off = (uint16_t)(addr & (CFI_PAGE_SIZE - 1));
	uint32_t lo = 0, hi = t->nr_pages;
	const struct cfi_page *pg;
	const struct cfi_row *rows;
	const struct cfi_rule *r;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->pages[mid].page < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nr_pages || t->pages[lo].page != page)
		return &t->rules[CFI_RULE_NONE];
	pg = &t->pages[lo];
	rows = t->rows + pg->first_row;
	/* last row with row.off <= off; rows[0].off == 0 by construction */
	lo = 0;
	hi = pg->nr_rows;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	r = &t->rules[rows[lo].rule];
	if (r->hole_len) {
		uint32_t d = (uint32_t)off - rows[lo].off;
		uint32_t next = lo + 1 < pg->nr_rows ? rows[lo + 1].off : CFI_PAGE_SIZE;

		if (r->hole_off ? d >= r->hole_off && d < (uint32_t)r->hole_off + r->hole_len
				: off >= next - r->hole_len)
			return &t->rules[CFI_RULE_NONE];
	}
	return r;
}
