/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a Java frame's code is shown with, read once while its JVM lives
 * (code_names.h keeps it past the process's exit): the method's name and
 * source file and, for an nmethod whose layout has its debug info
 * (hotspot_layout's scopes), every PcDesc's scope chain decoded
 * (hotspot_debuginfo.h): the line of the nmethod's own method there and
 * the methods C1 or C2 inlined into it there, innermost first, each with
 * its name, file and line.  A frame's pc picks its PcDesc when shown
 * (hotspot_code_at).
 *
 * Everything is a hostile process's memory, bounded (hotspot_debuginfo.h's
 * limits, HOTSPOT_INLINED_METHODS_MAX methods, HOTSPOT_LEVELS_MAX levels):
 * debug info that cannot be read or does not decode leaves the frame as it
 * was named before (its method alone), counted.
 */
#ifndef CFIPROF_HOTSPOT_SCOPES_H
#define CFIPROF_HOTSPOT_SCOPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/runtimes/hotspot/hotspot_debuginfo.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"
#include "user/symbolize/runtime_units.h"

#define HOTSPOT_INLINED_METHODS_MAX 128	  /* distinct methods of one nmethod's scopes */
#define HOTSPOT_LEVELS_MAX	    16384 /* inlined levels of its distinct scopes, in all */

/* One PcDesc's scope chain: its method's line, and levels[first, first + nr) inlined there. */
struct hotspot_chain {
	uint32_t line; /* 0 when unknown */
	uint32_t first, nr;
};

/*
 * One allocation: this header, pcs (their scope: an index in chains),
 * chains, levels (struct interp_inlined), strings; offsets from its start.
 */
struct hotspot_code {
	size_t bytes;	     /* of the allocation */
	uint32_t name, file; /* the method's: offsets in the strings */
	uint32_t code_begin; /* the nmethod's code begin's low 32 bits: pcs are offsets from it */
	uint32_t line;	     /* an interpreted frame's (hotspot_code_read_at): 0 unknown */
	uint32_t nr_pcs, nr_chains, nr_levels;
	uint32_t pcs, chains, levels, strs; /* offsets of the arrays */
};

static inline const char *hotspot_code_strs(const struct hotspot_code *c)
{
	return (const char *)c + c->strs;
}

/* What reading debug info met, since the start (all processes). */
struct hotspot_scopes_stats {
	uint64_t nmethods;   /* read with their debug info */
	uint64_t no_layout;  /* read without: the JDK's layout lacks a field */
	uint64_t unreadable; /* ... its sections unreadable or past the bounds */
	uint64_t bad_chains; /* scope chains that did not decode (their pcs: no levels) */
	uint64_t no_pc;	     /* frames shown whose pc had no PcDesc (their method alone) */
};

void hotspot_scopes_stats(struct hotspot_scopes_stats *out);

/*
 * The code of a frame: the Method at method of process pid, and when nm is
 * not 0 the nmethod at nm that compiles it, its debug info decoded; a new
 * allocation (free()), NULL when the method's name is unreadable or out of
 * memory.
 */
struct hotspot_code *hotspot_code_read(uint32_t pid, const struct hotspot_layout *l,
				       uint64_t method, uint64_t nm);
/* ... of an interpreted frame (nm 0) at bci (-1: not known): its line too. */
struct hotspot_code *hotspot_code_read_at(uint32_t pid, const struct hotspot_layout *l,
					  uint64_t method, uint64_t nm, int32_t bci);

/*
 * The chain of the frame at pc (its low 32 bits) in c: NULL when c has no
 * debug info or no PcDesc at or after pc (counted when it has debug info).
 */
const struct hotspot_chain *hotspot_code_at(const struct hotspot_code *c, uint32_t pc);

/* The chain's levels: innermost first. */
static inline const struct interp_inlined *hotspot_chain_levels(const struct hotspot_code *c,
								const struct hotspot_chain *ch)
{
	return (const struct interp_inlined *)((const uint8_t *)c + c->levels) + ch->first;
}

#endif
