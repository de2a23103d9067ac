// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Escaping names from outside for logs; see escape.h. */
#include "common/escape.h"

#include <stdio.h>
#include <string.h>

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

bool str_has_control(const char *s)
{
	for (; *s; s++)
		if (is_control((unsigned char)*s))
			return true;
	return false;
}

/* The escape of c into out[5]; its length, 1 when c stays as it is. */
static size_t escape_char(unsigned char c, const char *also, char *out)
{
	static const char named[][2] = {{'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}, {0x1b, 'e'}};

	if (!is_control(c)) {
		if (!also || !strchr(also, c)) {
			out[0] = (char)c;
			return 1;
		}
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (named[i][0] == (char)c) {
			out[0] = '\\';
			out[1] = named[i][1];
			return 2;
		}
	}
	snprintf(out, 5, "\\x%02x", c);
	return 4;
}

char *str_escape(char *buf, size_t len, const char *s, const char *also)
{
	size_t o = 0, n;
	char e[5];

	if (!len)
		return buf;
	for (; *s; s++) {
		n = escape_char((unsigned char)*s, also, e);
		if (o + n >= len)
			break;
		memcpy(buf + o, e, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}
