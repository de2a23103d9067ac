/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The source line of a Python instruction, from its code object's table (any version). */
#ifndef CFIPROF_PYTHON_LINES_H
#define CFIPROF_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "user/runtimes/python/python_offsets.h"

/*
 * CPython 3.11's location table (co_linetable, Objects/locations.md): the
 * line of the code unit at index unit, starting from firstlineno; 0 when it
 * has none or the table ends before it.  For tests too.
 */
uint32_t python_linetable_line(const uint8_t *table, size_t len, int32_t firstlineno,
			       uint32_t unit);

/* The same for a table of kind's format (3.11 on, 3.10's co_linetable, co_lnotab). */
uint32_t python_code_line(enum python_code_kind kind, const uint8_t *table, size_t len,
			  int32_t firstlineno, uint32_t unit);

#endif
