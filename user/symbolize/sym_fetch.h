/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbol tables of stripped objects fetched from debuginfod (elf/debuginfod.h),
 * by build-id, shared by every object carrying that build-id.  Asking never
 * waits: the object is named from what it has (.dynsym, function starts from
 * its FDEs) until its table arrives, and from the fetched .symtab after.  The
 * fetched file is checked like a local one (debug_file_take: an ELF with the
 * build-id asked for, with a .symtab).
 *
 * Bounded for a host where any process may be hostile: distinct build-ids
 * asked per minute, requests waiting, bytes of fetched tables held; a refusal
 * is counted by cause (sym_fetch_stats).  Entries no object uses stay cached
 * (a failure too: it is not asked again) until the bounds need their room.
 */
#ifndef CFIPROF_SYM_FETCH_H
#define CFIPROF_SYM_FETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "elf/debuginfod.h"
#include "user/symbolize/demangle.h"
#include "user/symbolize/sym_table.h"

#define SYM_FETCH_TABLE_BYTES_DEFAULT (256ull << 20)
#define SYM_FETCH_PER_MINUTE_DEFAULT  120
#define SYM_FETCH_ENTRIES_MAX	      4096

struct sym_fetch_opts {
	struct dbgd_opts dbgd;
	uint64_t max_table_bytes; /* fetched tables held at once (0: the default) */
	uint32_t per_minute;	  /* new build-ids asked per minute (0: the default) */
};

enum sym_fetch_refusal {
	SYM_FETCH_REFUSED_RATE,	   /* over per_minute */
	SYM_FETCH_REFUSED_QUEUE,   /* the fetch queue was full */
	SYM_FETCH_REFUSED_ENTRIES, /* SYM_FETCH_ENTRIES_MAX build-ids, all in use */
	SYM_FETCH_REFUSED_MEMORY,  /* its table would go past max_table_bytes */
	SYM_FETCH_REFUSED_INVALID, /* not an ELF, another build-id, no .symtab */
	SYM_FETCH_REFUSED_MAX,
};

struct sym_fetch_stats {
	uint64_t requested, named; /* fetches asked; tables that arrived and name frames */
	uint64_t refused[SYM_FETCH_REFUSED_MAX];
	uint64_t table_bytes; /* held now */
	struct dbgd_stats dbgd;
};

struct sym_fetch;
struct sym_fetched;

/* Starts the fetch workers; NULL on failure. */
struct sym_fetch *sym_fetch_new(const struct sym_fetch_opts *o);
/* Stops the fetches under way (each is cancelled) and frees everything; entries must be put. */
void sym_fetch_free(struct sym_fetch *f);

/*
 * A reference to the entry of @build_id (hex), asked for when new. NULL when
 * refused (counted) or out of memory.
 */
struct sym_fetched *sym_fetch_want(struct sym_fetch *f, const char *build_id);
void sym_fetched_put(struct sym_fetched *e);

/*
 * The fetched table once it arrived, else NULL; never waits. *@dem caches its
 * demangled names (for sym_cache.c, whose lookups are the only ones).
 */
struct sym_table *sym_fetched_table(struct sym_fetched *e, struct sym_dem_cache **dem);

/* Waits for every fetch asked so far, at most until @deadline_ns (mono); true if all ended. */
bool sym_fetch_wait(struct sym_fetch *f, uint64_t deadline_ns);

/*
 * record and report, before naming: waits for the fetches under way, at most
 * one fetch timeout (they run side by side), then says on @out (may be NULL)
 * what they gave. @f may be NULL.
 */
void sym_fetch_settle(struct sym_fetch *f, FILE *out);

void sym_fetch_get_stats(struct sym_fetch *f, struct sym_fetch_stats *out);
const char *sym_fetch_refusal_name(enum sym_fetch_refusal r);

#endif
