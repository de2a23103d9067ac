// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Numbers, durations, sizes and switches; see parse.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts "-1" as a huge value: refuse signs outright */
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* The number at the start of s, and where it ends; -1 unless finite and >= 0. */
static int leading_number(const char *s, double *v, char **end)
{
	errno = 0;
	*v = strtod(s, end);
	return errno || *end == s || !isfinite(*v) ? -1 : 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (leading_number(s, &v, &end) || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (leading_number(s, &v, &end) || v < 0)
		return -1;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "m"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "d"))
		v *= 86400;
	else if (*end && strcmp(end, "s"))
		return -1;
	*out = v;
	return 0;
}

int parse_size(const char *s, double *out)
{
	char *end;
	double v;

	if (leading_number(s, &v, &end) || v < 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M')
		v *= 1024 * 1024, end++;
	else if (*end == 'G')
		v *= 1024.0 * 1024 * 1024, end++;
	if (*end == 'B' || *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "on"))
		*out = true;
	else if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "off"))
		*out = false;
	else
		return -1;
	return 0;
}
