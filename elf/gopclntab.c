// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Finding .gopclntab and checking that it holds together; see gopclntab.h. */
#include "elf/gopclntab.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/gopclntab_internal.h"
#include "elf/sections.h"
#include "elf/segments.h"

static uint64_t refused_total[GOPCLNTAB_REFUSALS];

void gopclntab_refused(enum gopclntab_refusal why)
{
	__atomic_fetch_add(&refused_total[why], 1, __ATOMIC_RELAXED);
}

uint64_t gopclntab_refused_total(enum gopclntab_refusal why)
{
	return __atomic_load_n(&refused_total[why], __ATOMIC_RELAXED);
}

const char *gopclntab_refusal_name(enum gopclntab_refusal why)
{
	static const char *const names[GOPCLNTAB_REFUSALS] = {
	    [GOPCLNTAB_MALFORMED] = "malformed",
	    [GOPCLNTAB_OVER_BUDGET] = "over_budget",
	    [GOPCLNTAB_LOOKUP] = "lookup",
	};

	return why < GOPCLNTAB_REFUSALS ? names[why] : "?";
}

/* Where the bytes come from: a file read with pread, or its image in memory. */
struct gop_src {
	Elf *e;
	int fd;
	const uint8_t *mem;
	uint64_t size; /* of the file (the image, or the fd at open) */
	struct elf_segments segs;
	bool inline_trees; /* hold the funcdata before the table too */
};

/* [@vaddr, @vaddr + @len) from one segment's file bytes; 0, or -1. */
static int src_read(const struct gop_src *s, uint64_t vaddr, void *dst, uint64_t len)
{
	uint64_t off, done = 0;

	if (elf_segments_vaddr_to_offset(&s->segs, vaddr, len, &off, NULL))
		return -1;
	if (s->fd < 0) {
		if (off > s->size || len > s->size - off)
			return -1;
		memcpy(dst, s->mem + off, len);
		return 0;
	}
	while (done < len) {
		ssize_t n = pread(s->fd, (uint8_t *)dst + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1; /* truncated under us, or unreadable */
		done += (uint64_t)n;
	}
	return 0;
}

/* The header's fields, whatever the version. */
struct gop_hdr {
	unsigned version;
	uint8_t minlc, ptrsize;
	uint64_t bytes; /* of the header itself */
	uint64_t nfunc, text_start;
	uint64_t off[5]; /* funcnametab, cutab, filetab, pctab, pclntable */
};

#define GOP_HDR_MAX (8 + 8 * 8)

/* The header in @h (@avail bytes); 0, or -1 with *@why. */
static int parse_header(const uint8_t *h, uint64_t avail, struct gop_hdr *o, const char **why)
{
	uint32_t magic;
	unsigned words, i, first;

	*why = "has no Go pclntab header";
	if (avail < 8)
		return -1;
	magic = gop_u32(h);
	o->version = magic == 0xfffffffa   ? 116
		     : magic == 0xfffffff0 ? 118
		     : magic == 0xfffffff1 ? 120
					   : 0;
	if (!o->version) {
		if (magic == 0xfffffffb)
			*why = "is a Go 1.2-1.15 pclntab (not supported)";
		return -1;
	}
	o->minlc = h[6];
	o->ptrsize = h[7];
	if (h[4] || h[5] || (o->minlc != 1 && o->minlc != 2 && o->minlc != 4) ||
	    (o->ptrsize != 4 && o->ptrsize != 8))
		return -1;
	words = o->version >= 118 ? 8 : 7;
	o->bytes = 8 + (uint64_t)words * o->ptrsize;
	if (avail < o->bytes)
		return -1;
	o->nfunc = gop_word(h + 8, o->ptrsize);
	first = o->version >= 118 ? 3 : 2;
	o->text_start = o->version >= 118 ? gop_word(h + 8 + 2 * o->ptrsize, o->ptrsize) : 0;
	for (i = 0; i < 5; i++)
		o->off[i] = gop_word(h + 8 + (first + i) * o->ptrsize, o->ptrsize);
	return 0;
}

/* Whether the header's tables fit in @size bytes, in order; *@why when not. */
static int check_layout(const struct gop_hdr *h, uint64_t size, const char **why)
{
	unsigned ent = h->version < 118 ? 2u * h->ptrsize : 8u, i;

	*why = "has table offsets out of order or past its end";
	if (h->off[0] < h->bytes || h->off[4] >= size)
		return -1;
	for (i = 0; i < 4; i++)
		if (h->off[i] > h->off[i + 1])
			return -1;
	if (h->nfunc == 0 || h->nfunc > GOPCLNTAB_MAX_FUNCS) {
		*why = h->nfunc ? "declares more functions than GOPCLNTAB_MAX_FUNCS"
				: "declares no functions";
		return -1;
	}
	if ((h->nfunc + 1) * ent > size - h->off[4]) {
		*why = "has a function table past its end";
		return -1;
	}
	return 0;
}

int gop_entry(const struct gopclntab *g, uint64_t i, uint64_t *pc, uint64_t *funcoff)
{
	unsigned ent = gop_ftab_entry(g);
	const uint8_t *p = gop_at(g, g->pcln, g->pcln.lo + i * ent, ent);

	if (!p || i > g->nfunc)
		return -1;
	if (g->version < 118) {
		*pc = gop_word(p, g->ptrsize);
		if (funcoff)
			*funcoff = gop_word(p + g->ptrsize, g->ptrsize);
	} else {
		*pc = g->text_start + gop_u32(p);
		if (funcoff)
			*funcoff = gop_u32(p + 4);
	}
	return 0;
}

/* Entries sorted, each record inside the table: what every lookup then relies on. */
static int check_functab(const struct gopclntab *g, const char **why)
{
	uint64_t i, prev = 0, pc, off;

	for (i = 0; i <= g->nfunc; i++) {
		if (gop_entry(g, i, &pc, &off) || (i && pc < prev)) {
			*why = "has a function table out of order";
			return -1;
		}
		if (i < g->nfunc && !gop_at(g, g->pcln, g->pcln.lo + off, gop_func_header(g))) {
			*why = "has a function record past its end";
			return -1;
		}
		prev = pc;
	}
	return 0;
}

/*
 * moduledata (runtime/symtab.go) in a writable segment: its first word points
 * at the header and its second is the funcnametab slice; gofunc is its 38th
 * word (1.18, 1.19), or 40th (1.20+: covctrs came before it).  0 when not found.
 */
static uint64_t find_gofunc(const struct gop_src *s, const struct gopclntab *g, uint64_t pcln,
			    const struct gop_hdr *h)
{
	const uint64_t chunk = 1u << 16, P = h->ptrsize, scan_max = GOPCLNTAB_MAX_BYTES;
	uint64_t scanned = 0, gofunc = 0;
	unsigned gofunc_word = g->version >= 120 ? 40 : 38;
	uint8_t *b = malloc(chunk);
	size_t i;

	for (i = 0; b && i < s->segs.n && !gofunc && scanned < scan_max; i++) {
		const struct elf_segment *sg = &s->segs.v[i];
		uint64_t at;

		if (!(sg->flags & PF_W))
			continue;
		for (at = 0; at + 4 * P <= sg->filesz && !gofunc && scanned < scan_max;
		     at += chunk - 64) {
			uint64_t n = sg->filesz - at < chunk ? sg->filesz - at : chunk, k;

			scanned += n;
			if (src_read(s, sg->vaddr + at, b, n))
				break;
			for (k = 0; k + 4 * P <= n; k += P) {
				uint8_t md[41 * 8];

				if (gop_word(b + k, P) != pcln ||
				    gop_word(b + k + P, P) != pcln + h->off[0] ||
				    /* the slice's length leaves out the padding before cutab */
				    gop_word(b + k + 2 * P, P) > h->off[1] - h->off[0] ||
				    gop_word(b + k + 3 * P, P) != gop_word(b + k + 2 * P, P) ||
				    src_read(s, sg->vaddr + at + k, md, (gofunc_word + 1) * P))
					continue;
				/* moduledata.text (word 22) is where entries count from */
				if (gop_word(md + 22 * P, P) == g->text_start)
					gofunc = gop_word(md + gofunc_word * P, P);
				break;
			}
		}
	}
	free(b);
	return gofunc;
}

/*
 * The section holding the table: .gopclntab, or a PIE's .data.rel.ro.gopclntab
 * (its table has pointers the loader relocates).
 */
Elf_Scn *gopclntab_section(Elf *e, GElf_Shdr *sh)
{
	Elf_Scn *scn = elf_section_by_name(e, ".gopclntab", sh);

	return scn ? scn : elf_section_by_name(e, ".data.rel.ro.gopclntab", sh);
}

/* The .text section's address, for a PIE whose header's textStart is left to relocation. */
static uint64_t text_section(Elf *e)
{
	GElf_Shdr sh;

	return e && elf_section_by_name(e, ".text", &sh) ? sh.sh_addr : 0;
}

/*
 * A PIE's funcdata, in another segment than its table (go:func.* in .rodata,
 * the table in the relro segment): held from gofunc to its segment's end,
 * the two within GOPCLNTAB_MAX_BYTES (@table: the table's bytes).
 */
static void hold_funcdata(const struct gop_src *s, struct gopclntab *g, uint64_t table)
{
	uint64_t off, n;
	size_t seg;

	if (elf_segments_vaddr_to_offset(&s->segs, g->gofunc, 1, &off, &seg) ||
	    table >= GOPCLNTAB_MAX_BYTES)
		return;
	n = s->segs.v[seg].vaddr + s->segs.v[seg].filesz - g->gofunc;
	if (n > GOPCLNTAB_MAX_BYTES - table)
		n = GOPCLNTAB_MAX_BYTES - table;
	g->fd_buf = n ? malloc(n) : NULL;
	if (g->fd_buf && !src_read(s, g->gofunc, g->fd_buf, n)) {
		g->fd_base = g->gofunc;
		g->fd_len = n;
		g->inline_ok = true;
		return;
	}
	free(g->fd_buf);
	g->fd_buf = NULL;
}

/*
 * The first byte to hold: the funcdata the inline trees live in lies before
 * the table in the same segment (go:func.* in .rodata), at gofunc from 1.18
 * and anywhere in the segment before (absolute pointers).  The table alone
 * when that cannot be found or would pass the byte bound.
 */
static uint64_t held_from(const struct gop_src *s, struct gopclntab *g, uint64_t pcln, uint64_t end,
			  const struct gop_hdr *h)
{
	uint64_t off, lo;
	size_t seg;

	if (!s->inline_trees ||
	    elf_segments_vaddr_to_offset(&s->segs, pcln, end - pcln, &off, &seg))
		return pcln;
	lo = s->segs.v[seg].vaddr;
	if (g->version >= 118) {
		g->gofunc = find_gofunc(s, g, pcln, h);
		if (g->gofunc < lo || g->gofunc > pcln) {
			if (g->gofunc)
				hold_funcdata(s, g, end - pcln);
			return pcln;
		}
		lo = g->gofunc;
	}
	if (end - lo > GOPCLNTAB_MAX_BYTES)
		return pcln;
	g->inline_ok = true;
	return lo;
}

/* The table whose header is at @pcln, its bytes ending by @end; 0, or -1 with *@why. */
static int load(const struct gop_src *s, uint64_t pcln, uint64_t end, struct gopclntab **out,
		const char **why)
{
	uint8_t hb[GOP_HDR_MAX];
	struct gop_hdr h;
	struct gopclntab *g;
	uint64_t avail = end - pcln < sizeof(hb) ? end - pcln : sizeof(hb), lo;

	if (src_read(s, pcln, hb, avail)) {
		*why = "cannot be read (truncated?)";
		return -1;
	}
	if (parse_header(hb, avail, &h, why) || check_layout(&h, end - pcln, why))
		return -1;
	if (end - pcln > GOPCLNTAB_MAX_BYTES) {
		*why = "is larger than GOPCLNTAB_MAX_BYTES";
		return -2;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		*why = "cannot be held (out of memory)";
		return -1;
	}
	g->version = h.version;
	g->ptrsize = h.ptrsize;
	g->minlc = h.minlc;
	g->nfunc = h.nfunc;
	g->text_start = h.text_start ? h.text_start : text_section(s->e);
	g->names = (struct gop_span){pcln + h.off[0], pcln + h.off[1]};
	g->cutab = (struct gop_span){pcln + h.off[1], pcln + h.off[2]};
	g->files = (struct gop_span){pcln + h.off[2], pcln + h.off[3]};
	g->pctab = (struct gop_span){pcln + h.off[3], pcln + h.off[4]};
	g->pcln = (struct gop_span){pcln + h.off[4], end};
	if (g->version >= 118 && !g->text_start) {
		*why = "has its text start left to relocation and no .text section";
		goto err;
	}
	lo = held_from(s, g, pcln, end, &h);
	g->base = lo;
	g->len = end - lo;
	g->buf = malloc(g->len);
	if (!g->buf || src_read(s, lo, g->buf, g->len)) {
		*why = g->buf ? "cannot be read (truncated?)" : "cannot be held (out of memory)";
		goto err;
	}
	if (check_functab(g, why))
		goto err;
	*out = g;
	return 0;
err:
	gopclntab_free(g);
	return -1;
}

/*
 * No section headers: a header that holds together at an 8-byte boundary of a
 * segment, read-only-not-executable ones first (where Go's linker puts it),
 * then executable ones, then writable ones (a PIE's: its relro segment).  At
 * most GOPCLNTAB_MAX_CANDIDATES are tried in full.
 */
static int scan_segments(const struct gop_src *s, struct gopclntab **out, const char **why)
{
	const uint64_t chunk = 1u << 20;
	unsigned tried = 0, pass;
	uint8_t *b = malloc(chunk);
	int ret = 1;

	for (pass = 0; b && pass < 3 && ret > 0 && tried < GOPCLNTAB_MAX_CANDIDATES; pass++) {
		for (size_t i = 0; i < s->segs.n && ret > 0; i++) {
			const struct elf_segment *sg = &s->segs.v[i];
			uint64_t at, k, end = sg->vaddr + sg->filesz;
			unsigned seg_pass = sg->flags & PF_W ? 2 : sg->flags & PF_X ? 1 : 0;

			if (seg_pass != pass || ((sg->flags & PF_W) && (sg->flags & PF_X)) ||
			    end < sg->vaddr)
				continue;
			for (at = 0; at < sg->filesz && ret > 0; at += chunk - GOP_HDR_MAX) {
				uint64_t n = sg->filesz - at < chunk ? sg->filesz - at : chunk;

				/*
				 * A file cut short is searched as far as it goes: a
				 * table found in it is then refused as truncated, and
				 * an object with none stays "not Go".
				 */
				if (sg->offset + at >= s->size)
					break;
				if (n > s->size - (sg->offset + at))
					n = s->size - (sg->offset + at);
				if (src_read(s, sg->vaddr + at, b, n))
					break;
				for (k = (8 - (sg->vaddr + at) % 8) % 8; k + 8 <= n && ret > 0;
				     k += 8) {
					struct gop_hdr h;
					const char *w;
					uint64_t pc = sg->vaddr + at + k;

					/* a header across the chunk's end is seen whole in the next
					 */
					if (n == chunk && k + GOP_HDR_MAX > n)
						break;
					if (parse_header(b + k, n - k, &h, &w) ||
					    check_layout(&h, end - pc, &w))
						continue;
					ret = load(s, pc, end, out, why);
					if (ret < 0 && ++tried >= GOPCLNTAB_MAX_CANDIDATES)
						break;
					ret = ret < 0 ? 1 : ret;
				}
				if (n < chunk)
					break;
			}
		}
	}
	free(b);
	if (!b) {
		*why = "cannot be searched (out of memory)";
		return -1;
	}
	if (ret > 0 && tried)
		return -1; /* *why: the last candidate's */
	return ret;
}

static bool has_section_headers(Elf *e)
{
	size_t n;

	return elf_getshdrnum(e, &n) == 0 && n > 0;
}

static int read_common(struct gop_src *s, struct gopclntab **out, const char **why)
{
	const char *ignored;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int ret;

	if (!why)
		why = &ignored;
	*why = NULL;
	*out = NULL;
	if (!gelf_getehdr(s->e, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return 1;
	if (elf_segments_read(s->e, &s->segs) < 0) {
		*why = "cannot be held (out of memory)";
		return -1;
	}
	if (has_section_headers(s->e)) {
		ret = 1;
		if (gopclntab_section(s->e, &sh) && sh.sh_type != SHT_NOBITS) {
			ret = sh.sh_addr + sh.sh_size < sh.sh_addr
				  ? -1
				  : load(s, sh.sh_addr, sh.sh_addr + sh.sh_size, out, why);
			if (ret < 0 && !*why)
				*why = "has a .gopclntab outside its segments";
		}
	} else {
		ret = scan_segments(s, out, why);
	}
	elf_segments_free(&s->segs);
	if (ret < 0)
		gopclntab_refused(ret == -2 ? GOPCLNTAB_OVER_BUDGET : GOPCLNTAB_MALFORMED);
	return ret < 0 ? -1 : ret;
}

static int read_fd(Elf *e, int fd, bool inline_trees, struct gopclntab **out, const char **why)
{
	struct gop_src s = {.e = e, .fd = fd, .inline_trees = inline_trees};
	struct stat st;

	/* the scan reads no further than the file goes */
	s.size = fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return read_common(&s, out, why);
}

int gopclntab_read(Elf *e, int fd, struct gopclntab **out, const char **why)
{
	return read_fd(e, fd, true, out, why);
}

int gopclntab_read_names(Elf *e, int fd, struct gopclntab **out, const char **why)
{
	return read_fd(e, fd, false, out, why);
}

int gopclntab_read_mem(const void *file, uint64_t size, struct gopclntab **out, const char **why)
{
	struct gop_src s = {.fd = -1, .mem = file, .size = size, .inline_trees = true};
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	s.e = elf_memory((char *)file, size);
	if (!s.e || elf_kind(s.e) != ELF_K_ELF) {
		if (s.e)
			elf_end(s.e);
		*out = NULL;
		return 1;
	}
	ret = read_common(&s, out, why);
	elf_end(s.e);
	return ret;
}

void gopclntab_free(struct gopclntab *g)
{
	if (!g)
		return;
	free(g->buf);
	free(g->fd_buf);
	free(g);
}

unsigned gopclntab_version(const struct gopclntab *g)
{
	return g->version;
}

int gopclntab_has_inline(const struct gopclntab *g)
{
	return g->inline_ok;
}

uint64_t gopclntab_nfunc(const struct gopclntab *g)
{
	return g->nfunc;
}

uint64_t gopclntab_bytes(const struct gopclntab *g)
{
	return g ? g->len + g->fd_len : 0;
}

/* A NUL-terminated string at @a inside @s; NULL when it runs past it. */
const char *gop_string(const struct gopclntab *g, struct gop_span s, uint64_t a)
{
	const uint8_t *p = gop_at(g, s, a, 1);

	if (!p ||
	    !memchr(p, 0, s.hi - a < g->len - (a - g->base) ? s.hi - a : g->len - (a - g->base)))
		return NULL;
	return (const char *)p;
}

int gopclntab_func(const struct gopclntab *g, uint64_t i, uint64_t *start, uint64_t *end,
		   const char **name)
{
	uint64_t off;
	const uint8_t *f;
	int32_t nameoff;

	if (i >= g->nfunc || gop_entry(g, i, start, &off) || gop_entry(g, i + 1, end, NULL))
		goto bad;
	f = gop_at(g, g->pcln, g->pcln.lo + off, gop_func_header(g));
	if (!f)
		goto bad;
	nameoff = (int32_t)gop_u32(f + (g->version < 118 ? g->ptrsize : 4));
	*name = nameoff < 0 ? NULL : gop_string(g, g->names, g->names.lo + (uint64_t)nameoff);
	if (!*name)
		goto bad;
	return 0;
bad:
	gopclntab_refused(GOPCLNTAB_LOOKUP);
	return -1;
}
