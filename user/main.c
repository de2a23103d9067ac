// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof: dispatches to the subcommand named by the first argument. */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "common/version.h"
#include "user/cli/commands.h"

/* every subcommand's argp answers --version / -V with it */
const char *argp_program_version = cfiprof_version_line;

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{"record", cmd_record, "sample stacks of a pid, a command or the whole system"},
	{"report", cmd_report, "render a recording saved with record --save"},
	{"top", cmd_top, "live view of the hottest functions"},
	{"tables", cmd_tables, "compile an ELF file's DWARF CFI into unwind tables"},
	{"agent", cmd_agent, "continuous whole-host profiling: pprof per interval, push"},
	{"list", cmd_list, "the events record -e takes: perf events, probes, off-CPU"},
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: cfiprof COMMAND [OPTIONS...]\n\n"
		   "Profiler that unwinds user stacks in the kernel from DWARF CFI.\n\nCommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nRun 'cfiprof COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	/* usage errors exit 2, like every other command-line tool */
	argp_err_exit_status = 2;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		puts(cfiprof_version_line);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			char name[64];

			/* so usage messages say "cfiprof record", not "record" */
			snprintf(name, sizeof(name), "cfiprof %s", commands[i].name);
			argv[1] = name;
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "cfiprof: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
