// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent against local users, second round (issue 26, items 4-6), run as
 * its unit runs it (nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE,
 * CAP_DAC_READ_SEARCH):
 *  1. rename_storm: a thread renaming itself 1,000 times a second (a new
 *     comm, so a new service, every sample), a process named nginx in a
 *     cgroup of another name, and progs/chain, for a few 1 s intervals,
 *     pushing to a backend that is down.  The spool, read by file name (one
 *     file per interval and service), never holds more services of one
 *     interval than --max-services; no sample or push is named nginx, its
 *     samples carry its cgroup's name; chain's samples are in every interval
 *     file, each its known chain; nothing is dropped from the spool.
 *  2. metrics_squatted: 127.0.0.1:PORT held by another socket when the agent
 *     starts with --metrics-addr 127.0.0.1:PORT: it writes intervals with
 *     samples all the same; once the port is free, /metrics answers within
 *     a couple of retries.
 *  3. blocked_python_name: a python3.11 whose code object's name lies in a
 *     userfaultfd region that never resolves (as a FUSE file a user serves
 *     would block it): the agent's intervals keep coming, /metrics counts
 *     the stalled read, SIGTERM stops it within 10 s; record -a beside it
 *     stops on time.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/nobody.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF	     (PATH_MAX + 64)
#define INTERVAL_S   1.0
#define MAX_SERVICES 8
#define MAX_FILES    64
/*
 * SIGTERM's bound: test_hostile_suite holds the agent to 5 s beside its
 * attacks; a host whose other users run such suites at once (load average
 * 20-30 on 2 CPUs) took 6.5 s.  A blocked read never ends: 10 s tells the
 * two apart and stays a third of the unit's TimeoutStopSec=30.
 */
#define STOP_MAX_S 10.0
#define CGROOT	   "/sys/fs/cgroup/unified"
/*
 * Intervals until the agent has loaded chain's tables: it loads every process
 * it finds at its start, one after another, on a host whose other users keep
 * both CPUs busy (test_hostile_suite allows 5 beside its attacks)
 */
#define CATCH_UP_MAX 3

static pid_t procs[8];
static int nr_procs;

static pid_t keep(pid_t p)
{
	if (p > 0 && nr_procs < 8)
		procs[nr_procs++] = p;
	return p;
}

static void stop_procs(void)
{
	for (int i = 0; i < nr_procs; i++)
		kill(procs[i], SIGKILL);
	for (int i = 0; i < nr_procs; i++)
		wait_timeout(procs[i], 2, NULL);
	nr_procs = 0;
}

/* The agent as nobody with the unit's capabilities, args after "agent"; its log in log. */
static pid_t start_agent(char **args, const char *log)
{
	char *argv[32] = {ncfiprof, "agent"};
	int n = 2;

	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return spawn_as_nobody(argv, true, NULL, log);
}

/* Whether the agent logged its start within 15 s (test_agent's bound on a loaded host). */
static bool started(const char *log)
{
	for (int i = 0; i < 3; i++)
		if (wait_output(log, "agent started"))
			return true;
	return false;
}

/* The address after key ("metrics=") in the log once started; false if none. */
static bool log_addr(const char *log, const char *key, char *addr, size_t len)
{
	addr[0] = 0;
	for (int i = 0; i < 100 && !addr[0] && started(log); i++) {
		char *l = slurp(log), *m = strstr(l, key);

		if (m)
			sscanf(m + strlen(key), "%63[0-9.:]", addr);
		free(l);
		if (!addr[0])
			sleep_s(0.05);
	}
	(void)len;
	return addr[0] != 0;
}

/* SIGTERM, then the exit code; *secs: how long it took.  -1 when killed past STOP_MAX_S. */
static int stop_agent(pid_t agent, double *secs)
{
	bool timed_out = false;
	double t = mono_sec();
	int rc;

	kill(agent, SIGTERM);
	rc = exit_code(wait_timeout(agent, STOP_MAX_S, &timed_out), timed_out);
	*secs = mono_sec() - t;
	return timed_out ? -1 : rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Names in dir starting with prefix and ending in .pb.gz, sorted. */
static int list_files(const char *dir, const char *prefix, char names[][160], int max)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strstr(e->d_name, ".pb.gz") &&
		    n < max)
			snprintf(names[n++], 160, "%.159s", e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)n, 160, by_name);
	return n;
}

/* Decoded pprof at dir/name; false if unreadable. */
static bool read_profile(const char *dir, const char *name, struct decoded *d)
{
	char path[PATHBUF * 2];
	uint8_t *raw;
	size_t len;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	raw = gunzip_file(path, &len);
	memset(d, 0, sizeof(*d));
	ok = raw && !decode(raw, len, d);
	free(raw);
	return ok;
}

static const char *label(const struct dec_sample *s, const char *key)
{
	for (int i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->label_keys[i], key))
			return s->label_vals[i];
	return NULL;
}

struct chain_tally {
	int all, ok; /* samples; their known chain */
	int total;   /* every process's samples in the interval */
};

/* chain's samples in d, and those whose frames run main, a, b, c, d, leaf. */
static struct chain_tally chain_samples(const struct decoded *d)
{
	static const char *const exp[] = {"leaf", "d", "c", "b", "a", "main"};
	struct chain_tally c = {0};

	for (int i = 0; i < d->nr_samples; i++) {
		const struct dec_sample *s = &d->samples[i];
		int at = -1, k;

		c.total += (int)s->vals[0]; /* samples/count */
		if (!s->comm || strcmp(s->comm, "chain"))
			continue;
		c.all++;
		for (k = 0; k < s->nr_locs && at < 0; k++)
			if (!strcmp(loc_name(d, s->locs[k]), "leaf"))
				at = k;
		for (k = 0; at >= 0 && k < 6 && at + k < s->nr_locs; k++)
			if (!frame_is(loc_name(d, s->locs[at + k]), exp[k]))
				break;
		c.ok += at >= 0 && k == 6;
	}
	return c;
}

/* A scrape of /metrics at addr holding name, a few tries; NULL if none. */
static char *scrape(const char *addr, const char *name)
{
	char *body = NULL;

	for (int i = 0; i < 5 && !(body && strstr(body, name)); i++) {
		free(body);
		body = http_get(addr, "/metrics");
		if (!body || !strstr(body, name))
			sleep_s(0.2);
	}
	return body;
}

/* ---- 1: services an attacker names ---- */

/* The spool's files by interval: the most services one interval has, how many intervals. */
static int max_services_per_interval(char names[][160], int n, int *intervals, char *worst,
				     size_t len)
{
	int most = 0, run = 0;

	*intervals = 0;
	for (int i = 0; i < n; i++) {
		/* "FROM-UNTIL@SERVICE.pb.gz", sorted: an interval's files are adjacent */
		bool same = i && !strncmp(names[i], names[i - 1], 41);

		run = same ? run + 1 : 1;
		*intervals += !same;
		if (run > most) {
			most = run;
			snprintf(worst, len, "%.41s", names[i]);
		}
	}
	return most;
}

/*
 * The interval files after the first CATCH_UP_MAX (the agent loads what it
 * found at its start one process after another: until chain's turn its
 * samples are deferred, late or walked without its tables) and before the
 * last (cut short by SIGTERM): chain is in each, every sample its known
 * chain.
 */
static void check_intervals_chain(const char *out)
{
	static char names[MAX_FILES][160];
	int n = list_files(out, "cfiprof-", names, MAX_FILES);

	CHECK(n >= CATCH_UP_MAX + 2, "%d interval files (want >= %d)", n, CATCH_UP_MAX + 2);
	for (int i = CATCH_UP_MAX; i < n - 1; i++) {
		struct chain_tally c;
		struct decoded d;

		CHECK(read_profile(out, names[i], &d), "%s does not decode", names[i]);
		c = chain_samples(&d);
		decoded_free(&d);
		/*
		 * An interval the whole agent fell behind in (a busy host: its
		 * samples arrive late, in the next one) holds a handful of samples
		 * and says nothing of chain's: it must be in those holding at least
		 * the samples a program at 99 Hz takes in a fifth of it.
		 */
		CHECK((c.all > 0 || c.total < 20) && c.ok == c.all,
		      "%s: chain's samples %d, its known chain %d, all processes' %d (want all, > "
		      "0)",
		      names[i], c.all, c.ok, c.total);
	}
}

/* No sample anywhere is service nginx; the nginx process's are its cgroup's (or folded). */
static void check_nginx(const char *out, const char *cgname)
{
	static char names[MAX_FILES][160];
	int n = list_files(out, "cfiprof-", names, MAX_FILES), theirs = 0, impersonated = 0;

	for (int i = 0; i < n; i++) {
		struct decoded d;

		if (!read_profile(out, names[i], &d))
			continue;
		for (int k = 0; k < d.nr_samples; k++) {
			const char *svc = label(&d.samples[k], "service_name");

			impersonated += svc && !strcmp(svc, "nginx");
			if (d.samples[k].comm && !strcmp(d.samples[k].comm, "nginx") && svc &&
			    (!strcmp(svc, cgname) || !strcmp(svc, "other")))
				theirs++;
		}
		decoded_free(&d);
	}
	CHECK(impersonated == 0,
	      "%d samples of service_name nginx (want 0: the process named "
	      "itself, its cgroup is %s)",
	      impersonated, cgname);
	CHECK(theirs > 0, "no sample of comm nginx labelled service %s", cgname);
}

static void test_rename_storm(void)
{
	char out[PATHBUF], spool[PATHBUF], log[PATHBUF], rename_bin[PATHBUF], chain[PATHBUF];
	char cg[PATHBUF], cgname[64], addr[64], worst[64] = "", ready[PATHBUF], nready[PATHBUF];
	char maxs[16], *body, *l;
	static char names[4096][160];
	char *args[] = {
	    "--output-dir",   out,  "--spool-dir",    spool,	     "--push", "http://127.0.0.1:1",
	    "--push-timeout", "1",  "--interval",     "1",	     "-F",     "99",
	    "--max-services", maxs, "--metrics-addr", "127.0.0.1:0", NULL};
	char *storm_argv[] = {rename_bin, "60", NULL},
	     *nginx_argv[] = {rename_bin, "60", "nginx", NULL};
	char *chain_argv[] = {chain, "60", NULL};
	pid_t agent, nginx, chain_pid;
	double stop_s, folded;
	int n, most, intervals, rc;

	snprintf(out, sizeof(out), "%s/storm-out", tmp);
	snprintf(spool, sizeof(spool), "%s/storm-spool", tmp);
	snprintf(log, sizeof(log), "%s/storm.log", tmp);
	snprintf(ready, sizeof(ready), "%s/storm.ready", tmp);
	snprintf(nready, sizeof(nready), "%s/nginx.ready", tmp);
	snprintf(rename_bin, sizeof(rename_bin), "%s/hostile_rename", nprogs);
	snprintf(chain, sizeof(chain), "%s/chain", nprogs);
	snprintf(maxs, sizeof(maxs), "%d", MAX_SERVICES);
	snprintf(cgname, sizeof(cgname), "cfiprof-web-%d", (int)getpid());
	snprintf(cg, sizeof(cg), CGROOT "/%s", cgname);
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534) && !mkdir(spool, 0755) &&
		  !chown(spool, 65534, 65534),
	      "directories for nobody: %s", strerror(errno));
	CHECK(!mkdir(cg, 0755), "mkdir %s: %s", cg, strerror(errno));
	/* the storm stays in the test's cgroup, the root: its comm is all that names it */
	CHECK(keep(spawn_as_nobody(storm_argv, false, ready, NULL)) > 0 &&
		  wait_output(ready, "ready"),
	      "starting the renaming thread");
	nginx = keep(spawn_as_nobody(nginx_argv, false, nready, NULL));
	CHECK(nginx > 0 && wait_output(nready, "ready") &&
		  shell_ok("echo %d > %s/cgroup.procs", (int)nginx, cg),
	      "starting nginx in %s", cg);
	chain_pid = keep(spawn_as_nobody(chain_argv, false, NULL, NULL));
	CHECK(chain_pid > 0, "starting chain");
	/* beside the storm and a busy host it must still run (and be sampled) every interval */
	setpriority(PRIO_PROCESS, (id_t)chain_pid, -10);

	agent = start_agent(args, log);
	CHECK(log_addr(log, "metrics=", addr, sizeof(addr)), "the agent did not start");
	/* CATCH_UP_MAX intervals to load, 3 whole ones checked, the last cut short */
	sleep_s((CATCH_UP_MAX + 4) * INTERVAL_S + 0.5);
	body = addr[0] ? scrape(addr, "cfiprof_services_folded_total") : NULL;
	folded = body ? metric_value(body, "cfiprof_services_folded_total") : -1;
	rc = stop_agent(agent, &stop_s);
	stop_procs();
	rmdir(cg);
	CHECK(rc == 0, "SIGTERM: exit %d after %.1f s (want 0 within %.0f s)", rc, stop_s,
	      STOP_MAX_S);

	n = list_files(spool, "0", names, 4096);
	most = max_services_per_interval(names, n, &intervals, worst, sizeof(worst));
	printf("FIGURE: rename storm: %d spooled profiles over %d intervals, at most %d services "
	       "in one (bound %d), %.0f services folded\n",
	       n, intervals, most, MAX_SERVICES, folded);
	CHECK(intervals >= 3, "%d intervals spooled (want >= 3)", intervals);
	/* the bound is the count of files: one per service and interval, "other" included */
	CHECK(most <= MAX_SERVICES, "interval %s spooled %d services (want <= %d)", worst, most,
	      MAX_SERVICES);
	CHECK(folded > 0, "cfiprof_services_folded_total %.0f (want > 0: the storm was folded)",
	      folded);
	for (int i = 0; i < n; i++)
		CHECK(!strstr(names[i], "@nginx."), "spooled as service nginx: %s", names[i]);
	l = slurp(log);
	CHECK(strstr(l, "push_dropped=0"), "the spool dropped profiles (see %s)", log);
	free(l);
	check_intervals_chain(out);
	check_nginx(out, cgname);
	free(body);
	if (harness_failed)
		dump_tail("agent log", log);
}

/* ---- 2: the metrics port taken ---- */

static void test_metrics_squatted(void)
{
	char out[PATHBUF], log[PATHBUF], addr[64], chain[PATHBUF], *body = NULL, *l;
	static char names[MAX_FILES][160];
	char *args[] = {"--output-dir",	  out,	"--interval", "1", "-F", "99",
			"--metrics-addr", addr, NULL};
	char *chain_argv[] = {chain, "60", NULL};
	int port = 0, squat = listen_loopback(&port), n, with_samples = 0, rc;
	double t, freed_s = -1, stop_s;
	pid_t agent;

	snprintf(out, sizeof(out), "%s/squat-out", tmp);
	snprintf(log, sizeof(log), "%s/squat.log", tmp);
	snprintf(chain, sizeof(chain), "%s/chain", nprogs);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	CHECK(squat >= 0, "holding a loopback port");
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534), "%s: %s", out, strerror(errno));
	CHECK(keep(spawn_as_nobody(chain_argv, false, NULL, NULL)) > 0, "starting chain");
	agent = start_agent(args, log);
	/* from its start (BPF loaded, attached): 3 intervals with the port taken */
	CHECK(started(log), "the agent did not start");
	sleep_s(3.5 * INTERVAL_S);
	CHECK(waitpid(agent, NULL, WNOHANG) == 0, "the agent exited with its metrics port taken");
	n = list_files(out, "cfiprof-", names, MAX_FILES);
	for (int i = 0; i < n; i++) {
		struct decoded d;

		if (read_profile(out, names[i], &d))
			with_samples += d.nr_samples > 0;
		decoded_free(&d);
	}
	CHECK(with_samples >= 2, "%d interval files, %d with samples, port taken (want >= 2)", n,
	      with_samples);
	close(squat);
	/* it retries every interval (1 s): answering within 2 retries and a margin */
	t = mono_sec();
	while (mono_sec() - t < 3 * INTERVAL_S &&
	       !(body && strstr(body, "cfiprof_intervals_total"))) {
		free(body);
		body = http_get(addr, "/metrics");
		if (!body || !strstr(body, "cfiprof_intervals_total"))
			sleep_s(0.1);
		else
			freed_s = mono_sec() - t;
	}
	printf("FIGURE: metrics squatted: %d intervals with samples while taken; /metrics served "
	       "%.2f s after the port was freed\n",
	       with_samples, freed_s);
	CHECK(body && strstr(body, "cfiprof_intervals_total"),
	      "/metrics does not answer %.0f s after the port was freed", 3 * INTERVAL_S);
	CHECK(body && metric_value(body, "cfiprof_metrics_bind_failures_total") >= 1,
	      "cfiprof_metrics_bind_failures_total %.0f (want >= 1)",
	      body ? metric_value(body, "cfiprof_metrics_bind_failures_total") : -1);
	rc = stop_agent(agent, &stop_s);
	stop_procs();
	CHECK(rc == 0, "SIGTERM: exit %d after %.1f s", rc, stop_s);
	l = slurp(log);
	CHECK(strstr(l, "cannot serve metrics"), "the failure is not logged");
	free(l);
	free(body);
	if (harness_failed)
		dump_tail("agent log", log);
}

/* ---- 3: target memory that blocks ---- */

/* cfiprof_python_reads_stalled_total at addr once >= 1, within 15 s (the agent's loads first); -1
 * if not. */
static double wait_stalled(const char *addr)
{
	double v = -1, t0 = mono_sec();

	/* by the clock: a /metrics blocked behind the read takes 5 s an attempt */
	while (v < 1 && mono_sec() - t0 < 15) {
		char *body = http_get(addr, "/metrics");

		v = body ? metric_value(body, "cfiprof_python_reads_stalled_total") : -1;
		free(body);
		if (v < 1)
			sleep_s(0.2);
	}
	return v;
}

static void test_blocked_python_name(void)
{
	char out[PATHBUF], log[PATHBUF], ready[PATHBUF], script[PATHBUF], rec[PATHBUF];
	char addr[64];
	static char names[MAX_FILES][160];
	char *args[] = {"--output-dir",	  out,		 "--interval", "1", "-F", "99",
			"--metrics-addr", "127.0.0.1:0", NULL};
	/* as root: only CAP_SYS_PTRACE makes a userfaultfd that blocks kernel reads */
	char *py_argv[] = {"/usr/bin/python3.11", script, "120", NULL};
	char *rec_argv[] = {cfiprof, "record", "-a", "-d", "2", "-o", rec, NULL};
	double t0, window, stop_s, stalled, rec_s;
	pid_t agent;
	int before, n, rc;

	snprintf(out, sizeof(out), "%s/py-out", tmp);
	snprintf(log, sizeof(log), "%s/py.log", tmp);
	snprintf(ready, sizeof(ready), "%s/py.ready", tmp);
	snprintf(rec, sizeof(rec), "%s/py-record.folded", tmp);
	if (!realpath("tests/progs/python/blocked_name.py", script))
		snprintf(script, sizeof(script), "tests/progs/python/blocked_name.py");
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534), "%s: %s", out, strerror(errno));
	CHECK(keep(spawn(py_argv, ready, NULL)) > 0 && wait_output(ready, "ready"),
	      "python3.11 blocked_name.py did not start: %s", slurp(ready));
	agent = start_agent(args, log);
	CHECK(log_addr(log, "metrics=", addr, sizeof(addr)), "the agent did not start");
	/* the read must have been tried and found blocked, or nothing is tested */
	stalled = addr[0] ? wait_stalled(addr) : -1;
	CHECK(stalled >= 1, "cfiprof_python_reads_stalled_total %.0f (want >= 1)", stalled);
	/* from here on the read is blocked: intervals must keep coming */
	before = list_files(out, "cfiprof-", names, MAX_FILES);
	t0 = mono_sec();
	/* record beside it: its stop (drain, then names) must not wait on the read either */
	rc = run(rec_argv, NULL, NULL, 2 + STOP_MAX_S);
	rec_s = mono_sec() - t0;
	CHECK(rc == 0,
	      "record -a -d 2 beside the blocked read: exit %d after %.1f s (want 0 "
	      "within %.0f s: its start, 2 s, its stop)",
	      rc, rec_s, 2 + STOP_MAX_S);
	sleep_s(4 * INTERVAL_S - rec_s > 0 ? 4 * INTERVAL_S - rec_s : 0);
	window = mono_sec() - t0;
	n = list_files(out, "cfiprof-", names, MAX_FILES) - before;
	rc = stop_agent(agent, &stop_s);
	stop_procs();
	printf("FIGURE: blocked python name: %d interval files in the %.1f s after the read "
	       "stalled, stopped %.2f s after SIGTERM, record -a -d 2 took %.2f s\n",
	       n, window, stop_s, rec_s);
	/*
	 * Intervals keep coming: half of those that fit at least (an interval on
	 * a busy host may take two; a consumer or interval blocked behind the read
	 * makes none).
	 */
	CHECK(n >= (int)(window / INTERVAL_S) / 2 && n >= 2,
	      "%d interval files in the %.1f s the read was blocked (want >= %d)", n, window,
	      (int)(window / INTERVAL_S) / 2 > 2 ? (int)(window / INTERVAL_S) / 2 : 2);
	CHECK(rc == 0, "SIGTERM: exit %d after %.1f s (want 0 within %.0f s)", rc, stop_s,
	      STOP_MAX_S);
	if (harness_failed)
		dump_tail("agent log", log);
}

int main(int argc, char **argv)
{
	static const char *const copied[] = {"chain", "hostile_rename"};
	static const char *const tools[] = {"setpriv", "/usr/bin/python3.11", NULL};

	harness_init(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nobody_setup("hagent", copied, sizeof(copied) / sizeof(copied[0]), tools))
		return HARNESS_DONE();
	RUN_TEST(test_rename_storm);
	RUN_TEST(test_metrics_squatted);
	RUN_TEST(test_blocked_python_name);
	stop_procs();
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
