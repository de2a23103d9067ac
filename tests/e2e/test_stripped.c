// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stripped programs through record and report (issue 16): chain (tests/progs)
 * built -g, its debug file split off and the program stripped of every
 * symbol.  Served by Debian's debuginfod on loopback it is named completely,
 * in record and in report; with the server down or stalled, record's names are
 * the program's functions grouped by their FDEs (one name each, the same in
 * report) and record ends within the fetch timeout; a MiniDebugInfo build is
 * named without any server.
 */
/* run.sh: samples apart (its commands, its agents' own cgroup), beside other suites */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/crt_frames.h"
#include "tests/lib/e2e.h"
#include "tests/lib/debuginfod_server.h"
#include "tests/lib/test_cgroup.h"
#include "elf/build_id.h"

#define PATHBUF (PATH_MAX + 256)
/* 1.5 s of the program's CPU time: ~750 samples at 499 Hz however busy the machine */
#define SPIN "1.5c"
/* main -> a -> b -> c -> d -> leaf: the chain the program runs */
static const char *const chain_names[] = {"main", "a", "b", "c", "d", "leaf"};
#define NR_CHAIN 6

static char build_id[ELF_BUILD_ID_HEX_LEN];

/* prog (chain -g), prog.debug, prog.stripped, and prog.mini (MiniDebugInfo, GDB's recipe). */
static bool build_progs(void)
{
	char p[PATHBUF];
	int fd;

	if (!shell_ok(
		"cd %s && gcc -O2 -fomit-frame-pointer -g -Wall -D_GNU_SOURCE -I%s/tests/progs "
		"%s/tests/progs/chain.c -o prog && objcopy --only-keep-debug prog prog.debug && "
		"strip --strip-all prog -o prog.stripped && mkdir -p srv && cp prog.debug srv/ && "
		"nm -D prog --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms && "
		"nm prog --format=posix --defined-only | "
		"awk '{ if ($2 == \"T\" || $2 == \"t\" || $2 == \"D\") print $1 }' | sort > "
		"funcsyms && "
		"comm -13 dynsyms funcsyms > keep && objcopy -S --remove-section .gdb_index "
		"--remove-section .comment --keep-symbols=keep prog.debug mini && xz -f mini && "
		"objcopy --add-section .gnu_debugdata=mini.xz prog.stripped prog.mini",
		tmpdir, getenv("PWD"), getenv("PWD")))
		return false;
	fd = open(tpath(p, sizeof(p), "prog.stripped"), O_RDONLY);
	if (fd < 0 || elf_build_id_hex_fd(fd, build_id, sizeof(build_id)))
		build_id[0] = '\0';
	if (fd >= 0)
		close(fd);
	return build_id[0] != '\0';
}

/*
 * record -F 499 -o DIR/NAME [--save DIR/NAME.rec] OPTS -- PROG SPIN, with
 * DEBUGINFOD_URLS=@urls (NULL: unset) and the cache in DIR/@cache; the wall
 * time in *elapsed, stderr in *log.
 */
static int record(const char *name, const char *prog, const char *urls, const char *cache,
		  const char *opt, double *elapsed, char **log)
{
	char out[PATHBUF], rec[PATHBUF + 8], err[PATHBUF + 8], exe[PATHBUF], env_urls[PATHBUF],
	    env_cache[PATHBUF];
	char *env[] = {env_cache, urls ? env_urls : NULL, NULL};
	char *argv[] = {(char *)cfiprof_bin,	  "record", "-v", "-F", "499", "-o", out, "--save", rec,
			opt ? (char *)opt : "-u", "--",	    exe,  SPIN,	 NULL};
	int rc;

	tpath(out, sizeof(out), name);
	snprintf(rec, sizeof(rec), "%s.rec", out);
	snprintf(err, sizeof(err), "%s.err", out);
	tpath(exe, sizeof(exe), prog);
	snprintf(env_urls, sizeof(env_urls), "DEBUGINFOD_URLS=%s", urls ? urls : "");
	snprintf(env_cache, sizeof(env_cache), "DEBUGINFOD_CACHE_PATH=%s/%s", tmpdir, cache);
	/* a DEBUGINFOD_URLS of the test's own environment must not leak into a run without */
	unsetenv("DEBUGINFOD_URLS");
	rc = run_env(argv, env, NULL, err, 60, elapsed);
	*log = slurp(err);
	CHECK(rc == 0, "%s: record exited %d: %s", name, rc, *log);
	return rc;
}

/* report DIR/NAME.rec -o DIR/NAME.report with the same environment; its output. */
static char *report(const char *name, const char *urls, const char *cache)
{
	char out[PATHBUF], rec[PATHBUF], err[PATHBUF], env_urls[PATHBUF], env_cache[PATHBUF];
	char *env[] = {env_cache, urls ? env_urls : NULL, NULL};
	char *argv[] = {(char *)cfiprof_bin, "report", rec, "-f", "folded", "-o", out, NULL};
	int rc;

	snprintf(rec, sizeof(rec), "%s/%s.rec", tmpdir, name);
	snprintf(out, sizeof(out), "%s/%s.report", tmpdir, name);
	snprintf(err, sizeof(err), "%s/%s.report.err", tmpdir, name);
	snprintf(env_urls, sizeof(env_urls), "DEBUGINFOD_URLS=%s", urls ? urls : "");
	snprintf(env_cache, sizeof(env_cache), "DEBUGINFOD_CACHE_PATH=%s/%s", tmpdir, cache);
	rc = run_env(argv, env, NULL, err, 60, NULL);
	CHECK(rc == 0, "%s: report exited %d", name, rc);
	return slurp(out);
}

/* Samples whose stack holds ;main;a;b;c;d;leaf (each frame exactly), and all samples. */
static uint64_t named_chain(const char *folded, uint64_t *total)
{
	char want[128] = "";
	const char *line = folded;
	uint64_t n = 0;
	int i;

	for (i = 0; i < NR_CHAIN; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), ";%s", chain_names[i]);
	*total = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096];

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		sp = strrchr(buf, ' ');
		if (sp) {
			uint64_t c = strtoull(sp + 1, NULL, 10);
			const char *at = strstr(buf, want);

			*total += c;
			if (at && (at[strlen(want)] == ' ' || at[strlen(want)] == ';'))
				n += c;
		}
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

/*
 * Names of prog.stripped's own frames, grouped: every distinct "prog.stripped+0x"
 * name is one of its functions (their starts, by nm of prog), and the chain's
 * six functions each have one. Returns the distinct names seen.
 */
/* Whether the address hex ("0x...") lies in one of the crt functions among names (at: starts). */
static bool in_crt_function(const char *hex, const unsigned long long *at, char (*names)[128],
			    int n)
{
	unsigned long long a = strtoull(hex, NULL, 16), best = 0;
	int k = -1;

	for (int i = 0; i < n; i++)
		if (at[i] <= a && at[i] >= best) {
			best = at[i];
			k = i;
		}
	return k >= 0 && is_crt_function(names[k], strlen(names[k]));
}

static int check_grouped(const char *what, const char *folded)
{
	char cmd[PATHBUF + 256], line[256], starts[64][32], crt[64][128];
	unsigned long long addr, size, at[64];
	int nstarts = 0, seen = 0, bad = 0;
	const char *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only %s/prog", tmpdir);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f) && nstarts < 64) {
		char type, name[128];

		/* crtstuff's functions have no size: "ADDR t NAME" */
		if ((sscanf(line, "%llx %llx %c %127s", &addr, &size, &type, name) == 4 ||
		     sscanf(line, "%llx %c %127s", &addr, &type, name) == 3) &&
		    (type == 't' || type == 'T')) {
			at[nstarts] = addr;
			snprintf(crt[nstarts], sizeof(crt[0]), "%s", name);
			snprintf(starts[nstarts++], sizeof(starts[0]), "prog.stripped+0x%llx",
				 addr);
		}
	}
	if (f)
		pclose(f);
	for (p = folded; (p = strstr(p, "prog.stripped+0x")); p++) {
		char name[64];
		int i, len = (int)strcspn(p, "; \n");

		if (len >= (int)sizeof(name))
			len = (int)sizeof(name) - 1;

		snprintf(name, sizeof(name), "%.*s", len, p);
		for (i = 0; i < nstarts && strcmp(starts[i], name); i++)
			;
		/*
		 * crtstuff's code (no FDE, no symbol in the stripped program: no
		 * start to group it by), as a sample at exit inside
		 * __do_global_dtors_aux's call of __cxa_finalize has it
		 */
		if (i == nstarts &&
		    in_crt_function(name + strlen("prog.stripped+"), at, crt, nstarts))
			continue;
		if (i == nstarts && bad++ < 5)
			fprintf(stderr, "  %s: %s is not a function start\n", what, name);
	}
	for (int i = 0; i < nstarts; i++) {
		seen += strstr(folded, starts[i]) != NULL;
	}
	CHECK(bad == 0, "%s: %d frames named other than by a function start", what, bad);
	CHECK(seen >= NR_CHAIN, "%s: %d of the program's function starts seen", what, seen);
	return seen;
}

/* Builds the programs and serves prog.debug from debuginfod on loopback: its pid, or -1. */
static pid_t serve_progs(const char *log_name, char *urls, size_t len)
{
	char srvdir[PATHBUF], log_path[PATHBUF];
	int port = free_port();
	pid_t srv;

	CHECK(build_progs(), "cannot build the programs");
	snprintf(urls, len, "http://127.0.0.1:%d", port);
	srv = debuginfod_start(tpath(srvdir, sizeof(srvdir), "srv"), port, build_id,
			       tpath(log_path, sizeof(log_path), log_name), 20);
	CHECK(srv > 0, "debuginfod did not serve %s within 20 s", build_id);
	return srv;
}

static void test_debuginfod(void)
{
	char urls[64], log_path[PATHBUF], *log, *folded, *rep;
	uint64_t named, total;
	double elapsed;
	pid_t srv;

	srv = serve_progs("debuginfod.log", urls, sizeof(urls));
	if (srv <= 0)
		return;
	record("served.folded", "prog.stripped", urls, "cache", NULL, &elapsed, &log);
	folded = slurp(tpath(log_path, sizeof(log_path), "served.folded"));
	named = named_chain(folded, &total);
	CHECK(total >= ENOUGH_TO_JUDGE && named * 100 >= total * 95,
	      "served: %" PRIu64 " of %" PRIu64 " samples named main;a;b;c;d;leaf", named, total);
	CHECK(strstr(log, "1 fetched"), "served: the summary does not say it fetched: %s", log);
	CHECK(!strstr(folded, "prog.stripped+0x"), "served: unnamed frames of the program remain");
	free(log);
	/* report, with the server gone: libdebuginfod's cache names it alike */
	server_stop(srv);
	rep = report("served.folded", urls, "cache");
	named = named_chain(rep, &total);
	CHECK(total >= ENOUGH_TO_JUDGE && named * 100 >= total * 95,
	      "report: %" PRIu64 " of %" PRIu64 " samples named main;a;b;c;d;leaf", named, total);
	free(rep);
	free(folded);
}

/*
 * Seconds each connection to the stalled server was held (its log, one line
 * each) into held[], at most max; waits up to 5 s for the first line: the
 * server's child writes it once the client's hang-up reaches it.  The count.
 */
static int held_seconds(const char *log, double *held, int max)
{
	double end = mono_sec() + 5;
	char *s = NULL, *p;
	int n = 0;

	for (;;) {
		free(s);
		s = slurp(log);
		if (*s || mono_sec() > end)
			break;
		usleep(50 * 1000);
	}
	for (p = s; n < max && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		held[n++] = atof(p);
	free(s);
	return n;
}

/*
 * The server down, then stalled: grouped names, and no wait past the
 * timeout.  Down: a port held bound and not listening refuses at once, and
 * the run is given a 120 s timeout: waiting it out instead of failing would
 * outlast record's 60 s limit, whatever the machine's load (a bound of twice
 * a run without debuginfod failed beside CPU hogs and a parallel make test:
 * 14.7 s against 5.6 s).  Stalled: the server says how long the connection
 * was held, the 2 s timeout from the other end.  Wall times are figures.
 */
static void test_server_unavailable(void)
{
	char urls[64], path[PATHBUF], held_log[PATHBUF], *log, *folded, *rep;
	double elapsed, base, held[4];
	int hold_fd = -1, port = closed_port(&hold_fd), nr_held;
	pid_t srv;

	CHECK(build_progs(), "cannot build the programs");
	record("base.folded", "prog.stripped", NULL, "cache-base", NULL, &base, &log);
	free(log);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	CHECK(port > 0, "no loopback port to hold");
	record("down.folded", "prog.stripped", urls, "cache-down", "--debuginfod-timeout=120",
	       &elapsed, &log);
	if (hold_fd >= 0)
		close(hold_fd);
	folded = slurp(tpath(path, sizeof(path), "down.folded"));
	check_grouped("server down", folded);
	CHECK(strstr(log, "1 failed"), "server down: the summary does not say it failed: %s", log);
	printf(
	    "FIGURE: record of a %s-CPU-second program, debuginfod down: %.2f s (%.2f s without)\n",
	    SPIN, elapsed, base);
	free(log);
	/* report names it the same way from the same file */
	rep = report("down.folded", NULL, "cache-down");
	CHECK(!strcmp(rep, folded), "report's names differ from record's");
	free(rep);
	free(folded);

	tpath(held_log, sizeof(held_log), "stalled.held");
	srv = stalled_server_start(&port, held_log);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	record("slow.folded", "prog.stripped", urls, "cache-slow", "--debuginfod-timeout=2",
	       &elapsed, &log);
	nr_held = held_seconds(held_log, held, 4);
	server_stop(srv);
	folded = slurp(tpath(path, sizeof(path), "slow.folded"));
	check_grouped("server stalled", folded);
	CHECK(strstr(log, "1 timed-out"), "stalled: the summary does not say it timed out: %s",
	      log);
	/*
	 * One fetch, given up by 2 s after it started (its start, not its
	 * connection: libdebuginfod's setup before it connects is in the 2 s, and
	 * beside make test-stress's hogs that setup once took 1.8 s, the server
	 * holding the connection 0.2 s): the default (10 s) was not used.  The
	 * progress callback that aborts it comes at least once a second: 4 s.
	 */
	CHECK(nr_held == 1 && held[0] < 4,
	      "stalled server: %d connections, the first held %.2f s (want one, under 4 s)",
	      nr_held, nr_held ? held[0] : 0.0);
	printf("FIGURE: record of a %s s program, debuginfod stalled, 2 s timeout: %.2f s (%.2f s "
	       "without debuginfod; the server held the connection %.2f s)\n",
	       SPIN, elapsed, base, nr_held ? held[0] : 0.0);
	free(log);
	free(folded);
}

static void test_minidebuginfo(void)
{
	char path[PATHBUF], *log, *folded;
	uint64_t named, total;
	double elapsed;

	CHECK(build_progs(), "cannot build the programs");
	record("mini.folded", "prog.mini", NULL, "cache-mini", NULL, &elapsed, &log);
	folded = slurp(tpath(path, sizeof(path), "mini.folded"));
	named = named_chain(folded, &total);
	CHECK(total >= ENOUGH_TO_JUDGE && named * 100 >= total * 95,
	      "MiniDebugInfo: %" PRIu64 " of %" PRIu64 " samples named main;a;b;c;d;leaf", named,
	      total);
	free(log);
	free(folded);
}

/* The sum of a metric's series (every label set), or -1 when absent. */
static double metric_sum(const char *body, const char *name)
{
	const char *p = body;
	size_t n = strlen(name);
	double sum = -1;

	while (p && (p = strstr(p, name))) {
		if ((p == body || p[-1] == '\n') && (p[n] == '{' || p[n] == ' ')) {
			const char *sp = strchr(p, ' ');

			sum = (sum < 0 ? 0 : sum) + (sp ? strtod(sp + 1, NULL) : 0);
		}
		p += n;
	}
	return sum;
}

/*
 * The agent, sampling the stripped program in a cgroup of the test's own (the
 * rest of the host stays out of its profiles) with @opt (NULL: none) and
 * DEBUGINFOD_URLS=@urls in its environment: its /metrics once the program's
 * debug file was fetched (with --debuginfod) or 2 s after it started, and
 * whether the interval file written last holds the program and leaves frames
 * of it unnamed.
 */
static char *agent_run(const char *name, const char *urls, const char *opt, const char *duration,
		       bool *has_prog, bool *unnamed)
{
	char dir[PATHBUF], log[PATHBUF + 8], exe[PATHBUF], cache[PATHBUF + 8], env_urls[PATHBUF],
	    addr[64] = "", cmd[PATHBUF + 128];
	char *env[] = {env_urls, NULL};
	char *argv[] = {(char *)cfiprof_bin,
			"agent",
			"--cgroup",
			cg_dir,
			"--output-dir",
			dir,
			"--interval",
			"1s",
			"--freq",
			"99",
			"--metrics-addr",
			"127.0.0.1:0",
			"--duration",
			(char *)duration,
			"--debuginfod-cache",
			cache,
			"-u",
			opt ? (char *)opt : NULL,
			NULL};
	char *busy_argv[] = {exe, "30", NULL};
	char *body = NULL, *l, *m;
	double t0;
	pid_t pid, busy;
	int st;
	bool to;

	tpath(dir, sizeof(dir), name);
	snprintf(log, sizeof(log), "%s.log", dir);
	snprintf(cache, sizeof(cache), "%s.cache", dir);
	tpath(exe, sizeof(exe), "prog.stripped");
	snprintf(env_urls, sizeof(env_urls), "DEBUGINFOD_URLS=%s", urls);
	busy = spawn_in_cgroup(busy_argv);
	pid = spawn_env(argv, env, log, log);
	/* its start: however long the machine makes it, the log names the address */
	for (t0 = mono_sec(); !addr[0] && mono_sec() - t0 < 10; sleep_s(0.1)) {
		l = slurp(log);
		m = l ? strstr(l, "metrics=") : NULL;
		if (m)
			sscanf(m + 8, "%63[^ \n]", addr);
		free(l);
	}
	/* with --debuginfod, until the fetch is counted (before the agent ends), else 2 s */
	for (t0 = mono_sec(); addr[0] && mono_sec() - t0 < 5; sleep_s(0.2)) {
		bool fetched;

		free(body);
		body = http_get(addr, "/metrics");
		fetched = body &&
			  strstr(body, "cfiprof_debuginfod_fetches_total{outcome=\"fetched\"} 1\n");
		if (body && (opt ? fetched : mono_sec() - t0 >= 2))
			break;
	}
	CHECK(body && strstr(body, "cfiprof_symbols_refused_total"), "%s: no /metrics at '%s'",
	      name, addr);
	st = wait_timeout(pid, 20, &to);
	CHECK(exit_code(st, to) == 0, "%s: agent exit %d", name, exit_code(st, to));
	/* it ran beyond the agent, whatever the agent's start took: ended now */
	kill(busy, SIGKILL);
	wait_timeout(busy, 10, NULL);
	/*
	 * The newest interval, gunzipped: it must hold the program's samples (its
	 * mapping's name, prog.stripped, in pprof's string table), else what it
	 * names says nothing.  The agent samples the whole host, whose other
	 * programs may have a "leaf" of their own: the program's frames are
	 * judged by their unnamed form, "prog.stripped+0x...", which only they
	 * can have.
	 */
	snprintf(cmd, sizeof(cmd),
		 "f=$(ls %s/*.pb.gz | tail -1) && gzip -dc \"$f\" | LC_ALL=C grep -a -F -q "
		 "prog.stripped",
		 dir);
	*has_prog = system(cmd) == 0;
	snprintf(cmd, sizeof(cmd),
		 "f=$(ls %s/*.pb.gz | tail -1) && gzip -dc \"$f\" | LC_ALL=C grep -a -F -q "
		 "prog.stripped+0x",
		 dir);
	*unnamed = system(cmd) == 0;
	return body;
}

/* The agent fetches only when told to: its environment's DEBUGINFOD_URLS is not used. */
static void test_agent(void)
{
	char urls[64], opt[96], *body;
	bool unnamed, prog;
	pid_t srv;

	srv = serve_progs("agent-debuginfod.log", urls, sizeof(urls));
	if (srv <= 0)
		return;
	body = agent_run("agent-off", urls, NULL, "3s", &prog, &unnamed);
	CHECK(body && metric_sum(body, "cfiprof_debuginfod_fetches_total") == 0,
	      "agent without --debuginfod asked debuginfod: %.0f",
	      body ? metric_sum(body, "cfiprof_debuginfod_fetches_total") : -1);
	CHECK(prog && unnamed,
	      "agent without --debuginfod: the last interval %s the program's samples, %s",
	      prog ? "has" : "lacks", unnamed ? "unnamed" : "all named");
	free(body);
	snprintf(opt, sizeof(opt), "--debuginfod=%s", urls);
	body = agent_run("agent-on", "", opt, "6s", &prog, &unnamed);
	CHECK(body && strstr(body, "cfiprof_debuginfod_fetches_total{outcome=\"fetched\"} 1\n"),
	      "agent --debuginfod: prog's debug file not fetched once");
	CHECK(prog && !unnamed,
	      "agent --debuginfod: the last interval %s the program's samples, %s unnamed",
	      prog ? "has" : "lacks", unnamed ? "some" : "none");
	free(body);
	server_stop(srv);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("stripped"))
		return HARNESS_DONE();
	RUN_TEST(test_debuginfod);
	RUN_TEST(test_server_unavailable);
	RUN_TEST(test_minidebuginfo);
	if (cgroup_make()) {
		atexit(cgroup_remove);
		RUN_TEST(test_agent);
		cgroup_remove();
	} else {
		CHECK(0, "cannot make a cgroup v2 directory for the agent's test");
	}
	e2e_finish();
	return HARNESS_DONE();
}
