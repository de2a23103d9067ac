// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PHP frames inside native stacks (issue 32), on Debian's php8.2 (no debug
 * information): tests/progs/php/recurse.php recorded with cfiprof record --
 * php8.2 recurse.php.  The oracle is PHP itself: the script run with
 * PHP_BACKTRACE prints, from debug_backtrace() in its leaf, the chains a
 * sample there must show (a recursion, and a closure array_map calls back).
 * Both appear exactly; >= 95% of the samples in PHP code carry PHP frames,
 * every group right above an execute_ex frame; the callback sits above
 * array_map's C code (zend_call_function -> execute_ex); pprof has the
 * leaf's file:line, OTLP (decoded by protoc) types them "php"; a --save
 * recording's report shows the same chains.
 * Also: a process in its own PID and mount namespaces (its php8.2 visible
 * only there), and a build of an unsupported version (plain native stacks,
 * complete, counted with its version named).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/interp_folded.h"

#define PHP	"/usr/bin/php8.2"
/* iterations of the script's loop: about 1 s of CPU, ~300 samples at 299 Hz */
#define WORK "4000"

/*
 * zend_call_function (array_map's callback here) makes the callee's frame
 * EG(current_execute_data) in zend_init_func_execute_data before it calls
 * execute_ex: a sample in between has one group of frames more than loops
 * (CI once: 1 of 238 samples), Ruby's case.
 */
static struct interp_lang php_lang = {.comm = "php8.2",
				      .unknown = "[php]",
				      .eval = "execute_ex",
				      .what = "PHP",
				      .push_before_loop = true};
static char script[PATH_MAX];
/* the chains PHP's own debug_backtrace gives the leaf: recursion, callback */
static char want_recursion[4096], want_callback[4096];

static int leaf_line(void)
{
	return interp_mark_line(script, "// LEAF");
}

/* PHP's own view of the leaf's chains (PHP_BACKTRACE: debug_backtrace()): the oracle. */
static bool oracle(void)
{
	bool ok = interp_oracle(PHP, script, "5", "PHP_BACKTRACE", "// LEAF", want_recursion,
				want_callback, sizeof(want_recursion));

	CHECK(strstr(want_recursion, ";recurse (") && strstr(want_callback, "{closure}"),
	      "PHP's backtraces: '%s' and '%s'", want_recursion, want_callback);
	return ok;
}

static void judge(const char *name, const struct interp_run *r)
{
	interp_judge(&php_lang, "php", name, r);
}

/*
 * Samples of the callback whose native frames between Work::run and the
 * closure are array_map's own C code calling back: array_map (its PHP
 * frame, no file), then zend_call_function and execute_ex.
 */
static uint64_t callback_placed(const struct interp_run *r)
{
	char line[16384];
	uint64_t n = 0;
	FILE *f = fopen(r->folded, "re");

	while (f && fgets(line, sizeof(line), f)) {
		const char *am = strstr(line, ";array_map;"), *cf, *ex, *cl;

		if (!interp_comm_line(&php_lang, line) || !am)
			continue;
		cf = strstr(am, ";zend_call_function;");
		ex = cf ? strstr(cf, ";execute_ex;Work::{closure} (") : NULL;
		cl = strstr(line, "Work::run (");
		if (cl && cl < am && ex)
			n += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

static void test_recursion(void)
{
	static const char *const otlp_frames[] = {"leaf php", "Work::{closure} php", "{main} php",
						  "execute_ex native"};
	char *cmd[] = {PHP, script, WORK, NULL}, *opts[] = {"--save", NULL, NULL}, rec[PATH_MAX];
	struct interp_run r;
	uint64_t n;

	if (!oracle())
		return;
	opts[1] = tpath(rec, sizeof(rec), "recurse.rec");
	if (!interp_record(&php_lang, "recurse.folded", opts, cmd, &r))
		goto out;
	judge("recurse", &r);
	/*
	 * ~190 samples, about half in each path (a third of the recursion's in
	 * its leaf): the chains' samples are tens, 3 is far below
	 */
	n = interp_chain_count(&php_lang, &r, want_recursion, false);
	CHECK(n >= 3, "recursion: PHP's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_recursion);
	n = interp_chain_count(&php_lang, &r, want_callback, false);
	CHECK(n >= 3, "callback: PHP's chain in %lu samples (want >= 3): %s", (unsigned long)n,
	      want_callback);
	n = callback_placed(&r);
	CHECK(n >= 3,
	      "callback: %lu samples with array_map -> zend_call_function -> execute_ex "
	      "below the closure (want >= 3)",
	      (unsigned long)n);
	if (harness_failed)
		interp_print_lines(&php_lang, &r, r.log);
	interp_check_report(&php_lang, rec, &r, want_recursion);
	interp_check_pprof(rec, "leaf", script, leaf_line());
	interp_check_otlp(rec, otlp_frames, sizeof(otlp_frames) / sizeof(otlp_frames[0]));
out:
	free(r.log);
}

/* The same chains from a process in its own PID and mount namespaces, its php8.2 only there. */
static void test_namespaces(void)
{
	struct interp_run r;
	uint64_t n;

	if (!oracle() || !interp_record_namespaces(&php_lang, PHP, "php8.2", script, WORK, &r))
		goto out;
	judge("namespaces", &r);
	n = interp_chain_count(&php_lang, &r, want_recursion, false);
	CHECK(n >= 3, "namespaces: the recursion's chain in %lu samples (want >= 3)",
	      (unsigned long)n);
	n = interp_chain_count(&php_lang, &r, want_callback, false);
	CHECK(n >= 3, "namespaces: the callback's chain in %lu samples (want >= 3)",
	      (unsigned long)n);
out:
	free(r.log);
}

#define PHP_FPM "/usr/sbin/php-fpm8.2"

/* FPM's processes keep the name of their program (their title is their arguments') */
static struct interp_lang fpm_lang = {
    .comm = "php-fpm8.2", .unknown = "[php]", .eval = "execute_ex", .what = "PHP"};

/* The pid in FPM's pid file at path, once it is there (30 s); 0 if never. */
static pid_t fpm_master(const char *path, const char *sock)
{
	struct stat st;

	for (double end = mono_sec() + 30; mono_sec() < end; usleep(20000)) {
		char *s = slurp(path);
		long pid = strtol(s, NULL, 10);

		free(s);
		if (pid > 0 && stat(sock, &st) == 0)
			return (pid_t)pid;
	}
	return 0;
}

/*
 * A long-running FPM worker (static pool of one, without php.ini) serving
 * the script twice through FastCGI (cgi-fcgi): record follows FPM from its
 * start, the requests run in the worker forked at start, and each request's
 * samples carry the same chains as the CLI's (one request is the script's
 * 4000 iterations, ~300 samples at 299 Hz: tens in each chain).
 */
static void test_fpm(void)
{
	char conf[PATH_MAX], sock[PATH_MAX], pidf[PATH_MAX], folded[PATH_MAX], err[PATH_MAX + 8];
	char *rec[] = {(char *)cfiprof_bin,
		       "record",
		       "-v",
		       "-F",
		       "299",
		       "-o",
		       folded,
		       "--",
		       PHP_FPM,
		       "-n",
		       "-R",
		       "-F",
		       "-y",
		       conf,
		       NULL};
	char *req[] = {"cgi-fcgi", "-bind", "-connect", sock, NULL};
	char env_script[PATH_MAX + 32], *env[] = {env_script, "REQUEST_METHOD=GET", NULL};
	struct interp_run r = {0};
	pid_t prof, master;
	bool to = false;
	uint64_t n;
	long known;
	FILE *f;
	int st;

	if (!oracle())
		return;
	tpath(conf, sizeof(conf), "fpm.conf");
	tpath(sock, sizeof(sock), "fpm.sock");
	tpath(pidf, sizeof(pidf), "fpm.pid");
	tpath(folded, sizeof(folded), "fpm.folded");
	snprintf(err, sizeof(err), "%s.err", folded);
	f = fopen(conf, "we");
	if (f) {
		fprintf(f,
			"[global]\npid = %s\nerror_log = %s.log\ndaemonize = no\n[www]\n"
			"listen = %s\npm = static\npm.max_children = 1\n",
			pidf, conf, sock);
		fclose(f);
	}
	snprintf(env_script, sizeof(env_script), "SCRIPT_FILENAME=%s", script);
	prof = spawn(rec, NULL, err);
	master = prof > 0 && wait_cfiprof_sampling(prof, 30) ? fpm_master(pidf, sock) : 0;
	CHECK(master > 0, "php-fpm did not start under record: %s", slurp(err));
	for (int i = 0; master > 0 && i < 2; i++)
		CHECK(run_env(req, env, "/dev/null", NULL, 60, NULL) == 0, "request %d failed", i);
	if (master > 0)
		kill(master, SIGQUIT); /* FPM's graceful stop: the recording ends with it */
	st = prof > 0 ? wait_timeout(prof, 60, &to) : -1;
	CHECK(exit_code(st, to) == 0, "record of php-fpm exited %d", exit_code(st, to));
	r.log = slurp(err);
	snprintf(r.folded, sizeof(r.folded), "%s", folded);
	if (!interp_read_folded(&fpm_lang, "fpm.folded", &r))
		goto out;
	/*
	 * master and worker: both run PHP, so the summary counts two processes.
	 * The worker is forked, not exec'd: its samples before its own load
	 * wrote its entry have no PHP frames, and the summary does not count
	 * them (a clean clone beside make test-stress: 40 of 504, the load
	 * queued behind the host's).  Those are excused, as for python's.
	 */
	known = interp_summary_samples(r.log, "php");
	interp_judge_excusing(
	    &fpm_lang, "php", "fpm", &r,
	    known >= 0 && (uint64_t)known < r.samples ? r.samples - (uint64_t)known : 0);
	CHECK(r.log && strstr(r.log, "cfiprof: php: 2 processes,"),
	      "fpm: the summary counts FPM's master and worker: %s", r.log ? r.log : "");
	n = interp_chain_count(&fpm_lang, &r, want_recursion, false);
	CHECK(n >= 3, "fpm: the recursion's chain in %lu samples (want >= 3)", (unsigned long)n);
	n = interp_chain_count(&fpm_lang, &r, want_callback, false);
	CHECK(n >= 3, "fpm: the callback's chain in %lu samples (want >= 3)", (unsigned long)n);
out:
	free(r.log);
}

/* The first "API20220829,NTS" (the build id) of the file at path becomes to (15 bytes). */
static bool patch_build_id(const char *path, const char *to)
{
	size_t len;
	char *data = slurp_len(path, &len), *at;
	FILE *f;
	bool ok = false;

	at = data ? memmem(data, len, "API20220829,NTS", 15) : NULL;
	f = at ? fopen(path, "r+e") : NULL;
	if (f && !fseek(f, (long)(at - data), SEEK_SET))
		ok = fwrite(to, 1, 15, f) == 15;
	if (f)
		ok &= !fclose(f);
	free(data);
	return ok;
}

/*
 * A copy of php8.2 whose build id claims 8.3's Zend API: its version has no
 * entry, so its stacks stay native (complete, but where no FDE covers crt
 * code) and the summary names the version.
 */
static void test_unsupported_version(void)
{
	char bin[512], *cmd[] = {bin, script, WORK, NULL}, *cp[] = {"cp", PHP, bin, NULL};

	tpath(bin, sizeof(bin), "php8.2");
	CHECK(run(cp, NULL, NULL, 30) == 0 && patch_build_id(bin, "API20230831,NTS"),
	      "a copy of " PHP " claiming 8.3");
	interp_check_unsupported(&php_lang, "php", "8.3", cmd);
}

/*
 * A copy whose build id says thread-safe (ZTS: its executor globals are
 * per thread, not read): native stacks, counted as "8.2 thread-safe", not
 * as a version 8.2 that would seem supported.
 */
static void test_thread_safe(void)
{
	char bin[512], *cmd[] = {bin, script, WORK, NULL}, *cp[] = {"cp", PHP, bin, NULL};

	tpath(bin, sizeof(bin), "php8.2");
	CHECK(run(cp, NULL, NULL, 30) == 0 && patch_build_id(bin, "API20220829,TS\0"),
	      "a copy of " PHP " claiming a thread-safe build");
	interp_check_unsupported(&php_lang, "php", "8.2 thread-safe", cmd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("php"))
		return HARNESS_DONE();
	if (!realpath("tests/progs/php/recurse.php", script))
		snprintf(script, sizeof(script), "tests/progs/php/recurse.php");
	RUN_TEST(test_recursion);
	RUN_TEST(test_namespaces);
	RUN_TEST(test_fpm);
	RUN_TEST(test_unsupported_version);
	RUN_TEST(test_thread_safe);
	e2e_finish();
	return HARNESS_DONE();
}
