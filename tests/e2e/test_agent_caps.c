// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof agent in a cgroup of the test's own (--cgroup), end to end:
 *  1. churn: 2,000 short processes; tracked processes, RSS and table bytes
 *     return to their baseline;
 *  2. --max-processes and --max-table-bytes unload the least recently sampled
 *     processes (counted) and the busy program stays completely unwound;
 *  3. 300 processes living ~5 ms each have all their samples in the profiles.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: beside others (its agents sample their own cgroup only) */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/pprof_read.h"
#include "tests/lib/agent_run.h"
#include "tests/lib/test_cgroup.h"

#define PATHBUF (PATH_MAX + 256)


#define PATHBUF (PATH_MAX + 256)


/* ---- what the interval files hold ---- */

/* Counts of profile_chain_samples. */
struct chain_counts {
	uint64_t all, chain;
};

/* One -traces block: complete (no [incomplete: ...] frame) with leaf;d;c;b;a;main? */
static void chain_block(const struct traces_block *b, void *ctx)
{
	static const char *const want[] = {"leaf", "d", "c", "b", "a", "main"};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	struct chain_counts *c = ctx;
	bool incomplete = false;
	size_t matched = 0;

	for (int i = 0; i < b->nr_frames; i++) {
		const char *p = b->frame[i];

		if (!strncmp(p, "[incomplete", 11))
			incomplete = true;
		/* the chain, consecutive, leaf first */
		if (matched < nwant && !strcmp(p, want[matched]))
			matched++;
		else if (matched < nwant)
			matched = !strcmp(p, want[0]);
	}
	c->all += b->count;
	if (!incomplete && matched == nwant)
		c->chain += b->count;
}

/*
 * From `go tool pprof -traces -sample_index=samples` of each interval file
 * names[from..n) in dir: every sample, and those whose stack is complete with
 * chain's leaf;d;c;b;a;main (leaf first, no [incomplete: ...] frame).  False
 * if pprof fails on one.
 */
static bool profile_chain_samples(const char *dir, char **names, int from, int n, uint64_t *all,
				  uint64_t *chain)
{
	struct chain_counts c = {0};
	char path[PATHBUF * 2];
	int f, status;

	*all = *chain = 0;
	for (f = from; f < n; f++) {
		char *out;

		snprintf(path, sizeof(path), "%s/%s", dir, names[f]);
		out = run_pprof("-traces -sample_index=samples", path, &status);
		if (status || !out) {
			fprintf(stderr, "  go tool pprof -traces %s: exit %d\n%.1000s\n", path,
				status, out ? out : "");
			free(out);
			return false;
		}
		traces_each(out, chain_block, &c);
		free(out);
	}
	*all = c.all;
	*chain = c.chain;
	return true;
}

/* Resident set of a process from /proc/PID/status, in bytes; -1 if unreadable. */
static double proc_rss_bytes(pid_t pid)
{
	char path[64], *s, *p;
	double kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = slurp(path);
	p = s ? strstr(s, "\nVmRSS:") : NULL;
	if (p)
		kb = strtod(p + 8, NULL);
	free(s);
	return kb < 0 ? -1 : kb * 1024;
}

/* Samples in the agent's interval files in dir (sum of value[0]); false if one does not decode. */
static bool dir_profile_samples(const char *dir, uint64_t *samples)
{
	char **names, path[PATHBUF * 2];
	int n = list_dir(dir, "cfiprof-", &names), i;
	bool ok = n > 0;

	*samples = 0;
	for (i = 0; i < n; i++) {
		struct pprof_info pi;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		pi = decode_file(path);
		ok = ok && pi.ok;
		*samples += pi.total;
	}
	free_list(names, n);
	return ok;
}

struct gauges {
	double rss, heap, table_bytes, processes, lost, queue_dropped, loads;
};

static bool read_gauges(const char *addr, struct gauges *g)
{
	char *r = http_get(addr, "/metrics");

	if (!r)
		return false;
	g->rss = metric_value(r, "process_resident_memory_bytes");
	g->heap = metric_value(r, "cfiprof_heap_bytes");
	g->table_bytes = metric_value(r, "cfiprof_table_bytes");
	g->processes = metric_value(r, "cfiprof_processes_tracked");
	g->lost = metric_value(r, "cfiprof_samples_lost_total") +
		  metric_value(r, "cfiprof_events_lost_total");
	g->queue_dropped = metric_value(r, "cfiprof_tracker_queue_dropped_total");
	g->loads = metric_value(r, "cfiprof_process_loads_total");
	free(r);
	return g->rss > 0 && g->table_bytes >= 0 && g->processes >= 0;
}

struct walk_counts {
	double samples, complete, evicted_procs, evicted_tables, table_bytes, processes, loads;
};

static bool read_walks(const char *addr, struct walk_counts *w)
{
	char *r = http_get(addr, "/metrics");

	if (!r)
		return false;
	w->samples = metric_value(r, "cfiprof_samples_total");
	w->complete = metric_value(r, "cfiprof_walks_total{reason=\"complete\"}");
	w->evicted_procs = metric_value(r, "cfiprof_evictions_total{cap=\"max_processes\"}");
	w->evicted_tables = metric_value(r, "cfiprof_evictions_total{cap=\"table_bytes\"}");
	w->table_bytes = metric_value(r, "cfiprof_table_bytes");
	w->processes = metric_value(r, "cfiprof_processes_tracked");
	w->loads = metric_value(r, "cfiprof_process_loads_total");
	free(r);
	return w->samples >= 0 && w->complete >= 0 && w->evicted_procs >= 0 &&
	       w->evicted_tables >= 0;
}

/* Complete walks among the samples between two readings. */
static double complete_ratio(const struct walk_counts *a, const struct walk_counts *b)
{
	double n = b->samples - a->samples;

	return n > 0 ? (b->complete - a->complete) / n : 0;
}

#define WARM_PROCS  400
#define CHURN_PROCS 1600

/*
 * n short processes in the test's cgroup, in batches of 40 living 0.1 s
 * each.  The batch starting at process mid lives until the gauges at addr
 * show more than want processes tracked (read into *at_mid), 10 s at most:
 * how soon the agent's loader gets to their execs depends on the machine.
 * Returns how many ran.
 */
static int churn(int n, int mid, const char *addr, struct gauges *at_mid, double want)
{
	int i, k, ran = 0;

	for (i = 0; i < n; i += 40) {
		pid_t batch[40];

		for (k = 0; k < 40; k++) {
			char *sl[] = {"/bin/sleep", i == mid ? "10" : "0.1", NULL};

			batch[k] = spawn_in_cgroup(sl);
		}
		if (i == mid) {
			double t0 = mono_sec();

			while (read_gauges(addr, at_mid) && at_mid->processes <= want &&
			       mono_sec() - t0 < 9)
				sleep_s(0.1);
			/* killed, not waited for: the run goes on (they count as ran) */
			for (k = 0; k < 40; k++)
				if (batch[k] > 0)
					kill(batch[k], SIGKILL);
		}
		for (k = 0; k < 40; k++)
			ran += batch[k] > 0 && waitpid(batch[k], NULL, 0) == batch[k];
	}
	return ran;
}

/*
 * Churn: 1,600 short processes, after 400 more (each exec is loaded by the agent) must not
 * leave memory behind: exited processes are forgotten after their interval
 * and their tables unloaded.  In the test's cgroup, beside an idle python3,
 * so that nothing else on the host moves the figures.
 */
static void test_churn(void)
{
	char log[PATHBUF], addr[64], dir[PATHBUF];
	/* idle tables go one interval after their last process (30 s by default) */
	char *argv[] = {"--cgroup",
			cg_dir,
			"--interval",
			"1",
			"--duration",
			"40",
			"--output-dir",
			dir,
			"--metrics-addr",
			"127.0.0.1:0",
			"--table-idle-ttl",
			"1",
			NULL};
	char *resident[] = {"python3", "-c", "import time; time.sleep(60)", NULL};
	struct gauges before = {0}, peak = {0}, after = {0};
	double rss_before, rss_after;
	int procs;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/churn.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/churn", tmpdir);
	if (spawn_in_cgroup(resident) <= 0)
		CHECK(0, "churn: cannot start python3");
	sleep_s(0.3);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "churn");
	/*
	 * A first, smaller churn: what the agent keeps of any burst of loads
	 * (malloc's arenas for its threads, their free lists) is then in the
	 * baseline; what the second leaves beyond it grows with the processes.
	 * Two intervals after it, its processes are forgotten.
	 */
	procs = churn(WARM_PROCS, -1, NULL, NULL, 0);
	sleep_s(4);
	CHECK(read_gauges(addr, &before), "churn: no baseline gauges");
	rss_before = proc_rss_bytes(pid);
	procs += churn(CHURN_PROCS, CHURN_PROCS / 2, addr, &peak, before.processes + 20);
	if (procs != WARM_PROCS + CHURN_PROCS)
		CHECK(0, "churn: %d of %d processes ran", procs, WARM_PROCS + CHURN_PROCS);
	sleep_s(4); /* two intervals: exited processes are dropped at the second */
	CHECK(read_gauges(addr, &after), "churn: no gauges after");
	rss_after = proc_rss_bytes(pid);
	printf(
	    "churn: %.0f loads; processes tracked %.0f -> %.0f mid-churn -> %.0f after; rss %.1f "
	    "-> %.1f -> %.1f MB; heap %.2f -> %.2f -> %.2f MB; table bytes %.0f -> %.0f\n",
	    after.loads - before.loads, before.processes, peak.processes, after.processes,
	    before.rss / 1e6, peak.rss / 1e6, after.rss / 1e6, before.heap / 1e6, peak.heap / 1e6,
	    after.heap / 1e6, before.table_bytes, after.table_bytes);
	CHECK(peak.processes > before.processes + 20,
	      "churn: the short processes were never tracked (%.0f mid-churn): no churn tested",
	      peak.processes);
	CHECK(after.lost == before.lost && after.queue_dropped == before.queue_dropped,
	      "churn: samples or events lost (%.0f -> %.0f), loads dropped (%.0f -> %.0f)",
	      before.lost, after.lost, before.queue_dropped, after.queue_dropped);
	CHECK(after.loads - before.loads >= CHURN_PROCS / 2,
	      "churn: %.0f process loads for %d processes: the churn was not followed",
	      after.loads - before.loads, CHURN_PROCS);
	CHECK(peak.table_bytes > before.table_bytes,
	      "churn: /bin/sleep's tables were never loaded (%.0f bytes mid-churn, baseline %.0f)",
	      peak.table_bytes, before.table_bytes);
	CHECK(after.processes == before.processes, "churn: %.0f processes tracked (baseline %.0f)",
	      after.processes, before.processes);
	/* sleep's rows and pages go; the rules it added stay in the shared dictionary */
	CHECK(after.table_bytes <= before.table_bytes + 8192,
	      "churn: table bytes %.0f (baseline %.0f)", after.table_bytes, before.table_bytes);
	/*
	 * The heap in use must come back: a leak of 512 bytes a process (a
	 * struct proc, a path) shows as 0.8 MB over the churn.  Bounded caches
	 * were filled by the first churn.
	 */
	CHECK(after.heap > 0 && after.heap <= before.heap + CHURN_PROCS * 512.0,
	      "churn: heap in use %.2f MB (baseline %.2f MB, %.0f bytes a process more)",
	      after.heap / 1e6, before.heap / 1e6, (after.heap - before.heap) / CHURN_PROCS);
	/*
	 * The resident size beside it, the kernel's own figure: malloc's arenas
	 * keep freed memory as they like (trimmed at each interval, still a few
	 * MB either way), so it can only tell a leak of 10 KB a process or more.
	 */
	CHECK(after.rss <= before.rss + CHURN_PROCS * 10e3, "churn: RSS %.1f MB (baseline %.1f MB)",
	      after.rss / 1e6, before.rss / 1e6);
	CHECK(rss_before > 0 && rss_after > 0 && rss_after <= rss_before + CHURN_PROCS * 10e3,
	      "churn: /proc/%d/status VmRSS %.1f MB (baseline %.1f MB)", (int)pid, rss_after / 1e6,
	      rss_before / 1e6);
	CHECK(after.rss >= rss_after * 0.8 - 1e6 && after.rss <= rss_after * 1.25 + 1e6,
	      "churn: process_resident_memory_bytes %.1f MB, VmRSS %.1f MB", after.rss / 1e6,
	      rss_after / 1e6);
	kill(pid, SIGTERM);
	agent_exited_cleanly(pid, 20, log);
	cgroup_kill_all();
}

static int count_files(const char *dir)
{
	char **names;
	int n = list_dir(dir, "cfiprof-", &names);

	free_list(names, n);
	return n;
}

/*
 * Waits a second, and then until pid has had cpu_s more seconds of CPU time
 * since the call (20 s at most): the profiles written from here on then
 * hold about cpu_s x 99 of its samples, however small its share of a loaded
 * machine (check_profile_complete wants 20; the second alone gave 10 beside
 * a stress run and a make test).
 */
static void wait_cpu(pid_t pid, double cpu_s)
{
	double from = proc_cpu_s(pid), t0 = mono_sec();

	sleep_s(1);
	while (proc_cpu_s(pid) < from + cpu_s && mono_sec() < t0 + 20)
		sleep_s(0.1);
}

/*
 * The agent's samples of the busy program between two readings, against the
 * CPU time the program had between them (/proc/PID/stat, the kernel's
 * account): cpu-clock at 99 Hz takes about 99 samples a CPU second of it,
 * whatever share of the machine it got.  Half is the bound: the tick-based
 * CPU time and the samples' boundaries differ by a few ticks, not by half;
 * an agent that stopped sampling the program has ~0.
 */
static void check_busy_samples(const char *what, double samples, double cpu0, double cpu1)
{
	double expected = (cpu1 - cpu0) * 99;

	CHECK(cpu0 >= 0 && cpu1 >= 0 && samples >= 10 && samples >= expected / 2,
	      "%s: %.0f samples of the busy program for %.2f s of its CPU time (want >= %.0f, and "
	      "10)",
	      what, samples, cpu1 - cpu0, expected / 2);
}

/*
 * The busy program's completeness from the profiles themselves (the interval
 * files from index from on), not from the agent's walk counters: in the
 * test's cgroup only chain runs, so >= 95% of all samples must be its
 * complete main;a;b;c;d;leaf.
 */
static void check_profile_complete(const char *dir, int from, const char *what)
{
	uint64_t all, chain;
	char **names;
	int n = list_dir(dir, "cfiprof-", &names);
	bool ok = n > from && profile_chain_samples(dir, names, from, n, &all, &chain);

	printf("%s: profiles %d..%d: %" PRIu64 " of %" PRIu64 " samples complete main;a;b;c;d;leaf\n",
	       what, from, n, ok ? chain : 0, ok ? all : 0);
	/*
	 * 20 samples at least, however few the busy program's CPU share gave: at
	 * the >= 99.5% completeness of a working run, 95% of 20 fails with a
	 * probability under 1e-3; a program that lost its tables (~0%) fails it
	 * at any count.
	 */
	CHECK(ok && all >= 20 && chain * 100 >= all * 95,
	      "%s: the profiles after the cap hold %" PRIu64 " complete chain samples of %" PRIu64
	      " (%d files from %d; want >= 95%% of >= 20)",
	      what, ok ? chain : 0, ok ? all : 0, n, from);
	free_list(names, n);
}

/*
 * --max-processes 2 with five idle processes and one busy one: the idle ones
 * (least recently sampled) are unloaded, counted, and the busy one keeps
 * being unwound completely.
 */
static void test_cap_processes(void)
{
	char log[PATHBUF], addr[64], dir[PATHBUF];
	char *argv[] = {"--cgroup",	    cg_dir,	   "--max-processes", "2",
			"--interval",	    "1",	   "--duration",      "30",
			"--freq",	    "99",	   "--output-dir",    dir,
			"--metrics-addr",   "127.0.0.1:0", NULL};
	char *idle[] = {"/bin/sleep", "30", NULL}, *busy[] = {chain_bin, "30", NULL};
	struct walk_counts a = {0}, b = {0};
	double cpu_a, cpu_b;
	pid_t pid, busy_pid;
	int i, files_from;

	snprintf(log, sizeof(log), "%s/capprocs.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/capprocs", tmpdir);
	for (i = 0; i < 5; i++)
		if (spawn_in_cgroup(idle) <= 0)
			CHECK(0, "cannot start sleep");
	busy_pid = spawn_in_cgroup(busy);
	if (busy_pid <= 0)
		CHECK(0, "cannot start %s", chain_bin);
	sleep_s(0.2);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "cap");
	sleep_s(2);
	CHECK(read_walks(addr, &a), "cap: no metrics");
	cpu_a = proc_cpu_s(busy_pid);
	sleep_s(1);
	/* the files of the intervals that end from here on start after a */
	files_from = count_files(dir);
	wait_cpu(busy_pid, 0.4);
	CHECK(read_walks(addr, &b), "cap: no metrics");
	cpu_b = proc_cpu_s(busy_pid);
	printf("cap processes: %.0f evicted, %.0f tracked, busy program %.1f%% complete\n",
	       b.evicted_procs, b.processes, 100 * complete_ratio(&a, &b));
	CHECK(b.evicted_procs >= 4, "cap: %.0f processes evicted (6 with --max-processes 2)",
	      b.evicted_procs);
	CHECK(b.processes <= 2, "cap: %.0f processes tracked (--max-processes 2)", b.processes);
	check_busy_samples("cap", b.samples - a.samples, cpu_a, cpu_b);
	CHECK(complete_ratio(&a, &b) >= 0.95,
	      "cap: the busy program lost its tables: %.1f%% complete", 100 * complete_ratio(&a, &b));
	kill(pid, SIGTERM);
	agent_exited_cleanly(pid, 20, log);
	cgroup_kill_all();
	check_profile_complete(dir, files_from, "cap");
}

/*
 * The gauges at addr once the agent has loaded a process (the idle python3,
 * the cgroup's only one): how long that takes depends on the machine (past
 * a second with every CPU taken, make test's parallel suites); 30 s at most.
 * False: no metrics, or nothing loaded by then.
 */
static bool read_loaded(const char *addr, struct walk_counts *w)
{
	for (int i = 0; i < 150; i++) {
		if (!read_walks(addr, w))
			return false;
		if (w->loads >= 1)
			return true;
		sleep_s(0.2);
	}
	return false;
}

/* The agent's table bytes with only what is in the cgroup now loaded. */
static double measure_table_bytes(void)
{
	char log[PATHBUF], addr[64], dir[PATHBUF];
	char *argv[] = {"--cgroup",	cg_dir,	  "--interval",	  "1",		 "--duration",
			"20",		"--output-dir", dir, "--metrics-addr", "127.0.0.1:0",
			NULL};
	struct walk_counts w = {0};
	pid_t pid;

	snprintf(log, sizeof(log), "%s/measure.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/measure", tmpdir);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "measure");
	CHECK(read_loaded(addr, &w), "measure: no metrics, or python3 not loaded in 30 s");
	kill(pid, SIGTERM);
	agent_exited_cleanly(pid, 20, log);
	return w.table_bytes;
}

/*
 * --max-table-bytes exactly what an idle python3 needs: when a busy program
 * starts, the idle process's tables are unloaded (counted) to make room, the
 * bound holds, and the busy program is unwound completely.
 */
static void test_cap_table_bytes(void)
{
	char log[PATHBUF], addr[64], dir[PATHBUF], cap[32];
	char *argv[] = {"--cgroup",	     cg_dir,	    "--max-table-bytes", cap,
			"--interval",	     "1",	    "--duration",	 "30",
			"--freq",	     "99",	    "--output-dir",	 dir,
			"--metrics-addr",    "127.0.0.1:0", NULL};
	char ready[PATHBUF], code[PATHBUF + 64];
	char *idle[] = {"python3", "-c", code, NULL};
	char *busy[] = {chain_bin, "30", NULL};
	struct walk_counts a = {0}, b = {0}, c = {0};
	double bytes, cpu_b, cpu_c;
	pid_t pid, busy_pid;
	int files_from;

	/* its mappings all there before either agent reads them: python3 runs its own code */
	snprintf(ready, sizeof(ready), "%s/idle.ready", tmpdir);
	snprintf(code, sizeof(code), "import time; open('%s', 'w').close(); time.sleep(30)", ready);
	if (spawn_in_cgroup(idle) <= 0)
		CHECK(0, "cannot start python3");
	for (int i = 0; i < 300 && access(ready, F_OK); i++)
		sleep_s(0.1);
	CHECK(access(ready, F_OK) == 0, "python3 not started in 30 s");
	bytes = measure_table_bytes();
	CHECK(bytes > 100000, "python3's tables: %.0f bytes", bytes);
	snprintf(cap, sizeof(cap), "%.0f", bytes);
	snprintf(log, sizeof(log), "%s/capbytes.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/capbytes", tmpdir);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "cap bytes");
	CHECK(read_loaded(addr, &a), "cap bytes: no metrics, or python3 not loaded in 30 s");
	CHECK(a.evicted_tables == 0 && a.table_bytes == bytes,
	      "cap bytes: idle python3 alone: %.0f evictions, %.0f bytes (cap %.0f)",
	      a.evicted_tables, a.table_bytes, bytes);
	busy_pid = spawn_in_cgroup(busy);
	if (busy_pid <= 0)
		CHECK(0, "cannot start %s", chain_bin);
	sleep_s(1.5);
	CHECK(read_walks(addr, &b), "cap bytes: no metrics");
	cpu_b = proc_cpu_s(busy_pid);
	sleep_s(1);
	files_from = count_files(dir);
	wait_cpu(busy_pid, 0.4);
	CHECK(read_walks(addr, &c), "cap bytes: no metrics");
	cpu_c = proc_cpu_s(busy_pid);
	printf("cap table bytes %.0f: %.0f evicted, %.0f bytes in use, busy program %.1f%% "
	       "complete\n",
	       bytes, c.evicted_tables, c.table_bytes, 100 * complete_ratio(&b, &c));
	CHECK(c.evicted_tables >= 1, "cap bytes: the idle process was not evicted");
	CHECK(c.table_bytes <= bytes, "cap bytes: %.0f bytes in use (cap %.0f)", c.table_bytes,
	      bytes);
	check_busy_samples("cap bytes", c.samples - b.samples, cpu_b, cpu_c);
	CHECK(complete_ratio(&b, &c) >= 0.95, "cap bytes: busy program %.1f%% complete",
	      100 * complete_ratio(&b, &c));
	kill(pid, SIGTERM);
	agent_exited_cleanly(pid, 20, log);
	cgroup_kill_all();
	check_profile_complete(dir, files_from, "cap bytes");
}

/*
 * Processes living a few milliseconds, one after another: every sample taken
 * in them is in the profiles (as a stack, or as tables-pending when the
 * loader had not caught up), about CPU time x frequency of them.
 */
static void test_short_lived(void)
{
	char log[PATHBUF], addr[64], dir[PATHBUF];
	char *argv[] = {"--cgroup",	    cg_dir,	   "--freq",	   "499",
			"--interval",	    "1",	   "--duration",   "60",
			"--output-dir",	    dir,	   "--metrics-addr", "127.0.0.1:0",
			NULL};
	char *brief[] = {chain_bin, "0.005", NULL};
	uint64_t profile_samples, bpf, lost, malformed, in_files = 0;
	double cpu = 0, t0, wall, expected, builds;
	bool files_ok;
	char *r;
	pid_t pid;
	int i, ran = 0;

	snprintf(log, sizeof(log), "%s/short.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/short", tmpdir);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "short");
	sleep_s(0.5);
	t0 = mono_sec();
	for (i = 0; i < 300; i++) {
		struct rusage ru;
		int st;
		pid_t c = spawn_in_cgroup(brief);

		if (c > 0 && wait4(c, &st, 0, &ru) == c && WIFEXITED(st) && !WEXITSTATUS(st)) {
			ran++;
			cpu += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		}
	}
	wall = (mono_sec() - t0) / ran;
	sleep_s(1.5);
	r = http_get(addr, "/metrics");
	CHECK(r != NULL, "short: no metrics");
	kill(pid, SIGTERM);
	if (!agent_exited_cleanly(pid, 20, log)) {
		free(r);
		return;
	}
	profile_samples = log_u64(log, "agent stopped", "profile_samples");
	bpf = log_u64(log, "agent stopped", "bpf_samples");
	lost = log_u64(log, "agent stopped", "lost");
	malformed = log_u64(log, "agent stopped", "malformed");
	files_ok = dir_profile_samples(dir, &in_files);
	expected = cpu * 499;
	/* every object a process maps is built once, then shared or reused (not 300 times) */
	builds = r ? metric_value(r, "cfiprof_tables_loaded") +
			 metric_value(r, "cfiprof_tables_unloaded_total")
		   : -1;
	printf("short: %d processes of %.1f ms (%.2f ms CPU each): %" PRIu64
	       " samples in the profiles for %.0f expected; walks complete %.0f, tables pending "
	       "%.0f; %.0f table builds\n",
	       ran, wall * 1e3, cpu / (ran ? ran : 1) * 1e3, profile_samples, expected,
	       r ? metric_value(r, "cfiprof_walks_total{reason=\"complete\"}") : -1,
	       r ? metric_value(r, "cfiprof_walks_total{reason=\"tables-pending\"}") : -1, builds);
	free(r);
	/* one after another, each finds the last one's tables loaded: chain, libc, ld.so, vdso */
	CHECK(builds >= 3 && builds <= 12, "short: %.0f table builds for 300 processes", builds);
	if (ran != 300)
		CHECK(0, "short: %d of 300 processes ran", ran);
	CHECK(profile_samples + lost + malformed == bpf,
	      "short: profiles %" PRIu64 " + lost %" PRIu64 " != BPF %" PRIu64, profile_samples,
	      lost, bpf);
	CHECK(files_ok && in_files == profile_samples,
	      "short: the interval files hold %" PRIu64 " samples%s, the log says %" PRIu64,
	      in_files, files_ok ? "" : " (one does not decode)", profile_samples);
	/* judged on the files: what a user of the profiles gets */
	CHECK(in_files >= 0.6 * expected && in_files <= 1.5 * expected + 20,
	      "short: %" PRIu64 " samples in the profiles for %.0f CPU-seconds x 499 Hz = %.0f",
	      in_files, cpu, expected);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!agent_suite_setup("agent-caps"))
		return HARNESS_DONE();
	if (cgroup_make()) {
		atexit(cgroup_remove);
		RUN_TEST(test_churn);
		RUN_TEST(test_cap_processes);
		RUN_TEST(test_cap_table_bytes);
		RUN_TEST(test_short_lived);
		cgroup_remove();
	} else {
		CHECK(0, "cannot make a cgroup v2 directory for the cap and short-process tests");
	}
	e2e_finish();
	return HARNESS_DONE();
}
