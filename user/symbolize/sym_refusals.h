/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every refusal of the symbol sources of stripped objects, by cause, for the
 * agent's /metrics (cfiprof_symbols_refused_total) and its log-once lines.
 */
#ifndef CFIPROF_SYM_REFUSALS_H
#define CFIPROF_SYM_REFUSALS_H

#include <stdint.h>

#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_fetch.h"

#define SYM_REFUSAL_CAUSES (2 + SYM_FETCH_REFUSED_MAX)

struct sym_refusal {
	const char *cause; /* "minidebuginfo", "fde-budget", "fetch-..." */
	const char *what;  /* for a log line */
	uint64_t n;
};

/* Fills @out with every cause (zeros too; @f may be NULL). */
void sym_refusals(const struct sym_cache *c, struct sym_fetch *f,
		  struct sym_refusal out[SYM_REFUSAL_CAUSES]);

#endif
