/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output formats: chosen by -f or by the extension of -o. */
#ifndef CFIPROF_OUTPUT_FORMAT_H
#define CFIPROF_OUTPUT_FORMAT_H

#include <stdio.h>

#include "user/profile/profile.h"

/*
 * The one list of output formats: X(ENUM, NAME, EXTENSIONS), EXTENSIONS the
 * suffixes of -o that choose it, space-separated, longest first where one
 * ends another.  The enum, -f's parser and help, the extension rule, `cfiprof
 * list --formats` (which the bash completion reads) and the error for an
 * unknown name all come from it; each format's writer is in format.c.  An
 * extension another format's ends (".otlp.pb", ".pb") comes first.
 */
#define CFI_OUT_FORMATS(X)                                                                         \
	X(OUT_FOLDED, "folded", ".folded .collapsed")                                              \
	X(OUT_OTLP, "otlp", ".otlp.pb")                                                            \
	X(OUT_PPROF, "pprof", ".pb.gz .pprof .pb")                                                 \
	X(OUT_SVG, "svg", ".svg")                                                                  \
	X(OUT_TEXT, "text", ".txt")                                                                \
	X(OUT_SPEEDSCOPE, "speedscope", ".speedscope.json .json")                                  \
	X(OUT_PERF_SCRIPT, "perf-script", ".perf-script")

enum out_format {
	OUT_UNKNOWN = 0,
#define OUT_FORMAT_ENUM(e, name, ext) e,
	CFI_OUT_FORMATS(OUT_FORMAT_ENUM)
#undef OUT_FORMAT_ENUM
	    OUT_FORMAT_MAX,
};

/* " folded pprof ...": every name, for help texts built at compile time */
#define OUT_FORMAT_NAME_ITEM(e, name, ext) " " name
#define OUT_FORMAT_NAMES		   CFI_OUT_FORMATS(OUT_FORMAT_NAME_ITEM)

/* The format called name; OUT_UNKNOWN for any other. */
enum out_format output_format_parse(const char *name);
/* The format an -o path's extension chooses; OUT_UNKNOWN when none does. */
enum out_format output_format_from_path(const char *path);
/* The name of fmt ("folded"...); NULL for OUT_UNKNOWN or out of range. */
const char *output_format_name(enum out_format fmt);
/* "folded, pprof, ...": every name, for messages. */
const char *output_format_names(void);
/*
 * Writes @p as @fmt; every format but pprof and otlp shows it through @v (NULL: the
 * default view), which rewrites @p's samples (profile_apply_view).
 */
int output_write(FILE *f, struct profile *p, enum out_format fmt, const char *title,
		 const struct prof_view *v);

#endif
