/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one escape for names from outside written to a log or a terminal (a
 * mapped path, a .gnu_debuglink, a comm, a perf-map line): a "\n<0>" in one
 * would start a journal entry of its own at a chosen priority, a "\r" or an
 * ESC would rewrite what an operator sees.
 */
#ifndef CFIPROF_ESCAPE_H
#define CFIPROF_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Copies @s into @buf (@len bytes, NUL-terminated when @len > 0) with control
 * characters (below 0x20, and 0x7f) written as \n, \r, \t, \e or \xNN, and
 * each character of @also (NULL: none) preceded by a backslash.  Cut short,
 * never inside an escape, when it does not fit.  Returns @buf.
 */
char *str_escape(char *buf, size_t len, const char *s, const char *also);
/* Whether @s holds a character str_escape would change (with @also NULL). */
bool str_has_control(const char *s);

#endif
