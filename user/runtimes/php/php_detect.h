/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run PHP, of which version: a php binary or libphp whose
 * .dynsym has executor_globals (a non-thread-safe build: a thread-safe one
 * keeps its globals per thread) and whose "API20220829,NTS" build id names
 * the Zend API, hence the version.  Found by runtime_detect.c.
 */
#ifndef CFIPROF_PHP_DETECT_H
#define CFIPROF_PHP_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/runtime_detect.h"

/* what an object says of PHP */
struct php_object {
	uint64_t executor_globals; /* its address in the file (0: thread-safe, or none) */
	uint32_t api;		   /* ZEND_MODULE_API_NO, 0 when not found */
	bool thread_safe;	   /* "API...,TS" */
};

extern const struct detect_ops php_detect_ops;

/* What the ELF file fd says of PHP: 0 when it is a PHP build, -1 when not.  For tests too. */
int php_elf_info(int fd, struct php_object *out);

#endif
