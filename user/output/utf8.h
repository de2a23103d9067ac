/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* UTF-8 decoding shared by the SVG and speedscope writers and top. */
#ifndef CFIPROF_UTF8_H
#define CFIPROF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes one sequence at s into *cp and returns its length; an invalid or
 * truncated sequence reads as one byte of U+FFFD (a comm cut at 15 bytes can
 * end inside a character).  Never reads past a NUL.
 */
size_t utf8_next(const unsigned char *s, uint32_t *cp);

/*
 * Copies src into dst (len bytes, NUL-terminated) for a terminal: control
 * characters (escape sequences among them) and invalid bytes become '?', so
 * a name chosen by a profiled process cannot drive the terminal; a sequence
 * that does not fit is left out whole.
 */
void utf8_printable(char *dst, size_t len, const char *src);

#endif
