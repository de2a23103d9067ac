// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Dispatch to the writer of each output format. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "user/output/flamegraph_svg.h"
#include "user/output/folded.h"
#include "user/output/perf_script.h"
#include "user/output/format.h"
#include "user/output/otlp.h"
#include "user/output/pprof.h"
#include "user/output/speedscope.h"
#include "user/output/text_report.h"

#define TEXT_ROWS 40

static const struct {
	const char *name;
	const char *extensions;
} formats[OUT_FORMAT_MAX] = {
#define OUT_FORMAT_ENTRY(e, n, ext) [e] = {n, ext},
    CFI_OUT_FORMATS(OUT_FORMAT_ENTRY)
#undef OUT_FORMAT_ENTRY
};

enum out_format output_format_parse(const char *name)
{
	int i;

	for (i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++) {
		if (!strcmp(name, formats[i].name))
			return (enum out_format)i;
	}
	return OUT_UNKNOWN;
}

const char *output_format_name(enum out_format fmt)
{
	return fmt > OUT_UNKNOWN && fmt < OUT_FORMAT_MAX ? formats[fmt].name : NULL;
}

/* Whether path ends with one of the space-separated suffixes in list. */
static bool ends_with_one_of(const char *path, const char *list)
{
	size_t n = strlen(path);

	while (*list) {
		size_t m = strcspn(list, " ");

		if (m && n >= m && !memcmp(path + n - m, list, m))
			return true;
		list += m;
		list += strspn(list, " ");
	}
	return false;
}

enum out_format output_format_from_path(const char *path)
{
	int i;

	for (i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++) {
		if (ends_with_one_of(path, formats[i].extensions))
			return (enum out_format)i;
	}
	return OUT_UNKNOWN;
}

const char *output_format_names(void)
{
	static char names[128];
	size_t at = 0;
	int i;

	/* written once, at the first call (argp's parse, before any thread) */
	if (names[0])
		return names;
	for (i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++)
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", at ? ", " : "",
				       formats[i].name);
	return names;
}

int output_write(FILE *f, struct profile *p, enum out_format fmt, const char *title,
		 const struct prof_view *v)
{
	static const struct prof_view shown;

	if (fmt != OUT_PPROF && fmt != OUT_OTLP && profile_apply_view(p, v ? v : &shown))
		return -1;
	switch (fmt) {
	case OUT_PPROF:
		return pprof_write(f, p);
	case OUT_OTLP:
		return otlp_write(f, p);
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
