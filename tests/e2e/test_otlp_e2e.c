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
 *     reads it; `report x.otlp.pb` gives the folded output back.
 *  2. agent: `agent --otlp` to a loopback receiver (tests/lib/otlp_receiver.py)
 *     that is killed once it has a profile and started again on the same port
 *     once the agent has spooled 3 profiles it could not send: every request is POST
 *     /v1development/profiles, gzip, x-protobuf, with the tenant and the
 *     token; every body gunzips and decodes as an ExportProfilesServiceRequest;
 *     the chain's stacks are there; every interval the agent wrote was received
 *     (or is still spooled): the outage lost nothing.
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: beside others (its agent's checks count intervals and messages, not processes) */
#include <limits.h>
#include <signal.h>
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
		 "diff \"$T/r.a\" \"$T/r.b\" > \"$T/r.diff\" || exit 15; "
		 "\"$CFIPROF\" report \"$T/r.otlp.pb\" -o \"$T/back.folded\" || exit 16; "
		 "LC_ALL=C sort \"$T/back.folded\" > \"$T/back.s\"; "
		 "LC_ALL=C sort \"$T/r.folded\" > \"$T/r.s\"; "
		 "diff \"$T/r.s\" \"$T/back.s\" > \"$T/back.diff\" || exit 17; "
		 "\"$CFIPROF\" report - -f folded < \"$T/r.otlp.pb\" > \"$T/piped.folded\" || "
		 "exit 18; cmp -s \"$T/back.folded\" \"$T/piped.folded\" || exit 19",
		 chain);
	rc = sh(script, "r.err");
	CHECK(rc == 0,
	      "the OTLP of a recording differs from its folded output, or a step failed (exit "
	      "%d: 10 record, 11 report, 12 protoc, 13 otlp_read.py, 14 no chain stacks, 15 "
	      "differ, 16 report of the .otlp.pb, 17 its folded differs, 18 report - of it piped "
	      "in, 19 its folded differs; see %s/r.err, r.diff, back.diff)",
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

/*
 * Go code typed "go", the rest of the same binary "native": a cgo program
 * (stripped: its functions from .gopclntab) whose C functions run under
 * runtime.asmcgocall, and an unstripped one (its names from .symtab, where
 * Go's code is from .gopclntab).  Decoded by protoc, not by cfiprof.
 */
static void test_go_frames(void)
{
	char script[4 * PATHBUF];
	int rc;

	snprintf(
	    script, sizeof(script),
	    "for p in gocgo_stripped gofib; do "
	    "\"$CFIPROF\" record -F 499 -o \"$T/$p.otlp.pb\" -- \"%s/$p\" 1 || exit 30; "
	    "" DECODE " < \"$T/$p.otlp.pb\" > \"$T/$p.txt\" || exit 31; "
	    "python3 \"$R/tests/lib/otlp_read.py\" < \"$T/$p.txt\" > \"$T/$p.out\" || exit 32; "
	    "done; o=\"$T/gocgo_stripped.out\"; "
	    "for f in main.main main.work main.mixGo runtime.asmcgocall; do "
	    "grep -q \"^F $f go \" \"$o\" || exit 33; done; "
	    "grep -q '^F _cgo_[0-9a-f]*_Cfunc_c_spin native ' \"$o\" || exit 34; "
	    "grep -q '^F main[.][^ ]* native ' \"$o\" && exit 35; "
	    "o=\"$T/gofib.out\"; "
	    "for f in main.main main.work main.fib; do "
	    "grep -q \"^F $f go \" \"$o\" || exit 36; done; "
	    "grep -q '^F main[.][^ ]* native ' \"$o\" && exit 37; exit 0",
	    progs_dir);
	rc = sh(script, "go.err");
	CHECK(rc == 0,
	      "Go frames are not typed go, or C frames not native (exit %d: 30 record, 31 protoc, "
	      "32 otlp_read.py, 33 a Go function of the cgo program, 34 its C function, 35 a main. "
	      "function native, 36 a Go function of gofib, 37 one native; see %s/go.err, *.out)",
	      rc, tmpdir);
}

/* Waits (up to timeout s) until path exists, or holds needle when needle is given. */
static bool wait_for(const char *path, const char *needle, double timeout)
{
	double end = mono_sec() + timeout;

	for (;;) {
		char *t = needle ? slurp(path) : NULL; /* "" for a file that is not there */
		bool ok = needle ? strstr(t, needle) != NULL : access(path, F_OK) == 0;

		free(t);
		if (ok)
			return true;
		if (mono_sec() >= end)
			return false;
		sleep_s(0.1);
	}
}

/* Waits (up to timeout s) until the agent's log says min profiles or more wait in the spool. */
static bool wait_spooled(const char *log, int min, double timeout)
{
	double end = mono_sec() + timeout;

	for (;;) {
		char *t = slurp(log);
		int most = 0;

		for (const char *p = strstr(t, "spool_files="); p;
		     p = strstr(p + 1, "spool_files="))
			if (atoi(p + 12) > most)
				most = atoi(p + 12);
		free(t);
		if (most >= min)
			return true;
		if (mono_sec() >= end)
			return false;
		sleep_s(0.1);
	}
}

/* The receiver on port ("0": any), keeping requests in T/rx; its pid, or -1. */
static pid_t receiver_start(const char *port)
{
	char dir[PATHBUF], script[PATHBUF], log[PATHBUF];
	char *argv[] = {"python3", script, dir, (char *)port, NULL};

	snprintf(script, sizeof(script), "%s/tests/lib/otlp_receiver.py", root);
	tpath(dir, sizeof(dir), "rx");
	return spawn(argv, NULL, tpath(log, sizeof(log), "rx.log"));
}

static void stop(pid_t pid, int sig)
{
	if (pid > 0) {
		kill(-pid, sig);
		wait_timeout(pid, 15, NULL);
	}
}

/* What the receivers kept, against the agent's log: see the top of the file. */
static void check_received(void)
{
	char script[8 * PATHBUF];
	int rc;

	snprintf(
	    script, sizeof(script),
	    "cd \"$T/rx\" && n=0; for r in *.req; do i=${r%%.req}; n=$((n + 1)); "
	    "head -1 $r | grep -qx 'POST /v1development/profiles' || exit 30; "
	    "grep -qix 'content-encoding: gzip' $r || exit 31; "
	    "grep -qix 'content-type: application/x-protobuf' $r || exit 32; "
	    "grep -qx 'authorization: Bearer s3cret' $r || exit 33; "
	    "grep -qx 'x-scope-orgid: t1' $r || exit 34; "
	    "gzip -dc < $i.body > $i.pb || exit 35; "
	    "protoc -I \"$R/tests/proto\" "
	    "--decode=opentelemetry.proto.collector.profiles.v1development."
	    "ExportProfilesServiceRequest "
	    "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto "
	    "< $i.pb > $i.txt || exit 36; "
	    "python3 \"$R/tests/lib/otlp_read.py\" < $i.txt > $i.out || exit 37; done; "
	    "[ $n -ge 2 ] || exit 38; "
	    "cat *.out | grep -q '^S samples/count .*;main;a;b;c;d;leaf ' || exit 39; "
	    "distinct=$(for r in *.req; do sha256sum < ${r%%.req}.body; done | sort -u | wc -l); "
	    "left=$(ls \"$T/spool/otlp\" | grep -c '\\.pb\\.gz$'); "
	    "written=$(sed -n 's/.*msg=\"agent stopped\".* intervals=\\([0-9]*\\).*/\\1/p' "
	    "\"$T/agent.log\"); echo \"received $distinct, spooled $left, written $written\" >&2; "
	    "[ -n \"$written\" ] && [ $((distinct + left)) -eq \"$written\" ] || exit 41; "
	    "grep -q 'msg=\"agent stopped\".* otlp_dropped=0 ' \"$T/agent.log\" || exit 42");
	rc = sh(script, "check.err");
	CHECK(rc == 0,
	      "the OTLP requests are not as sent, or profiles were lost (exit %d: 30 path, 31 "
	      "gzip, 32 type, 33 token, 34 tenant, 35 gunzip, 36 protoc, 37 otlp_read, 38 fewer "
	      "than 2, 39 no chain stack, 41 lost, 42 dropped; see %s/rx, check.err, agent.log)",
	      rc, tmpdir);
}

static void test_agent(void)
{
	char dir[PATHBUF], url[128], port[16] = "", tok[PATHBUF], spool[PATHBUF], log[PATHBUF];
	char rxport[PATHBUF], rxreq[PATHBUF], *p;
	char *agent_argv[] = {(char *)cfiprof_bin,
			      "agent",
			      "-F",
			      "99",
			      "-i",
			      "1",
			      "--otlp",
			      url,
			      "--tenant",
			      "t1",
			      "--token-file",
			      tok,
			      "--spool-dir",
			      spool,
			      "--push-backoff-max",
			      "0.5",
			      "--metrics-addr",
			      "off",
			      "--log-file",
			      log,
			      NULL};
	char *chain_argv[] = {chain, "60", NULL};
	pid_t rx, agent = -1, busy;
	FILE *f;

	sh_fmt("mkdir -p %s", tpath(dir, sizeof(dir), "rx"));
	f = fopen(tpath(tok, sizeof(tok), "token"), "w");
	if (f) {
		fputs("s3cret\n", f);
		fclose(f);
	}
	tpath(spool, sizeof(spool), "spool");
	tpath(log, sizeof(log), "agent.log");
	tpath(rxport, sizeof(rxport), "rx/port");
	tpath(rxreq, sizeof(rxreq), "rx/0.req");
	busy = spawn(chain_argv, NULL, NULL);
	rx = receiver_start("0");
	CHECK(wait_for(rxport, NULL, 30), "the receiver did not start (see %s/rx.log)", tmpdir);
	p = slurp(rxport);
	if (p)
		snprintf(port, sizeof(port), "%d", atoi(p));
	free(p);
	snprintf(url, sizeof(url), "http://127.0.0.1:%s", port);
	if (port[0])
		agent = spawn(agent_argv, NULL, tpath(dir, sizeof(dir), "agent.err"));
	/* the receiver goes once it has a profile; the agent must fail, then find the new one */
	CHECK(agent > 0 && wait_for(rxreq, NULL, 60), "no profile received (see %s/agent.log)",
	      tmpdir);
	stop(rx, SIGKILL);
	CHECK(wait_spooled(log, 3, 60),
	      "the agent did not spool 3 profiles while the receiver was down (see %s/agent.log)",
	      tmpdir);
	rx = receiver_start(port);
	CHECK(wait_for(log, "push recovered", 60),
	      "the agent did not deliver to the receiver started again (see %s/agent.log)", tmpdir);
	stop(agent, SIGTERM);
	stop(rx, SIGKILL);
	stop(busy, SIGKILL);
	check_received();
}

int main(int argc, char **argv)
{
	static const char *const tools[] = {"protoc",	"python3", "readelf",
					    "hostname", "gzip",	   "sha256sum"};

	harness_init(argc, argv);
	if (!e2e_setup("otlp") || !getcwd(root, sizeof(root)))
		return HARNESS_DONE();
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	CHECK(access(chain, X_OK) == 0, "%s is missing (make %s)", chain, chain);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make test-deps)", tools[i]);

	RUN_TEST(test_record);
	RUN_TEST(test_go_frames);
	RUN_TEST(test_agent);

	e2e_finish();
	return HARNESS_DONE();
}
