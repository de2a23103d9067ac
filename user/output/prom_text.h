/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Prometheus text exposition: the lines of one metric family (the agent's /metrics). */
#ifndef CFIPROF_PROM_TEXT_H
#define CFIPROF_PROM_TEXT_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

/* A family's HELP and TYPE lines. */
static inline void prom_header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A family of one sample without labels. */
static inline void prom_metric(FILE *f, const char *name, const char *type, const char *help,
			       double v)
{
	prom_header(f, name, type, help);
	fprintf(f, "%s %.17g\n", name, v);
}

/* One sample of a family under prom_header(): name{key="value"} v */
static inline void prom_labelled(FILE *f, const char *name, const char *key, const char *value,
				 uint64_t v)
{
	fprintf(f, "%s{%s=\"%s\"} %" PRIu64 "\n", name, key, value, v);
}

#endif
