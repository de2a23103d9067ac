/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What gopclntab.c (finding and checking the table) and gopclntab_lines.c
 * (lookups) share; private to them.
 */
#ifndef CFIPROF_ELF_GOPCLNTAB_INTERNAL_H
#define CFIPROF_ELF_GOPCLNTAB_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "elf/gopclntab.h"

/* A part of the table, as addresses: [lo, hi). */
struct gop_span {
	uint64_t lo, hi;
};

struct gopclntab {
	uint8_t *buf; /* the bytes of [base, base + len) of the object's address space */
	uint64_t base, len;
	unsigned version; /* 116, 118, 120 */
	uint8_t ptrsize, minlc;
	uint64_t nfunc;
	uint64_t text_start; /* entries are offsets from it (1.18+) */
	struct gop_span names, cutab, files, pctab,
	    pcln;	 /* pcln: functab, then the _func records */
	uint64_t gofunc; /* funcdata offsets are from it (1.18+) */
	bool inline_ok;	 /* funcdata can be followed inside buf (or fd_buf) */
	/*
	 * A PIE's funcdata, [fd_base, fd_base + fd_len): go:func.* stays in
	 * .rodata while its table moves to the relro segment.  NULL otherwise.
	 */
	uint8_t *fd_buf;
	uint64_t fd_base, fd_len;
};

/* @n bytes at address @a inside @s and inside the bytes held; NULL otherwise. */
static inline const uint8_t *gop_at(const struct gopclntab *g, struct gop_span s, uint64_t a,
				    uint64_t n)
{
	if (a < s.lo || a > s.hi || n > s.hi - a)
		return NULL;
	if (a >= g->base && a - g->base <= g->len && n <= g->len - (a - g->base))
		return g->buf + (a - g->base);
	if (g->fd_buf && a >= g->fd_base && a - g->fd_base <= g->fd_len &&
	    n <= g->fd_len - (a - g->fd_base))
		return g->fd_buf + (a - g->fd_base);
	return NULL;
}

static inline uint32_t gop_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A pointer-sized word (little-endian objects only). */
static inline uint64_t gop_word(const uint8_t *p, unsigned ptrsize)
{
	uint64_t v = 0;

	memcpy(&v, p, ptrsize);
	return v;
}

/* Size of one functab entry: two words before 1.18, two uint32 since. */
static inline unsigned gop_ftab_entry(const struct gopclntab *g)
{
	return g->version < 118 ? 2u * g->ptrsize : 8u;
}

/* Bytes of a _func record before its pcdata, by version. */
static inline uint64_t gop_func_header(const struct gopclntab *g)
{
	return g->version < 118 ? g->ptrsize + 36u : g->version < 120 ? 40u : 44u;
}

/* A NUL-terminated string at @a inside @s; NULL when it runs past it. */
const char *gop_string(const struct gopclntab *g, struct gop_span s, uint64_t a);

/* Entry pc of function @i (i <= nfunc: nfunc is the end of the last); -1 if unreadable. */
int gop_entry(const struct gopclntab *g, uint64_t i, uint64_t *pc, uint64_t *funcoff);

#endif
