/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Parsing numbers, durations, sizes and switches from the command line and
 * the agent's config file: one set of rules, so "-F 99" and "freq = 99" are
 * refused or accepted alike.  Every function returns 0, or -1 without
 * touching *out when the whole string is not a valid value in range.
 */
#ifndef CFIPROF_PARSE_H
#define CFIPROF_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Decimal integer in [min, max]. */
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* A number, then nothing: "12", "1e6", "0.5". */
int parse_double(const char *s, double *out);
/* "90", "90s", "250ms", "1.5m", "2h", "7d" -> seconds (>= 0). */
int parse_seconds(const char *s, double *out);
/* "1048576", "512K", "100M", "1G", "1GiB" (powers of 1024) -> bytes (>= 0). */
int parse_size(const char *s, double *out);
/* true/yes/on/1, false/no/off/0. */
int parse_bool(const char *s, bool *out);

#endif
