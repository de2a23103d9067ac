/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading one CPython code object from another process: its qualified name,
 * file, first line and location table.  The read may block as long as the
 * process's memory does (a FUSE mount's file, a userfaultfd region): only
 * python_names.c's reader threads call it, never the consumer, never under a
 * lock the consumer takes.
 */
#ifndef CFIPROF_PYTHON_CODE_H
#define CFIPROF_PYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct python_offsets;

struct python_code {
	bool ok;	   /* it was a code object */
	char *name, *file; /* one allocation with linetable; NULL unless ok */
	uint8_t *linetable;
	uint32_t linetable_len;
	int32_t firstlineno;
	uint32_t firsttraceable;
	uint64_t nr_units; /* of bytecode (ob_size) */
	size_t bytes;	   /* of the allocation */
};

/* The code object at code in process pid (offsets o; NULL: none) into c; c->ok says if it was one.
 */
void python_code_read(uint32_t pid, const struct python_offsets *o, uint64_t code,
		      struct python_code *c);

#endif
