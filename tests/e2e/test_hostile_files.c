// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile files (issue 26, item 2): a process owns the files cfiprof reads
 * for it, and can cut them while they are read.
 *  - debuglink_cut: a stripped program without a build-id whose
 *    .gnu_debuglink names a 200 MiB debug file beside it (sparse: under the
 *    CRC's size bound, so cfiprof reads it whole for the CRC).  The moment
 *    cfiprof has that file open (seen in /proc/PID/fd, not in its output),
 *    the test truncates it to 64 bytes.  A mapped file cut under its reader
 *    is SIGBUS: cfiprof died.  Now record -p exits 0, writes the program's
 *    profile, and counts the truncation in its summary.
 *
 * Environment: CFIPROF (default build/cfiprof).
 */
/* run.sh: beside others (record -p of its own program; its agent's checks are of its own
 * debug file, metrics and intervals, none of other processes) */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "tests/lib/http_client.h"

static char *cfiprof;

static const char spin_c[] =
    "#define F __attribute__((noinline, used))\n"
    "F unsigned long work(unsigned long x)\n"
    "{ for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1; return x; }\n"
    "int main(void) { volatile unsigned long x = 1; for (;;) x = work(x); }\n";

/* Whether process @pid has @path open now. */
static bool has_open(pid_t pid, const char *path)
{
	char dir[64], fd[PATH_MAX], link[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *d;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		snprintf(fd, sizeof(fd), "%s/%s", dir, e->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = !strcmp(link, path);
	}
	if (d)
		closedir(d);
	return found;
}

/* The N of "ELF reads refused: ... truncated N" in the summary, or -1. */
static long truncated_count(const char *log)
{
	const char *p = log ? strstr(log, "ELF reads refused:") : NULL;
	const char *eol = p ? strchr(p, '\n') : NULL, *t;

	t = p ? strstr(p, " truncated ") : NULL;
	if (!t || (eol && t > eol))
		return -1;
	return strtol(t + strlen(" truncated "), NULL, 10);
}

/* spin, stripped, its .gnu_debuglink naming a 200 MiB spin.debug; that file's path in dbg. */
static bool build_spin(char *dbg)
{
	if (!shell_ok("cd %s && gcc -O2 -g -Wl,--build-id=none -o spin.full spin.c && "
		      "objcopy --only-keep-debug spin.full spin.debug && "
		      "objcopy --strip-all --add-gnu-debuglink=spin.debug spin.full spin && "
		      "truncate -s 200M spin.debug",
		      tmpdir) ||
	    !realpath(tpath("spin.debug"), dbg)) {
		CHECK(0, "cannot build the stripped program and its 200 MiB debug file");
		return false;
	}
	return true;
}

/*
 * Cuts dbg to 64 bytes the moment process @reader has it open (for its CRC:
 * tables, then names), bounded by the reader's own run and 30 s; whether it
 * was cut.  *st is the reader's wait status if it ended meanwhile.
 */
static bool cut_when_open(pid_t reader, const char *dbg, int *st)
{
	double deadline = mono_sec() + 30;
	bool cut = false;

	*st = -1;
	while (!cut && waitpid(reader, st, WNOHANG) == 0 && mono_sec() < deadline) {
		if (has_open(reader, dbg))
			cut = !truncate(dbg, 64);
		else
			usleep(100);
	}
	return cut;
}

static void test_debuglink_cut(void)
{
	char dbg[PATH_MAX], pidbuf[16], *log, *prof;
	char *spin_argv[] = {(char *)tpath("spin"), NULL};
	char *rec_argv[] = {cfiprof, "record", "-v", "-p", pidbuf,	   "-d", "3",
			    "-f",    "folded", "-o", (char *)NULL, NULL};
	pid_t spin, rec;
	bool cut, timed_out;
	int st, code;

	if (!build_spin(dbg))
		return;
	rec_argv[10] = strdup(tpath("out.folded"));
	spin = spawn(spin_argv, NULL, NULL);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)spin);
	sleep_s(0.1);
	rec = spawn(rec_argv, NULL, tpath("record.log"));
	cut = cut_when_open(rec, dbg, &st);
	st = wait_timeout(rec, cut ? 30 : 0.01, &timed_out);
	code = exit_code(st, timed_out);
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	log = slurp(tpath("record.log"));
	prof = slurp(rec_argv[10]);
	CHECK(cut, "cfiprof never had %s open for its CRC", dbg);
	CHECK(code == 0, "cfiprof record -p exited %d (135: SIGBUS): %s", code, log ? log : "");
	/*
	 * Cut while cfiprof read it: the truncation is counted.  Cut between
	 * its open and its first read (a test slowed by CPU hogs notices the
	 * open late): a 64-byte file from the start, refused by its CRC.
	 * Either way no SIGBUS, and the profile is written.
	 */
	CHECK(truncated_count(log) >= 1 ||
		  (log && strstr(log, "spin.debug does not match the .gnu_debuglink CRC")),
	      "the truncation is neither counted in the summary nor the file refused by its "
	      "CRC: %s",
	      log ? log : "");
	/* the profile of the program is still written: its samples, folded under its name */
	CHECK(prof && strstr(prof, "spin"), "no samples of spin in the profile (%zu bytes)",
	      prof ? strlen(prof) : 0);
	free(log);
	free(prof);
	free(rec_argv[10]);
}

/*
 * The same cut under the agent, which reads the debug file when it loads
 * and names the program, and must live on: it keeps writing intervals,
 * counts the truncation in /metrics and stops at its duration with 0.
 */
static void test_debuglink_cut_agent(void)
{
	char dbg[PATH_MAX], out[PATH_MAX], log[PATH_MAX], addr[64] = "", *text, *body = NULL;
	char *spin_argv[] = {(char *)tpath("spin"), NULL};
	char *agent_argv[] = {cfiprof,	       "agent",	      "--interval",	     "1s",
			      "--duration",    "6s",	      "--metrics-addr", "127.0.0.1:0",
			      "-o",	       out,	      NULL};
	double truncated = -1;
	pid_t spin, agent;
	bool cut, alive, timed_out;
	int st, code, files = 0;

	if (!build_spin(dbg))
		return;
	snprintf(out, sizeof(out), "%s", tpath("agent-out"));
	snprintf(log, sizeof(log), "%s", tpath("agent.log"));
	CHECK(mkdir(out, 0700) == 0, "mkdir %s", out);
	spin = spawn(spin_argv, NULL, NULL);
	sleep_s(0.1);
	agent = spawn(agent_argv, NULL, log);
	cut = cut_when_open(agent, dbg, &st);
	alive = kill(agent, 0) == 0 && st == -1;
	/* one interval at least after the cut, then /metrics */
	sleep_s(2);
	for (double t0 = mono_sec(); alive && !addr[0] && mono_sec() - t0 < 5; sleep_s(0.1)) {
		char *l = slurp(log), *m = l ? strstr(l, "metrics=") : NULL;

		if (m)
			sscanf(m + 8, "%63[0-9.:]", addr);
		free(l);
	}
	body = addr[0] ? http_get(addr, "/metrics") : NULL;
	if (body)
		truncated = metric_value(
		    body, "cfiprof_elf_reads_refused_total{cause=\"truncated\"}");
	st = wait_timeout(agent, 30, &timed_out);
	code = exit_code(st, timed_out);
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	text = slurp(log);
	for (const char *p = text; p && (p = strstr(p, "msg=interval ")); p++)
		files++;
	CHECK(cut, "the agent never had %s open for its CRC", dbg);
	CHECK(alive && code == 0, "the agent after the cut: %s, exit %d (135: SIGBUS): %s",
	      alive ? "alive" : "gone", code, text ? text : "");
	CHECK(truncated >= 1, "cfiprof_elf_reads_refused_total{cause=\"truncated\"} = %.0f",
	      truncated);
	/* 6 s at 1 s: intervals went on after the cut (2 s in at the latest) */
	CHECK(files >= 4, "%d intervals written in the agent's 6 s", files);
	free(text);
	free(body);
}

int main(int argc, char **argv)
{
	FILE *f;

	harness_init(argc, argv);
	cfiprof = realpath(getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof", NULL);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfifilesXXXXXX");
	if (!cfiprof || !mkdtemp(tmpdir)) {
		CHECK(0, "setup: cfiprof must be built, and a temporary directory made");
		return HARNESS_DONE();
	}
	f = fopen(tpath("spin.c"), "w");
	CHECK(f && fputs(spin_c, f) >= 0 && !fclose(f), "cannot write spin.c");
	RUN_TEST(test_debuglink_cut);
	/* the same spin.debug, built anew */
	RUN_TEST(test_debuglink_cut_agent);
	if (!getenv("KEEP"))
		shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
