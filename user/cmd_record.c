// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof record: placeholder until the walker lands. */
#include <stdio.h>

#include "commands.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "cfiprof record: not built yet\n");
	return 1;
}
