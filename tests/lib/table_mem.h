/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The row and rule arrays a table store under test works in (cfiprof sizes them alike). */
#ifndef CFIPROF_TESTS_TABLE_MEM_H
#define CFIPROF_TESTS_TABLE_MEM_H

#include <stdbool.h>
#include <stdlib.h>

#include "tables/cfi_table.h"

#define ROWS_MAX  (1u << 22)
#define RULES_MAX 65536

static struct cfi_row *rows_mem;
static struct cfi_rule *rules_mem;

static inline bool table_mem_alloc(void)
{
	rows_mem = calloc(ROWS_MAX, sizeof(*rows_mem));
	rules_mem = calloc(RULES_MAX, sizeof(*rules_mem));
	return rows_mem && rules_mem;
}

static inline void table_mem_free(void)
{
	free(rows_mem);
	free(rules_mem);
}

#endif
