// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real CLI's outputs, each read by an independent reader where one exists:
 *  1. pprof: `go tool pprof -top / -traces` (leaf on top, the chain in order,
 *     sample counts equal to the folded rendering of the same recording);
 *  2. C++ names are demangled (tests/progs/cxx_names.cc);
 *  3. a stripped copy of chain: stacks still complete, its own frames printed
 *     as chain-stripped+0xOFF at the right offsets, libc frames still named;
 *  4. SVG: xmllint, and a headless Chromium screenshot that is not blank and
 *     has flame colours;
 *  5. `cfiprof report REC` gives the same folded lines / text figures as the
 *     live run that saved REC;
 *  6. speedscope: python3's json module, sum(weights) == folded total;
 *  7. CLI errors: unknown format, unwritable output, a command that cannot
 *     start, a file that is not a recording.
 * A missing tool, program or BPF failure is a failure, never a skip.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build: the test
 * programs are OUT/progs/P).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 256)
#define MAX_ENV 12

/*
 * cfiprof record -F 499 [-o OUT] [--save SAVE] -- PROG SECONDS.  OUT and SAVE
 * are names in tmpdir.  True if it exited 0.
 */
static bool record(const char *out, const char *save, const char *prog, const char *seconds)
{
	char opath[PATHBUF], spath[PATHBUF], epath[PATHBUF], ename[128];
	char *argv[16];
	int n = 0, rc;

	argv[n++] = (char *)cfiprof_bin;
	argv[n++] = "record";
	argv[n++] = "-v";
	argv[n++] = "-F";
	argv[n++] = "499";
	if (out) {
		argv[n++] = "-o";
		argv[n++] = tpath(opath, sizeof(opath), out);
	}
	if (save) {
		argv[n++] = "--save";
		argv[n++] = tpath(spath, sizeof(spath), save);
	}
	argv[n++] = "--";
	argv[n++] = (char *)prog;
	argv[n++] = (char *)seconds;
	argv[n] = NULL;
	snprintf(ename, sizeof(ename), "%s.record.err", out ? out : save);
	tpath(epath, sizeof(epath), ename);
	rc = run(argv, NULL, epath, 60);
	CHECK(rc == 0, "cfiprof record -o %s -- %s %s: exit %d", out ? out : "-", prog, seconds,
	      rc);
	if (rc != 0)
		dump_tail("record stderr", epath);
	return rc == 0;
}

/* cfiprof report T/REC -f FORMAT > T/OUT.  True if it exited 0. */
static bool report(const char *rec, const char *format, const char *out)
{
	char rpath[PATHBUF], opath[PATHBUF], epath[PATHBUF], ename[128];
	char *argv[] = {(char *)cfiprof_bin, "report", rpath, "-f", (char *)format, NULL};
	int rc;

	tpath(rpath, sizeof(rpath), rec);
	snprintf(ename, sizeof(ename), "%s.report.err", out);
	tpath(epath, sizeof(epath), ename);
	rc = run(argv, tpath(opath, sizeof(opath), out), epath, 60);
	CHECK(rc == 0, "cfiprof report %s -f %s: exit %d", rec, format, rc);
	if (rc != 0)
		dump_tail("report stderr", epath);
	return rc == 0;
}

/* ---- folded files ---- */

struct lines {
	char **v;
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The non-empty lines of a text, sorted; the text is split in place. */
static struct lines split_lines(char *text, bool sort)
{
	struct lines l = {NULL, 0};
	size_t cap = 0;
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!*line)
			continue;
		if (l.n == cap) {
			cap = cap ? cap * 2 : 64;
			l.v = realloc(l.v, cap * sizeof(*l.v));
			if (!l.v)
				abort();
		}
		l.v[l.n++] = line;
	}
	if (sort && l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	return l;
}

/* The count ending a folded line (0 if none); *stack_len gets the stack's length. */
static unsigned long folded_count(const char *line, size_t *stack_len)
{
	const char *sp = strrchr(line, ' ');

	if (!sp || !sp[1] || !isdigit((unsigned char)sp[1])) {
		*stack_len = strlen(line);
		return 0;
	}
	*stack_len = (size_t)(sp - line);
	return strtoul(sp + 1, NULL, 10);
}

static unsigned long folded_total(const struct lines *l)
{
	unsigned long total = 0;
	size_t len;

	for (size_t i = 0; i < l->n; i++)
		total += folded_count(l->v[i], &len);
	return total;
}

/* The samples of l whose leaf frame (the last) is fn. */
static unsigned long folded_leaf_total(const struct lines *l, const char *fn)
{
	unsigned long total = 0;
	size_t len, fl = strlen(fn);

	for (size_t i = 0; i < l->n; i++) {
		unsigned long n = folded_count(l->v[i], &len);

		if (len > fl && l->v[i][len - fl - 1] == ';' &&
		    !strncmp(l->v[i] + len - fl, fn, fl))
			total += n;
	}
	return total;
}

/* ---- stack maps: (stack key, count), merged by key ---- */

struct stack_count {
	char *key;
	unsigned long count;
};

struct stack_map {
	struct stack_count *v;
	size_t n, cap;
};

static void map_add(struct stack_map *m, const char *key, unsigned long count)
{
	for (size_t i = 0; i < m->n; i++) {
		if (!strcmp(m->v[i].key, key)) {
			m->v[i].count += count;
			return;
		}
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 32;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		if (!m->v)
			abort();
	}
	m->v[m->n].key = strdup(key);
	m->v[m->n].count = count;
	if (!m->v[m->n].key)
		abort();
	m->n++;
}

static int cmp_sc(const void *a, const void *b)
{
	return strcmp(((const struct stack_count *)a)->key, ((const struct stack_count *)b)->key);
}

static void map_free(struct stack_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].key);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

/* Folded lines to keys "f1;f2;..." root first, without the comm and without the "_[k]" marks. */
static void map_from_folded(struct stack_map *m, const struct lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t len;
		unsigned long count = folded_count(l->v[i], &len);
		char *stack = strndup(l->v[i], len), *key = malloc(len + 1), *save = NULL, *f;
		bool first = true;

		if (!stack || !key)
			abort();
		key[0] = '\0';
		for (f = strtok_r(stack, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
			size_t fl = strlen(f);

			if (first) { /* the comm */
				first = false;
				continue;
			}
			if (fl > 4 && !strcmp(f + fl - 4, "_[k]"))
				f[fl - 4] = '\0';
			if (key[0])
				strcat(key, ";");
			strcat(key, f);
		}
		map_add(m, key, count);
		free(stack);
		free(key);
	}
}

/* Reports the first differences of two maps; returns true if equal. */
static bool maps_equal(struct stack_map *a, struct stack_map *b, const char *an, const char *bn)
{
	size_t i = 0, j = 0;
	int shown = 0;
	bool eq = true;

	qsort(a->v, a->n, sizeof(*a->v), cmp_sc);
	qsort(b->v, b->n, sizeof(*b->v), cmp_sc);
	while (i < a->n || j < b->n) {
		int c = i >= a->n ? 1 : j >= b->n ? -1 : strcmp(a->v[i].key, b->v[j].key);

		if (c == 0 && a->v[i].count == b->v[j].count) {
			i++;
			j++;
			continue;
		}
		eq = false;
		if (shown++ < 5) {
			if (c == 0)
				fprintf(stderr, "  %s %lu vs %s %lu: %s\n", an, a->v[i].count, bn,
					b->v[j].count, a->v[i].key);
			else if (c < 0)
				fprintf(stderr, "  only in %s (%lu): %s\n", an, a->v[i].count,
					a->v[i].key);
			else
				fprintf(stderr, "  only in %s (%lu): %s\n", bn, b->v[j].count,
					b->v[j].key);
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	return eq;
}

/* ---- 1. pprof ---- */

static char *go_env[10];

/* go tool pprof ARGS... T/chain.pb.gz > T/OUT; returns the output (caller frees) or NULL. */
static char *pprof_run(const char *mode, const char *extra, const char *out)
{
	char pb[PATHBUF], opath[PATHBUF], epath[PATHBUF], ename[128];
	char *argv[8];
	int n = 0, rc;

	argv[n++] = "go";
	argv[n++] = "tool";
	argv[n++] = "pprof";
	argv[n++] = (char *)mode;
	if (extra)
		argv[n++] = (char *)extra;
	argv[n++] = tpath(pb, sizeof(pb), "chain.pb.gz");
	argv[n] = NULL;
	snprintf(ename, sizeof(ename), "%s.err", out);
	tpath(epath, sizeof(epath), ename);
	rc = run_env(argv, go_env, tpath(opath, sizeof(opath), out), epath, 60, NULL);
	CHECK(rc == 0, "go tool pprof %s %s: exit %d", mode, extra ? extra : "", rc);
	if (rc != 0) {
		dump_tail("pprof stderr", epath);
		return NULL;
	}
	return slurp(opath);
}

struct top_row {
	double flat_pct, cum_pct;
	char name[256];
};

/* The rows of `pprof -top`, in order: "flat flat% sum% cum cum% name". */
static size_t parse_top(char *text, struct top_row *rows, size_t max)
{
	struct lines l = split_lines(text, false);
	size_t n = 0, i;
	bool in_table = false;

	for (i = 0; i < l.n && n < max; i++) {
		char flat[64], fp[64], sp[64], cum[64], cp[64];
		int off = 0;

		if (strstr(l.v[i], "flat%") && strstr(l.v[i], "cum%")) {
			in_table = true;
			continue;
		}
		if (!in_table)
			continue;
		int got =
		    sscanf(l.v[i], "%63s %63s %63s %63s %63s %n", flat, fp, sp, cum, cp, &off);

		if (got < 5 || !off)
			continue;
		rows[n].flat_pct = strtod(fp, NULL);
		rows[n].cum_pct = strtod(cp, NULL);
		snprintf(rows[n].name, sizeof(rows[n].name), "%s", l.v[i] + off);
		n++;
	}
	free(l.v);
	return n;
}

/* A -traces value: "985", "1.97s", "18.04ms", "2ms"; false if the token is not one. */
static bool trace_value(const char *p, double *v, const char **rest)
{
	char *end;
	size_t ul;

	if (!isdigit((unsigned char)*p))
		return false;
	*v = strtod(p, &end);
	ul = strcspn(end, " \t");
	if (ul == 2 && !strncmp(end, "ms", 2))
		*v *= 1e-3;
	else if (ul == 2 && (!strncmp(end, "us", 2) || !strncmp(end, "ns", 2)))
		*v *= end[0] == 'u' ? 1e-6 : 1e-9;
	else if (ul == 3 && !strncmp(end, "\xc2\xb5s", 3))
		*v *= 1e-6;
	else if (ul == 3 && !strncmp(end, "min", 3))
		*v *= 60;
	else if (ul != 0 && !(ul == 1 && *end == 's'))
		return false;
	end += ul;
	if (*end != ' ' && *end != '\t')
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	*rest = end;
	return true;
}

/*
 * `pprof -traces` into the map (values rounded to integers: use it with
 * -sample_index=samples): blocks after "-----------+-----" lines, label lines
 * ("key:  value"), then "VALUE frame" and one frame a line, leaf first.
 * *top_chain gets the frames of the block with the largest value (leaf first,
 * ';'-joined).
 */
static void parse_traces(char *text, struct stack_map *m, char *top_chain, size_t tc_len)
{
	struct lines l = split_lines(text, false);
	char key[8192], *frames[512];
	size_t nf = 0, i;
	double value = 0, top = -1;
	bool in_block = false, have_value = false;

	/* an inline level is a frame of its own in folded output too; pprof marks it */
	for (i = 0; i < l.n; i++) {
		size_t len = strlen(l.v[i]), sl = strlen(" (inline)");

		if (len > sl && !strcmp(l.v[i] + len - sl, " (inline)"))
			l.v[i][len - sl] = '\0';
	}

	top_chain[0] = '\0';
	for (i = 0; i <= l.n; i++) {
		const char *line = i < l.n ? l.v[i] : "-----------+ end";
		const char *p = line, *rest;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(line, "-----------+", 12)) {
			if (in_block && have_value && nf) {
				key[0] = '\0';
				for (size_t k = nf; k-- > 0;) {
					if (key[0])
						strncat(key, ";", sizeof(key) - strlen(key) - 1);
					strncat(key, frames[k], sizeof(key) - strlen(key) - 1);
				}
				map_add(m, key, (unsigned long)(value + 0.5));
				if (value > top) {
					top = value;
					top_chain[0] = '\0';
					for (size_t k = 0; k < nf; k++) {
						if (k)
							strncat(top_chain, ";",
								tc_len - strlen(top_chain) - 1);
						strncat(top_chain, frames[k],
							tc_len - strlen(top_chain) - 1);
					}
				}
			}
			in_block = true;
			have_value = false;
			nf = 0;
			continue;
		}
		if (!in_block || !*p)
			continue;
		if (!have_value) {
			if (trace_value(p, &value, &rest)) {
				have_value = true;
				if (nf < 512)
					frames[nf++] = (char *)rest;
			}
			continue; /* a label line */
		}
		if (nf < 512)
			frames[nf++] = (char *)p;
	}
	free(l.v);
}

static void test_pprof(const char *chain)
{
	struct top_row rows[64];
	struct stack_map from_pprof = {0}, from_folded = {0};
	struct lines folded;
	char first[4096], *text, *ftext, path[PATHBUF];
	static const char *const callers[] = {"main", "a", "b", "c", "d"};
	size_t n, i, k;

	if (!record("chain.pb.gz", "pb.rec", chain, "3"))
		return;
	text = pprof_run("-top", NULL, "pprof.top");
	if (text) {
		n = parse_top(text, rows, 64);
		CHECK(n > 0 && !strcmp(rows[0].name, "leaf") && rows[0].flat_pct >= 90.0,
		      "pprof -top: top flat function '%s' %.2f%% (want leaf >= 90%%)",
		      n ? rows[0].name : "(none)", n ? rows[0].flat_pct : 0.0);
		for (k = 0; k < sizeof(callers) / sizeof(callers[0]); k++) {
			for (i = 0; i < n && strcmp(rows[i].name, callers[k]); i++)
				;
			CHECK(i < n && rows[i].cum_pct >= 90.0,
			      "pprof -top: %s cum %.2f%% (want >= 90%%)", callers[k],
			      i < n ? rows[i].cum_pct : 0.0);
		}
		free(text);
	}

	/* the chain in the default (cpu time) view */
	text = pprof_run("-traces", NULL, "pprof.traces");
	if (text) {
		parse_traces(text, &from_pprof, first, sizeof(first));
		CHECK(!strncmp(first, "leaf;d;c;b;a;main;", 18),
		      "pprof -traces: heaviest trace '%s' (want leaf;d;c;b;a;main;...)", first);
		map_free(&from_pprof);
		free(text);
	}

	/* the counts, by sample count, against the folded rendering of the same recording */
	text = pprof_run("-traces", "-sample_index=samples", "pprof.traces.samples");
	if (!text || !report("pb.rec", "folded", "pb.report.folded")) {
		free(text);
		return;
	}
	parse_traces(text, &from_pprof, first, sizeof(first));
	CHECK(
	    !strncmp(first, "leaf;d;c;b;a;main;", 18),
	    "pprof -traces -sample_index=samples: heaviest trace '%s' (want leaf;d;c;b;a;main;...)",
	    first);
	ftext = slurp(tpath(path, sizeof(path), "pb.report.folded"));
	folded = split_lines(ftext, false);
	map_from_folded(&from_folded, &folded);
	CHECK(from_pprof.n > 0 && maps_equal(&from_pprof, &from_folded, "pprof", "folded"),
	      "pprof -traces sample counts differ from the folded rendering (%zu vs %zu stacks, "
	      "%lu samples in folded)",
	      from_pprof.n, from_folded.n, folded_total(&folded));
	map_free(&from_pprof);
	map_free(&from_folded);
	free(folded.v);
	free(ftext);
	free(text);
}

/* ---- 2. C++ names ---- */

static void test_cxx(void)
{
	char prog[PATHBUF], path[PATHBUF], *text;
	struct lines l;
	unsigned long total, chain = 0;
	const char *bad = NULL;
	size_t i, len;

	snprintf(prog, sizeof(prog), "%s/cxx_names", progs_dir);
	if (access(prog, X_OK)) {
		CHECK(0, "%s is missing (make %s)", prog, prog);
		return;
	}
	if (!record("cxx.folded", NULL, prog, "1.5"))
		return;
	text = slurp(tpath(path, sizeof(path), "cxx.folded"));
	l = split_lines(text, false);
	total = folded_total(&l);
	for (i = 0; i < l.n; i++) {
		unsigned long c = folded_count(l.v[i], &len);

		if (strstr(l.v[i], "_ZN") || strstr(l.v[i], ";_Z"))
			bad = l.v[i];
		if (strstr(l.v[i], ";main;double shapes::accumulate<shapes::Circle>(shapes::Circle "
				   "const&, int);shapes::Circle::area(int) const"))
			chain += c;
	}
	CHECK(!bad, "a mangled name in the folded output: %s", bad);
	CHECK(total > 0 && chain * 10 >= total * 9,
	      "main;double shapes::accumulate<shapes::Circle>(shapes::Circle const&, "
	      "int);shapes::Circle::area(int) const in %lu of %lu samples (want >= 90%%)",
	      chain, total);
	if (chain * 10 < total * 9 || bad)
		for (i = 0; i < l.n && i < 5; i++)
			fprintf(stderr, "  cxx.folded: %s\n", l.v[i]);
	free(l.v);
	free(text);
}

/* ---- 3. a stripped binary ---- */

/* Address and size of FUNC in ELF (from nm -S); false if not found. */
static bool nm_symbol(const char *elf, const char *func, unsigned long *addr, unsigned long *size)
{
	char cmd[PATHBUF + 64], line[512], name[256], type[8];
	FILE *p;
	bool found = false;

	snprintf(cmd, sizeof(cmd), "nm -S '%s' 2>/dev/null", elf);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%lx %lx %7s %255s", addr, size, type, name) == 4 &&
		    !strcmp(name, func) && (type[0] == 'T' || type[0] == 't')) {
			found = true;
			break;
		}
	}
	pclose(p);
	return found;
}

static bool copy_file(const char *from, const char *to)
{
	char *argv[] = {"cp", (char *)from, (char *)to, NULL};

	return run(argv, NULL, NULL, 30) == 0;
}

static void test_stripped(const char *chain)
{
	static const char *const funcs[] = {"_start", "main", "a", "b", "c", "d", "leaf"};
	enum { NFUNCS = sizeof(funcs) / sizeof(funcs[0]) };
	unsigned long lo[NFUNCS], sz[NFUNCS];
	char prog[PATHBUF], path[PATHBUF], *text;
	struct lines l;
	unsigned long total, incomplete = 0, own_incomplete = 0, good = 0;
	const char *wrong = NULL;
	char wrong_why[256] = "";
	size_t i, len;
	int rc;

	for (i = 0; i < NFUNCS; i++)
		CHECK(nm_symbol(chain, funcs[i], &lo[i], &sz[i]), "nm: no %s in %s", funcs[i],
		      chain);
	tpath(prog, sizeof(prog), "chain-stripped");
	if (!copy_file(chain, prog)) {
		CHECK(0, "cp %s %s failed", chain, prog);
		return;
	}
	char *strip[] = {"strip", "--strip-all", prog, NULL};
	rc = run(strip, NULL, NULL, 30);
	CHECK(rc == 0, "strip --strip-all %s: exit %d", prog, rc);
	{
		unsigned long a, s;

		CHECK(!nm_symbol(prog, "leaf", &a, &s), "%s still has a symbol table", prog);
	}
	if (rc != 0 || !record("stripped.folded", NULL, prog, "1.5"))
		return;
	text = slurp(tpath(path, sizeof(path), "stripped.folded"));
	l = split_lines(text, false);
	total = folded_total(&l);
	for (i = 0; i < l.n; i++) {
		unsigned long c = folded_count(l.v[i], &len);
		char *stack = strndup(l.v[i], len), *save = NULL, *f, *fr[256];
		size_t nf = 0, k, libc_at = 0;

		if (!stack)
			abort();
		if (strstr(stack, "[incomplete:")) {
			incomplete += c;
			if (strstr(stack, "chain-stripped+"))
				own_incomplete += c;
		}
		for (f = strtok_r(stack, ";", &save); f && nf < 256; f = strtok_r(NULL, ";", &save))
			if (!strstr(f, "_[k]")) /* user frames only */
				fr[nf++] = f;
		/* chain-stripped;_start;__libc_start_main;__libc_start_call_main;main..leaf */
		for (k = 0; k < nf && strcmp(fr[k], "__libc_start_call_main"); k++)
			;
		if (k < nf)
			libc_at = k;
		/*
		 * main's chain; not main returned into exit (its handlers, then
		 * the program's own __cxa_finalize: as many frames, once in a
		 * clean clone's run)
		 */
		if (libc_at && nf == libc_at + 7 && libc_at == 3 &&
		    !strcmp(fr[2], "__libc_start_main") && strcmp(fr[4], "exit")) {
			/* fr[1] _start, fr[4..9] main..leaf: chain-stripped+0xOFF, in range */
			size_t idx[NFUNCS] = {1, 4, 5, 6, 7, 8, 9};
			bool ok = true;

			for (k = 0; k < NFUNCS; k++) {
				const char *fn = fr[idx[k]];
				unsigned long off;

				if (strncmp(fn, "chain-stripped+0x", 17)) {
					ok = false;
					snprintf(wrong_why, sizeof(wrong_why),
						 "%s's frame printed as '%s'", funcs[k], fn);
					break;
				}
				off = strtoul(fn + 17, NULL, 16);
				if (off < lo[k] || off >= lo[k] + sz[k]) {
					ok = false;
					snprintf(wrong_why, sizeof(wrong_why),
						 "%s's frame %s is outside %s [0x%lx, 0x%lx)",
						 funcs[k], fn, funcs[k], lo[k], lo[k] + sz[k]);
					break;
				}
			}
			if (ok)
				good += c;
			else if (!wrong)
				wrong = l.v[i];
		} else if (strstr(l.v[i], "chain-stripped+") && !strstr(l.v[i], "[incomplete:")) {
			/* any other stack of the program's own code must not name its frames */
			for (k = 1; k < nf; k++) {
				for (size_t o = 0; o < NFUNCS; o++)
					if (!strcmp(fr[k], funcs[o]) && !wrong) {
						wrong = l.v[i];
						snprintf(wrong_why, sizeof(wrong_why),
							 "a frame named '%s' in a stripped binary",
							 fr[k]);
					}
			}
		}
		free(stack);
	}
	CHECK(total > 0, "stripped: no samples");
	CHECK(own_incomplete == 0, "stripped: %lu samples in the program's own code are incomplete",
	      own_incomplete);
	/*
	 * ld.so's own _start has no FDE: a sample there may end [incomplete:
	 * no-rule].  Those come from the process's start, a few milliseconds of
	 * CPU whatever the run's length: at 499 Hz, 2 samples at most, beside 1%
	 * of the rest (a loaded machine gives the 1.5 s program fewer samples, 56
	 * in one run, where 1% alone allowed none).
	 */
	CHECK(incomplete <= total / 100 + 2,
	      "stripped: %lu of %lu samples incomplete (want <= 1%% + 2)", incomplete, total);
	CHECK(!wrong, "stripped: %s in: %s", wrong_why, wrong);
	CHECK(total > 0 && good * 10 >= total * 9,
	      "stripped: chain-stripped+0x..;__libc_start_main;__libc_start_call_main;6 x "
	      "chain-stripped+0x.. at the right offsets in %lu of %lu samples (want >= 90%%)",
	      good, total);
	if (good * 10 < total * 9 || wrong || incomplete * 100 > total)
		for (i = 0; i < l.n && i < 5; i++)
			fprintf(stderr, "  stripped.folded: %s\n", l.v[i]);
	free(l.v);
	free(text);
}

/* ---- 4. SVG ---- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	if (pa <= pb && pa <= pc)
		return a;
	return pb <= pc ? b : c;
}

/*
 * Decodes an 8-bit RGB / RGBA, non-interlaced PNG into RGB triples (caller
 * frees).  NULL with *why set on anything else.
 */
static unsigned char *png_decode(const char *path, uint32_t *w, uint32_t *h, const char **why)
{
	FILE *f = fopen(path, "re");
	unsigned char *file = NULL, *idat = NULL, *raw = NULL, *rgb = NULL;
	size_t flen = 0, ilen = 0, pos = 8;
	uLongf rawlen;
	unsigned bpp = 0, stride;
	long sz;

	*why = "cannot read";
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		flen = (size_t)sz;
		file = malloc(flen);
		if (file && fread(file, 1, flen, f) != flen)
			flen = 0;
	}
	fclose(f);
	if (!file || flen < 33 || memcmp(file, "\x89PNG\r\n\x1a\n", 8)) {
		*why = "not a PNG";
		goto out;
	}
	idat = malloc(flen);
	if (!idat)
		goto out;
	while (pos + 12 <= flen) {
		uint32_t len = be32(file + pos);
		const unsigned char *type = file + pos + 4, *data = file + pos + 8;

		if (len > flen - pos - 12) {
			*why = "truncated chunk";
			goto out;
		}
		if (!memcmp(type, "IHDR", 4)) {
			*w = be32(data);
			*h = be32(data + 4);
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[12] != 0) {
				*why = "not 8-bit RGB/RGBA non-interlaced";
				goto out;
			}
			bpp = data[9] == 2 ? 3 : 4;
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + ilen, data, len);
			ilen += len;
		} else if (!memcmp(type, "IEND", 4)) {
			break;
		}
		pos += 12 + len;
	}
	if (!bpp || !*w || !*h || *w > 20000 || *h > 20000) {
		*why = "no usable IHDR";
		goto out;
	}
	stride = *w * bpp;
	rawlen = (uLongf)(stride + 1) * *h;
	raw = malloc(rawlen);
	rgb = malloc((size_t)*w * *h * 3);
	if (!raw || !rgb)
		goto out;
	if (uncompress(raw, &rawlen, idat, ilen) != Z_OK || rawlen != (uLongf)(stride + 1) * *h) {
		*why = "IDAT does not inflate to the image size";
		free(rgb);
		rgb = NULL;
		goto out;
	}
	/* undo the filters in place: row y's bytes at raw + y*(stride+1) + 1 */
	for (uint32_t y = 0; y < *h; y++) {
		unsigned char *row = raw + (size_t)y * (stride + 1), *cur = row + 1;
		unsigned char *prev = y ? raw + (size_t)(y - 1) * (stride + 1) + 1 : NULL;

		for (unsigned x = 0; x < stride; x++) {
			int a = x >= bpp ? cur[x - bpp] : 0, b = prev ? prev[x] : 0;
			int c = prev && x >= bpp ? prev[x - bpp] : 0, p;

			switch (row[0]) {
			case 0:
				p = 0;
				break;
			case 1:
				p = a;
				break;
			case 2:
				p = b;
				break;
			case 3:
				p = (a + b) / 2;
				break;
			case 4:
				p = paeth(a, b, c);
				break;
			default:
				*why = "bad filter type";
				free(rgb);
				rgb = NULL;
				goto out;
			}
			cur[x] = (unsigned char)(cur[x] + p);
		}
		for (uint32_t x = 0; x < *w; x++)
			memcpy(rgb + ((size_t)y * *w + x) * 3, cur + (size_t)x * bpp, 3);
	}
	*why = NULL;
out:
	free(file);
	free(idat);
	free(raw);
	if (*why) {
		free(rgb);
		rgb = NULL;
	}
	return rgb;
}

/* The most frequent colour of an RGB image (an open-addressing table of 24-bit keys). */
static uint32_t mode_colour(const unsigned char *rgb, size_t npix)
{
	enum { SLOTS = 4096 };
	static uint32_t keys[SLOTS], counts[SLOTS];
	uint32_t best = 0, best_n = 0;

	memset(counts, 0, sizeof(counts));
	for (size_t i = 0; i < npix; i++) {
		const unsigned char *px = rgb + 3 * i;
		uint32_t k = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
		uint32_t s = (k * 2654435761u) >> 20;

		for (unsigned probe = 0; probe < SLOTS; probe++, s = (s + 1) % SLOTS) {
			if (!counts[s]) {
				keys[s] = k;
				counts[s] = 1;
				break;
			}
			if (keys[s] == k) {
				counts[s]++;
				break;
			}
		}
	}
	for (unsigned s = 0; s < SLOTS; s++)
		if (counts[s] > best_n) {
			best_n = counts[s];
			best = keys[s];
		}
	return best;
}

static void test_svg(const char *chain)
{
	char svg[PATHBUF], png[PATHBUF], url[PATHBUF + 16], profile_dir[PATHBUF], win[64];
	char err[PATHBUF], shot[PATHBUF + 32], udd[PATHBUF + 32], home[PATHBUF + 8], *text;
	char *env[3];
	uint32_t w = 0, h = 0, bg;
	const char *why = NULL;
	unsigned char *rgb;
	size_t npix, colourful = 0, warm = 0;
	double took = 0;
	int rc;

	if (!record("chain.svg", NULL, chain, "1.5"))
		return;
	tpath(svg, sizeof(svg), "chain.svg");
	char *xmllint[] = {"xmllint", "--noout", svg, NULL};
	rc = run(xmllint, NULL, tpath(err, sizeof(err), "xmllint.err"), 30);
	CHECK(rc == 0, "xmllint --noout %s: exit %d (not well-formed XML)", svg, rc);
	if (rc)
		dump_tail("xmllint", err);
	text = slurp(svg);
	CHECK(strstr(text, ">leaf") || strstr(text, "leaf ("), "the SVG does not contain leaf");
	CHECK(strstr(text, ">main") || strstr(text, "main ("), "the SVG does not contain main");
	free(text);

	tpath(png, sizeof(png), "chain.png");
	tpath(profile_dir, sizeof(profile_dir), "chrome");
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	snprintf(udd, sizeof(udd), "--user-data-dir=%s", profile_dir);
	snprintf(url, sizeof(url), "file://%s", svg);
	snprintf(win, sizeof(win), "--window-size=1200,800");
	snprintf(home, sizeof(home), "HOME=%s", profile_dir);
	env[0] = home;
	env[1] = "XDG_CONFIG_HOME=";
	env[2] = NULL;
	char *chromium[] = {"chromium",
			    "--headless",
			    "--no-sandbox",
			    "--disable-gpu",
			    "--disable-quic",
			    "--no-first-run",
			    "--disable-background-networking",
			    "--disable-component-update",
			    "--disable-sync",
			    udd,
			    shot,
			    win,
			    url,
			    NULL};
	unlink(png);
	rc = run_env(chromium, env, NULL, tpath(err, sizeof(err), "chromium.err"), 30, &took);
	/* chromium and the PNG decoder are readers: their failure fails, their success is no pass */
	if (rc != 0 || access(png, R_OK)) {
		CHECK(0, "chromium --screenshot: exit %d, %s %s (%.1f s)", rc, png,
		      access(png, R_OK) ? "missing" : "written", took);
		dump_tail("chromium", err);
		return;
	}
	rgb = png_decode(png, &w, &h, &why);
	if (!rgb) {
		CHECK(0, "%s: %s", png, why);
		return;
	}
	if (w != 1200 || h != 800)
		CHECK(0, "screenshot is %ux%u (want 1200x800)", w, h);
	npix = (size_t)w * h;
	bg = mode_colour(rgb, npix);
	for (size_t i = 0; i < npix; i++) {
		int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
		uint32_t k = (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b;

		if (k != bg && !(r >= 245 && g >= 245 && b >= 245))
			colourful++;
		if (r > g && g > b && r - b >= 60)
			warm++;
	}
	CHECK(colourful * 20 > npix,
	      "screenshot nearly blank: %zu of %zu pixels neither white nor the background "
	      "#%06x (want > 5%%)",
	      colourful, npix, bg);
	CHECK(warm * 50 > npix, "screenshot: %zu of %zu pixels warm (r > g > b) (want > 2%%)", warm,
	      npix);
	printf("svg: screenshot in %.1f s, %.1f%% non-background, %.1f%% warm pixels\n", took,
	       100.0 * (double)colourful / (double)npix, 100.0 * (double)warm / (double)npix);
	free(rgb);
}

/* ---- 5. report == live ---- */

struct text_summary {
	unsigned long samples;
	char top[256];
	unsigned long top_self;
	struct lines rows; /* the table rows, sorted */
	char *buf;
};

/*
 * "# Samples: N", the first row after "Top functions by self samples:"
 * ("Self% Total% Samples Function [object]"), and every table row.
 */
static void parse_text(const char *path, struct text_summary *t)
{
	struct lines l;
	bool want_top = false;

	memset(t, 0, sizeof(*t));
	t->buf = slurp(path);
	l = split_lines(t->buf, false);
	t->rows.v = calloc(l.n + 1, sizeof(char *));
	if (!t->rows.v)
		abort();
	for (size_t i = 0; i < l.n; i++) {
		char sp[64], tp[64], name[256];
		unsigned long n;

		if (!strncmp(l.v[i], "# Samples:", 10))
			t->samples = strtoul(l.v[i] + 10, NULL, 10);
		if (strstr(l.v[i], "Top functions by self"))
			want_top = true;
		if (sscanf(l.v[i], " %63[0-9.]%% %63[0-9.]%% %lu %255s", sp, tp, &n, name) == 4) {
			t->rows.v[t->rows.n++] = l.v[i];
			if (want_top) {
				want_top = false;
				snprintf(t->top, sizeof(t->top), "%s", name);
				t->top_self = n;
			}
		}
	}
	if (t->rows.n)
		qsort(t->rows.v, t->rows.n, sizeof(char *), cmp_str);
	free(l.v);
}

static void free_text(struct text_summary *t)
{
	free(t->rows.v);
	free(t->buf);
}

static void test_report_same(const char *chain)
{
	char path[PATHBUF], *live_text, *rep_text;
	struct lines live, rep;
	struct text_summary lt, rt;
	unsigned long total = 0;
	size_t i, diffs = 0;

	/* folded: exactly the same lines */
	if (record("chain.folded", "chain.rec", chain, "2") &&
	    report("chain.rec", "folded", "chain.report.folded")) {
		live_text = slurp(tpath(path, sizeof(path), "chain.folded"));
		rep_text = slurp(tpath(path, sizeof(path), "chain.report.folded"));
		live = split_lines(live_text, true);
		rep = split_lines(rep_text, true);
		total = folded_total(&live);
		for (i = 0; i < live.n || i < rep.n; i++) {
			const char *a = i < live.n ? live.v[i] : "(none)";
			const char *b = i < rep.n ? rep.v[i] : "(none)";

			if (strcmp(a, b) && diffs++ < 3)
				fprintf(stderr, "  live:   %s\n  report: %s\n", a, b);
		}
		CHECK(live.n > 0 && live.n == rep.n && diffs == 0,
		      "report -f folded differs from the live folded output: %zu vs %zu lines, %zu "
		      "differ",
		      live.n, rep.n, diffs);
		/* the text rendering of the same recording agrees with the folded counts */
		if (report("chain.rec", "text", "chain.report.txt")) {
			parse_text(tpath(path, sizeof(path), "chain.report.txt"), &rt);
			CHECK(rt.samples == total && total > 0,
			      "report -f text: %lu samples, the folded output %lu", rt.samples,
			      total);
			/*
			 * leaf's self samples are the folded stacks ending in it, exactly;
			 * the rest (interrupts, preemption, start and exit) grow with the
			 * machine's load: 89.8% beside CPU hogs once
			 */
			CHECK(!strcmp(rt.top, "leaf") &&
				  rt.top_self == folded_leaf_total(&live, "leaf") &&
				  rt.top_self * 2 >= total,
			      "report -f text: top function '%s' with %lu of %lu, the folded "
			      "output's stacks ending in leaf %lu (want leaf, those, >= half)",
			      rt.top, rt.top_self, total, folded_leaf_total(&live, "leaf"));
			free_text(&rt);
		}
		free(live.v);
		free(rep.v);
		free(live_text);
		free(rep_text);
	}

	/* text: the live text and the report of its recording agree */
	if (record("chain.txt", "text.rec", chain, "1.5") &&
	    report("text.rec", "text", "text.report.txt")) {
		parse_text(tpath(path, sizeof(path), "chain.txt"), &lt);
		parse_text(tpath(path, sizeof(path), "text.report.txt"), &rt);
		CHECK(lt.samples > 0 && lt.samples == rt.samples,
		      "text: live %lu samples, report %lu samples", lt.samples, rt.samples);
		CHECK(!strcmp(lt.top, "leaf") && !strcmp(rt.top, "leaf") &&
			  lt.top_self == rt.top_self,
		      "text: top function live '%s' (%lu), report '%s' (%lu) (want leaf, equal)",
		      lt.top, lt.top_self, rt.top, rt.top_self);
		diffs = 0;
		for (i = 0; i < lt.rows.n || i < rt.rows.n; i++) {
			const char *a = i < lt.rows.n ? lt.rows.v[i] : "(none)";
			const char *b = i < rt.rows.n ? rt.rows.v[i] : "(none)";

			if (strcmp(a, b) && diffs++ < 3)
				fprintf(stderr, "  live:   %s\n  report: %s\n", a, b);
		}
		CHECK(lt.rows.n > 0 && diffs == 0,
		      "text: %zu of the table rows differ between live (%zu) and report (%zu)",
		      diffs, lt.rows.n, rt.rows.n);
		free_text(&lt);
		free_text(&rt);
	}
}

/* ---- 6. speedscope ---- */

static void test_speedscope(const char *chain)
{
	char json[PATHBUF], out[PATHBUF], err[PATHBUF], path[PATHBUF], *s, *ftext;
	struct lines folded;
	unsigned long weights, total;
	int rc;

	if (!record("chain.json", "json.rec", chain, "1.5") ||
	    !report("json.rec", "folded", "json.report.folded"))
		return;
	tpath(json, sizeof(json), "chain.json");
	char *py[] = {"python3", "-c",
		      "import json, sys\n"
		      "d = json.load(open(sys.argv[1]))\n"
		      "assert d['$schema'].endswith('file-format-schema.json')\n"
		      "n = len(d['shared']['frames'])\n"
		      "for p in d['profiles']:\n"
		      "    assert len(p['samples']) == len(p['weights'])\n"
		      "    assert all(0 <= f < n for s in p['samples'] for f in s)\n"
		      "print(sum(sum(p['weights']) for p in d['profiles']))\n",
		      json, NULL};
	rc = run(py, tpath(out, sizeof(out), "speedscope.sum"),
		 tpath(err, sizeof(err), "speedscope.err"), 30);
	CHECK(rc == 0, "python3 json.load %s: exit %d", json, rc);
	if (rc) {
		dump_tail("python3", err);
		return;
	}
	s = slurp(out);
	weights = strtoul(s, NULL, 10);
	free(s);
	ftext = slurp(tpath(path, sizeof(path), "json.report.folded"));
	folded = split_lines(ftext, false);
	total = folded_total(&folded);
	CHECK(total > 0 && weights == total, "speedscope: sum(weights) %lu, folded total %lu",
	      weights, total);
	free(folded.v);
	free(ftext);
}

/* ---- 7. errors ---- */

static void test_errors(const char *chain)
{
	static const char *const formats[] = {"folded", "pprof", "svg", "text", "speedscope"};
	char out[PATHBUF], err[PATHBUF], rec[PATHBUF], *s;
	double took = 0;
	size_t i;
	int rc;

	tpath(out, sizeof(out), "err.out");
	tpath(err, sizeof(err), "err.err");

	char *c = (char *)chain;
	char *bogus[] = {(char *)cfiprof_bin, "record", "-v", "-f", "bogus", "--", c, "1", NULL};
	rc = run(bogus, out, err, 30);
	s = slurp(err);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strstr(s, formats[i]); i++)
		;
	CHECK(rc == 2 && strstr(s, "bogus") && i == sizeof(formats) / sizeof(formats[0]),
	      "record -f bogus: exit %d (want 2), stderr '%s' (want 'bogus' and the valid formats)",
	      rc, s);
	free(s);

	tpath(rec, sizeof(rec), "chain.rec");
	char *rbogus[] = {(char *)cfiprof_bin, "report", "-f", "bogus", rec, NULL};
	rc = run(rbogus, out, err, 30);
	s = slurp(err);
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]) && strstr(s, formats[i]); i++)
		;
	CHECK(rc == 2 && i == sizeof(formats) / sizeof(formats[0]),
	      "report -f bogus: exit %d (want 2), stderr '%s' (want the valid formats)", rc, s);
	free(s);

	/* before profiling: the program would spin 8 s */
	char *unwritable[] = {
	    (char *)cfiprof_bin, "record", "-v", "-o", "/proc/nope/x.svg", "--", c, "8", NULL};
	rc = run_env(unwritable, NULL, out, err, 30, &took);
	s = slurp(err);
	CHECK(rc != 0 && rc != -1 && strstr(s, "/proc/nope/x.svg"),
	      "record -o /proc/nope/x.svg: exit %d, stderr '%s' (want non-zero naming the path)",
	      rc, s);
	CHECK(took < 4.0 && !strstr(s, "samples"),
	      "record -o /proc/nope/x.svg: took %.1f s, stderr '%s' (want a failure before "
	      "profiling)",
	      took, s);
	free(s);

	char *noprog[] = {(char *)cfiprof_bin, "record", "-v", "--", "/nonexistent/prog", NULL};
	rc = run_env(noprog, NULL, out, err, 30, &took);
	s = slurp(err);
	CHECK(
	    rc != 0 && rc != -1 && strstr(s, "/nonexistent/prog") &&
		(strstr(s, "No such file") || strstr(s, "cannot")),
	    "record -- /nonexistent/prog: exit %d (want non-zero), stderr '%s' (want the path and "
	    "why)",
	    rc, s);
	free(s);

	/*
	 * A run with no sample says so, not an empty "stop reasons:" line: a
	 * process asleep for the whole run (a command would run at its exec,
	 * and a tick may land there) is never on a CPU to be sampled.
	 */
	char *sleeper[] = {"sleep", "30", NULL}, pid_arg[16];
	pid_t sleeping = spawn(sleeper, NULL, NULL);

	sleep_s(0.2);
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)sleeping);
	char nothing_out[PATHBUF];
	char *nothing[] = {(char *)cfiprof_bin, "record", "-v", "-p", pid_arg, "-d", "0.5", "-o",
			   tpath(nothing_out, sizeof(nothing_out), "nothing.folded"), NULL};
	rc = run(nothing, NULL, err, 30);
	s = slurp(err);
	CHECK(rc == 0 && strstr(s, "no samples") && !strstr(s, "stop reasons:\n"),
	      "record -p (asleep): exit %d, stderr '%s' (want 0 and 'no samples')", rc, s);
	free(s);
	kill(sleeping, SIGKILL);
	waitpid(sleeping, NULL, 0);

	char *notrec[] = {(char *)cfiprof_bin, "report", "/etc/hostname", NULL};
	rc = run(notrec, out, err, 30);
	s = slurp(err);
	CHECK(rc != 0 && rc != -1 && strstr(s, "/etc/hostname") && strstr(s, "not a") &&
		  strstr(s, "recording"),
	      "report /etc/hostname: exit %d, stderr '%s' (want non-zero, 'not a ... recording')",
	      rc, s);
	free(s);
}

/*
 * What record says on stderr: by default what a user acts on, in a few lines;
 * with -q nothing at all on success, while the command's own stderr still
 * comes through, and cfiprof's reasons when it fails.
 */
static void test_quiet(const char *chain)
{
	char out[PATHBUF], err[PATHBUF], script[PATHBUF + 64], *s;
	int rc, lines = 0;

	tpath(out, sizeof(out), "quiet.folded");
	tpath(err, sizeof(err), "quiet.err");
	snprintf(script, sizeof(script), "echo from-the-command >&2; exec %s 0.5", chain);
	char *quiet[] = {(char *)cfiprof_bin, "record", "-q", "-o", out, "--", "sh", "-c", script,
			 NULL};
	rc = run(quiet, NULL, err, 30);
	s = slurp(err);
	CHECK(rc == 0 && s && !strcmp(s, "from-the-command\n"),
	      "record -q: exit %d, stderr '%s' (want only the command's line)", rc, s);
	free(s);
	{
		char *folded = slurp(out);

		CHECK(folded && strstr(folded, "leaf"), "record -q wrote no samples of %s to %s",
		      chain, out);
		free(folded);
	}

	char *failing[] = {(char *)cfiprof_bin, "record", "-q", "-p", "999999999", NULL};
	rc = run(failing, NULL, err, 30);
	s = slurp(err);
	CHECK(rc != 0 && s && strstr(s, "999999999"),
	      "record -q -p 999999999: exit %d, stderr '%s' (want a failure naming the pid)", rc, s);
	free(s);

	char *plain[] = {(char *)cfiprof_bin, "record", "-o", out, "--", (char *)chain, "0.5", NULL};
	rc = run(plain, NULL, err, 30);
	s = slurp(err);
	for (char *p = s; p && *p; p++)
		lines += *p == '\n';
	/* the sample count and completeness, a loss or a refusal if any, the pointer to -v */
	CHECK(rc == 0 && s && strstr(s, "of the user stacks complete") && strstr(s, "-v") &&
		  lines <= 4,
	      "record: exit %d, %d lines on stderr (want at most 4):\n%s", rc, lines, s);
	free(s);
}

/*
 * Samples of chain's leaf in a folded file, how many of them are complete
 * chains, and the samples of the shell (comm "sh") that started it.
 */
static void leaf_counts(const char *name, unsigned long *leaf, unsigned long *complete,
			unsigned long *pending, unsigned long *shell)
{
	char path[PATHBUF], *text = slurp(tpath(path, sizeof(path), name)), *line, *save = NULL;

	*leaf = *complete = *pending = *shell = 0;
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t len;
		unsigned long n = folded_count(line, &len);

		if (!strncmp(line, "sh;", 3))
			*shell += n;
		if (!strstr(line, ";leaf"))
			continue;
		*leaf += n;
		if (strstr(line, "main;a;b;c;d;leaf"))
			*complete += n;
		if (strstr(line, "[incomplete: tables-pending]"))
			*pending += n;
	}
	free(text);
}

/*
 * The CPU seconds the shell of test_inherit wrote with `times` (its own, and
 * its waited-for children's: user + system each); false when unreadable.
 */
static bool read_times(const char *path, double *self, double *children)
{
	FILE *f = fopen(path, "re");
	double us, ss, uc, sc;
	int mus, mss, muc, msc;
	bool ok;

	ok = f && fscanf(f, "%dm%lfs %dm%lfs %dm%lfs %dm%lfs", &mus, &us, &mss, &ss, &muc, &uc,
			 &msc, &sc) == 8;
	if (f)
		fclose(f);
	if (ok) {
		*self = mus * 60 + us + mss * 60 + ss;
		*children = muc * 60 + uc + msc * 60 + sc;
	}
	return ok;
}

/* test_inherit's rate: its bounds are cpu_samples_floor of each task's CPU time at it */
#define INHERIT_HZ 499

/*
 * `record -- sh -c "chain & <busy loop>; wait"`: the shell forks chain, and
 * chain is profiled like perf's inherit; --no-inherit keeps only the shell,
 * whose own loop must still be there.  chain spins 0.5 s of its own CPU time
 * and the shell loops until it is done, then writes its and its children's
 * CPU time (`times`): the samples each should have follow from those, not
 * from how much of the machine they got.
 */
static void inherit_run(const char *chain, bool inherit, unsigned long *leaf,
			unsigned long *complete, unsigned long *pending, unsigned long *shell,
			double *self, double *children, uint64_t *kept_pending)
{
	char cmd[4 * PATHBUF + 128], opath[PATHBUF], epath[PATHBUF], done[PATHBUF], times[PATHBUF];
	const char *name = inherit ? "inherit" : "noinherit";
	char file[64], *argv[16];
	int rc, a = 0;

	snprintf(file, sizeof(file), "%s.done", name);
	tpath(done, sizeof(done), file);
	snprintf(file, sizeof(file), "%s.times", name);
	tpath(times, sizeof(times), file);
	unlink(done);
	snprintf(cmd, sizeof(cmd),
		 "(%s 0.5c; : > %s) & while [ ! -e %s ]; do :; done; wait; times > %s", chain,
		 done, done, times);
	snprintf(file, sizeof(file), "%s.err", name);
	tpath(epath, sizeof(epath), file);
	snprintf(file, sizeof(file), "%s.folded", name);
	tpath(opath, sizeof(opath), file);
	argv[a++] = (char *)cfiprof_bin;
	argv[a++] = "record";
	argv[a++] = "-v";
	argv[a++] = "-F";
	argv[a++] = "499";
	if (!inherit)
		argv[a++] = "--no-inherit";
	argv[a++] = "-o";
	argv[a++] = opath;
	argv[a++] = "--";
	argv[a++] = "/bin/sh";
	argv[a++] = "-c";
	argv[a++] = cmd;
	argv[a] = NULL;
	rc = run(argv, NULL, epath, 60);
	CHECK(rc == 0, "record %s-- sh -c '%s': exit %d", inherit ? "" : "--no-inherit ", cmd, rc);
	leaf_counts(file, leaf, complete, pending, shell);
	{
		char *log = slurp(epath);

		*kept_pending = summary_kept_pending(log);
		free(log);
	}
	*self = *children = 0;
	CHECK(read_times(times, self, children), "%s: no CPU times from the shell in %s", name,
	      times);
	unlink(done);
}

static void test_inherit(const char *chain)
{
	unsigned long leaf, complete, pending, shell;
	double self, children;
	uint64_t kept;

	inherit_run(chain, true, &leaf, &complete, &pending, &shell, &self, &children, &kept);
	printf("inherit: %lu samples of the forked chain's leaf (%.2f s CPU), %lu complete; %lu of "
	       "the shell (%.2f s CPU)\n",
	       leaf, children, complete, shell, self);
	/* chain spins 0.5 s of its CPU; times() may say a little less (its accounting) */
	CHECK(children >= 0.4 && leaf >= cpu_samples_floor(children, INHERIT_HZ),
	      "the child of the command was not profiled: %lu leaf samples for %.2f s of CPU",
	      leaf, children);
	/*
	 * Complete but for samples kept tables-pending and counted by cause: a
	 * consumer stalled by the load beside it (0.5 s in a clean clone's pool)
	 * leaves no ring room for their stack copies (15 of 245 once).
	 */
	CHECK(pending <= kept && (complete + pending) * 100 >= leaf * 95,
	      "child: %lu of %lu leaf samples complete, %lu tables-pending (%lu counted by cause)",
	      complete, leaf, pending, (unsigned long)kept);
	CHECK(shell >= cpu_samples_floor(self, INHERIT_HZ) && shell > 0,
	      "the command itself (sh) was not profiled: %lu samples for %.2f s of CPU", shell,
	      self);
	inherit_run(chain, false, &leaf, &complete, &pending, &shell, &self, &children, &kept);
	printf("no-inherit: %lu samples of the child's leaf, %lu of the shell (%.2f s CPU)\n", leaf,
	       shell, self);
	CHECK(leaf == 0, "--no-inherit: %lu samples of the child", leaf);
	CHECK(shell >= cpu_samples_floor(self, INHERIT_HZ) && shell > 0,
	      "--no-inherit: the command itself (sh) has %lu samples for %.2f s of CPU", shell,
	      self);
}

/*
 * The names cfiprof may give a pc of this kernel's vDSO, read from our own
 * copy (vdso_spin runs on the same kernel): its .dynsym functions, and
 * [vdso]+0xSTART for each FDE (from .eh_frame_hdr's table) whose start no
 * symbol covers, as "grouped by function" names them.
 */
struct vdso_names {
	char name[64][64];
	size_t n, unnamed;
};

static bool vdso_names_has(const struct vdso_names *vn, const char *name, size_t len)
{
	for (size_t i = 0; i < vn->n; i++)
		if (strlen(vn->name[i]) == len && !strncmp(vn->name[i], name, len))
			return true;
	return false;
}

static void vdso_names_add(struct vdso_names *vn, const char *name)
{
	if (vn->n < sizeof(vn->name) / sizeof(vn->name[0]) &&
	    !vdso_names_has(vn, name, strlen(name)))
		snprintf(vn->name[vn->n++], sizeof(vn->name[0]), "%s", name);
}

static bool vdso_names_read(struct vdso_names *vn)
{
	const uint8_t *base = (const uint8_t *)getauxval(AT_SYSINFO_EHDR), *h;
	const Elf64_Shdr *sh, *dynsym = NULL, *hdr = NULL;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	const Elf64_Sym *sym;
	const char *shstr, *str;
	size_t nsym, i, j;
	uint32_t count;

	memset(vn, 0, sizeof(*vn));
	if (!base || !eh->e_shoff || eh->e_shstrndx >= eh->e_shnum)
		return false;
	sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	shstr = (const char *)base + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
		else if (!strcmp(shstr + sh[i].sh_name, ".eh_frame_hdr"))
			hdr = &sh[i];
	}
	if (!dynsym || !hdr || dynsym->sh_link >= eh->e_shnum)
		return false;
	sym = (const Elf64_Sym *)(base + dynsym->sh_offset);
	nsym = dynsym->sh_size / sizeof(*sym);
	str = (const char *)base + sh[dynsym->sh_link].sh_offset;
	for (i = 0; i < nsym; i++)
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC)
			vdso_names_add(vn, str + sym[i].st_name);
	/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
	h = base + hdr->sh_offset;
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&count, h + 8, sizeof(count));
	for (i = 0; i < count; i++) {
		int32_t loc;
		uint64_t start;
		bool covered = false;
		char name[64];

		memcpy(&loc, h + 12 + 8 * i, sizeof(loc));
		start = hdr->sh_addr + (int64_t)loc;
		for (j = 0; j < nsym; j++)
			covered |= ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC &&
				   start >= sym[j].st_value &&
				   start < sym[j].st_value + sym[j].st_size;
		if (covered)
			continue;
		snprintf(name, sizeof(name), "[vdso]+0x%" PRIx64, start);
		vdso_names_add(vn, name);
		vn->unnamed++;
	}
	return true;
}

/*
 * Most of vdso_spin's samples have their user leaf in the vDSO, each vDSO
 * frame named by this kernel's vDSO (the entry __vdso_clock_gettime, then
 * what it calls), live and the same from the saved recording (report reads
 * this kernel's vDSO when the build-id matches; the recorded process's copy
 * is gone).  Which vDSO code runs depends on the clocksource: with tsc the
 * clock is read inside __vdso_clock_gettime, with kvm-clock in vread_pvclock,
 * a function of its own that has an FDE but no symbol ([vdso]+0xSTART).
 */
static void test_vdso(void)
{
	char prog[PATHBUF], path[PATHBUF], *live_text, *rep_text, bad[256] = "";
	static const char entry[] = ";vs_loop;clock_gettime;";
	unsigned long in_vdso = 0, in_unnamed = 0, misnamed = 0;
	struct stack_map live = {0}, rep = {0};
	struct vdso_names vn;
	struct lines ll, rl;
	size_t i;

	CHECK(vdso_names_read(&vn) && vdso_names_has(&vn, "__vdso_clock_gettime", 20),
	      "cannot read this process's vDSO (its .dynsym and .eh_frame_hdr)");
	snprintf(prog, sizeof(prog), "%s/vdso_spin", progs_dir);
	if (!record("vdso.folded", "vdso.rec", prog, "1") ||
	    !report("vdso.rec", "folded", "vdso.report.folded"))
		return;
	live_text = slurp(tpath(path, sizeof(path), "vdso.folded"));
	rep_text = slurp(tpath(path, sizeof(path), "vdso.report.folded"));
	ll = split_lines(live_text, false);
	rl = split_lines(rep_text, false);
	for (i = 0; i < ll.n; i++) {
		const char *f, *end, *vdso_leaf = NULL;
		unsigned long count;
		bool ok = true;
		size_t len;
		int depth;

		count = folded_count(ll.v[i], &len);
		f = strstr(ll.v[i], entry);
		if (!f || f >= ll.v[i] + len)
			continue;
		/* libc's clock_gettime calls into the vDSO or the kernel, nothing else */
		f += strlen(entry);
		for (depth = 0; f < ll.v[i] + len; depth++, f = end + 1) {
			size_t flen;

			end = memchr(f, ';', (size_t)(ll.v[i] + len - f));
			if (!end)
				end = ll.v[i] + len;
			flen = (size_t)(end - f);
			if (flen > 4 && !strncmp(end - 4, "_[k]", 4))
				break;
			if (depth == 0 ? flen != 20 || strncmp(f, "__vdso_clock_gettime", 20)
				       : !vdso_names_has(&vn, f, flen))
				ok = false;
			vdso_leaf = f;
		}
		if (!ok) {
			misnamed += count;
			if (!bad[0])
				snprintf(bad, sizeof(bad), "%.*s", (int)len, ll.v[i]);
		} else if (vdso_leaf) {
			in_vdso += count;
			if (!strncmp(vdso_leaf, "[vdso]+0x", 9))
				in_unnamed += count;
		}
	}
	map_from_folded(&live, &ll);
	map_from_folded(&rep, &rl);
	printf("vdso: %lu of %lu samples with their user leaf in the vDSO, %lu in its functions "
	       "without a symbol (%zu of them: %s); %lu misnamed\n",
	       in_vdso, folded_total(&ll), in_unnamed, vn.unnamed,
	       vn.unnamed ? vn.name[vn.n - vn.unnamed] : "none", misnamed);
	CHECK(misnamed == 0,
	      "vdso: %lu samples with a vDSO frame not named as this vDSO's, e.g. %s", misnamed,
	      bad);
	CHECK(in_vdso * 2 >= folded_total(&ll),
	      "vdso: %lu of %lu samples with their user leaf in the vDSO", in_vdso,
	      folded_total(&ll));
	CHECK(live.n > 0 && maps_equal(&live, &rep, "live", "report"),
	      "vdso: report names the vDSO frames differently from the live output");
	map_free(&live);
	map_free(&rep);
	free(ll.v);
	free(rl.v);
	free(live_text);
	free(rep_text);
}

int main(int argc, char **argv)
{
	char chain[PATHBUF];
	static const char *const tools[] = {"go", "xmllint", "chromium", "python3", "strip", "nm"};

	harness_init(argc, argv);
	if (!e2e_setup("cli"))
		return HARNESS_DONE();
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	CHECK(access(chain, X_OK) == 0, "%s is missing (make %s)", chain, chain);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make deps)", tools[i]);
	go_env_setup(tmpdir, go_env);

	RUN_TEST_AS("errors", test_errors(chain));
	RUN_TEST_AS("quiet", test_quiet(chain));
	RUN_TEST_AS("pprof", test_pprof(chain));
	RUN_TEST(test_cxx);
	RUN_TEST_AS("stripped", test_stripped(chain));
	RUN_TEST_AS("svg", test_svg(chain));
	RUN_TEST_AS("report_same", test_report_same(chain));
	RUN_TEST_AS("speedscope", test_speedscope(chain));
	RUN_TEST(test_vdso);
	RUN_TEST_AS("inherit", test_inherit(chain));

	e2e_finish();
	return HARNESS_DONE();
}
