// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile processes (issue 12): cfiprof runs privileged beside programs that
 * may do anything to it.  Each named test is one attack:
 *  - mapping_churn: build/progs/faults_churn maps and unmaps file-backed
 *    libraries executable as fast as it can (a reload request a millisecond,
 *    each a new mapping set, old sets retired under the symbolizer) while the
 *    agent writes an interval every 0.2 s, then again under the agent's
 *    ASan + UBSan build (build/asan/cfiprof, made by make test): the agent
 *    exits cleanly, intervals keep coming, every file is a gzip'ed pprof, and
 *    the churner's own frames are named.
 *  - fifo_over_library: the agent as its systemd unit runs it (nobody with
 *    CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH: no
 *    CAP_SYS_ADMIN, so libraries are opened through /proc/PID/root) beside a
 *    process that renames a FIFO over its mapped library and keeps changing
 *    its mappings (progs/hostile_fifo), and an ordinary one (progs/chain).
 *    The loader used to block in the FIFO's open() holding the load lock: no
 *    interval file, and SIGTERM did not stop the agent.  Now every interval
 *    arrives, the ordinary process unwinds completely, the refusal is counted
 *    and the agent stops on its own.
 *  - shared_map_quotas: one process maps objects holding 154,000 distinct CFI
 *    rules, another maps a file executable 18,000 times (270,000 LPM keys,
 *    more than the whole trie); a program started after them unwinds
 *    completely and every refusal is in /metrics.
 * Programs that run as nobody are copied to a directory nobody can reach,
 * wherever the tree is cloned.  The attacks on `record -p` alone are
 * test_hostile_record.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/nobody.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 64)
#define SECONDS	  "7"

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

	snprintf(dir, sizeof(dir), "%s/%s", tmp, what);
	snprintf(log, sizeof(log), "%s/%s.log", tmp, what);
	snprintf(err, sizeof(err), "%s/%s-churn.err", tmp, what);
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
	/*
	 * How many 0.2 s intervals the agent writes in 4 s is its speed: 18-20
	 * alone, 3 for the ASan build beside make test-stress's hogs (each
	 * interval then written late, longer).  That it does not stall is the
	 * span from the first to the last, below; three show it going on.
	 */
	CHECK(f.files >= 3, "%s: %d intervals in %.0f s at 0.2 s", what, f.files, secs);
	CHECK(f.pprofs == f.files, "%s: %d of %d interval files are gzip'ed pprofs", what, f.pprofs,
	      f.files);
	/* from the first to the last: no stall once the churn is under way */
	CHECK(f.last_ms - f.first_ms >= (long)(secs * 1000 / 2),
	      "%s: intervals from %ld to %ld ms only", what, f.first_ms, f.last_ms);
	CHECK(f.named > 0, "%s: no interval names the churner's fc_leaf", what);
	printf("%s: %d intervals over %.1f s, %d naming fc_leaf\n", what, f.files,
	       (f.last_ms - f.first_ms) / 1e3, f.named);
}

static int count_profiles(const char *dir, char *last, size_t len)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	last[0] = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "cfiprof-", 8) && strstr(e->d_name, ".pb.gz")) {
			n++;
			if (strcmp(e->d_name, last) > 0)
				snprintf(last, len, "%s", e->d_name);
		}
	closedir(d);
	return n;
}

/* Files in dir whose names end in suffix. */
static int count_suffix(const char *dir, const char *suffix)
{
	size_t sl = strlen(suffix);
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		n += l > sl && !strcmp(e->d_name + l - sl, suffix);
	}
	closedir(d);
	return n;
}

/* A metric's value from the agent's /metrics; -1 when absent. */
static double metric(const char *addr, const char *name)
{
	char *r = http_get(addr, "/metrics");
	double v = r ? metric_value(r, name) : -1;

	free(r);
	return v;
}

/*
 * Samples of comm in a profile, by go tool pprof -traces (an independent
 * reader): *complete gets those whose trace has no [incomplete: ...] frame.
 */
static int traces_of(const char *file, const char *comm, int *complete)
{
	char cmd[PATH_MAX + 1024], line[4096], want[80];
	bool in_block = false, bad = false;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "HOME=%s/go GOCACHE=%s/go/cache GOPATH=%s/go/gopath GOTOOLCHAIN=local "
		 "GOPROXY=off go tool pprof -traces %s 2>/dev/null",
		 tmp, tmp, tmp, file);
	snprintf(want, sizeof(want), " comm:  %s\n", comm);
	*complete = 0;
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "-----------+", 12)) {
			if (in_block && !bad)
				(*complete)++;
			in_block = bad = false;
			continue;
		}
		if (strstr(line, want)) { /* "      comm:  chain" */
			in_block = true;
			n++;
		}
		if (in_block && strstr(line, "[incomplete"))
			bad = true;
	}
	if (in_block && !bad)
		(*complete)++;
	return pclose(p) == 0 ? n : -1;
}

/*
 * Samples of comm in the newest k interval files of dir, *complete of them
 * complete; k 0: in every file after the first in which comm had a complete
 * sample (-1 when none had).
 */
static int traces_in_newest(const char *dir, int k, const char *comm, int *complete);

static void test_fifo_over_library(void)
{
	char out[PATH_MAX], victim[PATH_MAX], log[PATH_MAX], lib[PATH_MAX], chain[PATH_MAX];
	char hout[PATH_MAX], last[256], path[PATH_MAX * 2], addr[64] = "";
	char *agent[] = {ncfiprof, "agent",    "--output-dir",	 out,	     "--interval",
			 "1",		  "-d",	      SECONDS,		 "--metrics-addr", "127.0.0.1:0",
			 "-F",		  "99",	      NULL};
	char *hostile[] = {path, lib, victim, "9", NULL};
	char *ordinary[] = {chain, "9", NULL};
	pid_t a, h, o;
	bool timed_out = false;
	int rc, files, n, complete = 0;
	double replaced = -1;

	snprintf(out, sizeof(out), "%s/profiles", tmp);
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	snprintf(log, sizeof(log), "%s/agent.log", tmp);
	snprintf(hout, sizeof(hout), "%s/hostile.out", tmp);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", nprogs);
	snprintf(chain, sizeof(chain), "%s/chain", nprogs);
	snprintf(path, sizeof(path), "%s/hostile_fifo", nprogs);
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534) && !mkdir(victim, 0755) &&
		  !chown(victim, 65534, 65534),
	      "directories for nobody: %s", strerror(errno));

	/* the attacker first: its library is a FIFO before the agent ever looks */
	h = spawn_as_nobody(hostile, false, hout, NULL);
	CHECK(wait_ready(hout), "hostile_fifo did not get ready: '%s'", slurp(hout));
	o = spawn_as_nobody(ordinary, false, NULL, NULL);
	a = spawn_as_nobody(agent, true, NULL, log);
	agent_metrics_addr(log, addr, sizeof(addr));
	sleep_s(atof(SECONDS) - 1.5);
	if (addr[0])
		replaced = metric(addr, "cfiprof_mapped_files_refused_total");
	rc = exit_code(wait_timeout(a, 8, &timed_out), timed_out);
	CHECK(!timed_out && rc == 0,
	      "the agent beside a FIFO over a mapped library stops on its own: exit %d%s", rc,
	      timed_out ? " (hung: killed after 8 s past its -d)" : "");
	files = count_profiles(out, last, sizeof(last));
	CHECK(files >= atoi(SECONDS) - 2, "%d interval files in %s s (want one a second)", files,
	      SECONDS);
	CHECK(replaced >= 1, "cfiprof_mapped_files_refused_total = %.0f (want >= 1: the FIFO "
			     "refused and counted)", replaced);
	snprintf(path, sizeof(path), "%s/%s", out, last);
	n = last[0] ? traces_of(path, "chain", &complete) : -1;
	CHECK(n > 0 && complete == n,
	      "the ordinary process in the last interval: %d of %d samples complete", complete, n);
	n = last[0] ? traces_of(path, "hostile_fifo", &complete) : -1;
	CHECK(n > 0, "the attacker itself is still profiled (%d samples)", n);
	kill(h, SIGKILL);
	kill(o, SIGKILL);
	wait_timeout(h, 2, NULL);
	wait_timeout(o, 2, NULL);
	if (harness_failed)
		dump_tail("agent log", log);
}

/* Occurrences of needle in the text. */
static int count_in(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * Issue 12, item 5: the rule dictionary, page index, rows and mapping trie
 * are shared by every process.  progs/quota_hog dlopen's 3 objects of 30,000
 * distinct rules (over the per-object quota; 90,000 together, more than the
 * 65,536-rule dictionary) and 8 of 8,000 (under it, over the per-process
 * quota together); a second one maps a file executable 18,000 times, 15 LPM
 * keys each (270,000: the trie holds 262,144).  progs/chain, started after
 * both were loaded, must unwind completely; the refusals are counted by
 * cause and logged once per process.
 */
static void test_shared_map_quotas(void)
{
	char out[PATHBUF], log[PATHBUF], rout[PATHBUF], mout[PATHBUF], chain[PATHBUF];
	char hog[PATHBUF], addr[64] = "", want[64];
	char libs[11][PATHBUF], *rules_argv[16] = {hog, "14", "dlopen"};
	char *agent[] = {
	    (char *)cfiprof,  "agent",	     "--output-dir", out,  "--interval", "1", "-d", "9",
	    "--metrics-addr", "127.0.0.1:0", "-F",	     "99", NULL};
	char *mmap_argv[] = {hog, "14", "mmap", hog, "18000", NULL};
	/*
	 * killed at the end: it must outlive the agent's run, whose 9 s begin
	 * once its programs are verified (11 s beside a busy host once): an exit
	 * inside it is a sample of no user stack ("exiting")
	 */
	char *ordinary[] = {chain, "60", NULL};
	double rules_quota = -1, proc_rules = -1, keys_quota = -1, trie_full = -1, dict_full = -1;
	pid_t a, hr, hm, o;
	bool timed_out = false;
	int rc, n = -1, complete = 0;
	char *text, *m;

	snprintf(out, sizeof(out), "%s/quotas", tmp);
	snprintf(log, sizeof(log), "%s/quotas.log", tmp);
	snprintf(rout, sizeof(rout), "%s/hog_rules.out", tmp);
	snprintf(mout, sizeof(mout), "%s/hog_mmap.out", tmp);
	snprintf(chain, sizeof(chain), "%s/chain", progs);
	snprintf(hog, sizeof(hog), "%s/quota_hog", progs);
	for (int i = 0; i < 11; i++) {
		snprintf(libs[i], sizeof(libs[i]), "%s/librules_%s%d.so", progs,
			 i < 3 ? "big" : "mid", i < 3 ? i : i - 3);
		rules_argv[3 + i] = libs[i];
	}
	mkdir(out, 0755);
	a = spawn(agent, NULL, log);
	for (int i = 0; i < 100 && !addr[0]; i++) {
		m = strstr(slurp(log), "metrics=");
		if (m)
			sscanf(m + 8, "%63[0-9.:]", addr);
		sleep_s(0.05);
	}
	hr = spawn(rules_argv, rout, NULL);
	hm = spawn(mmap_argv, mout, NULL);
	for (int i = 0; i < 100 && (!strstr(slurp(rout), "ready") || !strstr(slurp(mout), "ready"));
	     i++)
		sleep_s(0.05);
	CHECK(strstr(slurp(rout), "ready 11") && strstr(slurp(mout), "ready 18000"),
	      "the hogs mapped everything: '%s' '%s'", slurp(rout), slurp(mout));
	/* both are sampled, hence loaded, before the ordinary program starts */
	sleep_s(2.5);
	o = spawn(ordinary, NULL, NULL);
	sleep_s(5);
	if (addr[0]) {
		text = http_get(addr, "/metrics");
		rules_quota =
		    text ? metric_value(text, "cfiprof_tables_refused_total{cause=\"rules_quota\"}")
			 : -1;
		proc_rules =
		    text ? metric_value(
			       text, "cfiprof_tables_refused_total{cause=\"process_rules_quota\"}")
			 : -1;
		dict_full =
		    text ? metric_value(text,
					"cfiprof_tables_refused_total{cause=\"dictionary_full\"}")
			 : -1;
		keys_quota =
		    text ? metric_value(
			       text, "cfiprof_mapping_keys_refused_total{cause=\"process_quota\"}")
			 : -1;
		trie_full =
		    text ? metric_value(text,
					"cfiprof_mapping_keys_refused_total{cause=\"trie_full\"}")
			 : -1;
		free(text);
	}
	/*
	 * Its last interval written and its tables freed: seconds beside a stress
	 * run (over 10 once); the deadline only guards a hang.
	 */
	rc = exit_code(wait_timeout(a, 120, &timed_out), timed_out);
	CHECK(!timed_out && rc == 0, "the agent exits %d%s", rc, timed_out ? " (hung)" : "");
	/*
	 * Once chain's tables are in (an interval with a complete sample of it),
	 * every later sample is complete: when its load comes follows how far
	 * behind the hogs' loads keep the agent (beside make test-stress, three
	 * intervals from the end once), not the quotas.
	 */
	n = traces_in_newest(out, 0, "chain", &complete);
	CHECK(n >= 0 && complete == n,
	      "chain, started after the hogs: %d of %d samples complete after its first complete "
	      "one (-1: none complete)",
	      complete, n);
	CHECK(rules_quota >= 3 && proc_rules >= 1 && dict_full == 0,
	      "tables refused: %.0f over the per-object rules quota (want 3), %.0f over the "
	      "process's (want >= 1), %.0f for a full dictionary (want 0)",
	      rules_quota, proc_rules, dict_full);
	CHECK(keys_quota > 0 && trie_full == 0,
	      "mapping keys refused: %.0f over the process's quota (want > 0), %.0f for a full "
	      "trie (want 0)",
	      keys_quota, trie_full);
	text = slurp(log);
	snprintf(want, sizeof(want), "pid %d: over its share", (int)hr);
	rc = count_in(text, want);
	snprintf(want, sizeof(want), "pid %d: over its share", (int)hm);
	CHECK(rc == 1 && count_in(text, want) == 1,
	      "each hog's quota refusals logged once: %d and %d lines", rc, count_in(text, want));
	kill(hr, SIGKILL);
	kill(hm, SIGKILL);
	kill(o, SIGKILL);
	wait_timeout(hr, 2, NULL);
	wait_timeout(hm, 2, NULL);
	wait_timeout(o, 2, NULL);
	if (harness_failed)
		dump_tail("agent log", log);
}

struct beside {
	pid_t attacker, ordinary, agent;
	char addr[64]; /* the agent's metrics address, "" if it never said */
};

/*
 * Starts attack (its stdout in aout) and waits for its "ready", then
 * build/progs/chain (the ordinary process) for 30 s, then the agent (its log
 * in log) and waits for its metrics address.
 */
static void start_beside(char **attack, const char *aout, char **agent, const char *log,
			 struct beside *b)
{
	char chain[PATHBUF];
	char *ordinary[] = {chain, "30", NULL};

	snprintf(chain, sizeof(chain), "%s/chain", progs);
	b->attacker = spawn(attack, aout, NULL);
	CHECK(wait_ready(aout), "%s did not get ready: '%s'", attack[0], slurp(aout));
	b->ordinary = spawn(ordinary, NULL, NULL);
	b->agent = spawn(agent, NULL, log);
	agent_metrics_addr(log, b->addr, sizeof(b->addr));
	CHECK(b->addr[0], "the agent's metrics address is in its log");
}

static void stop_beside(struct beside *b, const char *log)
{
	kill(b->attacker, SIGKILL);
	kill(b->ordinary, SIGKILL);
	wait_timeout(b->attacker, 2, NULL);
	wait_timeout(b->ordinary, 2, NULL);
	if (harness_failed)
		dump_tail("agent log", log);
}

/* Per second over [t0, t1] of a counter read at both ends. */
static double per_sec(double v0, double v1, double t0, double t1)
{
	return v0 < 0 || v1 < 0 || t1 <= t0 ? -1 : (v1 - v0) / (t1 - t0);
}

#define STORM_PROCS   16
#define REQUEST_BOUND 1000.0 /* the BPF side's default, all processes together */

/*
 * Issue 12, item 6: a process mapping and unmapping code in a loop asks for a
 * reload a millisecond (the per-process limit), and sixteen of them sixteen
 * times as often.  The requests that reach user space, and the reloads they
 * cost, stay under the global budget, and an ordinary process profiled
 * beside them still unwinds completely.
 */
static void test_request_storm(void)
{
	char out[PATHBUF], log[PATHBUF], storm[PATHBUF], sout[PATHBUF];
	char nprocs[16];
	/* no -d: it runs until the readings are taken, however long its start took */
	char *agent[] = {(char *)cfiprof,
			 "agent",
			 "--output-dir",
			 out,
			 "--interval",
			 "1",
			 "-F",
			 "99",
			 "--metrics-addr",
			 "127.0.0.1:0",
			 NULL};
	char *storm_argv[] = {storm, "mmap", nprocs, "30", NULL};
	double t0, t1, r0, r1, l0, l1, throttled, requests, reloads;
	bool timed_out = false;
	int rc, n, complete = 0;
	struct beside b;

	snprintf(out, sizeof(out), "%s/storm", tmp);
	snprintf(log, sizeof(log), "%s/storm.log", tmp);
	snprintf(sout, sizeof(sout), "%s/storm.out", tmp);
	snprintf(storm, sizeof(storm), "%s/hostile_storm", progs);
	snprintf(nprocs, sizeof(nprocs), "%d", STORM_PROCS);
	mkdir(out, 0755);
	start_beside(storm_argv, sout, agent, log, &b);
	/* past the start (every process loaded once), then three seconds of storm */
	sleep_s(2.0);
	t0 = mono_sec();
	r0 = metric(b.addr, "cfiprof_table_requests_total");
	l0 = metric(b.addr, "cfiprof_process_reloads_total");
	sleep_s(3.0);
	t1 = mono_sec();
	r1 = metric(b.addr, "cfiprof_table_requests_total");
	l1 = metric(b.addr, "cfiprof_process_reloads_total");
	throttled = metric(b.addr, "cfiprof_table_requests_throttled_total");
	requests = per_sec(r0, r1, t0, t1);
	reloads = per_sec(l0, l1, t0, t1);
	kill(b.agent, SIGTERM);
	/* its last interval written: the deadline only guards a hang */
	rc = exit_code(wait_timeout(b.agent, 120, &timed_out), timed_out);
	CHECK(rc == 0, "the agent exits %d%s", rc, timed_out ? " (killed)" : "");
	printf("storm: %d processes mapping code every 0.5 ms: %.0f table requests/s, %.0f "
	       "reloads/s, %.0f over the budget\n",
	       STORM_PROCS, requests, reloads, throttled);
	/* 100 ms slots: a 3 s window holds at most 31 slots' worth */
	CHECK(requests >= 0 && requests <= REQUEST_BOUND * 1.1,
	      "table requests reaching user space: %.0f/s (bound %.0f/s)", requests,
	      REQUEST_BOUND);
	CHECK(reloads >= 0 && reloads <= REQUEST_BOUND * 1.1, "reloads: %.0f/s (bound %.0f/s)",
	      reloads, REQUEST_BOUND);
	CHECK(throttled > 0, "requests over the budget counted: %.0f", throttled);
	/* as in shared_map_quotas: every sample after the first complete interval */
	n = traces_in_newest(out, 0, "chain", &complete);
	CHECK(n >= 0 && complete == n,
	      "the ordinary process: %d of %d samples complete after its first complete one "
	      "(-1: none complete)",
	      complete, n);
	stop_beside(&b, log);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* traces_of summed over the newest k interval files of dir. */
static int traces_in_newest(const char *dir, int k, const char *comm, int *complete)
{
	char *names[256], path[PATHBUF * 2];
	struct dirent *e;
	DIR *d = opendir(dir);
	int nr = 0, n = 0, c;
	bool found = false;

	*complete = 0;
	while (d && (e = readdir(d)) && nr < 256)
		if (!strncmp(e->d_name, "cfiprof-", 8))
			names[nr++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)nr, sizeof(names[0]), by_name);
	for (int i = k == 0 || nr - k < 0 ? 0 : nr - k; i < nr; i++) {
		int t;

		/* k 0: the intervals after the first one in which comm had a complete sample */
		if (k == 0 && !found) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			found = traces_of(path, comm, &c) > 0 && c > 0;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		t = traces_of(path, comm, &c);
		if (t < 0) {
			n = -1;
			break;
		}
		n += t;
		*complete += c;
	}
	for (int i = 0; i < nr; i++)
		free(names[i]);
	return k == 0 && !found ? -1 : n;
}

#define MANY_MAPS "2000"

/*
 * Issue 12, item 13: a load kept one file open per new mapping until its
 * symbols were read.  A process mapping 2,000 distinct files took every file
 * descriptor of an agent limited to 256: the files past the limit, and
 * whatever else the agent opened meanwhile, failed with EMFILE.  Now a load
 * holds at most a quarter of the limit; the process's own library (mapped
 * above all its copies, so reached last) unwinds and is named, an ordinary
 * process beside it too, and every interval is written.
 */
static void test_many_mappings(void)
{
	char out[PATHBUF], log[PATHBUF], dir[PATHBUF], sout[PATHBUF], storm[PATHBUF];
	char lib[PATHBUF], last[256];
	char cache[PATHBUF];
	char *agent[] = {"prlimit",	   "--nofile=256:256", (char *)cfiprof, "agent",
			 "--output-dir",   out,		       "--interval",	"1",
			 "-d",		   "8",		       "-F",		"99",
			 "--metrics-addr", "127.0.0.1:0",      "--table-cache", cache,
			 NULL};
	char *storm_argv[] = {storm, "maps", dir, MANY_MAPS, "30", NULL};
	double no_fd = -1, resumed = -1;
	bool timed_out = false;
	int rc, n, files, entries, complete = 0;
	struct beside b;

	snprintf(out, sizeof(out), "%s/maps-out", tmp);
	snprintf(log, sizeof(log), "%s/maps.log", tmp);
	snprintf(dir, sizeof(dir), "%s/maps", tmp);
	snprintf(sout, sizeof(sout), "%s/maps.out", tmp);
	snprintf(cache, sizeof(cache), "%s/maps-cache", tmp);
	snprintf(storm, sizeof(storm), "%s/hostile_storm", progs);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", progs);
	mkdir(out, 0755);
	mkdir(dir, 0755);
	CHECK(copy_file_n(lib, dir, atoi(MANY_MAPS)), "%s copies of %s in %s", MANY_MAPS, lib, dir);
	start_beside(storm_argv, sout, agent, log, &b);
	sleep_s(6.0);
	if (b.addr[0]) {
		no_fd = metric(b.addr, "cfiprof_mapped_files_no_fd_total");
		/* a slow machine's load runs out of time: its own library is reached by a later one
		 */
		resumed = metric(b.addr, "cfiprof_loads_resumed_total");
	}
	rc = exit_code(wait_timeout(b.agent, 20, &timed_out), timed_out);
	CHECK(rc == 0, "the agent under RLIMIT_NOFILE 256 exits %d%s", rc,
	      timed_out ? " (killed)" : "");
	files = count_profiles(out, last, sizeof(last));
	CHECK(files >= 6, "%d interval files in 8 s (want one a second)", files);
	CHECK(no_fd == 0, "cfiprof_mapped_files_no_fd_total = %.0f (want 0)", no_fd);
	/* the last three intervals: the load is long done by then */
	n = traces_in_newest(out, 3, "chain", &complete);
	CHECK(n > 0 && complete == n,
	      "the ordinary process in the last intervals: %d of %d samples complete", complete, n);
	n = traces_in_newest(out, 3, "hostile_storm", &complete);
	CHECK(n > 0 && complete == n,
	      "the process with %s mappings, in its own library: %d of %d samples complete",
	      MANY_MAPS, complete, n);
	CHECK(check_files(out, "dl_leaf").named > 0,
	      "its library's dl_leaf is named in no interval (its symbols were not read, %.0f "
	      "loads resumed)",
	      resumed);
	/* its copies build in microseconds: none is worth an entry in the table cache */
	entries = count_suffix(cache, ".cfitable");
	CHECK(entries < 50, "%d entries in the table cache after %s small objects", entries,
	      MANY_MAPS);
	printf("many mappings: %d intervals, the %s-mapping process %d of %d samples complete, "
	       "%.0f files without an fd, %d table cache entries, %.0f loads resumed\n",
	       files, MANY_MAPS, complete, n, no_fd, entries, resumed);
	stop_beside(&b, log);
}

int main(int argc, char **argv)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char asan[PATHBUF];
	static const char *const copied[] = {"chain", "hostile_fifo", "libdl_target.so"};
	static const char *const tools[] = {"setpriv", "go", NULL};

	harness_init(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nobody_setup("hostile", copied, sizeof(copied) / sizeof(copied[0]), tools))
		return HARNESS_DONE();
	RUN_TEST_AS("mapping_churn", test_mapping_churn(cfiprof, "churn"));
	snprintf(asan, sizeof(asan), "%s/asan/cfiprof", out);
	setenv("ASAN_OPTIONS", "abort_on_error=0:exitcode=99", 1);
	RUN_TEST_AS("mapping_churn_asan", {
		if (access(asan, X_OK))
			CHECK(0, "%s is not built (make build/asan/cfiprof; make test builds it)", asan);
		else
			test_mapping_churn(asan, "churn-asan");
	});
	unsetenv("ASAN_OPTIONS");
	RUN_TEST(test_fifo_over_library);
	RUN_TEST(test_shared_map_quotas);
	RUN_TEST(test_request_storm);
	RUN_TEST(test_many_mappings);
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
