/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the table compiler.  Whole ELF files reach libelf and
 * the section plumbing; small or non-ELF inputs are also wrapped as the
 * .eh_frame and the .debug_frame of a minimal ELF, so the mutator works on
 * CIE/FDE bytes directly instead of mostly breaking the ELF header.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tables/cfi_table.h"
#include "tests/lib/mini_elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything a consumer does with a table, so bad tables fault here. */
static void use_table(const struct cfi_table *t)
{
	static const uint64_t fixed[] = {0,
					 MINI_TEXT_ADDR,
					 MINI_TEXT_ADDR + 1,
					 MINI_TEXT_ADDR + 0x40,
					 MINI_TEXT_ADDR + MINI_TEXT_SIZE - 1,
					 UINT64_MAX};
	char buf[256];
	uint32_t p;
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		cfi_rule_describe(cfi_table_lookup(t, fixed[i]), t->arch, buf, sizeof(buf));
	if (t->max_addr > t->min_addr) {
		cfi_table_lookup(t, t->min_addr);
		cfi_table_lookup(t, t->max_addr - 1);
		cfi_table_lookup(t, t->min_addr + (t->max_addr - t->min_addr) / 2);
	}
	/* the walker trusts these without checking: make violations crash loudly */
	if (!t->nr_rules || t->rules[0].cfa_kind != CFI_CFA_NONE)
		abort();
	for (p = 0; p < t->nr_pages; p++) {
		const struct cfi_page *pg = &t->pages[p];

		if (!pg->nr_rows || (uint64_t)pg->first_row + pg->nr_rows > t->nr_rows ||
		    t->rows[pg->first_row].off != 0 || (p && t->pages[p - 1].page >= pg->page))
			abort();
		for (i = pg->first_row; i < pg->first_row + pg->nr_rows; i++)
			if (t->rows[i].rule >= t->nr_rules)
				abort();
		cfi_table_lookup(t, pg->page << CFI_PAGE_SHIFT);
	}
	for (i = 0; i < t->nr_rules; i++) {
		cfi_rule_format_cfa(&t->rules[i], t->arch, buf, sizeof(buf));
		cfi_rule_format_reg(t->rules[i].rbp_kind, t->rules[i].rbp_off, buf, sizeof(buf));
		cfi_rule_format_reg(t->rules[i].ra_kind, t->rules[i].ra_off, buf, sizeof(buf));
		cfi_unsupported_name(t->rules[i].reason);
	}
}

static void build_one(const uint8_t *buf, size_t len)
{
	struct cfi_build_opts o = {.no_separate_debug = 1};
	struct cfi_table *t = NULL;
	struct cfi_diag diag;
	int rc;

	memset(&diag, 0, sizeof(diag));
	rc = cfi_table_build_mem(buf, len, &o, &t, &diag);
	if (rc > 0 || rc < CFI_ERR_BUDGET || (rc == CFI_OK) != (t != NULL))
		abort();
	cfi_strerror(rc);
	if (t) {
		use_table(t);
		cfi_table_free(t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	build_one(data, size);
	if (size < 64 || memcmp(data, ELFMAG, SELFMAG)) {
		uint8_t *img;
		size_t len;
		int debug;

		for (debug = 0; debug < 2; debug++) {
			img = mini_elf_cfi(data, size, debug, &len);
			if (!img)
				continue;
			build_one(img, len);
			free(img);
		}
	}
	return 0;
}
