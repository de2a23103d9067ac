// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Diagnostics of the table compiler; see diag.h. */
#include "tables/diag.h"

#include <stdarg.h>
#include <stdio.h>

void diag_add(struct diag_ctx *d, const char *section, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	char *m;
	int n;

	if (!d || !d->diag)
		return;
	if (d->diag->count < CFI_DIAG_KEEP) {
		m = d->diag->msg[d->diag->count];
		n = snprintf(m, sizeof(d->diag->msg[0]), "%s: %s+0x%llx: ", d->file, section,
			     (unsigned long long)offset);
		if (n >= 0 && (size_t)n < sizeof(d->diag->msg[0])) {
			va_start(ap, fmt);
			vsnprintf(m + n, sizeof(d->diag->msg[0]) - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	d->diag->count++;
}
