// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof behaves as the tools around it expect:
 *  1. exit_status: `record -- CMD` exits with the command's status (7 for
 *     `sh -c 'exit 7'`, 128 + 15 for a command killed by SIGTERM, 127 for
 *     one that cannot run), as perf does;
 *  2. stdio: `-o -` writes the profile to standard output (and no file named
 *     "-"), `--save - -o FILE` the recording, `report -` reads standard input
 *     and gives the same bytes as `report FILE`;
 *  3. perf_script: `-f perf-script` parsed back the way stackcollapse-perf.pl
 *     and the Firefox Profiler's importer read `perf script` (their regular
 *     expressions, in python3) gives exactly the folded output's stacks and
 *     counts;
 *  4. pprof_reader: the pprof decoded by an independent reader (the
 *     pprof-format npm package, tests/lib/pprof_decode.js) holds exactly the
 *     folded output's stacks and counts, with Pyroscope's CPU sample types;
 *  5. speedscope_importer: speedscope's own app (npm speedscope) served on
 *     loopback and run by headless Chromium imports `-f speedscope` JSON; its
 *     sandwich view's total and self of every function (tests/lib/
 *     speedscope_view.js reads them from the DOM) equal the folded output's;
 *  6. push_per_service: with no --service-name, the agent pushes each service's
 *     samples under its own Pyroscope name (SERVICE{hostname=H}): Pyroscope
 *     takes service_name from the name and lets it override the samples' own
 *     service_name labels, so one push for all would file every process
 *     under one service. Two programs in cgroups cfiprof-svc-a.service and
 *     cfiprof-svc-b.service, a receiver in python3 keeping each request;
 *  7. agent: READY=1 over $NOTIFY_SOCKET once sampling, /metrics accepted by
 *     `promtool check metrics` with the process_* metrics and
 *     cfiprof_build_info{version=...} of `cfiprof --version`, no lifetime ratio
 *     gauge; its profiles carry service_name, not pid.
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: beside others (its agents' checks look at their own services only) */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 256)

static char chain[PATHBUF];

/* sh -c SCRIPT with CFIPROF and T (the tmpdir) in its environment; its exit code. */
static int sh(const char *script, const char *err_name)
{
	char env_bin[PATHBUF], env_tmp[PATHBUF], epath[PATHBUF];
	char *env[] = {env_bin, env_tmp, NULL};
	char *argv[] = {"sh", "-c", (char *)script, NULL};

	snprintf(env_bin, sizeof(env_bin), "CFIPROF=%s", cfiprof_bin);
	snprintf(env_tmp, sizeof(env_tmp), "T=%s", tmpdir);
	return run_env(argv, env, NULL, tpath(epath, sizeof(epath), err_name), 60, NULL);
}

static void test_exit_status(void)
{
	int rc;

	rc = sh("exec \"$CFIPROF\" record -F 99 -o \"$T/e7.folded\" -- sh -c 'exit 7'", "e7.err");
	CHECK(rc == 7, "record -- sh -c 'exit 7' exited %d, not 7", rc);
	rc = sh("exec \"$CFIPROF\" record -F 99 -o \"$T/e0.folded\" -- true", "e0.err");
	CHECK(rc == 0, "record -- true exited %d", rc);
	rc = sh("exec \"$CFIPROF\" record -F 99 -o \"$T/sig.folded\" -- sh -c 'kill -TERM $$'",
		"sig.err");
	CHECK(rc == 128 + SIGTERM, "record -- (killed by SIGTERM) exited %d, not %d", rc,
	      128 + SIGTERM);
	rc = sh("exec \"$CFIPROF\" record -F 99 -o \"$T/none.folded\" -- /nonexistent/prog",
		"none.err");
	CHECK(rc == 127, "record -- /nonexistent/prog exited %d, not 127", rc);
}

static void test_stdio(void)
{
	char p[PATHBUF], q[PATHBUF], script[4 * PATHBUF];
	char *out, *rep, *rep_stdin;
	int rc;

	/* -o -: the profile on stdout, in the working directory no file "-" */
	snprintf(script, sizeof(script),
		 "cd \"$T\" && \"$CFIPROF\" record -F 499 -o - -- %s 1 > stdout.folded", chain);
	rc = sh(script, "stdout.err");
	CHECK(rc == 0, "record -o -: exit %d", rc);
	out = slurp(tpath(p, sizeof(p), "stdout.folded"));
	CHECK(out && strstr(out, "chain;") && strstr(out, ";leaf "),
	      "record -o - wrote no chain stacks to stdout: %.200s", out ? out : "(none)");
	CHECK(access(tpath(q, sizeof(q), "-"), F_OK) != 0, "record -o - created a file named '-'");
	free(out);

	/* --save - -o FILE: the recording on stdout; report - reads it from stdin */
	snprintf(
	    script, sizeof(script),
	    "\"$CFIPROF\" record -F 499 -o \"$T/live.folded\" --save - -- %s 1 > \"$T/run.rec\"",
	    chain);
	rc = sh(script, "save.err");
	CHECK(rc == 0, "record --save -: exit %d", rc);
	rc = sh("\"$CFIPROF\" report \"$T/run.rec\" -o \"$T/file.folded\"", "rep.err");
	CHECK(rc == 0, "report FILE: exit %d", rc);
	rc = sh("\"$CFIPROF\" report - -o - < \"$T/run.rec\" > \"$T/stdin.folded\"", "rep2.err");
	CHECK(rc == 0, "report - < FILE: exit %d", rc);
	rep = slurp(tpath(p, sizeof(p), "file.folded"));
	rep_stdin = slurp(tpath(q, sizeof(q), "stdin.folded"));
	CHECK(rep && strstr(rep, ";leaf "), "report of the --save - recording: %.200s",
	      rep ? rep : "(none)");
	CHECK(rep && rep_stdin && !strcmp(rep, rep_stdin),
	      "report - (stdin) differs from report FILE:\n%.300s\n---\n%.300s",
	      rep_stdin ? rep_stdin : "(none)", rep ? rep : "(none)");
	free(rep);
	free(rep_stdin);
}

/*
 * stackcollapse-perf.pl's event and frame expressions (plus the Firefox
 * Profiler's header test), collapsing each block to comm;root;..;leaf with
 * kernel frames suffixed _[k] (its --kernel): the folded format's lines.
 */
static const char collapse_py[] =
    "import re, sys\n"
    "ev = re.compile(r'^(\\S.+?)\\s+(\\d+)\\/*(\\d+)*\\s+')\n"
    "ff = re.compile(r'^(\\S.+?)\\s+(\\d+)\\/*(\\d+)*\\s+([\\d.]+)')\n"
    "fr = re.compile(r'^\\s*(\\w+)\\s*(.+) \\((\\S*)\\)')\n"
    "folded = {}\n"
    "for l in open(sys.argv[2]):\n"
    "    name, n = l.rstrip('\\n').rsplit(' ', 1)\n"
    "    folded[name] = folded.get(name, 0) + int(n)\n"
    "got, comm, stack, blocks, bad = {}, None, [], 0, 0\n"
    "for l in open(sys.argv[1]):\n"
    "    l = l.rstrip('\\n')\n"
    "    if comm is None:\n"
    "        m = ev.match(l)\n"
    "        if not m or not ff.match(l):\n"
    "            bad += 1; continue\n"
    "        comm, stack = m.group(1).replace(' ', '_'), []\n"
    "    elif l == '':\n"
    "        k = ';'.join([comm] + stack); got[k] = got.get(k, 0) + 1\n"
    "        comm, blocks = None, blocks + 1\n"
    "    else:\n"
    "        m = fr.match(l)\n"
    "        if not m:\n"
    "            bad += 1; continue\n"
    "        f = m.group(2) + ('_[k]' if m.group(3) == '[kernel.kallsyms]' else '')\n"
    "        stack.insert(0, f)\n"
    "print('blocks', blocks, 'bad', bad, 'stacks', len(got), 'folded', len(folded))\n"
    "for k in sorted(set(got) | set(folded)):\n"
    "    if got.get(k) != folded.get(k):\n"
    "        print('DIFF', got.get(k), folded.get(k), k[:200])\n"
    "sys.exit(0 if blocks and not bad and got == folded else 1)\n";

static void test_perf_script(void)
{
	char script[4 * PATHBUF], py[PATHBUF], ps[PATHBUF], fo[PATHBUF], res[PATHBUF];
	char *argv[] = {"python3", py, ps, fo, NULL};
	FILE *f;
	int rc;

	snprintf(script, sizeof(script),
		 "\"$CFIPROF\" record -F 499 --save \"$T/ps.rec\" -o \"$T/ps.live.folded\" -- %s 1 && "
		 "\"$CFIPROF\" report \"$T/ps.rec\" -f perf-script -o \"$T/out.perf-script\" && "
		 "\"$CFIPROF\" report \"$T/ps.rec\" -o \"$T/out.folded\"",
		 chain);
	rc = sh(script, "ps.err");
	CHECK(rc == 0, "record / report -f perf-script: exit %d", rc);
	f = fopen(tpath(py, sizeof(py), "collapse.py"), "w");
	CHECK(f && fputs(collapse_py, f) >= 0 && !fclose(f), "cannot write %s", py);
	tpath(ps, sizeof(ps), "out.perf-script");
	tpath(fo, sizeof(fo), "out.folded");
	rc = run(argv, tpath(res, sizeof(res), "collapse.out"), "-", 60);
	CHECK(rc == 0, "perf-script collapsed as stackcollapse-perf does differs from folded");
	if (rc)
		dump_tail("collapse", res);
}

static void test_pprof_reader(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char script[8 * PATHBUF], rel[PATHBUF], npm[PATH_MAX] = "", js[PATH_MAX] = "";
	int rc;

	snprintf(rel, sizeof(rel), "%s/npm/node_modules", out);
	CHECK(realpath(rel, npm) && realpath("tests/lib/pprof_decode.js", js),
	      "%s or tests/lib/pprof_decode.js is missing (make test-deps installs pprof-format)",
	      rel);
	if (!npm[0] || !js[0])
		return;
	/* kernel frames are "name_[k]" in folded output, "name" in a pprof */
	snprintf(script, sizeof(script),
		 "\"$CFIPROF\" record -F 499 --save \"$T/pp.rec\" -o \"$T/pp.live.folded\" -- %s 1 && "
		 "\"$CFIPROF\" report \"$T/pp.rec\" -o \"$T/pp.pb.gz\" && "
		 "\"$CFIPROF\" report \"$T/pp.rec\" -o \"$T/pp.folded\" && "
		 "node '%s' '%s' \"$T/pp.pb.gz\" > \"$T/pp.decoded\" && "
		 "grep -qx '# sample types: samples/count cpu/nanoseconds' \"$T/pp.decoded\" && "
		 "grep -v '^#' \"$T/pp.decoded\" | LC_ALL=C sort > \"$T/pp.a\" && "
		 "cut -d';' -f2- \"$T/pp.folded\" | sed -E 's/_\\[k\\]//g; s/ ([0-9]+)$/\\t\\1/' | "
		 "awk -F'\\t' '{a[$1] += $2} END {for (k in a) print k \" \" a[k]}' | "
		 "LC_ALL=C sort > \"$T/pp.b\" && [ -s \"$T/pp.a\" ] && "
		 "diff \"$T/pp.a\" \"$T/pp.b\" > \"$T/pp.diff\"",
		 chain, js, npm);
	rc = sh(script, "pp.err");
	CHECK(rc == 0,
	      "the pprof read by pprof-format differs from the folded output (or a step failed: "
	      "exit %d; see %s/pp.err, pp.diff)",
	      rc, tmpdir);
}

static void test_speedscope_importer(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char script[8 * PATHBUF], rel[PATHBUF], app[PATH_MAX] = "", js[PATH_MAX] = "";
	int rc;

	snprintf(rel, sizeof(rel), "%s/npm/node_modules/speedscope/dist/release", out);
	CHECK(realpath(rel, app) && realpath("tests/lib/speedscope_view.js", js),
	      "%s or tests/lib/speedscope_view.js is missing (make test-deps installs speedscope)",
	      rel);
	if (!app[0] || !js[0])
		return;
	/* the app fetches profileURL, which file:// pages may not: both come from one origin */
	snprintf(script, sizeof(script),
		 "\"$CFIPROF\" record -F 499 --save \"$T/ss.rec\" -o \"$T/ss.live.folded\" -- %s 1 && "
		 "mkdir -p \"$T/www\" && ln -s '%s' \"$T/www/app\" && "
		 "\"$CFIPROF\" report \"$T/ss.rec\" -f speedscope -o \"$T/www/prof.json\" && "
		 "\"$CFIPROF\" report \"$T/ss.rec\" -o \"$T/ss.folded\" || exit 10; "
		 "vrc=; python3 -u -m http.server 0 --bind 127.0.0.1 --directory \"$T/www\" "
		 "> \"$T/http.log\" 2>&1 & server=$!; port=; "
		 "for i in $(seq 100); do "
		 "port=$(sed -n 's/.* port \\([0-9]*\\) .*/\\1/p' \"$T/http.log\"); "
		 "[ -n \"$port\" ] && break; sleep 0.1; done; "
		 "[ -n \"$port\" ] || { kill $server; exit 11; }; "
		 /*
		  * a page dumped before the app drew the profile (a loaded machine) has no
		  * row of its table (seen in CI: "<td" but 0 rows): up to three tries; an
		  * import that fails has none in any of them
		  */
		 "for try in 1 2 3; do "
		 "HOME=\"$T/chrome\" timeout 60 chromium --headless=new --no-sandbox --disable-gpu "
		 "--no-first-run --disable-background-networking --disable-component-update "
		 "--user-data-dir=\"$T/chrome\" --window-size=1600,4000 --virtual-time-budget=10000 "
		 "--dump-dom \"http://127.0.0.1:$port/app/index.html"
		 "#profileURL=/prof.json&view=sandwich\" > \"$T/ss.dom.$try\" "
		 "2> \"$T/chromium.err\"; crc=$?; [ $crc = 0 ] || continue; "
		 "node '%s' \"$T/ss.dom.$try\" \"$T/ss.folded\" > \"$T/ss.view\"; vrc=$?; "
		 "[ $vrc = 2 ] || break; done; "
		 "kill $server; [ $crc = 0 ] || exit 12; [ \"$vrc\" = 0 ] || exit 13",
		 chain, app, js);
	rc = sh(script, "ss.err");
	CHECK(rc == 0,
	      "speedscope's importer: %s (exit %d; see %s/ss.err, chromium.err, ss.view)",
	      rc == 10   ? "record / report failed"
	      : rc == 11 ? "the loopback HTTP server gave no port"
	      : rc == 12 ? "headless chromium failed"
	      : rc == 13 ? "its sandwich view differs from the folded output"
			 : "a step failed",
	      rc, tmpdir);
	if (rc == 13)
		dump_tail("speedscope view", tpath(rel, sizeof(rel), "ss.view"));
}

/* A Pyroscope /ingest stand-in: each request's name and body kept as DIR/NNNN.name, NNNN.pb.gz */
static const char ingest_py[] =
    "import http.server, os, sys, urllib.parse\n"
    "d, n = sys.argv[1], [0]\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_POST(self):\n"
    "        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)\n"
    "        body = self.rfile.read(int(self.headers['Content-Length']))\n"
    "        n[0] += 1\n"
    "        with open(os.path.join(d, '%04d.pb.gz' % n[0]), 'wb') as f: f.write(body)\n"
    "        with open(os.path.join(d, '%04d.name' % n[0]), 'w') as f: f.write(q['name'][0])\n"
    "        self.send_response(200)\n"
    "        self.send_header('Content-Length', '0')\n"
    "        self.end_headers()\n"
    "    def log_message(self, *a): pass\n"
    "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
    "print(s.server_address[1], flush=True)\n"
    "s.serve_forever()\n";

/* One pushed request: every sample's service_name must be the name's application. */
static void check_push(const char *dir, int i, int *svc_a, int *svc_b, int *other)
{
	char path[PATHBUF], *name, app[256] = "";
	struct decoded d;
	uint8_t *raw;
	size_t len;

	snprintf(path, sizeof(path), "%.4000s/%04d.name", dir, i);
	name = slurp(path);
	if (name)
		sscanf(name, "%255[^{]", app);
	snprintf(path, sizeof(path), "%.4000s/%04d.pb.gz", dir, i);
	raw = gunzip_file(path, &len);
	CHECK(name && raw && !decode(raw, len, &d), "request %d: no name or no pprof body", i);
	if (!name || !raw) {
		free(name);
		free(raw);
		return;
	}
	for (int k = 0; k < d.nr_samples; k++)
		for (int l = 0; l < d.samples[k].nr_labels; l++) {
			const char *v = d.samples[k].label_vals[l];

			if (strcmp(d.samples[k].label_keys[l], "service_name"))
				continue;
			CHECK(v && !strcmp(v, app),
			      "request %d pushed as '%s' holds a sample of service_name '%s': "
			      "Pyroscope files it under '%s'",
			      i, name, v ? v : "(none)", app);
		}
	*svc_a += !strcmp(app, "cfiprof-svc-a");
	*svc_b += !strcmp(app, "cfiprof-svc-b");
	*other += strcmp(app, "cfiprof-svc-a") && strcmp(app, "cfiprof-svc-b");
	decoded_free(&d);
	free(raw);
	free(name);
}

static void test_push_per_service(void)
{
	char py[PATHBUF], reqs[PATHBUF], port_file[PATHBUF], url[64], log[PATHBUF];
	char spool[PATHBUF], script[4 * PATHBUF], *port = NULL;
	char *py_argv[] = {"python3", py, reqs, NULL};
	char *argv[] = {(char *)cfiprof_bin, "agent", "--push", url, "--interval", "1",
			"--duration", "4", "--freq", "99", "--spool-dir", spool,
			"--metrics-addr", "off", NULL};
	static const char *const cgs[] = {"/sys/fs/cgroup/unified/cfiprof-svc-a.service",
					  "/sys/fs/cgroup/unified/cfiprof-svc-b.service"};
	int svc_a = 0, svc_b = 0, other = 0, n, st;
	pid_t server, agent, prog[2];
	FILE *f;

	tpath(reqs, sizeof(reqs), "requests");
	tpath(spool, sizeof(spool), "push-spool");
	tpath(log, sizeof(log), "push-agent.log");
	mkdir(reqs, 0755);
	f = fopen(tpath(py, sizeof(py), "ingest.py"), "w");
	CHECK(f && fputs(ingest_py, f) >= 0 && !fclose(f), "cannot write %s", py);
	server = spawn(py_argv, tpath(port_file, sizeof(port_file), "ingest.port"), NULL);
	for (n = 0; n < 100 && !(port && *port); n++) {
		free(port);
		sleep_s(0.05);
		port = slurp(port_file);
	}
	CHECK(port && atoi(port) > 0, "the python3 receiver gave no port");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port ? atoi(port) : 0);
	free(port);
	for (int i = 0; i < 2; i++) {
		char *sh_argv[] = {"sh", "-c", script, NULL};

		rmdir(cgs[i]);
		CHECK(!mkdir(cgs[i], 0755), "mkdir %s: %s", cgs[i], strerror(errno));
		snprintf(script, sizeof(script),
			 "echo $$ > %s/cgroup.procs || exit 97; exec %s 5", cgs[i], chain);
		prog[i] = spawn(sh_argv, NULL, NULL);
	}
	agent = spawn(argv, log, log);
	st = wait_timeout(agent, 30, NULL);
	CHECK(exit_code(st, false) == 0, "agent --push exited %d (see %s)", exit_code(st, false),
	      log);
	for (int i = 0; i < 2; i++) {
		kill(prog[i], SIGKILL);
		wait_timeout(prog[i], 10, NULL);
		rmdir(cgs[i]);
	}
	kill(server, SIGTERM);
	wait_timeout(server, 10, NULL);
	for (n = 1;; n++) {
		char path[PATHBUF];

		snprintf(path, sizeof(path), "%.4000s/%04d.name", reqs, n);
		if (access(path, R_OK))
			break;
		check_push(reqs, n, &svc_a, &svc_b, &other);
	}
	printf("push_per_service: %d requests: %d cfiprof-svc-a, %d cfiprof-svc-b, %d others\n",
	       n - 1, svc_a, svc_b, other);
	CHECK(svc_a >= 2 && svc_b >= 2,
	      "pushes named cfiprof-svc-a: %d, cfiprof-svc-b: %d (want one per interval each)",
	      svc_a, svc_b);
}

/* One datagram on the notify socket within timeout seconds, into buf ("" if none). */
static void notify_recv(int fd, char *buf, size_t len, double timeout)
{
	struct timeval tv = {(time_t)timeout, 0};
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
}

static void check_metrics(const char *body)
{
	static const char *const want[][2] = {
	    {"process_cpu_seconds_total", "counter"},
	    {"process_resident_memory_bytes", "gauge"},
	    {"process_virtual_memory_bytes", "gauge"},
	    {"process_start_time_seconds", "gauge"},
	    {"process_open_fds", "gauge"},
	    {"process_max_fds", "gauge"},
	    {"cfiprof_build_info", "gauge"},
	};
	static const char *const gone[] = {"cfiprof_rule_cache_hit_ratio",
					   "cfiprof_agent_rss_bytes", "cfiprof_uptime_seconds"};
	char line[PATHBUF], version[128] = "", path[PATHBUF], *v;
	char *argv[] = {"promtool", "check", "metrics", NULL};
	char *sh_argv[] = {"sh", "-c", "promtool check metrics < \"$1\"", "sh", path, NULL};
	FILE *f;
	int rc;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(line, sizeof(line), "# TYPE %s %s\n", want[i][0], want[i][1]);
		CHECK(strstr(body, line), "/metrics lacks '%s'", line);
	}
	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(line, sizeof(line), "\n%s ", gone[i]);
		CHECK(!strstr(body, line), "/metrics still has %s", gone[i]);
	}
	CHECK(metric_value(body, "process_start_time_seconds") > 1e9,
	      "process_start_time_seconds %f", metric_value(body, "process_start_time_seconds"));
	f = popen("\"$CFIPROF\" --version", "r");
	if (f) {
		if (fgets(version, sizeof(version), f))
			version[strcspn(version, "\n")] = 0;
		pclose(f);
	}
	v = strchr(version, ' ');
	snprintf(line, sizeof(line), "cfiprof_build_info{version=\"%s\"} 1\n", v ? v + 1 : "?");
	CHECK(v && strstr(body, line), "/metrics lacks '%s'", line);
	f = fopen(tpath(path, sizeof(path), "metrics.txt"), "w");
	CHECK(f && fputs(body, f) >= 0 && !fclose(f), "cannot write %s", path);
	(void)argv;
	rc = run(sh_argv, tpath(line, sizeof(line), "promtool.out"), line, 30);
	CHECK(rc == 0, "promtool check metrics: exit %d", rc);
	if (rc)
		dump_tail("promtool", line);
}

static void check_agent_profile(const char *dir)
{
	char cmd[PATHBUF + 64], file[PATHBUF] = "";
	struct decoded d = {0};
	uint8_t *buf;
	size_t len;
	bool service = false, pid = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls -1 %s/*.pb.gz | tail -1", dir);
	f = popen(cmd, "r");
	if (f) {
		if (fgets(file, sizeof(file), f))
			file[strcspn(file, "\n")] = 0;
		pclose(f);
	}
	buf = file[0] ? gunzip_file(file, &len) : NULL;
	CHECK(buf && !decode(buf, len, &d) && d.nr_samples > 0, "no agent profile in %s", dir);
	for (int i = 0; i < d.nr_samples; i++)
		for (int k = 0; k < d.samples[i].nr_labels; k++) {
			service |= !strcmp(d.samples[i].label_keys[k], "service_name");
			pid |= !strcmp(d.samples[i].label_keys[k], "pid");
		}
	CHECK(service, "%s: no sample has a service_name label", file);
	CHECK(!pid, "%s: pid labels by default (one series per process)", file);
	CHECK(d.period_type[0] && !strcmp(d.period_type[0], "cpu") && d.period_type[1] &&
		  !strcmp(d.period_type[1], "nanoseconds"),
	      "%s: period type %s/%s, not cpu/nanoseconds (Pyroscope's process_cpu)", file,
	      d.period_type[0], d.period_type[1]);
	decoded_free(&d);
	free(buf);
}

static void test_agent(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[PATHBUF], log[PATHBUF], env_notify[PATHBUF], msg[256], addr[64] = "";
	char *env[] = {env_notify, NULL};
	char *argv[] = {(char *)cfiprof_bin,
			"agent",
			"--output-dir",
			dir,
			"--interval",
			"1s",
			"--freq",
			"99",
			"--metrics-addr",
			"127.0.0.1:0",
			NULL};
	char *busy_argv[] = {chain, "5", NULL};
	char *body = NULL, *l, *m;
	double t0;
	pid_t pid, busy;
	int fd, st;
	bool to;

	tpath(dir, sizeof(dir), "agent");
	tpath(log, sizeof(log), "agent.log");
	/* sun_path holds 108 bytes: the tmpdir's name is shorter */
	if (strlen(tmpdir) + sizeof("/notify") <= sizeof(sa.sun_path)) {
		memcpy(sa.sun_path, tmpdir, strlen(tmpdir));
		memcpy(sa.sun_path + strlen(tmpdir), "/notify", sizeof("/notify"));
	}
	snprintf(env_notify, sizeof(env_notify), "NOTIFY_SOCKET=%s", sa.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof(sa)), "notify socket %s",
	      sa.sun_path);
	/* something to sample: an idle host gives the agent no samples */
	busy = spawn(busy_argv, NULL, NULL);
	t0 = mono_sec();
	pid = spawn_env(argv, env, log, log);
	notify_recv(fd, msg, sizeof(msg), 20);
	CHECK(!strncmp(msg, "READY=1", 7), "no READY=1 within 20 s (got '%s')", msg);
	printf("READY=1 %.2f s after the start\n", mono_sec() - t0);
	/* READY comes after the log line that names the metrics address, and after attaching */
	l = slurp(log);
	m = l ? strstr(l, "metrics=") : NULL;
	if (m)
		sscanf(m + 8, "%63s", addr);
	CHECK(l && strstr(l, "agent started"), "READY=1 before 'agent started'");
	free(l);
	sleep_s(2.5);
	if (addr[0])
		body = http_get(addr, "/metrics");
	CHECK(body && strstr(body, "cfiprof_samples_total"), "GET %s/metrics failed", addr);
	m = body ? strstr(body, "\r\n\r\n") : NULL;
	if (m)
		check_metrics(m + 4); /* without the HTTP header */
	free(body);
	kill(pid, SIGTERM);
	notify_recv(fd, msg, sizeof(msg), 10);
	CHECK(!strncmp(msg, "STOPPING=1", 10), "no STOPPING=1 on SIGTERM (got '%s')", msg);
	st = wait_timeout(pid, 15, &to);
	CHECK(exit_code(st, to) == 0, "agent exit %d after SIGTERM", exit_code(st, to));
	wait_timeout(busy, 10, NULL);
	close(fd);
	check_agent_profile(dir);
}

int main(int argc, char **argv)
{
	static const char *const tools[] = {"python3", "promtool"};
	static char bin[PATH_MAX];

	harness_init(argc, argv);
	if (!e2e_setup("conventions"))
		return HARNESS_DONE();
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	CHECK(access(chain, X_OK) == 0, "%s is missing (make %s)", chain, chain);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make test-deps)", tools[i]);
	/* absolute: some scripts run it from the tmpdir */
	if (realpath(cfiprof_bin, bin))
		cfiprof_bin = bin;
	setenv("CFIPROF", cfiprof_bin, 1);

	RUN_TEST(test_exit_status);
	RUN_TEST(test_stdio);
	RUN_TEST(test_perf_script);
	RUN_TEST(test_pprof_reader);
	RUN_TEST(test_speedscope_importer);
	RUN_TEST(test_push_per_service);
	RUN_TEST(test_agent);

	e2e_finish();
	return HARNESS_DONE();
}
