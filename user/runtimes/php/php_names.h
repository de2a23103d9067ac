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
#include "user/runtimes/runtime_detect.h"
#include "user/symbolize/runtime_units.h"

struct php_names;

/* rd: the detector whose processes' versions say what to read (NULL: none read). */
struct php_names *php_names_new(struct runtime_detect *rd);
void php_names_free(struct php_names *pn);
struct code_names *php_names_reader(struct php_names *pn);

/* What the profile names pn's frames with (pn NULL: "[php]", placed by ZEND_CALL_TOP). */
void php_names_namer(struct php_names *pn, struct interp_namer *out);
/* Whether a native frame's name is PHP's executor loop, where PHP frames go. */
bool php_is_eval_frame(const char *native_name);

/* One function as read: for tests too. */
struct php_function {
	bool ok;      /* it was a function */
	uint8_t type; /* ZEND_USER_FUNCTION (2), ZEND_INTERNAL_FUNCTION (1), ZEND_EVAL_CODE (4) */
	uint32_t line_start;
	char *name; /* "Class::method", "function"; NULL for a file's code */
	char *file; /* "" for a function of C; one allocation with name */
	size_t bytes;
};

struct php_offsets;
/* The function at addr of process pid (offsets o) into f (f->name: free). */
void php_function_read(uint32_t pid, const struct php_offsets *o, uint64_t addr,
		       struct php_function *f);

#endif
