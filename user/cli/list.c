// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof list: the events -e takes (also `record -e help`), or the output formats. */
#include <argp.h>
#include <stdbool.h>
#include <stdio.h>

#include "user/cli/commands.h"
#include "user/output/format.h"
#include "user/session/event_spec.h"

enum { OPT_FORMATS = 0x400 };

static const struct argp_option list_options[] = {
    {"formats", OPT_FORMATS, NULL, 0, "list the output formats -f takes, one a line", 0},
    {},
};

static error_t parse_list(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	if (key != OPT_FORMATS)
		return ARGP_ERR_UNKNOWN;
	*(bool *)state->input = true;
	return 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct argp argp = {list_options,
					 parse_list,
					 NULL,
					 "List the perf events and explain the probe syntax that "
					 "record -e and top -e take; with "
					 "--formats, the output formats.",
					 NULL,
					 NULL,
					 NULL};
	bool formats = false;

	if (argp_parse(&argp, argc, argv, 0, NULL, &formats))
		return 2;
	if (formats) {
		/* what the bash completion offers after -f */
		for (int i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++)
			printf("%s\n", output_format_name((enum out_format)i));
		return 0;
	}
	event_print_list(stdout);
	return 0;
}
