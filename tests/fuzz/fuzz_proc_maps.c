/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for /proc/PID/maps lines (proc_maps_parse_line): each line
 * of the input, and the whole input as one string, parsed on its own exact
 * allocation, and every accepted entry checked for what callers rely on.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/proc_maps.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void maps_parse_one(const uint8_t *data, size_t size)
{
	struct maps_entry *e = malloc(sizeof(*e));
	char *line = fuzz_strndup(data, size);
	size_t len;

	if (!e)
		abort();
	if (proc_maps_parse_line(line, e) == 0) {
		/* callers use path as a C string inside the line and never see the newline */
		if (e->path < line || e->path > line + size)
			abort();
		len = strlen(e->path);
		if (e->end <= e->start || e->path + len > line + size || len >= PATH_MAX ||
		    memchr(e->path, '\n', len))
			abort();
	}
	free(line);
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start = 0, i;

	maps_parse_one(data, size);
	for (i = 0; i < size; i++) {
		if (data[i] != '\n')
			continue;
		maps_parse_one(data + start, i + 1 - start);
		start = i + 1;
	}
	if (start && start < size)
		maps_parse_one(data + start, size - start);
	return 0;
}
