// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof list: the events -e takes (also `record -e help`), the output
 * formats or the language runtimes.
 */
#include <argp.h>
#include <stdbool.h>
#include <stdio.h>

#include "user/cli/commands.h"
#include "user/output/format.h"
#include "user/session/event_catalog.h"
#include "user/session/event_spec.h"
#include "user/session/runtimes.h"

enum { OPT_FORMATS = 0x400, OPT_RUNTIMES };

static const struct argp_option list_options[] = {
    {"formats", OPT_FORMATS, NULL, 0, "list the output formats -f takes, one a line", 0},
    {"runtimes", OPT_RUNTIMES, NULL, 0, "list the language runtimes --runtimes takes, one a line",
     0},
    {},
};

struct list_args {
	bool formats, runtimes;
	const char *pattern;
};

static error_t parse_list(int key, char *arg, struct argp_state *state)
{
	struct list_args *a = state->input;

	switch (key) {
	case OPT_FORMATS:
		a->formats = true;
		break;
	case OPT_RUNTIMES:
		a->runtimes = true;
		break;
	case ARGP_KEY_ARG:
		if (a->pattern)
			argp_error(state, "one PATTERN at most");
		a->pattern = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct argp argp = {list_options,
					 parse_list,
					 "[PATTERN]",
					 "List the perf events and explain the probe syntax that "
					 "record -e and top -e take; with PATTERN (a glob, as "
					 "perf list and bpftrace -l take), the events of this machine "
					 "that match it: perf events, tracepoints, kprobes; with "
					 "--formats, the output formats; with --runtimes, the "
					 "language runtimes.\v"
					 "Examples:\n  cfiprof list 'tracepoint:sched:*'\n"
					 "  cfiprof list 'kprobe:vfs_*'\n  cfiprof list '*faults'",
					 NULL,
					 NULL,
					 NULL};
	struct list_args a = {0};
	char err[256];
	long n;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	if (a.pattern) {
		n = event_catalog_print(stdout, a.pattern, err, sizeof(err));
		if (n < 0)
			fprintf(stderr, "cfiprof list: %s\n", err);
		else if (n == 0)
			fprintf(stderr, "cfiprof list: no event matches '%s'\n", a.pattern);
		return n > 0 ? 0 : 1;
	}
	if (a.formats) {
		/* what the bash completion offers after -f */
		for (int i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++)
			printf("%s\n", output_format_name((enum out_format)i));
		return 0;
	}
	if (a.runtimes) {
		/* what the bash completion offers after --runtimes */
#define RUNTIME_NAME(id, value, name, tag, frames, type) printf("%s\n", #name);
		CFI_RUNTIMES(RUNTIME_NAME)
#undef RUNTIME_NAME
		return 0;
	}
	event_print_list(stdout);
	return 0;
}
