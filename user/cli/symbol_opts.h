/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where names of stripped objects come from, shared by record, top and report
 * as one argp child: --debuginfod URLS|off, --debuginfod-timeout,
 * --debuginfod-max-size.  debuginfod is used when $DEBUGINFOD_URLS is set (as
 * gdb and perf do) unless "off"; --debuginfod URLS sets it for this run.
 */
#ifndef CFIPROF_SYMBOL_OPTS_H
#define CFIPROF_SYMBOL_OPTS_H

#include <argp.h>
#include <stdbool.h>

#include "user/symbolize/sym_fetch.h"

struct symbol_opts {
	bool debuginfod; /* resolved when parsing ends */
	struct sym_fetch_opts fetch;
	/* parsed, not yet resolved */
	const char *urls;
	bool off;
};

extern const struct argp symbol_argp;

#endif
