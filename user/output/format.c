// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Dispatch to the writer of each output format. */
#include <string.h>

#include "user/output/flamegraph_svg.h"
#include "user/output/folded.h"
#include "user/output/perf_script.h"
#include "user/output/format.h"
#include "user/output/pprof.h"
#include "user/output/speedscope.h"
#include "user/output/text_report.h"

#define TEXT_ROWS 40

static const struct {
	const char *name;
	enum out_format fmt;
} formats[] = {
	{"folded", OUT_FOLDED},
	{"pprof", OUT_PPROF},
	{"svg", OUT_SVG},
	{"text", OUT_TEXT},
	{"speedscope", OUT_SPEEDSCOPE},
	{"perf-script", OUT_PERF_SCRIPT},
};

static const struct {
	const char *suffix;
	enum out_format fmt;
} extensions[] = {
	{".folded", OUT_FOLDED}, {".collapsed", OUT_FOLDED}, {".pb.gz", OUT_PPROF},
	{".pprof", OUT_PPROF},	 {".pb", OUT_PPROF},	     {".svg", OUT_SVG},
	{".txt", OUT_TEXT},	 {".speedscope.json", OUT_SPEEDSCOPE}, {".json", OUT_SPEEDSCOPE},
	{".perf-script", OUT_PERF_SCRIPT},
};

enum out_format output_format_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(name, formats[i].name))
			return formats[i].fmt;
	}
	return OUT_UNKNOWN;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

enum out_format output_format_from_path(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(extensions) / sizeof(extensions[0]); i++) {
		if (ends_with(path, extensions[i].suffix))
			return extensions[i].fmt;
	}
	return OUT_UNKNOWN;
}

const char *output_format_names(void)
{
	return "folded, pprof, svg, text, speedscope, perf-script";
}

int output_write(FILE *f, struct profile *p, enum out_format fmt, const char *title,
		 const struct prof_view *v)
{
	static const struct prof_view shown;

	if (fmt != OUT_PPROF && profile_apply_view(p, v ? v : &shown))
		return -1;
	switch (fmt) {
	case OUT_PPROF:
		return pprof_write(f, p);
	case OUT_SVG:
		return svg_write(f, p, title);
	case OUT_TEXT:
		return text_report_write(f, p, TEXT_ROWS);
	case OUT_SPEEDSCOPE:
		return speedscope_write(f, p, title);
	case OUT_PERF_SCRIPT:
		return perf_script_write(f, p);
	case OUT_FOLDED:
	case OUT_UNKNOWN:
	default:
		return folded_write_profile(f, p);
	}
}
