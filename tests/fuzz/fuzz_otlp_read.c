/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for OTLP profiles files: what `cfiprof report FILE.otlp.pb`
 * does with FILE: otlp_read, then every output format written to /dev/null
 * (the reader's profile goes through every writer, OTLP's own among them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "user/output/format.h"
#include "user/output/otlp_read.h"
#include "user/profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct profile p;
	char err[256];

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null || size > OTLP_READ_MAX || otlp_read(data, size, &p, err, sizeof(err)))
		return 0;
	for (int f = OUT_UNKNOWN + 1; f < OUT_FORMAT_MAX; f++) {
		/* each writer gets the profile as read: views rewrite it */
		struct profile q;

		if (otlp_read(data, size, &q, err, sizeof(err)))
			abort(); /* read once, it must read again */
		output_write(null, &q, (enum out_format)f, "fuzz", NULL);
		profile_free(&q);
	}
	profile_free(&p);
	return 0;
}
