/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Subcommands of the cfiprof binary; each parses its own arguments with argp. */
#ifndef CFIPROF_COMMANDS_H
#define CFIPROF_COMMANDS_H

int cmd_tables(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_list(int argc, char **argv);

#endif
