/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading an OTLP ProfilesData message (or an ExportProfilesServiceRequest:
 * the same fields) back into a profile, so `report x.otlp.pb` renders it in
 * any format.  The file is untrusted: every index is checked against its
 * table (one outside reads as none), malformed protobuf is refused, and the
 * file is read whole up to OTLP_READ_MAX bytes.
 */
#ifndef CFIPROF_OUTPUT_OTLP_READ_H
#define CFIPROF_OUTPUT_OTLP_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "user/profile/profile.h"

/* Largest file read: the tables it makes are a few times its size. */
#define OTLP_READ_MAX (64u << 20)

/* The message in data as a profile (profile_free frees it); 0, or -1 with why in err. */
int otlp_read(const uint8_t *data, size_t len, struct profile *p, char *err, size_t errlen);
/* The same from a file read whole; -1 with why in err (too large, unreadable, malformed). */
int otlp_read_file(FILE *f, struct profile *p, char *err, size_t errlen);

#endif
