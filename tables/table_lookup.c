// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rule in force at an address of a built table, in C: what the tests, the
 * oracle and the fuzzers check tables with (the walker has its own, bpf/walker.h).
 */
#include "tables/cfi_table.h"

const struct cfi_rule *cfi_table_lookup(const struct cfi_table *t, uint64_t addr)
{
	uint64_t page = addr >> CFI_PAGE_SHIFT;
	uint16_t off = (uint16_t)(addr & (CFI_PAGE_SIZE - 1));
	uint32_t lo = 0, hi = t->nr_pages;
	const struct cfi_page *pg;
	const struct cfi_row *rows;
	const struct cfi_rule *r;
	uint32_t start;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->pages[mid].page < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nr_pages || t->pages[lo].page != page)
		return &t->rules[CFI_RULE_NONE];
	pg = &t->pages[lo];
	rows = t->rows + pg->first_row;
	/* last row with row.off <= off; rows[0].off == 0 by construction */
	lo = 0;
	hi = pg->nr_rows;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	r = &t->rules[rows[lo].rule];
	start = rows[lo].off;
	/* the next row folded into this one (see struct cfi_rule) */
	if (r->next_at && off - start >= r->next_at) {
		start += r->next_at;
		r = &t->rules[r->next_rule];
	}
	if (r->hole_len) {
		uint32_t d = (uint32_t)off - start;
		uint32_t next = lo + 1 < pg->nr_rows ? rows[lo + 1].off : CFI_PAGE_SIZE;

		if (r->hole_off ? d >= r->hole_off && d < (uint32_t)r->hole_off + r->hole_len
				: off >= next - r->hole_len)
			return &t->rules[CFI_RULE_NONE];
	}
	return r;
}
