/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An object's Go functions from its .gopclntab (elf/gopclntab.h): names for
 * the code its symbol tables do not cover (a stripped Go binary has none),
 * and with lines on, file:line and Go's inline tree as src_frame chains, as
 * DWARF gives them for C.  Private to the symbolizer (sym_cache.c).
 */
#ifndef CFIPROF_GO_NAMES_H
#define CFIPROF_GO_NAMES_H

#include <libelf.h>
#include <stdbool.h>

#include "user/symbolize/src_lines.h"
#include "user/symbolize/sym_table.h"

struct gopclntab;

struct go_names {
	struct sym_table fns;  /* every function: [entry, next entry), its Go name */
	/* Go's code, [first function, end of the last) (0, 0: not Go); fns may be empty */
	uint64_t text_start, text_end;
	struct gopclntab *tab; /* kept for lines; NULL when lines are off */
	struct src_frame frames[SRC_FRAMES_MAX];
};

/*
 * The tables all objects keep for lines, together: as many different Go
 * binaries as a host runs may each hold up to GOPCLNTAB_MAX_BYTES, and the
 * agent must not grow with them.  Past this, an object keeps its names and
 * gives no lines (counted as gopclntab over_budget).
 */
#define GO_LINES_HELD_MAX (256ull << 20)
/* Another bound than GO_LINES_HELD_MAX (tests); returns the one before. */
uint64_t go_names_set_lines_max(uint64_t max);

/*
 * Reads @e's pclntab (open on @fd) into @gn, names within ELF_SYMBOLS_BYTES_MAX
 * (the rest dropped, counted as gopclntab over_budget), keeping the table for
 * go_names_lines when @lines and GO_LINES_HELD_MAX has room.  Returns 0, 1 when the object has no
 * pclntab, -1 when it was refused or memory ran out (@gn then empty).
 */
int go_names_read(struct go_names *gn, Elf *e, int fd, bool lines);

/*
 * Only where Go's code is (text_start, text_end), for an object whose
 * symbols come from elsewhere (.symtab): the table is read, then dropped.
 * Nothing for an object without a .gopclntab section.
 */
void go_names_read_text(struct go_names *gn, Elf *e, int fd);

/*
 * Whether @vaddr is in a Go function: by the functions when they were read,
 * else by where Go's code is (cgo's C code outside it).
 */
bool go_names_is_go(const struct go_names *gn, uint64_t vaddr);

/*
 * The chain at @vaddr, innermost first, the last level the function the
 * others were inlined into; *@frames valid until the next call.  The number
 * of levels, 0 when unknown (no table kept, no function there), -1 refused.
 */
int go_names_lines(struct go_names *gn, uint64_t vaddr, const struct src_frame **frames);

void go_names_free(struct go_names *gn);

#endif
