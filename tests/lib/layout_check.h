/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A runtime's offsets table against the runtime's own headers: cmd builds
 * and runs a program (tests/progs/NAME/layout.c) that prints "field value"
 * per line, "version" first, with the names of the table's fields (a shell
 * command, $B a fresh directory to build in, removed after); each
 * value must be the table's entry's for that version (field(entry, name);
 * -1: a name the table does not know, a failure too).
 */
#ifndef CFIPROF_TESTS_LAYOUT_CHECK_H
#define CFIPROF_TESTS_LAYOUT_CHECK_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"

static inline void layout_check(const char *what, const char *cmd,
				const void *(*find)(uint16_t version),
				long (*field)(const void *entry, const char *name), int min_fields)
{
	const void *entry = NULL;
	unsigned long value;
	int fields = 0, version = 0;
	char name[64], dir[] = "/tmp/cfiprof-layout.XXXXXX", *full = NULL;
	FILE *p = NULL;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	if (asprintf(&full, "B=%s; %s", dir, cmd) > 0)
		p = popen(full, "r");

	while (p && fscanf(p, "%63s %lu", name, &value) == 2) {
		long want;

		if (!strcmp(name, "version")) {
			version = (int)value;
			entry = find((uint16_t)value);
			CHECK(entry != NULL, "no entry for the installed %s %lu.%lu", what,
			      value >> 8, value & 0xff);
		}
		if (!entry)
			continue;
		want = field(entry, name);
		CHECK(want == (long)value, "%s: table %ld, headers %lu", name, want, value);
		fields++;
	}
	CHECK(p && pclose(p) == 0 && fields >= min_fields, "layout.c: %d fields read (want %d)",
	      fields, min_fields);
	free(full);
	if (asprintf(&full, "rm -rf %s", dir) > 0)
		CHECK(system(full) == 0, "%s", full);
	free(full);
	printf("  %s %d.%d: %d fields checked\n", what, version >> 8, version & 0xff, fields);
}

#endif
