// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* UTF-8 decoding for the writers whose formats must be valid UTF-8 (SVG, JSON) and the terminal. */
#include <stdbool.h>

#include "user/output/utf8.h"

/* One UTF-8 sequence; an invalid byte reads as U+FFFD (JSON must be UTF-8, a cut comm is not). */
size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		goto bad;
	}
	for (i = 1; i < n; i++) {
		/* a NUL fails this test too, so a truncated sequence never reads past the string */
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*cp = c;
	return n;
bad:
	*cp = 0xfffd;
	return 1;
}


void utf8_printable(char *dst, size_t len, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (!len)
		return;
	while (*s) {
		uint32_t cp;
		size_t n = utf8_next(s, &cp);
		/* C0 and C1 controls (ESC, CSI) and DEL would drive the terminal */
		bool control = cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0xfffd;
		size_t out = control ? 1 : n;

		if (o + out >= len)
			break;
		if (control)
			dst[o] = '?';
		else
			for (size_t i = 0; i < n; i++)
				dst[o + i] = (char)s[i];
		o += out;
		s += n;
	}
	dst[o] = 0;
}
