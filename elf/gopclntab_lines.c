// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lookups in .gopclntab: the function at a pc, its pc-value tables (file,
 * line, inline tree index) and the inline tree; see gopclntab.h.  Every
 * table is decoded from its start (they are short: one function's pcs), at
 * most GOPCLNTAB_MAX_STEPS pairs, and every byte read is inside the table it
 * belongs to.
 */
#include "elf/gopclntab.h"

#include "elf/gopclntab_internal.h"

/* runtime/symtab.go: _PCDATA_InlTreeIndex and _FUNCDATA_InlTree */
#define PCDATA_INLTREE	 2
#define FUNCDATA_INLTREE 3

/* One function's record, the fields lookups use. */
struct gop_func {
	uint64_t entry, end, addr; /* addr: of the record */
	uint32_t pcsp, pcfile, pcln, npcdata, cu;
	int32_t nameoff, start_line;
	uint8_t nfuncdata;
};

/* The index of the function covering @pc; -1 when none. */
static int64_t find_func(const struct gopclntab *g, uint64_t pc)
{
	uint64_t lo = 0, hi = g->nfunc, first, last;

	if (gop_entry(g, 0, &first, NULL) || gop_entry(g, g->nfunc, &last, NULL) || pc < first ||
	    pc >= last)
		return -1;
	/* the last entry whose pc is <= @pc; the table was checked sorted */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, at;

		if (gop_entry(g, mid, &at, NULL))
			return -1;
		if (at <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t)lo;
}

static int read_func(const struct gopclntab *g, uint64_t i, struct gop_func *f)
{
	uint64_t off;
	uint64_t n = gop_func_header(g), name = g->version < 118 ? g->ptrsize : 4;
	const uint8_t *p;

	if (gop_entry(g, i, &f->entry, &off) || gop_entry(g, i + 1, &f->end, NULL))
		return -1;
	f->addr = g->pcln.lo + off;
	p = gop_at(g, g->pcln, f->addr, n);
	if (!p)
		return -1;
	f->nameoff = (int32_t)gop_u32(p + name);
	/* then args, deferreturn */
	f->pcsp = gop_u32(p + name + 12);
	f->pcfile = gop_u32(p + name + 16);
	f->pcln = gop_u32(p + name + 20);
	f->npcdata = gop_u32(p + name + 24);
	f->cu = gop_u32(p + name + 28);
	f->start_line = g->version >= 120 ? (int32_t)gop_u32(p + name + 32) : 0;
	f->nfuncdata = p[n - 1];
	return 0;
}

/* A varint of at most 5 bytes (a uint32) from [*p, end); -1 when longer or cut. */
static int varint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	uint32_t r = 0;
	unsigned shift;

	for (shift = 0; shift < 35 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

/*
 * The value of pc-value table @off (from pctab) at @pc in @f, as Go's
 * runtime.pcvalue: pairs (value delta, zig-zag; pc delta in minLC units)
 * from value -1 at the entry.  0 with *@val; 1 when the table has no value
 * there (or no table: offset 0); -1 when it is malformed or too long.
 */
static int pcvalue(const struct gopclntab *g, const struct gop_func *f, uint32_t off, uint64_t pc,
		   int32_t *val)
{
	const uint8_t *p, *end;
	uint64_t at = f->entry;
	int32_t v = -1;
	unsigned step;

	if (!off)
		return 1;
	p = gop_at(g, g->pctab, g->pctab.lo + off, 1);
	if (!p)
		return -1;
	end = p + (g->pctab.hi - (g->pctab.lo + off));
	for (step = 0; step < GOPCLNTAB_MAX_STEPS; step++) {
		uint32_t uv, dpc;

		if (varint(&p, end, &uv))
			return -1;
		if (uv == 0 && step)
			return 1;
		if (varint(&p, end, &dpc))
			return -1;
		/* Go's int32 arithmetic wraps; C's signed overflow would be undefined */
		v = (int32_t)((uint32_t)v + (-(uv & 1) ^ (uv >> 1)));
		at += (uint64_t)dpc * g->minlc;
		if (pc < at) {
			*val = v;
			return 0;
		}
	}
	return -1;
}

/* The file of file index @fno of @f's compile unit (cutab, then filetab); NULL if none. */
static const char *file_name(const struct gopclntab *g, const struct gop_func *f, int32_t fno)
{
	const uint8_t *c;
	uint32_t off;

	if (fno < 0 || f->cu == UINT32_MAX)
		return NULL;
	c = gop_at(g, g->cutab, g->cutab.lo + ((uint64_t)f->cu + (uint64_t)fno) * 4, 4);
	if (!c)
		return NULL;
	off = gop_u32(c);
	return off == UINT32_MAX ? NULL : gop_string(g, g->files, g->files.lo + off);
}

/* pcfile and pcln of @f at @pc into @out; -1 when a table is malformed. */
static int position(const struct gopclntab *g, const struct gop_func *f, uint64_t pc,
		    struct gopclntab_frame *out)
{
	int32_t fno = -1, line = 0;
	int r1 = pcvalue(g, f, f->pcfile, pc, &fno), r2 = pcvalue(g, f, f->pcln, pc, &line);

	if (r1 < 0 || r2 < 0)
		return -1;
	out->file = r1 ? NULL : file_name(g, f, fno);
	out->line = !r2 && line > 0 ? (uint32_t)line : 0;
	return 0;
}

/* Word @k of @f's pcdata (a pctab offset); 0 when it has none. */
static uint32_t pcdata(const struct gopclntab *g, const struct gop_func *f, uint32_t k)
{
	const uint8_t *p;

	if (k >= f->npcdata)
		return 0;
	p = gop_at(g, g->pcln, f->addr + gop_func_header(g) + 4ull * k, 4);
	return p ? gop_u32(p) : 0;
}

/* The address of @f's inline tree; 0 when it has none or it cannot be reached. */
static uint64_t inline_tree(const struct gopclntab *g, const struct gop_func *f)
{
	uint64_t a;
	const uint8_t *p;

	if (!g->inline_ok || f->nfuncdata <= FUNCDATA_INLTREE || f->npcdata > (1u << 16))
		return 0;
	a = f->addr + gop_func_header(g) + 4ull * f->npcdata;
	if (g->version >= 118) {
		p = gop_at(g, g->pcln, a + 4 * FUNCDATA_INLTREE, 4);
		return p && gop_u32(p) != UINT32_MAX ? g->gofunc + gop_u32(p) : 0;
	}
	/* absolute pointers, aligned to a word (runtime.funcdata) */
	if (g->ptrsize == 8 && (a & 4))
		a += 4;
	p = gop_at(g, g->pcln, a + (uint64_t)g->ptrsize * FUNCDATA_INLTREE, g->ptrsize);
	return p ? gop_word(p, g->ptrsize) : 0;
}

/* Inline tree entry @ix: its name offset, parent pc offset and start line; -1 if unreadable. */
static int inline_entry(const struct gopclntab *g, uint64_t tree, int32_t ix, int32_t *nameoff,
			int32_t *parent_pc, int32_t *start_line)
{
	/* 1.16-1.19: parent, funcID, file, line, func_, parentPc; 1.20: funcID, nameOff, parentPc,
	 * startLine */
	uint64_t size = g->version >= 120 ? 16 : 20;
	struct gop_span all = {0, UINT64_MAX}; /* wherever it is held */
	const uint8_t *p = gop_at(g, all, tree + (uint64_t)ix * size, size);

	if (!p)
		return -1;
	*nameoff = (int32_t)gop_u32(p + (g->version >= 120 ? 4 : 12));
	*parent_pc = (int32_t)gop_u32(p + (g->version >= 120 ? 8 : 16));
	*start_line = g->version >= 120 ? (int32_t)gop_u32(p + 12) : 0;
	return 0;
}

static const char *func_name(const struct gopclntab *g, int32_t nameoff)
{
	return nameoff < 0 ? NULL : gop_string(g, g->names, g->names.lo + (uint64_t)nameoff);
}

/*
 * Appends a level, keeping the innermost @max - 1 and the outermost: a chain
 * deeper than the caller holds loses the levels in between.
 */
static void put(struct gopclntab_frame *out, int max, int *n, const struct gopclntab_frame *f,
		bool outer)
{
	if (*n < max - 1 || (outer && *n < max))
		out[(*n)++] = *f;
	else if (outer)
		out[max - 1] = *f;
}

int gopclntab_frames(const struct gopclntab *g, uint64_t pc, struct gopclntab_frame *out, int max)
{
	int64_t i = find_func(g, pc);
	struct gop_func f;
	uint64_t tree, at = pc;
	int n = 0, depth;

	if (i < 0)
		return 0;
	if (max < 1 || read_func(g, (uint64_t)i, &f))
		goto refused;
	tree = inline_tree(g, &f);
	for (depth = 0; depth <= GOPCLNTAB_MAX_INLINE; depth++) {
		struct gopclntab_frame fr = {0};
		int32_t ix = -1, nameoff, parent_pc, start_line;
		int r = tree ? pcvalue(g, &f, pcdata(g, &f, PCDATA_INLTREE), at, &ix) : 1;

		if (r < 0 || position(g, &f, at, &fr))
			goto refused;
		if (r > 0 || ix < 0) {
			fr.name = func_name(g, f.nameoff);
			fr.start_line = f.start_line > 0 ? (uint32_t)f.start_line : 0;
			if (!fr.name)
				goto refused;
			put(out, max, &n, &fr, true);
			return n;
		}
		if (inline_entry(g, tree, ix, &nameoff, &parent_pc, &start_line))
			goto refused;
		fr.name = func_name(g, nameoff);
		fr.start_line = start_line > 0 ? (uint32_t)start_line : 0;
		/* the call site: an instruction of the same function */
		if (!fr.name || parent_pc < 0 || (uint64_t)parent_pc >= f.end - f.entry)
			goto refused;
		put(out, max, &n, &fr, false);
		at = f.entry + (uint64_t)parent_pc;
	}
refused:
	gopclntab_refused(GOPCLNTAB_LOOKUP);
	return -1;
}

int gopclntab_pcsp(const struct gopclntab *g, uint64_t i,
		   int (*emit)(void *ctx, uint64_t pc, int32_t sp), void *ctx)
{
	struct gop_func f;
	const uint8_t *p, *end;
	uint64_t at;
	int32_t v = -1;
	unsigned step;

	if (i >= g->nfunc || read_func(g, i, &f))
		goto bad;
	/* no table: C code a cgo binary's linker listed (its CFI is in .eh_frame) */
	if (!f.pcsp)
		return 0;
	p = gop_at(g, g->pctab, g->pctab.lo + f.pcsp, 1);
	if (!p)
		goto bad;
	end = p + (g->pctab.hi - (g->pctab.lo + f.pcsp));
	at = f.entry;
	/* as pcvalue, but every run: (value from here, up to the next pc) */
	for (step = 0; step < GOPCLNTAB_MAX_STEPS && at < f.end; step++) {
		uint32_t uv, dpc;
		uint64_t from = at;
		int r;

		if (varint(&p, end, &uv))
			goto bad;
		if (uv == 0 && step)
			return 0;
		if (varint(&p, end, &dpc))
			goto bad;
		v = (int32_t)((uint32_t)v + (-(uv & 1) ^ (uv >> 1)));
		at += (uint64_t)dpc * g->minlc;
		r = dpc ? emit(ctx, from, v) : 0;
		if (r)
			return r;
	}
	if (at >= f.end)
		return 0;
bad:
	gopclntab_refused(GOPCLNTAB_LOOKUP);
	return -1;
}
