/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Field offsets of the supported PHP versions (non-thread-safe builds):
 * what BPF reads of the executor's frames (struct cfi_php_proc) and what
 * user space reads of a function to name it.  Debian ships no debug
 * information: they are PHP's own headers', checked against offsetof()
 * over the installed php8.2-dev headers by tests/unit/test_php.c.  arm64
 * has the same layout (no field follows an embedded jmp_buf), shown end to
 * end in the arm64 guest against PHP's own backtraces
 * (tests/e2e/test_arm64_guest.c).
 */
#ifndef CFIPROF_PHP_OFFSETS_H
#define CFIPROF_PHP_OFFSETS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct php_offsets {
	uint16_t version;	 /* major << 8 | minor */
	const char *name;	 /* "8.2" */
	uint32_t api;		 /* its ZEND_MODULE_API_NO, in the binary's "API20220829,NTS" */
	struct cfi_php_proc bpf; /* the offsets; executor_globals is the process's */
	/* zend_function (its common part and zend_op_array) */
	uint16_t func_name;	  /* .common.function_name: a zend_string, NULL for code */
	uint16_t func_scope;	  /* .common.scope: a zend_class_entry, NULL for none */
	uint16_t func_filename;	  /* .op_array.filename */
	uint16_t func_line_start; /* .op_array.line_start */
	uint16_t func_read;	  /* bytes read of a function: past every field above */
	uint16_t ce_name;	  /* zend_class_entry.name */
	uint16_t str_len;	  /* zend_string.len */
	uint16_t str_val;	  /* .val */
};

/* The entry of a version, NULL when it has none. */
const struct php_offsets *php_offsets_find(uint16_t version);
/* The version (major << 8 | minor) a ZEND_MODULE_API_NO is PHP's; 0 for one not known. */
uint16_t php_version_of_api(uint32_t api);

#endif
