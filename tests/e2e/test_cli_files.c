// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The files record and report write (issue 28, items 2, 3, 4, 7):
 * - a run that is killed (SIGKILL, SIGHUP) or fails (a wrong pid, a missing
 *   command, an event that does not load) leaves the previous -o file
 *   byte-identical, and no temporary file beside it;
 * - paths refused before the workload runs (exit 2, its marker file never
 *   made): --save and -o the same file, --save into a missing directory, an
 *   -o extension that names no format;
 * - `record` keeps cfiprof.data (the previous one as cfiprof.data.old) and
 *   `report` with no argument renders it;
 * - `record -p` and `top -p` end when their target exits;
 * - under sudo (SUDO_UID / SUDO_GID, as root) the files are the user's,
 *   report's too, written into the user's own directory.
 */
/* run.sh: beside others (only the commands it starts) */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "user/session/runtimes.h"

#define PREVIOUS "previous profile;main 7\n"

static char chain[PATH_MAX + 16];

/* path holds exactly PREVIOUS, the file a failed run must leave alone */
static void put_previous(const char *path)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(PREVIOUS, f) >= 0 && !fclose(f), "cannot write %s", path);
}

static bool is_previous(const char *path)
{
	char *s = slurp(path);
	bool same = !strcmp(s, PREVIOUS);

	free(s);
	return same;
}

/* Entries of dir whose name starts with prefix (the temporary files a run leaves). */
static int entries_starting(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* A run killed by sig while it samples leaves the previous -o output as it was. */
static void killed_run(int sig, const char *name)
{
	char out[PATH_MAX], err[PATH_MAX + 8], prefix[64];
	char *argv[] = {(char *)cfiprof_bin, "record", "-o", out, "--", chain, "20", NULL};
	pid_t pid;
	int st;

	tpath(out, sizeof(out), name);
	snprintf(err, sizeof(err), "%s.err", out);
	put_previous(out);
	pid = spawn(argv, NULL, err);
	CHECK(pid > 0 && wait_cfiprof_sampling(pid, 30), "%s: record did not attach", name);
	kill(pid, sig);
	st = wait_timeout(pid, 30, NULL);
	kill(-pid, SIGKILL); /* the command, if it outlived record */
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sig, "%s: record was not killed by %d (status %x)",
	      name, sig, st);
	CHECK(is_previous(out), "%s: killed by signal %d, the previous output is now:\n%.300s",
	      name, sig, slurp(out));
	snprintf(prefix, sizeof(prefix), ".%s.", name);
	CHECK(entries_starting(tmpdir, prefix) == 0, "%s: a temporary file was left", name);
}

static void test_killed_keeps_output(void)
{
	killed_run(SIGKILL, "killed.folded");
	killed_run(SIGHUP, "hup.folded");
}

/* record ARGS... -o OUT that must fail; OUT must still be PREVIOUS. */
static void failed_run(const char *name, char *const opts[], int want_rc)
{
	char out[PATH_MAX], err[PATH_MAX + 8], *argv[16];
	int a = 0, rc;

	tpath(out, sizeof(out), name);
	snprintf(err, sizeof(err), "%s.err", out);
	put_previous(out);
	argv[a++] = (char *)cfiprof_bin;
	argv[a++] = "record";
	argv[a++] = "-o";
	argv[a++] = out;
	for (int i = 0; opts[i] && a < 15; i++)
		argv[a++] = opts[i];
	argv[a] = NULL;
	rc = run(argv, NULL, err, 60);
	CHECK(want_rc ? rc == want_rc : rc != 0, "%s: record exited %d (want %s%d): %s", name, rc,
	      want_rc ? "" : "not ", want_rc, slurp(err));
	CHECK(is_previous(out), "%s: the failed run left the previous output as:\n%.300s", name,
	      slurp(out));
}

static void test_failed_keeps_output(void)
{
	char gone[16];
	char *pid_opts[] = {"-p", gone, "-d", "1", NULL};
	char *cmd_opts[] = {"--", "/nonexistent/command", NULL};
	char *ev_opts[] = {"-e", "tracepoint:nosuch:event", "--", chain, "0.2", NULL};
	pid_t child = fork();

	/* a pid that existed and is gone (reaped): no process has it */
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	snprintf(gone, sizeof(gone), "%d", child);
	failed_run("pid.folded", pid_opts, 0);
	failed_run("cmd.folded", cmd_opts, 127); /* as a shell says of a missing command */
	failed_run("event.folded", ev_opts, 0);
}

/*
 * record OPTS... -- sh -c 'touch MARKER', refused with exit 2 before the
 * command runs: the marker never appears.
 */
static void refused_at_start(const char *what, char *const opts[], const char *want)
{
	char marker[PATH_MAX], err[PATH_MAX], script[PATH_MAX + 16], *argv[20], *log;
	int a = 0, rc;

	tpath(marker, sizeof(marker), "marker");
	tpath(err, sizeof(err), "refused.err");
	unlink(marker);
	snprintf(script, sizeof(script), "touch %s", marker);
	argv[a++] = (char *)cfiprof_bin;
	argv[a++] = "record";
	for (int i = 0; opts[i] && a < 14; i++)
		argv[a++] = opts[i];
	argv[a++] = "--";
	argv[a++] = "sh";
	argv[a++] = "-c";
	argv[a++] = script;
	argv[a] = NULL;
	rc = run(argv, NULL, err, 60);
	log = slurp(err);
	CHECK(rc == 2 && strstr(log, want), "%s: exit %d (want 2), stderr (want '%s'):\n%s", what,
	      rc, want, log);
	CHECK(access(marker, F_OK) != 0, "%s: the command ran before the refusal", what);
	free(log);
}

static void test_refused_at_start(void)
{
	char same[PATH_MAX], missing[PATH_MAX], png[PATH_MAX];
	char *same_opts[] = {"--save", same, "-o", same, NULL};
	char *missing_opts[] = {"--save", missing, "-o", png, "-f", "folded", NULL};
	char *png_opts[] = {"-o", png, NULL};
	char *runtimes_opts[] = {"--runtimes", "bogus", NULL};
	char *list_rt[] = {(char *)cfiprof_bin, "list", "--runtimes", NULL}, listpath[PATH_MAX];
	char *listed;
	const char *formats[] = {"folded", "pprof", "svg", "text", "speedscope", "perf-script"};
	char *log, err[PATH_MAX];
	char *forced[] = {
	    (char *)cfiprof_bin, "record", "-f", "folded", "-o", png, "--", chain, "0.2", NULL};

	tpath(same, sizeof(same), "same.folded");
	tpath(missing, sizeof(missing), "nodir/x.rec");
	tpath(png, sizeof(png), "x.png");
	tpath(listpath, sizeof(listpath), "runtimes.txt");
	CHECK(run(list_rt, listpath, NULL, 30) == 0, "cfiprof list --runtimes");
	listed = slurp(listpath);
	put_previous(same);
	refused_at_start("--save X -o X", same_opts, "same file");
	CHECK(is_previous(same), "--save X -o X changed X");
	refused_at_start("--save into a missing directory", missing_opts, "nodir");
	refused_at_start("-o x.png", png_opts, "x.png");
	log = slurp(tpath(err, sizeof(err), "refused.err"));
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		CHECK(strstr(log, formats[i]), "-o x.png: the refusal does not list the format %s",
		      formats[i]);
	free(log);
	CHECK(access(png, F_OK) != 0, "-o x.png refused, yet x.png exists");
	refused_at_start("--runtimes bogus", runtimes_opts, "unknown runtime 'bogus'");
	log = slurp(tpath(err, sizeof(err), "refused.err"));
	/* the refusal names every runtime there is, as cfiprof list --runtimes does */
	for (const char *p = session_runtime_names; log && *p;) {
		size_t n = strcspn(p, ",");
		char name[32];

		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		CHECK(strstr(log, name) && strstr(listed ? listed : "", name),
		      "--runtimes: %s missing from the refusal or cfiprof list --runtimes", name);
		p += n + (p[n] == ',');
	}
	free(log);
	/* -f says what the extension does not */
	CHECK(run(forced, NULL, NULL, 60) == 0 && access(png, F_OK) == 0,
	      "-f folded -o x.png is refused");
	free(listed);
}

/* cfiprof ARGS... in dir (env -C), its stdout in out; its exit code. */
static int run_in(const char *dir, char *const args[], const char *out, const char *err)
{
	char *argv[24];
	int a = 0;

	argv[a++] = "env";
	argv[a++] = "-C";
	argv[a++] = (char *)dir;
	argv[a++] = (char *)cfiprof_bin;
	for (int i = 0; args[i] && a < 23; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	return run(argv, out, err, 60);
}

static void test_record_then_report(void)
{
	char dir[PATH_MAX], data[PATH_MAX + 16], old[PATH_MAX + 32], first[PATH_MAX + 16];
	char out[PATH_MAX], err[PATH_MAX];
	/* CPU time: the chain's samples after its tables load follow its own CPU, not the hogs' */
	char *rec[] = {"record", "-F", "499", "--", chain, "0.3c", NULL};
	char *rep[] = {"report", NULL};
	char *a = NULL, *b = NULL, *text = NULL;
	size_t alen = 0, blen = 0;

	tpath(dir, sizeof(dir), "cwd");
	tpath(out, sizeof(out), "report.folded");
	tpath(err, sizeof(err), "cwd.err");
	CHECK(mkdir(dir, 0755) == 0, "mkdir %s", dir);
	snprintf(data, sizeof(data), "%s/cfiprof.data", dir);
	snprintf(old, sizeof(old), "%s.old", data);
	snprintf(first, sizeof(first), "%s/first", dir);
	CHECK(run_in(dir, rec, NULL, err) == 0, "record: %s", slurp(err));
	CHECK(access(data, F_OK) == 0, "record kept no %s", data);
	CHECK(rename(data, first) == 0 && link(first, data) == 0, "cannot keep a copy of %s", data);
	CHECK(run_in(dir, rec, NULL, err) == 0, "record again: %s", slurp(err));
	a = slurp_len(first, &alen);
	b = slurp_len(old, &blen);
	CHECK(alen > 0 && alen == blen && !memcmp(a, b, alen),
	      "the second record did not keep the first recording as cfiprof.data.old");
	CHECK(run_in(dir, rep, out, err) == 0, "report with no argument: %s", slurp(err));
	text = slurp(out);
	CHECK(strstr(text, "main;a;b;c;d;leaf"), "report of cfiprof.data lacks the chain:\n%.500s",
	      text);
	free(a);
	free(b);
	free(text);
}

/* A target that runs until the test ends it: its exit time is the test's to know. */
static void p_ends_with_target(const char *cmd, char *const extra[])
{
	char pidarg[16], err[PATH_MAX], *argv[16];
	char *target_argv[] = {"sleep", "60", NULL};
	double t_exit, t_end;
	pid_t target, prof;
	int a = 0, st;
	bool timed_out, attached;

	tpath(err, sizeof(err), "p.err");
	target = spawn(target_argv, NULL, NULL);
	snprintf(pidarg, sizeof(pidarg), "%d", target);
	argv[a++] = (char *)cfiprof_bin;
	argv[a++] = (char *)cmd;
	argv[a++] = "-p";
	argv[a++] = pidarg;
	/* without the fix it runs to this: a failure, not a hang */
	argv[a++] = "-d";
	argv[a++] = "8";
	for (int i = 0; extra[i] && a < 15; i++)
		argv[a++] = extra[i];
	argv[a] = NULL;
	prof = spawn(argv, NULL, err);
	attached = target > 0 && prof > 0 && wait_cfiprof_sampling(prof, 30);
	CHECK(attached, "%s -p did not attach: %s", cmd, slurp(err));
	if (!attached) {
		kill(target, SIGKILL);
		kill(-prof, SIGKILL);
		waitpid(target, NULL, 0);
		waitpid(prof, NULL, 0);
		return;
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	t_exit = mono_sec();
	st = wait_timeout(prof, 30, &timed_out);
	t_end = mono_sec();
	printf("  %s -p: ended %.2f s after its target\n", cmd, t_end - t_exit);
	CHECK(exit_code(st, timed_out) == 0, "%s -p: exit %d: %s", cmd, exit_code(st, timed_out),
	      slurp(err));
	/*
	 * The bound: perf record -p stops within it.  cfiprof notices the
	 * exit at once (a pidfd), then drains and writes a few samples of sleep:
	 * that part is its stop's, as after -d, and takes what the machine gives
	 * it (3-5 s beside two busy loops a CPU).  record -v says how long its
	 * stop took ("stop: N ms", from the end of sampling): the time to notice
	 * the exit is the rest, and it is what must stay under 1 s.
	 */
	{
		char *log = slurp(err), *stop = log ? strstr(log, "cfiprof: stop: ") : NULL;
		double stop_s = stop ? strtod(stop + 15, NULL) / 1e3 : 0;

		CHECK(t_end - t_exit - stop_s < 1.0,
		      "%s -p ran %.2f s past its target's exit, %.2f s of it its stop (want the rest "
		      "< 1 s)",
		      cmd, t_end - t_exit, stop_s);
		free(log);
	}
}

static void test_p_ends_with_target(void)
{
	char *rec[] = {"-v", "-o", "/dev/null", NULL}, *top[] = {NULL};

	p_ends_with_target("record", rec);
	p_ends_with_target("top", top);
}

/* Under sudo, as root: the files belong to SUDO_UID:SUDO_GID, unless -m set their mode. */
static void test_sudo_owner(void)
{
	char out[PATH_MAX], rec[PATH_MAX], err[PATH_MAX];
	char *env[] = {"SUDO_UID=65534", "SUDO_GID=65534", NULL};
	char *argv[] = {(char *)cfiprof_bin,
			"record",
			"-F",
			"99",
			"-o",
			out,
			"--save",
			rec,
			"--",
			chain,
			"0.2",
			NULL};
	char *argv_m[] = {(char *)cfiprof_bin,
			  "record",
			  "-F",
			  "99",
			  "-m",
			  "0640",
			  "-o",
			  out,
			  "--",
			  chain,
			  "0.2",
			  NULL};
	struct stat so, sr;

	tpath(out, sizeof(out), "sudo.folded");
	tpath(rec, sizeof(rec), "sudo.rec");
	tpath(err, sizeof(err), "sudo.err");
	CHECK(run_env(argv, env, NULL, err, 60, NULL) == 0, "record under sudo: %s", slurp(err));
	CHECK(!stat(out, &so) && so.st_uid == 65534 && so.st_gid == 65534,
	      "under sudo, -o's file is %u:%u (want 65534:65534)", so.st_uid, so.st_gid);
	CHECK(!stat(rec, &sr) && sr.st_uid == 65534 && sr.st_gid == 65534,
	      "under sudo, the recording is %u:%u (want 65534:65534)", sr.st_uid, sr.st_gid);
	CHECK((so.st_mode & 07777) == 0600, "under sudo the mode is %o (want 600)",
	      so.st_mode & 07777);
	unlink(out);
	CHECK(run_env(argv_m, env, NULL, err, 60, NULL) == 0, "record -m under sudo: %s",
	      slurp(err));
	CHECK(!stat(out, &so) && so.st_uid == 0 && (so.st_mode & 07777) == 0640,
	      "with -m 0640 under sudo the file is uid %u mode %o (want root's, 640)", so.st_uid,
	      so.st_mode & 07777);
}

/*
 * report under sudo writes into the user's own directory (0755, theirs),
 * though it reads the recording without any capability; a report that
 * fails leaves the previous output.
 */
static void test_report_output(void)
{
	char rec[PATH_MAX], udir[PATH_MAX], out[PATH_MAX + 16], err[PATH_MAX], prev[PATH_MAX];
	char missing[PATH_MAX];
	char *env[] = {"SUDO_UID=65534", "SUDO_GID=65534", NULL};
	char *record[] = {(char *)cfiprof_bin,
			  "record",
			  "-F",
			  "99",
			  "-o",
			  "/dev/null",
			  "--save",
			  rec,
			  "--",
			  chain,
			  "0.5c",
			  NULL};
	char *report[] = {(char *)cfiprof_bin, "report", rec, "-o", out, NULL};
	char *failing[] = {(char *)cfiprof_bin, "report", missing, "-o", prev, NULL};
	struct stat st;
	char *text;

	tpath(rec, sizeof(rec), "rep.rec");
	tpath(udir, sizeof(udir), "user");
	tpath(err, sizeof(err), "rep.err");
	tpath(prev, sizeof(prev), "rep.folded");
	tpath(missing, sizeof(missing), "missing.rec");
	snprintf(out, sizeof(out), "%s/rep.folded", udir);
	/*
	 * 0.5 s of the chain's own CPU, ~50 samples at 99 Hz: under
	 * oversubscribed CPUs 0.2 s of the wall gave it 5 samples, all taken
	 * before its tables loaded.
	 */
	CHECK(run(record, NULL, err, 60) == 0, "record: %s", slurp(err));
	CHECK(!mkdir(udir, 0755) && !chown(udir, 65534, 65534), "a directory of 65534's");
	CHECK(run_env(report, env, NULL, err, 60, NULL) == 0, "report into 65534's directory: %s",
	      slurp(err));
	text = slurp(out);
	CHECK(strstr(text, "main;a;b;c;d;leaf"), "report's output:\n%.300s", text);
	free(text);
	CHECK(!stat(out, &st) && st.st_uid == 65534 && st.st_gid == 65534,
	      "report under sudo: the file is %u:%u (want 65534:65534)", st.st_uid, st.st_gid);
	CHECK(entries_starting(udir, ".") == 2, "a temporary file left in %s", udir); /* . and .. */
	put_previous(prev);
	CHECK(run(failing, NULL, err, 60) == 1, "report of a missing recording: %s", slurp(err));
	CHECK(is_previous(prev), "a failed report changed its -o file:\n%.300s", slurp(prev));
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("files"))
		return HARNESS_DONE();
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	RUN_TEST(test_killed_keeps_output);
	RUN_TEST(test_failed_keeps_output);
	RUN_TEST(test_refused_at_start);
	RUN_TEST(test_record_then_report);
	RUN_TEST(test_p_ends_with_target);
	RUN_TEST(test_sudo_owner);
	RUN_TEST(test_report_output);
	e2e_finish();
	return HARNESS_DONE();
}
