// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof tables FILE: compile one file's CFI and print rows or statistics. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "common/heap.h"
#include "user/cli/commands.h"
#include "user/session/privileges.h"
#include "tables/cfi_table.h"

static struct tables_args {
	const char *file;
	int dump, stats, json;
	int no_debug_frame;
	const char *debug_root;
} args;

static const struct argp_option opts[] = {
	{"dump", 'D', NULL, 0, "print every compact row (readelf frames-interp columns)", 0},
	{"stats", 's', NULL, 0, "print table statistics (default)", 0},
	{"json", 'j', NULL, 0, "print statistics as JSON", 0},
	{"no-debug-frame", 'n', NULL, 0, "ignore .debug_frame (only .eh_frame)", 0},
	{"debug-root", 'r', "DIR", 0, "root of separate debug files (default /usr/lib/debug)", 0},
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'D':
		args.dump = 1;
		break;
	case 's':
		args.stats = 1;
		break;
	case 'j':
		args.json = 1;
		break;
	case 'n':
		args.no_debug_frame = 1;
		break;
	case 'r':
		args.debug_root = arg;
		break;
	case ARGP_KEY_ARG:
		if (args.file)
			argp_error(state, "only one FILE");
		args.file = arg;
		break;
	case ARGP_KEY_END:
		if (!args.file)
			argp_error(state, "FILE is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* One row as readelf would show it: rule r from addr on, its gap (if any) before next. */
static void dump_row(const struct cfi_table *t, const struct cfi_rule *r, uint64_t addr,
		     uint64_t next)
{
	char cfa[48], rbp[16], ra[16], desc[160];

	cfi_rule_format_cfa(r, t->arch, cfa, sizeof(cfa));
	cfi_rule_format_reg(r->rbp_kind, r->rbp_off, rbp, sizeof(rbp));
	cfi_rule_format_reg(r->ra_kind, r->ra_off, ra, sizeof(ra));
	cfi_rule_describe(r, t->arch, desc, sizeof(desc));
	printf("%016" PRIx64 " %-8s %-6s %-6s %s\n", addr, cfa,
	       r->cfa_kind == CFI_CFA_NONE ? "-" : rbp, r->cfa_kind == CFI_CFA_NONE ? "-" : ra,
	       r->cfa_kind == CFI_CFA_NONE ? "no-info" : desc);
	if (r->hole_len)
		printf("%016" PRIx64 " %-8s %-6s %-6s no-info (gap of %u bytes)\n",
		       r->hole_off ? addr + r->hole_off : next - r->hole_len, "none", "-", "-",
		       r->hole_len);
}

/* Every row, a pair (see struct cfi_rule) as the two it stands for. */
static void dump_rows(const struct cfi_table *t)
{
	uint32_t p, i;

	printf("%-16s %-8s %-6s %-6s %s\n", "LOC", "CFA", t->arch == CFI_ARCH_ARM64 ? "x29" : "rbp",
	       "ra", "rule");
	for (p = 0; p < t->nr_pages; p++) {
		const struct cfi_page *pg = &t->pages[p];
		uint64_t base = pg->page << CFI_PAGE_SHIFT;

		for (i = 0; i < pg->nr_rows; i++) {
			const struct cfi_row *row = &t->rows[pg->first_row + i];
			const struct cfi_rule *r = &t->rules[row->rule];
			uint64_t next =
			    base + (i + 1 < pg->nr_rows ? t->rows[pg->first_row + i + 1].off
							: CFI_PAGE_SIZE);

			if (r->next_at) {
				struct cfi_rule first = *r;

				first.next_at = 0;
				first.next_rule = 0;
				dump_row(t, &first, base + row->off, base + row->off + r->next_at);
				dump_row(t, &t->rules[r->next_rule], base + row->off + r->next_at,
					 next);
			} else {
				dump_row(t, r, base + row->off, next);
			}
		}
	}
}

static void print_stats(const struct cfi_table *t)
{
	const struct cfi_stats *s = &t->stats;
	int i;

	printf("file:            %s\n", args.file);
	printf("build-id:        %s\n", t->build_id[0] ? t->build_id : "(none)");
	printf("architecture:    %s\n", cfi_arch_name(t->arch));
	printf("sources:        %s%s%s%s%s\n",
	       s->sources & (1 << CFI_SRC_EH_FRAME) ? " .eh_frame" : "",
	       s->sources & (1 << CFI_SRC_DEBUG_FRAME) ? " .debug_frame" : "",
	       s->sources & (1 << CFI_SRC_DEBUG_FRAME_SEP) ? " .debug_frame(separate file)" : "",
	       s->sources & (1 << CFI_SRC_GOPCLNTAB) ? " .gopclntab" : "",
	       s->sources & (1 << CFI_SRC_STUBS) ? " .plt/.init/.fini(stubs)" : "");
	printf("CIEs:            %" PRIu64 "\n", s->cies);
	printf("FDEs:            %" PRIu64 " (bad %" PRIu64 ", overlapping %" PRIu64 ")\n", s->fdes,
	       s->fdes_bad, s->fdes_overlap);
	printf("raw rows:        %" PRIu64 "\n", s->raw_rows);
	printf("compact rows:    %u\n", t->nr_rows);
	printf("pages:           %u\n", t->nr_pages);
	printf("distinct rules:  %u\n", t->nr_rules);
	printf("bytes:           %" PRIu64 " (rows %" PRIu64 " + index %" PRIu64
	       " + dictionary %" PRIu64 ")\n",
	       s->bytes_total, s->bytes_rows, s->bytes_index, s->bytes_rules);
	printf("bytes/raw row:   %.3f\n", s->raw_rows ? (double)s->bytes_total / s->raw_rows : 0.0);
	printf("bytes/compact row: %.3f\n", t->nr_rows ? (double)s->bytes_total / t->nr_rows : 0.0);
	for (i = 1; i < CFI_UNSUP_MAX; i++)
		printf("unsupported %-22s %" PRIu64 "\n", cfi_unsupported_name(i), s->unsupported[i]);
	printf("build time:      %.3f ms\n", s->build_ns / 1e6);
}

static void print_json(const struct cfi_table *t)
{
	const struct cfi_stats *s = &t->stats;
	int i;

	printf("{\"file\":\"%s\",\"build_id\":\"%s\",\"arch\":\"%s\",\"cies\":%" PRIu64
	       ",\"fdes\":%" PRIu64 ",\"fdes_bad\":%" PRIu64 ",\"fdes_overlap\":%" PRIu64
	       ",\"raw_rows\":%" PRIu64
	       ",\"compact_rows\":%u,\"pages\":%u,\"rules\":%u,\"bytes\":%" PRIu64
	       ",\"bytes_rows\":%" PRIu64 ",\"bytes_index\":%" PRIu64 ",\"bytes_rules\":%" PRIu64
	       ",\"bytes_per_raw_row\":%.4f,\"build_ms\":%.3f,\"unsupported\":{",
	       args.file, t->build_id, cfi_arch_name(t->arch), s->cies, s->fdes, s->fdes_bad,
	       s->fdes_overlap, s->raw_rows, t->nr_rows, t->nr_pages, t->nr_rules, s->bytes_total,
	       s->bytes_rows, s->bytes_index, s->bytes_rules,
	       s->raw_rows ? (double)s->bytes_total / s->raw_rows : 0.0, s->build_ns / 1e6);
	for (i = 1; i < CFI_UNSUP_MAX; i++)
		printf("%s\"%s\":%" PRIu64, i > 1 ? "," : "", cfi_unsupported_name(i),
		       s->unsupported[i]);
	printf("}}\n");
}

int cmd_tables(int argc, char **argv)
{
	static const struct argp argp = {
		opts, parse_opt, "FILE",
		"Compile the DWARF CFI (.eh_frame, .debug_frame) of one ELF file into cfiprof's "
		"compact unwind tables and print statistics or rows.",
		NULL, NULL, NULL};
	struct cfi_build_opts bo = {0};
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	unsigned int i;
	int err;

	/* the heap record's builds use: the build's figures are record's */
	heap_prefer_huge_pages(HEAP_RESERVE);
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/* an ELF file is untrusted input and compiling it needs no privilege */
	if (privileges_drop_all()) {
		fprintf(stderr, "cfiprof tables: cannot drop capabilities: %s\n", strerror(errno));
		return 1;
	}
	bo.no_debug_frame = args.no_debug_frame;
	bo.debug_root = args.debug_root;
	err = cfi_table_build_file(args.file, &bo, &t, &diag);
	for (i = 0; i < diag.count && i < CFI_DIAG_KEEP; i++)
		fprintf(stderr, "warning: %s\n", diag.msg[i]);
	if (diag.count > CFI_DIAG_KEEP)
		fprintf(stderr, "warning: ... %u more problems\n", diag.count - CFI_DIAG_KEEP);
	if (err) {
		fprintf(stderr, "cfiprof tables: %s: %s\n", args.file, cfi_strerror(err));
		return 1;
	}
	if (args.dump)
		dump_rows(t);
	if (args.json)
		print_json(t);
	if (args.stats || (!args.dump && !args.json))
		print_stats(t);
	cfi_table_free(t);
	return 0;
}
