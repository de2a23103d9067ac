// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The symbol options of record, top and report; see symbol_opts.h. */
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "user/cli/symbol_opts.h"

enum {
	OPT_DEBUGINFOD = 600,
	OPT_DEBUGINFOD_TIMEOUT,
	OPT_DEBUGINFOD_MAX_SIZE,
};

static const struct argp_option symbol_options[] = {
    {NULL, 0, NULL, 0, "Names of stripped objects:", 6},
    {"debuginfod", OPT_DEBUGINFOD, "URLS|off", 0,
     "fetch the debug files of objects without symbols by build-id from these debuginfod "
     "servers (default: $DEBUGINFOD_URLS when set; off: never)",
     6},
    {"debuginfod-timeout", OPT_DEBUGINFOD_TIMEOUT, "DURATION", 0,
     "one fetch, connection to last byte (default 10s); record and report wait at most this "
     "long at the end for fetches under way",
     6},
    {"debuginfod-max-size", OPT_DEBUGINFOD_MAX_SIZE, "SIZE", 0,
     "largest debug file fetched (default 512M)", 6},
    {},
};

static error_t parse_symbols(int key, char *arg, struct argp_state *state)
{
	struct symbol_opts *o = state->input;
	const char *env;
	double v;

	switch (key) {
	case OPT_DEBUGINFOD:
		if (!*arg)
			argp_error(state, "invalid --debuginfod '' (URLS or off)");
		o->off = !strcmp(arg, "off");
		o->urls = o->off ? NULL : arg;
		break;
	case OPT_DEBUGINFOD_TIMEOUT:
		if (parse_seconds(arg, &v) || v < 0.1 || v > 3600)
			argp_error(state, "invalid --debuginfod-timeout '%s' (0.1s..1h)", arg);
		o->fetch.dbgd.timeout_ns = (uint64_t)(v * 1e9);
		break;
	case OPT_DEBUGINFOD_MAX_SIZE:
		if (parse_size(arg, &v) || v < 4096 || v > 1e12)
			argp_error(state, "invalid --debuginfod-max-size '%s' (4K..1T)", arg);
		o->fetch.dbgd.max_bytes = (uint64_t)v;
		break;
	case ARGP_KEY_END:
		/* libdebuginfod reads its servers from the environment; no thread runs yet */
		if (o->urls && setenv("DEBUGINFOD_URLS", o->urls, 1))
			argp_failure(state, 2, 0, "cannot set DEBUGINFOD_URLS");
		env = getenv("DEBUGINFOD_URLS");
		o->debuginfod = !o->off && env && env[strspn(env, " \t")];
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp symbol_argp = {symbol_options, parse_symbols, NULL, NULL, NULL, NULL, NULL};
