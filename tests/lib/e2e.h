/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every end-to-end test starts from: the cfiprof binary ($CFIPROF,
 * default build/cfiprof), the test programs ($OUT/progs, default build) and a
 * fresh directory for this run's files, removed at the end unless a check failed.
 */
#ifndef CFIPROF_TESTS_E2E_H
#define CFIPROF_TESTS_E2E_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

static const char *cfiprof_bin;
static char cfiprof_abs[PATH_MAX];
static char progs_dir[PATH_MAX];
static char tmpdir[256];
static double e2e_t0;

/* NAME in this run's directory, in buf. */
static inline char *tpath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
	return buf;
}

/*
 * Reads the environment and makes /tmp/cfiprof-NAME.XXXXXX; false (a failed
 * check) if it cannot.  Checks that cfiprof is built.
 */
static inline bool e2e_setup(const char *name)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char path[PATH_MAX];

	e2e_t0 = mono_sec();
	cfiprof_bin = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	/* absolute, so a case may run its program in another working directory */
	if (realpath(cfiprof_bin, cfiprof_abs))
		cfiprof_bin = cfiprof_abs;
	snprintf(path, sizeof(path), "%.4000s/progs", out);
	if (!realpath(path, progs_dir))
		snprintf(progs_dir, sizeof(progs_dir), "%s", path);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfiprof-%s.XXXXXX", name);
	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp %s: %s", tmpdir, strerror(errno));
		return false;
	}
	printf("cfiprof: %s, programs: %s, output: %s\n", cfiprof_bin, progs_dir, tmpdir);
	CHECK(access(cfiprof_bin, X_OK) == 0, "%s is missing (make)", cfiprof_bin);
	return true;
}

/*
 * cfiprof record -F FREQ -o DIR/NAME OPTS... -- CMD..., stderr in DIR/NAME.err,
 * given back in *log (free it). Returns record's exit status (a failed check
 * when not 0).
 */
/*
 * argv of `cfiprof record -v -F freq -o tmpdir/name opts -- cmd` into argv
 * (48 slots); its stderr goes to err, tmpdir/name.err.
 */
static inline void e2e_record_argv(char *argv[48], const char *name, const char *freq,
				   char *const opts[], char *const cmd[], char *folded,
				   char err[PATH_MAX + 8])
{
	int a = 0, i;

	tpath(folded, PATH_MAX, name);
	snprintf(err, PATH_MAX + 8, "%s.err", folded);
	argv[a++] = (char *)cfiprof_bin;
	argv[a++] = "record";
	argv[a++] = "-v";
	argv[a++] = "-F";
	argv[a++] = (char *)freq;
	argv[a++] = "-o";
	argv[a++] = folded;
	for (i = 0; opts && opts[i] && a < 30; i++)
		argv[a++] = opts[i];
	argv[a++] = "--";
	for (i = 0; cmd[i] && a < 47; i++)
		argv[a++] = cmd[i];
	argv[a] = NULL;
}

static inline int e2e_record(const char *name, const char *freq, char *const opts[],
			     char *const cmd[], char **log)
{
	char folded[PATH_MAX], err[PATH_MAX + 8], *argv[48];
	int rc;

	e2e_record_argv(argv, name, freq, opts, cmd, folded, err);
	rc = run(argv, NULL, err, 60);
	*log = slurp(err);
	CHECK(rc == 0, "%s: record exited %d: %s", name, rc, *log);
	return rc;
}

/* The same recording started, not waited for: its pid (its stderr in tmpdir/name.err). */
static inline pid_t e2e_record_start(const char *name, const char *freq, char *const opts[],
				     char *const cmd[])
{
	char folded[PATH_MAX], err[PATH_MAX + 8], *argv[48];

	e2e_record_argv(argv, name, freq, opts, cmd, folded, err);
	return spawn(argv, NULL, err);
}

/* Removes this run's directory unless a check failed; says how long the run took. */
static inline void e2e_finish(void)
{
	tmpdir_done(tmpdir, harness_failed);
	printf("total %.1f s%s%s\n", mono_sec() - e2e_t0, harness_failed ? "; files kept in " : "",
	       harness_failed ? tmpdir : "");
}

#endif
