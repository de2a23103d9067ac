// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perl frames inside native stacks (issue 32), on Debian's perl 5.36 (no
 * debug information): tests/progs/perl/recurse.pl recorded with cfiprof
 * record -- perl recurse.pl.  The oracle is perl itself: the script run with
 * PERL_BACKTRACE prints, from caller() in its leaf, the chains a sample
 * there must show (a recursion, and sort's comparator calling the leaf).
 * Both appear exactly; >= 95% of the samples in Perl code carry Perl
 * frames, every group right above a Perl_runops_standard frame; the
 * comparator's frames sit above pp_sort's C code (its own runops loop);
 * pprof has the leaf's file:line, OTLP types the frames "perl"; a --save
 * recording's report shows the same chains.  Also: a process in its own
 * PID and mount namespaces, and a copy claiming another version (plain
 * native stacks, counted with its version named).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/interp_folded.h"

#define PERL "/usr/bin/perl"
/* iterations of the script's loop: about 0.7 s of CPU, ~200 samples at 299 Hz */
#define WORK "1000"

static struct interp_lang perl_lang = {
    .comm = "perl", .unknown = "[perl]", .eval = "Perl_runops_standard", .what = "Perl"};
static char script[PATH_MAX];
/* the chains perl's own caller() gives the leaf: recursion, sort's comparator */
static char want_recursion[4096], want_sort[4096];

static int leaf_line(void)
{
	return interp_mark_line(script, "# LEAF");
}

/* perl's own view of the leaf's chains (PERL_BACKTRACE: caller()): the oracle. */
static bool oracle(void)
{
	bool ok = interp_oracle(PERL, script, "5", "PERL_BACKTRACE", "# LEAF", want_recursion,
				want_sort, sizeof(want_recursion));

	CHECK(strstr(want_recursion, ";main::recurse (") && strstr(want_sort, ";main::leaf (") &&
		  !strstr(want_sort, ";main::recurse ("),
	      "perl's backtraces: '%s' and '%s'", want_recursion, want_sort);
	return ok;
}

/* Samples of the comparator whose native frames between Work::run and leaf are pp_sort's. */
static uint64_t sort_placed(const struct interp_run *r)
{
	char line[16384];
	uint64_t n = 0;
	FILE *f = fopen(r->folded, "re");

	while (f && fgets(line, sizeof(line), f)) {
		const char *run = strstr(line, ";Work::run ("),
			   *ps = strstr(line, ";Perl_pp_sort;"),
			   *lf = ps ? strstr(ps, ";Perl_runops_standard;main::leaf (") : NULL;

		if (interp_comm_line(&perl_lang, line) && run && ps && run < ps && lf)
			n += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

static void test_recursion(void)
{
	static const char *const otlp_frames[] = {"main::leaf perl", "Work::run perl",
						  "<main> perl", "Perl_runops_standard native"};
	char *cmd[] = {PERL, script, WORK, NULL}, *opts[] = {"--save", NULL, NULL}, rec[PATH_MAX];
	struct interp_run r;
	uint64_t n;

	if (!oracle())
		return;
	opts[1] = tpath(rec, sizeof(rec), "recurse.rec");
	if (!interp_record(&perl_lang, "recurse.folded", opts, cmd, &r))
		goto out;
	interp_judge(&perl_lang, "perl", "recurse", &r);
	/* ~200 samples, most in the recursion's leaf, a fifth in the comparator's: tens each */
	n = interp_chain_count(&perl_lang, &r, want_recursion, false);
	CHECK(n >= 3, "recursion: perl's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_recursion);
	n = interp_chain_count(&perl_lang, &r, want_sort, false);
	CHECK(n >= 3, "sort: perl's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_sort);
	n = sort_placed(&r);
	CHECK(n >= 3, "sort: %lu samples with pp_sort -> Perl_runops_standard below the leaf",
	      (unsigned long)n);
	if (harness_failed)
		interp_print_lines(&perl_lang, &r, r.log);
	interp_check_report(&perl_lang, rec, &r, want_recursion);
	interp_check_pprof(rec, "main::leaf", script, leaf_line());
	interp_check_otlp(rec, otlp_frames, sizeof(otlp_frames) / sizeof(otlp_frames[0]));
out:
	free(r.log);
}

/* The same chains from a process in its own PID and mount namespaces, its perl only there. */
static void test_namespaces(void)
{
	struct interp_run r;
	uint64_t n;

	if (!oracle() || !interp_record_namespaces(&perl_lang, PERL, "perl", script, WORK, &r))
		goto out;
	interp_judge(&perl_lang, "perl", "namespaces", &r);
	n = interp_chain_count(&perl_lang, &r, want_recursion, false);
	CHECK(n >= 3, "namespaces: the recursion's chain in %lu samples (want >= 3)",
	      (unsigned long)n);
out:
	free(r.log);
}

/* A copy of perl whose PL_version says 5.99: no entry, native stacks, the version named. */
static void test_unsupported_version(void)
{
	char bin[512], *cmd[] = {bin, script, WORK, NULL}, *cp[] = {"cp", PERL, bin, NULL};
	unsigned char version = 99;

	tpath(bin, sizeof(bin), "perl");
	CHECK(run(cp, NULL, NULL, 30) == 0 &&
		  interp_patch_symbol(bin, "PL_version", 0, &version, 1),
	      "a copy of " PERL " claiming 5.99");
	interp_check_unsupported(&perl_lang, "perl", "5.99", cmd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("perl"))
		return HARNESS_DONE();
	if (!realpath("tests/progs/perl/recurse.pl", script))
		snprintf(script, sizeof(script), "tests/progs/perl/recurse.pl");
	RUN_TEST(test_recursion);
	RUN_TEST(test_namespaces);
	RUN_TEST(test_unsupported_version);
	e2e_finish();
	return HARNESS_DONE();
}
