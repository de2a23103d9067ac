/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of PHP frames: each zend_function a sample's frames point at, read
 * from the process once (code_names.c): "Class::method", "function",
 * "{closure}", "{main}" for a file's code; its file; the line the frame
 * runs (BPF read it from its opline) or its first.
 */
#ifndef CFIPROF_PHP_NAMES_H
#define CFIPROF_PHP_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

struct php_offsets;

/*
 * How PHP's frames are named (code_names.h): the reader's ctx is the
 * runtime's struct runtime_parts, whose detector says each process's version.
 */
extern const struct code_names_ops php_name_ops;

/* What the profile names the frames with (names NULL: "[php]", placed by ZEND_CALL_TOP). */
void php_names_namer(struct code_names *names, struct interp_namer *out);

/*
 * The zend_function at addr of process pid (offsets o) into f: its name
 * ("Class::method", "function"; "" for a file's code), file ("" for a
 * function of C), first line, kind its type (ZEND_USER_FUNCTION...).
 * f->name: free.  For tests too.
 */
void php_function_read(uint32_t pid, const struct php_offsets *o, uint64_t addr,
		       struct code_name *f);

#endif
