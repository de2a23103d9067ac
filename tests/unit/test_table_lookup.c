// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every address, not just row starts: for real libraries, the compiled table
 * must say "no info" exactly where no FDE covers an address (so padding
 * between functions never inherits a rule), and the walker's own page lookup
 * (bpf/walker.h, built as ordinary C over the replay maps) must agree with
 * cfi_table_lookup at every address, gaps folded into rules included.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "tests/lib/replay.h"

struct range {
	uint64_t lo, hi;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * FDE ranges of .eh_frame as binutils sees them (an independent parser), and
 * the sections of crt's _init and _fini, which no FDE covers and the table
 * has rows for (tables/linker_stubs.c; their shape is test_tables_rules').
 */
static struct range *readelf_fdes(const char *path, size_t *nr)
{
	char cmd[512], line[512];
	struct range *v = NULL;
	size_t cap = 0, n = 0;
	int in_eh = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=frames '%s' 2>/dev/null; readelf -SW '%s' 2>/dev/null | "
		 "sed 's/^ *\\[ *[0-9]*\\]//' | "
		 "awk '$1 == \".init\" || $1 == \".fini\" {print \"crt pc=\" $3 \"..\" $5}'",
		 path, path);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		const char *pc;
		uint64_t lo, hi;

		if (!strncmp(line, "crt pc=", 7)) {
			/* address and size: the section's range */
			if (sscanf(line + 7, "%" SCNx64 "..%" SCNx64, &lo, &hi) != 2 || !hi)
				continue;
			hi += lo;
			goto add;
		}
		if (strstr(line, "Contents of the"))
			in_eh = strstr(line, ".eh_frame section") != NULL;
		pc = strstr(line, " FDE ");
		if (!in_eh || !pc || !(pc = strstr(line, "pc=")))
			continue;
		if (sscanf(pc, "pc=%" SCNx64 "..%" SCNx64, &lo, &hi) != 2 || hi <= lo)
			continue;
	add:
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				break;
		}
		v[n++] = (struct range){lo, hi};
	}
	pclose(f);
	if (v)
		qsort(v, n, sizeof(*v), cmp_range);
	*nr = n;
	return v;
}

static void check_object(const char *path)
{
	struct replay_env env;
	struct cfi_table *t = NULL;
	struct cfi_diag diag = {0};
	struct range *fdes;
	size_t nr_fdes = 0, k = 0;
	uint64_t addr, lo, hi, checked = 0, bad_cover = 0, bad_walker = 0, holes = 0;
	uint32_t i;

	fdes = readelf_fdes(path, &nr_fdes);
	CHECK(fdes && nr_fdes > 0, "%s: readelf listed no FDEs", path);
	CHECK(cfi_table_build_file(path, NULL, &t, &diag) == 0 && t, "%s: build failed", path);
	if (!t || !fdes) {
		free(fdes);
		cfi_table_free(t);
		return;
	}
	for (i = 0; i < t->nr_rules; i++)
		holes += t->rules[i].hole_len != 0;
	replay_env_init(&env, 1);
	replay_cur = &env;
	CHECK(replay_add_table(&env, 7, t) == 0, "%s: replay maps", path);
	lo = fdes[0].lo > 4096 ? fdes[0].lo - 4096 : 0;
	hi = fdes[nr_fdes - 1].hi + 4096;
	for (addr = lo; addr < hi; addr++) {
		const struct cfi_rule *r = cfi_table_lookup(t, addr);
		struct cfi_rule w;
		int covered, found;

		while (k < nr_fdes && fdes[k].hi <= addr)
			k++;
		/* FDEs may nest or overlap: any range still open covers addr */
		covered = 0;
		for (size_t j = k; j < nr_fdes && fdes[j].lo <= addr; j++) {
			if (addr < fdes[j].hi) {
				covered = 1;
				break;
			}
		}
		if (covered != (r->cfa_kind != CFI_CFA_NONE)) {
			if (bad_cover++ < 5)
				fprintf(stderr, "%s: 0x%" PRIx64 ": covered=%d but table says %s\n",
					path, addr, covered, r->cfa_kind ? "a rule" : "none");
		}
		/* the walker returns rule 0 (CFA_NONE) where a page starts without CFI */
		found = walker_find_rule(7, addr, &w) == 0 && w.cfa_kind != CFI_CFA_NONE;
		if (found != (r->cfa_kind != CFI_CFA_NONE) ||
		    (found && (w.cfa_kind != r->cfa_kind || w.cfa_off != r->cfa_off ||
			       w.rbp_kind != r->rbp_kind || w.rbp_off != r->rbp_off ||
			       w.ra_kind != r->ra_kind || w.ra_off != r->ra_off || w.aux != r->aux))) {
			if (bad_walker++ < 5)
				fprintf(stderr, "%s: 0x%" PRIx64 ": walker and table disagree\n", path,
					addr);
		}
		checked++;
	}
	printf("%s: %" PRIu64 " addresses, %zu FDEs, %u rules (%" PRIu64
	       " with a folded gap): %" PRIu64 " coverage errors, %" PRIu64 " walker mismatches\n",
	       path, checked, nr_fdes, t->nr_rules, holes, bad_cover, bad_walker);
	CHECK(bad_cover == 0, "%s: %" PRIu64 " addresses with the wrong coverage", path, bad_cover);
	CHECK(bad_walker == 0, "%s: %" PRIu64 " walker/table mismatches", path, bad_walker);
	CHECK(holes > 0, "%s: no gap was folded into a rule (the test would not cover holes)", path);
	replay_env_free(&env);
	free(fdes);
	cfi_table_free(t);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST_AS("libc", check_object("/lib/x86_64-linux-gnu/libc.so.6"));
	RUN_TEST_AS("libstdc++", check_object("/usr/lib/x86_64-linux-gnu/libstdc++.so.6"));
	RUN_TEST_AS("python3.11", check_object("/usr/bin/python3.11"));
	return HARNESS_DONE();
}
