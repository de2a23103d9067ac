/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every refusal of the symbol sources, by cause, for the agent's /metrics
 * (cfiprof_symbols_refused_total), its log-once lines and record's summary.
 */
#ifndef CFIPROF_SYM_REFUSALS_H
#define CFIPROF_SYM_REFUSALS_H

#include <stdint.h>
#include <stdio.h>

#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_fetch.h"

#define SYM_REFUSAL_CAUSES (8 + SYM_FETCH_REFUSED_MAX)

struct sym_refusal {
	const char
	    *cause; /* "minidebuginfo", "fde-budget", "symbol-name", "gopclntab-...", "fetch-..." */
	const char *what; /* for a log line */
	uint64_t n;
};

/* Fills @out with every cause (zeros too; @f may be NULL). */
void sym_refusals(const struct sym_cache *c, struct sym_fetch *f,
		  struct sym_refusal out[SYM_REFUSAL_CAUSES]);

/* One summary line of the causes that refused anything (none: no line). */
void sym_refusals_print(const struct sym_cache *c, struct sym_fetch *f, FILE *out);

#endif
