/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An object's compile units and their address ranges, listed once as its
 * DWARF is opened: from .debug_aranges for the units it has a set for, from
 * the unit's own DIE for the others (clang writes no aranges).  A lookup
 * finds its unit by binary search.
 */
#ifndef CFIPROF_SRC_LINES_UNITS_H
#define CFIPROF_SRC_LINES_UNITS_H

#include <stdint.h>

#include "user/symbolize/src_lines_internal.h"

/* Lists sl's units (their headers) and ranges; -1 when the object is over a limit. */
int src_lines_list_units(struct src_lines *sl);

/* What a lookup in unit ci walks: its DIEs and its line program (measured at the first call). */
uint64_t src_lines_unit_bytes(struct src_lines *sl, struct cu_info *ci);

/* The unit whose ranges cover vaddr; -1 if none. */
long src_lines_find_unit(const struct src_lines *sl, uint64_t vaddr);

#endif
