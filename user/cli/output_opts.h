/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where and how a profile is written, shared by record and report as one argp
 * child: -o FILE, -f FORMAT, -g/--group-by container, -m/--mode OCTAL,
 * --no-inline, --lines.  The
 * parent passes a struct output_opts (mode preset to OUTPUT_DEFAULT_MODE).
 */
#ifndef CFIPROF_OUTPUT_OPTS_H
#define CFIPROF_OUTPUT_OPTS_H

#include <argp.h>
#include <stdbool.h>
#include <sys/types.h>

#include "user/output/format.h"

struct output_opts {
	const char *path; /* NULL: stdout */
	bool set;	  /* -o was given (- included) */
	enum out_format format;
	bool group_by_container;
	mode_t mode;
	bool mode_set;	       /* -m: the files stay root's under sudo */
	struct prof_view view; /* --no-inline, --lines */
};

/* Whether writing @o needs source lines and inline frames looked up (DWARF). */
bool output_needs_lines(const struct output_opts *o);

extern const struct argp output_argp;

#endif
