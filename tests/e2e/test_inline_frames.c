// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source lines and inline frames through the real CLI, on progs/inlines
 * (leaf_mix inlined into middle_sum inlined into inl::outer_work, -O2 -g),
 * run from a copy in the run's directory:
 *  1. record -o pprof --save: `go tool pprof -traces` shows leaf_mix and
 *     middle_sum as "(inline)" frames above inl::outer_work; every location
 *     of the program the recording kept has the chain and lines
 *     `eu-addr2line -f -i` gives at the same address (the oracle);
 *  2. the copy is deleted, then `report` renders the recording: its folded
 *     output equals the one record wrote (inline frames included), --no-inline
 *     folds them into inl::outer_work, --lines names them with FILE:LINE, and
 *     its pprof carries the Lines (read by the pprof-format npm package).
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 256)

static char prog[PATHBUF];

/* cfiprof report T/rec.rec OPTS... > T/OUT; the output (caller frees) or NULL. */
static char *report(const char *out, const char *opt1, const char *opt2)
{
	char rec[PATHBUF], opath[PATHBUF], epath[PATHBUF + 8];
	char *argv[] = {(char *)cfiprof_bin, "report", rec, (char *)opt1, (char *)opt2, NULL};
	int rc;

	tpath(rec, sizeof(rec), "rec.rec");
	tpath(opath, sizeof(opath), out);
	snprintf(epath, sizeof(epath), "%s.err", opath);
	rc = run(argv, opath, epath, 60);
	CHECK(rc == 0, "report %s %s: exit %d", opt1 ? opt1 : "", opt2 ? opt2 : "", rc);
	if (rc)
		dump_tail("report", epath);
	return rc ? NULL : slurp(opath);
}

struct uframe {
	uint64_t addr;
	unsigned int level, line;
	char name[256], file[PATH_MAX];
};

/* The recording's uframe lines of the program's mapping, and its load bias. */
static int read_uframes(const char *rec, struct uframe *uf, int max, uint64_t *bias)
{
	FILE *f = fopen(rec, "r");
	char *line = NULL, path[PATHBUF];
	size_t cap = 0;
	uint64_t start = 0;
	int n = 0;

	*bias = 0;
	while (f && getline(&line, &cap, f) > 0) {
		uint64_t s, e, off, b, ms;
		unsigned int pid, flags, lv, ln, sl;
		char bid[160];
		int at = 0;

		if (sscanf(line,
			   "map %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %u %159s %4095s",
			   &pid, &s, &e, &off, &b, &flags, bid, path) == 8 &&
		    strstr(path, "/inlines") && !start) {
			start = s;
			*bias = b;
		}
		if (n < max && start &&
		    sscanf(line, "uframe %u %" SCNx64 " %" SCNx64 " %u %u %u%n", &pid, &ms,
			   &uf[n].addr, &lv, &ln, &sl, &at) == 6 &&
		    ms == start) {
			char *t = line + at + 1, *name = strsep(&t, "\t"),
			     *sys = t ? strsep(&t, "\t") : NULL;

			uf[n].level = lv;
			uf[n].line = ln;
			snprintf(uf[n].name, sizeof(uf[n].name), "%s", sys ? sys : name);
			/* FILE, then (since recordings keep it) the mapped file's key */
			snprintf(uf[n].file, sizeof(uf[n].file), "%.*s",
				 (int)strcspn(t ? t : "", "\t\n"), t ? t : "");
			n++;
		}
	}
	free(line);
	if (f)
		fclose(f);
	return n;
}

/* Every kept location of the program against eu-addr2line -f -i at its ELF address. */
static void check_oracle(const struct uframe *uf, int n, uint64_t bias)
{
	int i = 0, locs = 0, agree = 0, deep = 0;

	while (i < n) {
		char cmd[PATHBUF + 128], *line = NULL;
		size_t cap = 0;
		int j = i, k = 0, bad = 0;
		FILE *p;

		while (j < n && uf[j].addr == uf[i].addr)
			j++;
		snprintf(cmd, sizeof(cmd), "eu-addr2line -f -i -e '%s' 0x%" PRIx64, prog,
			 uf[i].addr - bias);
		p = popen(cmd, "r");
		while (p && getline(&line, &cap, p) > 0) {
			char name[256];
			unsigned int ln = 0;
			char *c;

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, " \n"), line);
			if (getline(&line, &cap, p) <= 0)
				break;
			line[strcspn(line, "\n")] = 0;
			/* FILE:LINE:COL */
			c = strrchr(line, ':');
			if (c && (*c = 0, c = strrchr(line, ':')))
				ln = (unsigned int)strtoul(c + 1, NULL, 10), *c = 0;
			/* no line: the symbol's name at ??:0 */
			if (!strcmp(line, "??"))
				line[0] = 0;
			/*
			 * Code no symbol and no DWARF covers (the PLT's lazy-binding entry 0,
			 * sampled now and then): eu-addr2line says "??", cfiprof names it by
			 * its object's offset; both must agree that there is no line.
			 */
			if (!strcmp(name, "??") && !line[0] && ln == 0 && i + k < j &&
			    !uf[i + k].line && !uf[i + k].file[0] && strstr(uf[i + k].name, "+0x"))
				;
			else if (i + k >= j || strcmp(uf[i + k].name, name) ||
				 uf[i + k].line != ln || strcmp(uf[i + k].file, line))
				bad++;
			k++;
		}
		free(line);
		if (p)
			pclose(p);
		locs++;
		if (!bad && k == j - i) {
			agree++;
			deep += k >= 3;
		} else {
			printf("  0x%" PRIx64 ": %d levels kept, eu-addr2line %d, %d differ\n",
			       uf[i].addr - bias, j - i, k, bad);
		}
		i = j;
	}
	printf("inlines: %d of %d locations as eu-addr2line -i says (%d three levels deep)\n",
	       agree, locs, deep);
	CHECK(locs >= 3 && agree == locs && deep >= 1, "%d of %d locations agree, %d deep", agree,
	      locs, deep);
}

static void test_record_report(void)
{
	char pb[PATHBUF], rec[PATHBUF], folded[PATHBUF], npm[PATHBUF], js[PATHBUF],
	    cmd[4 * PATHBUF];
	char *opts[] = {"--save", rec, NULL}, *cmd_argv[] = {prog, "100000000", "20", NULL};
	char *log = NULL, *out, *live, *rep;
	static struct uframe uf[4096];
	uint64_t bias;
	int status, n;

	tpath(rec, sizeof(rec), "rec.rec");
	tpath(pb, sizeof(pb), "live.pb.gz");
	tpath(folded, sizeof(folded), "live.folded");
	/* 1. the pprof, by go tool pprof; the recording's lines, by eu-addr2line */
	if (e2e_record("live.pb.gz", "999", opts, cmd_argv, &log))
		goto out;
	out = go_pprof("go", tmpdir, "-traces", pb, &status);
	CHECK(status == 0 && out && strstr(out, "leaf_mix (inline)\n") &&
		  strstr(out, "middle_sum (inline)\n             inl::outer_work(unsigned long)\n"),
	      "go tool pprof -traces: no inline frames:\n%.2000s", out ? out : "");
	free(out);
	n = read_uframes(rec, uf, 4096, &bias);
	check_oracle(uf, n, bias);

	/* 2. without the binary: report renders what record wrote */
	live = NULL;
	{
		char *fa[] = {(char *)cfiprof_bin, "report", rec, "-o", folded, NULL};

		CHECK(run(fa, NULL, NULL, 60) == 0, "report -o live.folded before the copy goes");
		live = slurp(folded);
	}
	CHECK(unlink(prog) == 0, "rm %s: %s", prog, strerror(errno));
	rep = report("report.folded", "-f", "folded");
	CHECK(
	    live && rep && !strcmp(live, rep) &&
		strstr(rep, ";main;inl::outer_work(unsigned long);middle_sum;leaf_mix "),
	    "report without the binary differs or lacks the inline frames:\n%.1500s\n---\n%.1500s",
	    live ? live : "", rep ? rep : "");
	free(rep);
	rep = report("noinline.folded", "--no-inline", NULL);
	CHECK(rep && strstr(rep, ";main;inl::outer_work(unsigned long) ") &&
		  !strstr(rep, "middle_sum"),
	      "--no-inline:\n%.1500s", rep ? rep : "");
	free(rep);
	rep = report("lines.folded", "--lines", NULL);
	CHECK(rep && strstr(rep,
			    ";inl::outer_work(unsigned long) inlines.cc:32;middle_sum inlines.cc:"),
	      "--lines:\n%.1500s", rep ? rep : "");
	free(rep);
	free(live);
	rep = report("report.pb.gz", "-o", pb);
	free(rep);
	CHECK(realpath("build/npm/node_modules", npm) && realpath("tests/lib/pprof_decode.js", js),
	      "pprof-format is missing (make test-deps)");
	snprintf(cmd, sizeof(cmd), "node '%s' '%s' '%s' lines", js, npm, pb);
	{
		FILE *p = popen(cmd, "r");
		char buf[65536];
		size_t got = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;

		buf[got] = 0;
		if (p)
			pclose(p);
		CHECK(strstr(buf, ": leaf_mix|leaf_mix|") &&
			  strstr(buf, "|_ZN3inl10outer_workEm|") &&
			  strstr(buf, "inlines functions filenames line_numbers inline_frames\n"),
		      "the report's pprof read by pprof-format:\n%.2000s", buf);
	}
out:
	free(log);
}

int main(int argc, char **argv)
{
	char src[PATHBUF], cp[3 * PATHBUF];

	harness_init(argc, argv);
	if (!e2e_setup("inline"))
		return HARNESS_DONE();
	snprintf(src, sizeof(src), "%s/inlines", progs_dir);
	tpath(prog, sizeof(prog), "inlines");
	snprintf(cp, sizeof(cp), "cp '%s' '%s'", src, prog);
	CHECK(system(cp) == 0 && !access(prog, X_OK), "%s", cp);
	CHECK(tool_exists("eu-addr2line") && tool_exists("go") && tool_exists("node"),
	      "eu-addr2line, go or node is missing (make test-deps)");
	RUN_TEST_AS("record_report", test_record_report());
	e2e_finish();
	return HARNESS_DONE();
}
