/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Go's own symbol table, .gopclntab: function names and ranges, file:line per
 * pc, and the inline tree (Go 1.16 magic 0xfffffffa, 1.18 0xfffffff0, 1.20+
 * 0xfffffff1).  Stripped Go binaries (-ldflags='-s -w') have no .symtab, no
 * DWARF and no .eh_frame, but the runtime needs this table, so it is always
 * there: found by its section when the file has section headers, else by its
 * magic and a header that holds together in a read-only PT_LOAD segment.
 *
 * The file is any process's: every offset is checked against the bytes held,
 * the table is read under a byte bound before anything is allocated for it,
 * the number of functions is bounded, and a lookup decodes at most
 * GOPCLNTAB_MAX_STEPS pc-value pairs per table and GOPCLNTAB_MAX_INLINE
 * levels.  Malformed input is an error with a reason and a counted refusal.
 *
 * The inline tree is reached through the function's funcdata: absolute
 * addresses before Go 1.18, offsets from moduledata.gofunc since (moduledata
 * is found in a writable segment by its first fields, which point at this
 * table).  Where it cannot be found (a PIE's relocated pointers) names and
 * lines still are, without inline levels.
 */
#ifndef CFIPROF_ELF_GOPCLNTAB_H
#define CFIPROF_ELF_GOPCLNTAB_H

#include <gelf.h>
#include <stdint.h>

/* Bytes held for one object: the table, and the funcdata before it. */
#define GOPCLNTAB_MAX_BYTES (128ull << 20)
/* Functions one table may declare (kubelet-sized binaries have ~100k). */
#define GOPCLNTAB_MAX_FUNCS (1u << 21)
/* Pc-value pairs decoded per table per lookup (a function's table has tens to thousands). */
#define GOPCLNTAB_MAX_STEPS (1u << 16)
/* Inline levels followed per pc. */
#define GOPCLNTAB_MAX_INLINE 32
/* Candidate headers tried when scanning segments for the magic. */
#define GOPCLNTAB_MAX_CANDIDATES 16

enum gopclntab_refusal {
	GOPCLNTAB_MALFORMED,   /* a header, offset or table that does not hold together */
	GOPCLNTAB_OVER_BUDGET, /* past GOPCLNTAB_MAX_BYTES or GOPCLNTAB_MAX_FUNCS */
	GOPCLNTAB_LOOKUP,      /* a lookup over its steps, or through bad data */
	GOPCLNTAB_REFUSALS,
};
void gopclntab_refused(enum gopclntab_refusal why);
uint64_t gopclntab_refused_total(enum gopclntab_refusal why);
/* "malformed", "over_budget", "lookup" */
const char *gopclntab_refusal_name(enum gopclntab_refusal why);

struct gopclntab;

/* The Go version whose layout the table has: 116, 118 or 120. */
unsigned gopclntab_version(const struct gopclntab *g);
/* Whether inline trees can be read (moduledata.gofunc found, or Go < 1.18). */
int gopclntab_has_inline(const struct gopclntab *g);

/*
 * Reads the pclntab of @e (open on @fd; pread only).  Returns 0 and *@out, 1
 * when the object has none (not Go), or -1 when it is refused: *@why (may be
 * NULL) says why, and the refusal is counted.
 */
int gopclntab_read(Elf *e, int fd, struct gopclntab **out, const char **why);

/*
 * The same without the inline trees' funcdata (names, lines and pcsp only:
 * gopclntab_frames gives no inline levels), which holds the table alone.
 */
int gopclntab_read_names(Elf *e, int fd, struct gopclntab **out, const char **why);

/* The section holding the table (.gopclntab, a PIE's .data.rel.ro.gopclntab), or NULL. */
Elf_Scn *gopclntab_section(Elf *e, GElf_Shdr *sh);

/* Same on bytes in memory (a file's image; the fuzz target and tests). */
int gopclntab_read_mem(const void *file, uint64_t size, struct gopclntab **out, const char **why);

void gopclntab_free(struct gopclntab *g);

/* Number of functions. */
uint64_t gopclntab_nfunc(const struct gopclntab *g);
/* Bytes the table holds (a copy of the object's bytes it reads from). */
uint64_t gopclntab_bytes(const struct gopclntab *g);

/*
 * Function @i: [*@start, *@end) and its name (NUL-terminated inside the
 * table).  0, or -1 when that entry is malformed (counted).
 */
int gopclntab_func(const struct gopclntab *g, uint64_t i, uint64_t *start, uint64_t *end,
		   const char **name);

/* One level of the chain at a pc; strings point into the table. */
struct gopclntab_frame {
	const char *name;
	const char *file;    /* NULL when unknown */
	uint32_t line;	     /* 0 when unknown */
	uint32_t start_line; /* line of the func keyword (Go 1.20+); 0 unknown */
};

/*
 * The chain at @pc, innermost first (inlined calls, then the function they
 * are in), at most @max levels in @out.  Returns the number of levels, 0 when
 * no function covers @pc, -1 when the lookup was refused (counted).
 */
int gopclntab_frames(const struct gopclntab *g, uint64_t pc, struct gopclntab_frame *out, int max);

/*
 * Function @i's pc -> SP-delta table (pcsp: bytes the function's frame holds
 * below the return address at each pc), one call of @emit per run from its
 * first pc (none for a function without one: C code in a cgo binary).  0;
 * -1 when malformed or over GOPCLNTAB_MAX_STEPS (counted); or @emit's
 * non-zero return.
 */
int gopclntab_pcsp(const struct gopclntab *g, uint64_t i,
		   int (*emit)(void *ctx, uint64_t pc, int32_t sp), void *ctx);

#endif
