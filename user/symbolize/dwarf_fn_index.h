/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The functions of one DWARF compile unit by address: every concrete
 * DW_TAG_subprogram and DW_TAG_inlined_subroutine with its pc ranges and the
 * function-like DIE that contains it.  Built by one walk of the unit, so a
 * lookup is a binary search rather than a walk of the unit's DIEs from its
 * root (dwarf_getscopes), which costs as much as the unit is big every time:
 * ~0.7 ms an address in python's or libc's big units.  Private to src_lines.c.
 */
#ifndef CFIPROF_DWARF_FN_INDEX_H
#define CFIPROF_DWARF_FN_INDEX_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

struct fn_index;

/*
 * Walks @cudie; NULL when out of memory, or over @max_ranges ranges or DIEs
 * visited (pass the unit's size: a walk past it is going round in circles).
 */
struct fn_index *fn_index_build(Dwarf_Die *cudie, uint64_t max_ranges);

/*
 * The DIEs containing @addr, innermost first, up to and including the
 * outermost subprogram, as offsets in *@offs (at most @max). Returns how many.
 */
int fn_index_chain(const struct fn_index *x, uint64_t addr, Dwarf_Off *offs, int max);

/* Bytes the index holds. */
size_t fn_index_bytes(const struct fn_index *x);

void fn_index_free(struct fn_index *x);

#endif
