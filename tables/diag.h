/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The table compiler's diagnostics: every problem is counted in the caller's
 * struct cfi_diag, the first few kept as "file: section+0xoffset: message".
 */
#ifndef CFI_TABLES_DIAG_H
#define CFI_TABLES_DIAG_H

#include <stdint.h>

#include "tables/cfi_table.h"

struct diag_ctx {
	struct cfi_diag *diag; /* NULL: count nothing */
	const char *file;
};

void diag_add(struct diag_ctx *d, const char *section, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
