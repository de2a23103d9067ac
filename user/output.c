// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Dispatch to the writer of each output format. */
#include <string.h>

#include "folded.h"
#include "output.h"

static const struct {
	const char *name;
	enum out_format fmt;
} formats[] = {
	{"folded", OUT_FOLDED},
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
	if (ends_with(path, ".folded") || ends_with(path, ".collapsed"))
		return OUT_FOLDED;
	return OUT_UNKNOWN;
}

const char *output_format_names(void)
{
	return "folded";
}

int output_write(FILE *f, const struct profile *p, enum out_format fmt, const char *title)
{
	(void)title;
	switch (fmt) {
	case OUT_FOLDED:
	case OUT_UNKNOWN:
		return folded_write_profile(f, p);
	default:
		return -1;
	}
}
