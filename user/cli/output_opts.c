// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The output options of record and report; see output_opts.h. */
#include <string.h>
#include <sys/stat.h>

#include "user/cli/output_opts.h"
#include "user/output/output_file.h"

enum { OPT_NO_INLINE = 0x300, OPT_LINES, OPT_GROUP_BY };

static const struct argp_option output_options[] = {
	{NULL, 0, NULL, 0, "Output:", 3},
	{"output", 'o', "FILE", 0, "write the profile to FILE (default, or -: standard output)", 3},
	{"format", 'f', "FORMAT", 0,
	 "one of:" OUT_FORMAT_NAMES " (default: by the extension of -o, else folded)", 3},
	{"group-by", OPT_GROUP_BY, "container", 0,
	 "group stacks by container (or cgroup): the first frame of folded / flame graph stacks, "
	 "the text report's call tree",
	 3},
	{"mode", 'm', "OCTAL", 0,
	 "permissions of the files written (default 0600, owned by the user who ran sudo; with -m "
	 "they stay root's)",
	 3},
	{"no-inline", OPT_NO_INLINE, NULL, 0,
	 "show inlined functions as part of their caller, not as frames of their own (pprof keeps "
	 "them as lines of the location)",
	 3},
	{"lines", OPT_LINES, NULL, 0, "add the source FILE:LINE of each frame to its name", 3},
	{},
};

/*
 * Whether an -o path without a known extension would have been written as
 * folded text against the user's intent: a regular file's name with an
 * extension (x.png, x.html).  A name without one, a device or FIFO
 * (/dev/null, <(...)) are folded as before.
 */
static bool names_a_format(const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat st;

	base = base ? base + 1 : path;
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return false;
	return *base && strchr(base + 1, '.') != NULL;
}

static error_t parse_output(int key, char *arg, struct argp_state *state)
{
	struct output_opts *o = state->input;

	switch (key) {
	case 'o':
		/* "-" is standard output, as with perf; never a file named "-" */
		o->path = strcmp(arg, "-") ? arg : NULL;
		o->set = true;
		break;
	case 'f':
		o->format = output_format_parse(arg);
		if (o->format == OUT_UNKNOWN)
			argp_error(state, "unknown format '%s' (%s)", arg, output_format_names());
		break;
	case OPT_GROUP_BY:
		if (strcmp(arg, "container"))
			argp_error(state, "--group-by: only 'container' is supported");
		o->group_by_container = true;
		break;
	case 'm':
		if (output_parse_mode(arg, &o->mode))
			argp_error(state, "invalid --mode '%s' (octal, e.g. 0644)", arg);
		o->mode_set = true;
		break;
	case OPT_NO_INLINE:
		o->view.no_inline = true;
		break;
	case OPT_LINES:
		o->view.lines = true;
		break;
	case ARGP_KEY_END:
		if (!o->path || o->format != OUT_UNKNOWN)
			break;
		o->format = output_format_from_path(o->path);
		if (o->format == OUT_UNKNOWN && names_a_format(o->path))
			argp_error(
			    state,
			    "cannot tell the format of '%s' from its extension: give -f FORMAT "
			    "(%s) or one of their extensions (a recording is --save's)",
			    o->path, output_format_names());
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

bool output_needs_lines(const struct output_opts *o)
{
	return o->format == OUT_PPROF || o->format == OUT_OTLP || !o->view.no_inline ||
	       o->view.lines;
}

const struct argp output_argp = {output_options, parse_output, NULL, NULL, NULL, NULL, NULL};
