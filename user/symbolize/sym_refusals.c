// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbol sources' refusals by cause; see sym_refusals.h. */
#include "user/symbolize/sym_refusals.h"

#include <inttypes.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "elf/minidebuginfo.h"
#include "user/symbolize/elf_symbols.h"
#include "user/symbolize/perfmap.h"

void sym_refusals(const struct sym_cache *c, struct sym_fetch *f,
		  struct sym_refusal out[SYM_REFUSAL_CAUSES])
{
	static const char *const fetch_what[SYM_FETCH_REFUSED_MAX] = {
	    [SYM_FETCH_REFUSED_RATE] = "more new build-ids a minute than allowed: not fetched",
	    [SYM_FETCH_REFUSED_QUEUE] = "the debuginfod fetch queue was full: not fetched",
	    [SYM_FETCH_REFUSED_ENTRIES] = "too many build-ids in use: not fetched",
	    [SYM_FETCH_REFUSED_MEMORY] = "a fetched symbol table past the memory bound: dropped",
	    [SYM_FETCH_REFUSED_INVALID] =
		"a fetched debug file is not an ELF with the build-id asked for and a .symtab",
	};
	struct sym_cache_stats cs;
	struct sym_fetch_stats fs;
	int i;

	memset(&fs, 0, sizeof(fs));
	sym_cache_get_stats(c, &cs);
	if (f)
		sym_fetch_get_stats(f, &fs);
	out[0] = (struct sym_refusal){"minidebuginfo",
				      "a .gnu_debugdata section corrupt or over its size bound",
				      minidebuginfo_refused_total()};
	out[1] = (struct sym_refusal){"fde-budget",
				      "an object's FDEs over the bound: code no symbol covers "
				      "is not grouped by function",
				      cs.fde_refused};
	out[2] = (struct sym_refusal){"symbol-name",
				      "names over 4 KiB: cut, ending in " ELF_SYMBOL_NAME_CUT,
				      elf_symbols_refused(ELF_SYMBOLS_NAME_CUT)};
	out[3] = (struct sym_refusal){"symbol-budget",
				      "an object's symbols over the count or bytes bound: the rest "
				      "dropped",
				      elf_symbols_refused(ELF_SYMBOLS_BUDGET)};
	out[4] = (struct sym_refusal){"perfmap-lines",
				      "perf-PID.map lines over a map's bound or the bound across "
				      "maps: not kept",
				      perfmap_lines_refused_total()};
	out[5] = (struct sym_refusal){"gopclntab-malformed",
				      "a Go .gopclntab that does not hold together: its functions "
				      "not named",
				      gopclntab_refused_total(GOPCLNTAB_MALFORMED)};
	out[6] = (struct sym_refusal){"gopclntab-budget",
				      "a Go .gopclntab over its byte or function bound: not read, "
				      "or its last names dropped",
				      gopclntab_refused_total(GOPCLNTAB_OVER_BUDGET)};
	out[7] = (struct sym_refusal){"gopclntab-lookup",
				      "a Go function's names or lines over the decoding bound or "
				      "malformed: that frame named without them",
				      gopclntab_refused_total(GOPCLNTAB_LOOKUP)};
	for (i = 0; i < SYM_FETCH_REFUSED_MAX; i++)
		out[8 + i] =
		    (struct sym_refusal){sym_fetch_refusal_name(i), fetch_what[i], fs.refused[i]};
}

void sym_refusals_print(const struct sym_cache *c, struct sym_fetch *f, FILE *out)
{
	struct sym_refusal r[SYM_REFUSAL_CAUSES];
	bool any = false;
	int i;

	sym_refusals(c, f, r);
	for (i = 0; i < SYM_REFUSAL_CAUSES; i++) {
		if (!r[i].n)
			continue;
		fprintf(out, "%s %s %" PRIu64, any ? "," : "cfiprof: symbols refused:", r[i].cause,
			r[i].n);
		any = true;
	}
	if (any)
		fprintf(out, "\n");
}
