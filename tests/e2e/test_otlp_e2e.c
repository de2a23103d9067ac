// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * OTLP profiles end to end, read by decoders that are not cfiprof's:
 * `protoc --decode` with OpenTelemetry's own protos (tests/proto) and
 * tests/lib/otlp_read.py over its text:
 *  1. record: one recording of progs/chain (`record --save`) reported twice,
 *     `-o x.otlp.pb` and `-o x.folded`: the OTLP's stacks and counts equal
 *     the folded output's, the resource carries the process (service.name,
 *     host.name as hostname(1) says, process.pid, process.executable.name),
 *     the CPU profile is samples/count with period cpu/nanoseconds at -F's
 *     period, chain's frames are native with chain's build id as readelf
 *     reads it.
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"

#define PATHBUF (PATH_MAX + 256)
#define DECODE                                                                                     \
	"protoc -I \"$R/tests/proto\" "                                                            \
	"--decode=opentelemetry.proto.profiles.v1development.ProfilesData "                        \
	"opentelemetry/proto/profiles/v1development/profiles.proto"

static char chain[PATHBUF], root[PATH_MAX];

/* sh -c SCRIPT with CFIPROF, T (the tmpdir) and R (the tree) in its environment; its exit code. */
static int sh(const char *script, const char *err_name)
{
	char env_bin[PATHBUF], env_tmp[PATHBUF], env_root[PATHBUF], epath[PATHBUF];
	char *env[] = {env_bin, env_tmp, env_root, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	char *argv[] = {"sh", "-c", (char *)script, NULL};

	snprintf(env_bin, sizeof(env_bin), "CFIPROF=%s", cfiprof_bin);
	snprintf(env_tmp, sizeof(env_tmp), "T=%s", tmpdir);
	snprintf(env_root, sizeof(env_root), "R=%s", root);
	return run_env(argv, env, NULL, tpath(epath, sizeof(epath), err_name), 120, NULL);
}

static void test_record(void)
{
	char script[8 * PATHBUF];
	int rc;

	/* kernel frames are "name_[k]" in folded output, kernel-typed "name" in OTLP */
	snprintf(script, sizeof(script),
		 "\"$CFIPROF\" record -F 499 --save \"$T/r.rec\" -o \"$T/r.live.folded\" -- %s 1 "
		 "|| exit 10; "
		 "\"$CFIPROF\" report \"$T/r.rec\" -o \"$T/r.otlp.pb\" && "
		 "\"$CFIPROF\" report \"$T/r.rec\" -o \"$T/r.folded\" || exit 11; "
		 "" DECODE " < \"$T/r.otlp.pb\" > \"$T/r.txt\" || exit 12; "
		 "python3 \"$R/tests/lib/otlp_read.py\" < \"$T/r.txt\" > \"$T/r.out\" || exit 13; "
		 "sed -n 's/^S samples\\/count //p' \"$T/r.out\" | "
		 "awk '{v = $NF; $NF = \"\"; sub(/ $/, \"\"); a[$0] += v} "
		 "END {for (k in a) print k \" \" a[k]}' | LC_ALL=C sort > \"$T/r.a\"; "
		 "cut -d';' -f2- \"$T/r.folded\" | sed -E 's/_\\[k\\]//g' | "
		 "awk '{v = $NF; $NF = \"\"; sub(/ $/, \"\"); a[$0] += v} "
		 "END {for (k in a) print k \" \" a[k]}' | LC_ALL=C sort > \"$T/r.b\"; "
		 "[ -s \"$T/r.a\" ] && grep -q ';leaf ' \"$T/r.a\" || exit 14; "
		 "diff \"$T/r.a\" \"$T/r.b\" > \"$T/r.diff\" || exit 15",
		 chain);
	rc = sh(script, "r.err");
	CHECK(rc == 0,
	      "the OTLP of a recording differs from its folded output, or a step failed (exit "
	      "%d: 10 record, 11 report, 12 protoc, 13 otlp_read.py, 14 no chain stacks, 15 "
	      "differ; see %s/r.err, r.diff)",
	      rc, tmpdir);
	/* the conventions, against what tools other than cfiprof say */
	snprintf(script, sizeof(script),
		 "o=\"$T/r.out\"; pid=$(sed -n 's/.*process\\.pid=\\([0-9]*\\).*/\\1/p' \"$o\"); "
		 "[ -n \"$pid\" ] || exit 20; "
		 "grep -qx \"R host.name=$(hostname),process.executable.name=chain,"
		 "process.pid=$pid,service.name=unknown_service:chain\" \"$o\" || exit 21; "
		 "[ \"$(grep -c '^P ' \"$o\")\" = 1 ] && "
		 "grep -qx 'P samples/count cpu/nanoseconds 2004008' \"$o\" || exit 22; "
		 "id=$(readelf -n '%s' | sed -n 's/.*Build ID: *//p'); [ -n \"$id\" ] || exit 23; "
		 "for f in main a b c d leaf; do "
		 "grep -q \"^F $f native .*/chain $id\\$\" \"$o\" || exit 24; done",
		 chain);
	rc = sh(script, "conv.err");
	CHECK(rc == 0,
	      "the OTLP's resource, profile or frames are not as the conventions say (exit %d: "
	      "20 no pid, 21 resource, 22 profile, 23 readelf, 24 frames; see %s/r.out)",
	      rc, tmpdir);
}

int main(int argc, char **argv)
{
	static const char *const tools[] = {"protoc", "python3", "readelf", "hostname"};

	harness_init(argc, argv);
	if (!e2e_setup("otlp") || !getcwd(root, sizeof(root)))
		return HARNESS_DONE();
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	CHECK(access(chain, X_OK) == 0, "%s is missing (make %s)", chain, chain);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make test-deps)", tools[i]);

	RUN_TEST(test_record);

	e2e_finish();
	return HARNESS_DONE();
}
