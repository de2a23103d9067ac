// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile processes: cfiprof runs privileged beside programs that may do
 * anything to it.  Each attack runs under the agent, then again under the
 * agent's ASan + UBSan build when it is built (make build/asan/cfiprof):
 *  1. mapping churn: build/progs/faults_churn maps and unmaps file-backed
 *     libraries executable as fast as it can (a reload request a millisecond,
 *     each a new mapping set, old sets retired under the symbolizer) while
 *     the agent writes an interval every 0.2 s: the agent exits cleanly,
 *     intervals keep coming for the whole run, every file is a gzip'ed
 *     pprof, and the churner's own frames are named.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

#define PATHBUF (PATH_MAX + 64)

/* in memory when there is a tmpfs: the agent's fsyncs then measure the agent, not the disk */
static char tmpdir[64] = "/dev/shm/cfiprof-hostile.XXXXXX";
static char progs[PATH_MAX];

static bool make_tmpdir(void)
{
	if (mkdtemp(tmpdir))
		return true;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfiprof-hostile.XXXXXX");
	return mkdtemp(tmpdir) != NULL;
}

/* The uncompressed bytes of a gzip file (NULL if it is not one); *len gets their count. */
static uint8_t *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	int got;

	if (!gz || !buf || gzdirect(gz)) {
		free(buf);
		if (gz)
			gzclose(gz);
		return NULL;
	}
	while ((got = gzread(gz, buf + n, (unsigned int)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	if (got < 0 || gzclose(gz) != Z_OK) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/* Milliseconds into the day of an interval file name (cfiprof-YYYYMMDDTHHMMSS.mmmZ.pb.gz). */
static long name_ms(const char *name)
{
	unsigned int hh, mm, ss, ms;

	if (sscanf(name, "cfiprof-%*8uT%2u%2u%2u.%3uZ", &hh, &mm, &ss, &ms) != 4)
		return -1;
	return ((long)hh * 3600 + mm * 60 + ss) * 1000 + ms;
}

struct interval_files {
	int files, pprofs, named;
	long first_ms, last_ms;
};

/* Every interval file: a gzip'ed pprof (field 1, sample_type, first), naming needle? */
static struct interval_files check_files(const char *dir, const char *needle)
{
	struct interval_files r = {.first_ms = -1, .last_ms = -1};
	char path[PATHBUF * 2];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		size_t len = 0;
		uint8_t *pb;
		long ms;

		if (strncmp(e->d_name, "cfiprof-", 8))
			continue;
		r.files++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		pb = gunzip_file(path, &len);
		if (pb && len > 2 && pb[0] == 0x0a)
			r.pprofs++;
		else
			fprintf(stderr, "  %s: not a gzip'ed pprof (%zu bytes)\n", e->d_name, len);
		r.named += pb && memmem(pb, len, needle, strlen(needle)) != NULL;
		free(pb);
		ms = name_ms(e->d_name);
		if (ms >= 0 && (r.first_ms < 0 || ms < r.first_ms))
			r.first_ms = ms;
		if (ms > r.last_ms)
			r.last_ms = ms;
	}
	if (d)
		closedir(d);
	return r;
}

/* 1: executable mappings made and unmapped in a loop while the agent flushes every 0.2 s */
static void test_mapping_churn(const char *cfiprof, const char *what)
{
	const double secs = 4.0;
	char dir[PATHBUF], log[PATHBUF], churn[PATHBUF], lib[PATHBUF], err[PATHBUF];
	char *agent_argv[] = {
	    (char *)cfiprof, "agent", "--interval",	"0.2s", "--duration", "4", "--freq", "499",
	    "--output-dir",  dir,     "--metrics-addr", "off",	NULL};
	char *churn_argv[] = {churn, "mmap", "6", churn, lib, NULL};
	struct interval_files f;
	pid_t agent, churner;
	bool timed_out;
	int st, code;
	char *s, *report;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, what);
	snprintf(log, sizeof(log), "%s/%s.log", tmpdir, what);
	snprintf(err, sizeof(err), "%s/%s-churn.err", tmpdir, what);
	snprintf(churn, sizeof(churn), "%s/faults_churn", progs);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", progs);
	mkdir(dir, 0755);
	churner = spawn(churn_argv, NULL, err);
	sleep_s(0.3);
	agent = spawn(agent_argv, NULL, log);
	st = wait_timeout(agent, 60, &timed_out);
	code = exit_code(st, timed_out);
	CHECK(code == 0, "%s: the agent exited %d%s", what, code,
	      timed_out ? " (killed: it did not exit in time)" : "");
	wait_timeout(churner, 10, NULL);
	s = slurp(log);
	report = strstr(s, "ERROR: AddressSanitizer");
	if (!report)
		report = strstr(s, "runtime error");
	CHECK(!report, "%s: sanitizer report:\n%.3000s", what, report ? report : "");
	if (code && !report)
		dump_tail(what, log);
	free(s);
	s = slurp(err);
	CHECK(strstr(s, "maps in"), "%s: the churner did not run: %s", what, s);
	printf("%s: churner: %s", what, s);
	free(s);

	f = check_files(dir, "fc_leaf");
	CHECK(f.files >= 8, "%s: %d intervals in %.0f s at 0.2 s", what, f.files, secs);
	CHECK(f.pprofs == f.files, "%s: %d of %d interval files are gzip'ed pprofs", what, f.pprofs,
	      f.files);
	/* from the first to the last: no stall once the churn is under way */
	CHECK(f.last_ms - f.first_ms >= (long)(secs * 1000 / 2),
	      "%s: intervals from %ld to %ld ms only", what, f.first_ms, f.last_ms);
	CHECK(f.named > 0, "%s: no interval names the churner's fc_leaf", what);
	printf("%s: %d intervals over %.1f s, %d naming fc_leaf\n", what, f.files,
	       (f.last_ms - f.first_ms) / 1e3, f.named);
}

int main(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	const char *cfiprof = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	char asan[PATHBUF], churn[PATHBUF];

	snprintf(progs, sizeof(progs), "%s/progs", out);
	snprintf(churn, sizeof(churn), "%s/faults_churn", progs);
	if (!make_tmpdir() || access(cfiprof, X_OK) || access(churn, X_OK)) {
		CHECK(0, "setup: %s and %s must be built (make, make %s)", cfiprof, churn, churn);
		return HARNESS_DONE();
	}
	test_mapping_churn(cfiprof, "churn");
	snprintf(asan, sizeof(asan), "%s/asan/cfiprof", out);
	if (!access(asan, X_OK)) {
		setenv("ASAN_OPTIONS", "abort_on_error=0:exitcode=99", 1);
		test_mapping_churn(asan, "churn-asan");
	} else {
		printf("%s not built: the ASan run is skipped\n", asan);
	}
	tmpdir_done(tmpdir, harness_failed);
	return HARNESS_DONE();
}
