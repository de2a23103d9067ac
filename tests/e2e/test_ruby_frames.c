// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby frames inside native stacks (issue 32), on Debian's ruby 3.1 (no
 * debug information): tests/progs/ruby/recurse.rb recorded with cfiprof
 * record -- ruby recurse.rb.  The oracle is Ruby itself: the script run with
 * RUBY_BACKTRACE prints, from caller_locations in its leaf, the chains a
 * sample there must show (a recursion, and a block that Array#each, a C
 * method, calls back into).  Both appear exactly, lines included; >= 95%
 * of the samples in Ruby code carry Ruby frames, every group right above
 * an rb_vm_exec frame; the block's frames sit above Array#each's C code
 * (a vm_exec of its own); pprof has the leaf's file:line, OTLP types the
 * frames "ruby"; a --save recording's report shows the same chains.
 * Also: threads and Ractors (each its own execution context), a process in its own PID
 * and mount namespaces, and a libruby claiming another version (plain
 * native stacks, counted with its version named).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/interp_folded.h"

#define RUBY	"/usr/bin/ruby"
#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"
/* iterations of the script's loop: about 0.7 s of CPU, ~200 samples at 299 Hz */
#define WORK "2000"

static struct interp_lang ruby_lang = {.comm = "ruby",
				       .unknown = "[ruby]",
				       .eval = "rb_vm_exec",
				       .what = "Ruby",
				       .push_before_loop = true};
static char script[PATH_MAX], threads[PATH_MAX], ractors[PATH_MAX];
/* the chains Ruby's own caller_locations gives the leaf: recursion, a block run by each */
static char want_recursion[4096], want_block[4096];

static int leaf_line(void)
{
	return interp_mark_line(script, "# LEAF");
}

/* Ruby's own view of the leaf's chains (RUBY_BACKTRACE: caller_locations): the oracle. */
static bool oracle(void)
{
	bool ok = interp_oracle(RUBY, script, "5", "RUBY_BACKTRACE", "# LEAF", want_recursion,
				want_block, sizeof(want_recursion));

	CHECK(strstr(want_recursion, ";recurse (") &&
		  strstr(want_block, ";block (2 levels) in run (") &&
		  !strstr(want_block, ";recurse ("),
	      "ruby's backtraces: '%s' and '%s'", want_recursion, want_block);
	return ok;
}

/* Samples of the block whose frames sit above a vm_exec of their own, above each's C code. */
static uint64_t block_placed(const struct interp_run *r)
{
	char line[16384];
	uint64_t n = 0;
	FILE *f = fopen(r->folded, "re");

	while (f && fgets(line, sizeof(line), f)) {
		const char *outer = strstr(line, ";block in run ("),
			   *inner = strstr(line, ";rb_vm_exec;block (2 levels) in run (");
		const char *next = outer ? strchr(outer + 1, ';') : NULL;
		bool native_between = next && inner && next < inner;

		/* only native frames (each's C code) between the outer block and the inner loop */
		for (const char *p = next; native_between && p < inner; p++)
			native_between = *p != '(';
		if (interp_comm_line(&ruby_lang, line) && outer && native_between)
			n += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

static void test_recursion(void)
{
	static const char *const otlp_frames[] = {"leaf ruby", "run ruby", "<main> ruby",
						  "rb_vm_exec native"};
	char *cmd[] = {RUBY, script, WORK, NULL}, *opts[] = {"--save", NULL, NULL}, rec[PATH_MAX];
	struct interp_run r;
	uint64_t n;

	if (!oracle())
		return;
	opts[1] = tpath(rec, sizeof(rec), "recurse.rec");
	if (!interp_record(&ruby_lang, "recurse.folded", opts, cmd, &r))
		goto out;
	interp_judge(&ruby_lang, "ruby", "recurse", &r);
	/* ~200 samples, half in the recursion's leaf, half in the block's: tens each */
	n = interp_chain_count(&ruby_lang, &r, want_recursion, false);
	CHECK(n >= 3, "recursion: ruby's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_recursion);
	n = interp_chain_count(&ruby_lang, &r, want_block, false);
	CHECK(n >= 3, "block: ruby's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_block);
	n = block_placed(&r);
	CHECK(n >= 3, "block: %lu samples with each's C code -> rb_vm_exec below the block",
	      (unsigned long)n);
	/*
	 * C methods named where they run: every sample of the two chains is
	 * under run's times block, tens each; the block's under each.
	 */
	{
		char caller[PATH_MAX + 32];
		uint64_t times, each;

		snprintf(caller, sizeof(caller), "run (%s", script);
		times = interp_callee_count(&ruby_lang, &r, caller, "times");
		snprintf(caller, sizeof(caller), "block in run (%s", script);
		each = interp_callee_count(&ruby_lang, &r, caller, "each");
		printf("  C methods: run -> times in %lu samples, block in run -> each in %lu\n",
		       (unsigned long)times, (unsigned long)each);
		CHECK(times >= 3 && each >= 3,
		      "C methods: run -> times in %lu samples, block in run -> each in %lu (want 3 "
		      "each)",
		      (unsigned long)times, (unsigned long)each);
	}
	if (harness_failed)
		interp_print_lines(&ruby_lang, &r, r.log);
	interp_check_report(&ruby_lang, rec, &r, want_recursion);
	interp_check_pprof(rec, "leaf", script, leaf_line());
	interp_check_otlp(rec, otlp_frames, sizeof(otlp_frames) / sizeof(otlp_frames[0]));
out:
	free(r.log);
}

/*
 * Two threads, each spinning in its own method: each thread's samples carry
 * its own chain (its own execution context, not the GVL holder's).
 */
static void test_threads(void)
{
	/* of its CPU time: as many samples however busy the machine */
	char *cmd[] = {RUBY, threads, "1.5c", NULL}, want[2 * PATH_MAX + 128];
	struct interp_run r;
	uint64_t n;

	if (!interp_record(&ruby_lang, "threads.folded", NULL, cmd, &r))
		goto out;
	interp_judge(&ruby_lang, "ruby", "threads", &r);
	snprintf(want, sizeof(want), "block in <main> (%s:*;spin_a (%s:*", threads, threads);
	n = interp_chain_count(&ruby_lang, &r, want, false);
	CHECK(n >= 3, "threads: the thread's chain in %lu samples: %s", (unsigned long)n, want);
	snprintf(want, sizeof(want), "<main> (%s:*;spin_b (%s:*", threads, threads);
	n = interp_chain_count(&ruby_lang, &r, want, false);
	CHECK(n >= 3, "threads: the main thread's chain in %lu samples: %s", (unsigned long)n,
	      want);
	if (harness_failed)
		interp_print_lines(&ruby_lang, &r, r.log);
out:
	free(r.log);
}

/* A Ractor beside the main one: each its own native thread and context, both chains. */
static void test_ractors(void)
{
	/* of its CPU time, two threads of it at once */
	char *cmd[] = {RUBY, ractors, "3c", NULL}, want[2 * PATH_MAX + 128];
	struct interp_run r;
	uint64_t n;

	if (!interp_record(&ruby_lang, "ractors.folded", NULL, cmd, &r))
		goto out;
	interp_judge(&ruby_lang, "ruby", "ractors", &r);
	snprintf(want, sizeof(want), "block in <main> (%s:*;spin_r (%s:*", ractors, ractors);
	n = interp_chain_count(&ruby_lang, &r, want, false);
	CHECK(n >= 3, "ractors: the Ractor's chain in %lu samples: %s", (unsigned long)n, want);
	snprintf(want, sizeof(want), "<main> (%s:*;spin_m (%s:*", ractors, ractors);
	n = interp_chain_count(&ruby_lang, &r, want, false);
	CHECK(n >= 3, "ractors: the main Ractor's chain in %lu samples: %s", (unsigned long)n,
	      want);
	/* what the frames were, and record's log (its ruby line counts unreadable iseqs) */
	if (harness_failed)
		interp_print_lines(&ruby_lang, &r, r.log);
out:
	free(r.log);
}

/* The same chains from a process in its own PID and mount namespaces, its ruby only there. */
static void test_namespaces(void)
{
	struct interp_run r;
	uint64_t n;

	if (!oracle() || !interp_record_namespaces(&ruby_lang, RUBY, "ruby", script, WORK, &r))
		goto out;
	interp_judge(&ruby_lang, "ruby", "namespaces", &r);
	n = interp_chain_count(&ruby_lang, &r, want_recursion, false);
	CHECK(n >= 3, "namespaces: the recursion's chain in %lu samples (want >= 3)",
	      (unsigned long)n);
out:
	free(r.log);
}

/* A libruby whose ruby_version says 3.9: no entry, native stacks, the version named. */
static void test_unsupported_version(void)
{
	char dir[512], lib[600], env[600], *cp[] = {"cp", LIBRUBY, lib, NULL};
	char *cmd[] = {"env", env, RUBY, "--disable-gems", script, WORK, NULL};

	tpath(dir, sizeof(dir), "");
	snprintf(lib, sizeof(lib), "%s/libruby-3.1.so.3.1", dir);
	snprintf(env, sizeof(env), "LD_LIBRARY_PATH=%s", dir);
	/* "3.1.2": its minor digit */
	CHECK(run(cp, NULL, NULL, 30) == 0 && interp_patch_symbol(lib, "ruby_version", 2, "9", 1),
	      "a copy of " LIBRUBY " claiming 3.9");
	interp_check_unsupported(&ruby_lang, "ruby", "3.9", cmd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("ruby"))
		return HARNESS_DONE();
	if (!realpath("tests/progs/ruby/recurse.rb", script))
		snprintf(script, sizeof(script), "tests/progs/ruby/recurse.rb");
	if (!realpath("tests/progs/ruby/threads.rb", threads))
		snprintf(threads, sizeof(threads), "tests/progs/ruby/threads.rb");
	if (!realpath("tests/progs/ruby/ractors.rb", ractors))
		snprintf(ractors, sizeof(ractors), "tests/progs/ruby/ractors.rb");
	RUN_TEST(test_recursion);
	RUN_TEST(test_threads);
	RUN_TEST(test_ractors);
	RUN_TEST(test_namespaces);
	RUN_TEST(test_unsupported_version);
	e2e_finish();
	return HARNESS_DONE();
}
