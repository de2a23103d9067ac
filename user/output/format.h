/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output formats: chosen by -f or by the extension of -o. */
#ifndef CFIPROF_OUTPUT_FORMAT_H
#define CFIPROF_OUTPUT_FORMAT_H

#include <stdio.h>

#include "user/profile/profile.h"

enum out_format {
	OUT_UNKNOWN = 0,
	OUT_FOLDED,
	OUT_PPROF,
	OUT_SVG,
	OUT_TEXT,
	OUT_SPEEDSCOPE,
	OUT_PERF_SCRIPT,
};

/* "folded", "pprof", "svg", "text", "speedscope", "perf-script"; OUT_UNKNOWN otherwise. */
enum out_format output_format_parse(const char *name);
/* By extension: .folded .collapsed -> folded, .pb.gz .pprof -> pprof, .svg, .txt, .json,
 * .perf-script. */
enum out_format output_format_from_path(const char *path);
const char *output_format_names(void);
/*
 * Writes @p as @fmt; every format but pprof shows it through @v (NULL: the
 * default view), which rewrites @p's samples (profile_apply_view).
 */
int output_write(FILE *f, struct profile *p, enum out_format fmt, const char *title,
		 const struct prof_view *v);

#endif
