// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof list: the events -e takes (also `record -e help`). */
#include <argp.h>
#include <stdio.h>

#include "user/cli/commands.h"
#include "user/session/event_spec.h"

int cmd_list(int argc, char **argv)
{
	static const struct argp argp = {
	    NULL,
	    NULL,
	    NULL,
	    "List the perf events and explain the probe syntax that record -e and top -e take.",
	    NULL,
	    NULL,
	    NULL};

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	event_print_list(stdout);
	return 0;
}
