/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Where a Go program's functions are, by their names in its .gopclntab. */
#ifndef CFIPROF_TESTS_GO_FUNC_H
#define CFIPROF_TESTS_GO_FUNC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "tests/lib/cli_util.h"

/* [*start, *end) of the function name in exe's .gopclntab; false if none */
static inline bool go_func_range(const char *exe, const char *want, uint64_t *start, uint64_t *end)
{
	size_t len = 0;
	char *img = slurp_len(exe, &len);
	struct gopclntab *g = NULL;
	const char *name;
	bool found = false;

	if (img && gopclntab_read_mem(img, len, &g, NULL) == 0)
		for (uint64_t i = 0; i < gopclntab_nfunc(g) && !found; i++)
			found = !gopclntab_func(g, i, start, end, &name) && !strcmp(name, want);
	gopclntab_free(g);
	free(img);
	return found;
}

#endif
