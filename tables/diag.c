// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Diagnostics of the table compiler; see diag.h. */
#include "tables/diag.h"

#include <stdarg.h>
#include <stdio.h>

#include "common/escape.h"

void diag_add(struct diag_ctx *d, const char *section, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	char raw[sizeof(d->diag->msg[0])], *m;
	int n;

	if (!d || !d->diag)
		return;
	if (d->diag->count < CFI_DIAG_KEEP) {
		m = d->diag->msg[d->diag->count];
		n = snprintf(raw, sizeof(raw), "%s: %s+0x%llx: ", d->file, section,
			     (unsigned long long)offset);
		if (n >= 0 && (size_t)n < sizeof(raw)) {
			va_start(ap, fmt);
			vsnprintf(raw + n, sizeof(raw) - (size_t)n, fmt, ap);
			va_end(ap);
		}
		/* paths and debuglink names come from the object: printed as they are kept */
		str_escape(m, sizeof(d->diag->msg[0]), raw, NULL);
	}
	d->diag->count++;
}
