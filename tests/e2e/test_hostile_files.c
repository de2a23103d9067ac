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
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

static char tmpdir[64];
static char *cfiprof;

static const char spin_c[] =
    "#define F __attribute__((noinline, used))\n"
    "F unsigned long work(unsigned long x)\n"
    "{ for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1; return x; }\n"
    "int main(void) { volatile unsigned long x = 1; for (;;) x = work(x); }\n";

static const char *tpath(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

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

static void test_debuglink_cut(void)
{
	char dbg[PATH_MAX], pidbuf[16], *log, *prof;
	char *spin_argv[] = {(char *)tpath("spin"), NULL};
	char *rec_argv[] = {cfiprof, "record", "-v", "-p", pidbuf,	   "-d", "3",
			    "-f",    "folded", "-o", (char *)NULL, NULL};
	pid_t spin, rec;
	bool cut = false, timed_out;
	double deadline;
	int st, code;

	if (!shell_ok("cd %s && gcc -O2 -g -Wl,--build-id=none -o spin.full spin.c && "
		      "objcopy --only-keep-debug spin.full spin.debug && "
		      "objcopy --strip-all --add-gnu-debuglink=spin.debug spin.full spin && "
		      "truncate -s 200M spin.debug",
		      tmpdir) ||
	    !realpath(tpath("spin.debug"), dbg)) {
		CHECK(0, "cannot build the stripped program and its 200 MiB debug file");
		return;
	}
	rec_argv[10] = strdup(tpath("out.folded"));
	spin = spawn(spin_argv, NULL, NULL);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)spin);
	sleep_s(0.1);
	rec = spawn(rec_argv, NULL, tpath("record.log"));
	/*
	 * cfiprof opens the debug file for its CRC (tables, then names): cut it
	 * the moment it is open. Bounded by cfiprof's own run (-d 3) and 30 s.
	 */
	deadline = mono_sec() + 30;
	while (!cut && waitpid(rec, &st, WNOHANG) == 0 && mono_sec() < deadline) {
		if (has_open(rec, dbg))
			cut = !truncate(dbg, 64);
		else
			usleep(100);
	}
	st = wait_timeout(rec, cut ? 30 : 0.01, &timed_out);
	code = exit_code(st, timed_out);
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	log = slurp(tpath("record.log"));
	prof = slurp(rec_argv[10]);
	CHECK(cut, "cfiprof never had %s open for its CRC", dbg);
	CHECK(code == 0, "cfiprof record -p exited %d (135: SIGBUS): %s", code, log ? log : "");
	CHECK(truncated_count(log) >= 1, "the truncation is not counted in the summary: %s",
	      log ? log : "");
	/* the profile of the program is still written: its samples, folded under its name */
	CHECK(prof && strstr(prof, "spin"), "no samples of spin in the profile (%zu bytes)",
	      prof ? strlen(prof) : 0);
	free(log);
	free(prof);
	free(rec_argv[10]);
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
	if (!getenv("KEEP"))
		shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
