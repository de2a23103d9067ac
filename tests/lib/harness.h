/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Minimal assertion harness: every test binary ends with the line
 * "N passed, M failed" and exits non-zero on any failure; tests/run.sh sums them.
 */
#ifndef CFIPROF_HARNESS_H
#define CFIPROF_HARNESS_H

#include <stdio.h>

static int harness_passed, harness_failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			harness_passed++;                                                          \
		} else {                                                                           \
			harness_failed++;                                                          \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

#define HARNESS_DONE()                                                                             \
	(printf("%d passed, %d failed\n", harness_passed, harness_failed), harness_failed ? 1 : 0)

#endif
