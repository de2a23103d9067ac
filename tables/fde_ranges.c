// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The address ranges of an object's FDEs, for the symbolizer: an FDE's
 * initial location is the start of the function it describes, so code no
 * symbol covers (a stripped object's static functions) can still be grouped
 * by function.  The same parser as the tables, without running any CFA
 * program: only the FDE headers are read.
 */
#include <stdlib.h>
#include <string.h>

#include "tables/diag.h"
#include "tables/elf_input.h"

static int range_cmp(const void *a, const void *b)
{
	const struct cfi_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* the longest first at one start: the duplicates after it are dropped */
	return x->end > y->end ? -1 : x->end < y->end;
}

int cfi_fde_ranges_fd(int fd, const struct cfi_budget *budget, struct cfi_range **out, uint64_t *nr,
		      struct cfi_diag *diag)
{
	struct cfi_build_opts opts = {.no_separate_debug = 1};
	struct diag_ctx dc = {diag, "<fd>"};
	struct cfi_parse p = {0};
	struct cfi_table t = {0};
	struct elf_input in;
	struct cfi_range *r = NULL;
	uint64_t i, n = 0;
	int err;

	*out = NULL;
	*nr = 0;
	err = elf_input_open(&in, fd, NULL, 0, &dc);
	if (err)
		return err;
	p.diag = &dc;
	p.stats = &t.stats;
	budget_start(&p.budget, budget);
	err = elf_input_parse(&in, NULL, NULL, &opts, &p, &t);
	if (err)
		goto out;
	if (p.nr_fdes) {
		r = malloc(p.nr_fdes * sizeof(*r));
		if (!r) {
			err = CFI_ERR_NOMEM;
			goto out;
		}
	}
	for (i = 0; i < p.nr_fdes; i++) {
		r[i].start = p.fdes[i].pc_begin;
		r[i].end = p.fdes[i].pc_end;
	}
	if (p.nr_fdes)
		qsort(r, p.nr_fdes, sizeof(*r), range_cmp);
	/* .eh_frame and .debug_frame often describe the same function: keep it once */
	for (i = 0; i < p.nr_fdes; i++) {
		if (n && r[n - 1].start == r[i].start)
			continue;
		r[n++] = r[i];
	}
	*out = r;
	*nr = n;
	r = NULL;
out:
	free(r);
	cfi_parse_free(&p);
	elf_input_close(&in);
	return err;
}
