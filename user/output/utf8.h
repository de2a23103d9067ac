/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* UTF-8 decoding shared by the SVG and speedscope writers. */
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

#endif
