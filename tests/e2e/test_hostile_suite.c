// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The hostile-process suite (issue 12, "Done when"): the agent runs as its
 * systemd unit does (nobody with CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE,
 * CAP_DAC_READ_SEARCH) beside every attack of the table below at once, and
 * an ordinary program (progs/chain, as nobody).  Asserted:
 *   - an interval file every interval, counted against the elapsed time;
 *   - in each, the ordinary program's samples are all complete and its
 *     known chain (chain_is), none incomplete;
 *   - every attack's /metrics counters are > 0 in the last scrape (scraped
 *     again past the suite's time until they are, for a while), and its
 *     own check (if any) holds on what it noted in every interval: an
 *     attack whose refusals share one counter is judged by the frames of
 *     the process each refusal protects, which must have samples;
 *   - /metrics still answers, and SIGTERM stops the agent within 5 s;
 *   - the agent's peak RSS (VmHWM) and CPU (utime + stime) over the suite
 *     stay under generous bounds, printed as a FIGURE: line.
 * A new attack is one row of `attacks`: how to start it (before the agent, or
 * once its /metrics address is known) and the counters it must raise.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/nobody.h"

#define PATHBUF	     (PATH_MAX + 64)
#define SUITE_S	     12.0  /* the agent's run beside the attacks */
#define INTERVAL_S   1.0   /* --interval */
#define RSS_MAX_MB   300.0 /* generous: a regression, not noise, fails */
#define CPU_MAX_PCT  50.0  /* of one core, over the suite */
#define MAX_PROCS    32
#define CATCH_UP_MAX 5 /* intervals until the agent has loaded every process it found */
/*
 * Past SUITE_S, how long the counters of every attack may still take: the
 * agent loads the attackers one after another, each up to its load time
 * budget, and on a host busier than make test-stress's (a refusal once came
 * a moment after the last scrape) the last ones come later.  A refusal that
 * is never counted still fails; the agent's -d 60 and the program's 60 s
 * outlast it.
 */
#define COUNTED_MAX_S 30.0

static pid_t procs[MAX_PROCS];
static int nr_procs;
static char maps[4][64]; /* planted perf maps, removed at the end */
static int nr_maps;

/* argv as nobody with the unit's capabilities (or none); those without are killed at the end. */
static pid_t spawn_nobody(char **argv, bool caps, const char *out, const char *err)
{
	pid_t pid = spawn_as_nobody(argv, caps, out, err);

	if (pid > 0 && !caps && nr_procs < MAX_PROCS)
		procs[nr_procs++] = pid;
	return pid;
}

/* ---- the attacks ---- */

/* A FIFO renamed over a mapped library (item 1). */
static bool start_fifo(void)
{
	char prog[PATHBUF], lib[PATHBUF], dir[PATHBUF], out[PATHBUF];
	char *argv[] = {prog, lib, dir, "60", NULL};

	snprintf(prog, sizeof(prog), "%s/hostile_fifo", nprogs);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", nprogs);
	snprintf(dir, sizeof(dir), "%s/victim", tmp);
	snprintf(out, sizeof(out), "%s/fifo.out", tmp);
	if (mkdir(dir, 0755) || chown(dir, 65534, 65534))
		return false;
	return spawn_nobody(argv, false, out, NULL) > 0 && wait_output(out, "ready");
}

/* Executable mappings made and unmapped as fast as possible (items 2, 6). */
static bool start_churn(void)
{
	char prog[PATHBUF], lib[PATHBUF], err[PATHBUF];
	char *argv[] = {prog, "mmap", "60", prog, lib, NULL};

	snprintf(prog, sizeof(prog), "%s/faults_churn", nprogs);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", nprogs);
	snprintf(err, sizeof(err), "%s/churn.err", tmp);
	return spawn_nobody(argv, false, NULL, err) > 0;
}

/* A fake library carrying the real one's build-id, started first (item 8). */
static bool start_poisoning(void)
{
	static const char id[] = "0x5badbeef5badbeef5badbeef5badbeef5badbeef";
	char fake[PATHBUF], real[PATHBUF];
	char *fake_argv[] = {fake, "60", NULL}, *real_argv[] = {real, "60", NULL};

	snprintf(fake, sizeof(fake), "%s/fake/dlopen_fake", nprogs);
	snprintf(real, sizeof(real), "%s/real/dlopen_real", nprogs);
	if (!shell_ok("mkdir -p %s/fake %s/real && cp %s/dlopen %s && cp %s/dlopen %s && "
		      "gcc -O0 -fno-omit-frame-pointer -g -fPIC -shared -Ddl_leaf=poisoned_leaf "
		      "-Wl,--build-id=%s tests/progs/dl_target.c -o %s/fake/libdl_target.so && "
		      "gcc -O2 -fomit-frame-pointer -g -fPIC -shared -Wl,--build-id=%s "
		      "tests/progs/dl_target.c -o %s/real/libdl_target.so && chmod -R a+rX %s",
		      nprogs, nprogs, progs, fake, progs, real, id, nprogs, id, nprogs, nprogs))
		return false;
	if (spawn_nobody(fake_argv, false, NULL, NULL) <= 0)
		return false;
	sleep_s(0.2);
	return spawn_nobody(real_argv, false, NULL, NULL) > 0;
}

/*
 * perf-PID.map files the JIT did not write as it should (item 9), each
 * covering the code its JIT really runs, so that a map wrongly trusted would
 * name that JIT's frames, and each breaking one rule alone: one of another
 * user's (root's), a symlink (to a map of the process's own user), one over
 * 64 MiB (its own user's, its first line a good one).
 * A fourth JIT keeps the map it wrote itself: its frames must be named from
 * it, so the three names missing is their refusal, not maps never read.
 * Each JIT is a copy of jit_spin of its own name: its samples are its comm's.
 */
static const struct jit_map {
	const char *comm, *name; /* the JIT's comm; the name its map gives its code */
	bool trusted;		 /* its own map, written by itself */
} jit_maps[] = {
    {"jit_root", "planted_by_root", false},
    {"jit_link", "through_a_link", false},
    {"jit_huge", "oversized_map", false},
    {"jit_own", "jit_own_code", true},
};
#define NR_JITS (sizeof(jit_maps) / sizeof(jit_maps[0]))

static bool start_perfmaps(void)
{
	char prog[PATHBUF], out[PATHBUF], map[64], code[32];
	bool ok = true;

	for (size_t i = 0; i < NR_JITS && ok; i++) {
		const struct jit_map *j = &jit_maps[i];
		char *argv[] = {prog, "60", (char *)j->name, NULL};
		char *line;
		pid_t p;

		snprintf(prog, sizeof(prog), "%s/%s", nprogs, j->comm);
		snprintf(out, sizeof(out), "%s/%s.out", tmp, j->comm);
		if (!shell_ok("cp %s/jit_spin %s && chmod a+rx %s", nprogs, prog, prog))
			return false;
		p = spawn_nobody(argv, false, out, NULL);
		/*
		 * Four spinning JITs at nice 5 weigh less than the three at nice 0
		 * before them, beside the ordinary program and the agent; each
		 * still has a third of a nice-0 task's share for 12 s, so its
		 * stacks are there to judge.
		 */
		if (p > 0)
			setpriority(PRIO_PROCESS, (id_t)p, 5);
		/* it writes its own map, then prints its code's address: replace the map */
		ok = p > 0 && wait_output(out, "\n");
		line = ok ? slurp(out) : NULL;
		snprintf(code, sizeof(code), "%.16s", line ? line : "");
		code[strcspn(code, "\n")] = 0;
		free(line);
		ok = ok && code[0];
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
		if (ok && nr_maps < (int)NR_JITS)
			snprintf(maps[nr_maps++], sizeof(maps[0]), "%s", map);
		if (!ok || j->trusted)
			continue;
		unlink(map);
		if (i == 0)
			ok = shell_ok("echo '%s 2 %s' > %s", code, j->name, map);
		else if (i == 1)
			ok = shell_ok("echo '%s 2 %s' > %s/linked.map && ln -s %s/linked.map %s && "
				      "chown 65534:65534 %s/linked.map && chown -h 65534:65534 %s",
				      code, j->name, tmp, tmp, map, tmp, map);
		else
			ok = shell_ok("echo '%s 2 %s' > %s && truncate -s 65M %s && "
				      "chown 65534:65534 %s",
				      code, j->name, map, map, map);
	}
	return ok;
}

/*
 * A stripped program whose .gnu_debuglink file next to it is a symlink to
 * a debug file that would match (this item 10's other half, a path in the
 * debuglink or a link out of a container's root, is test_container's).
 */
static bool start_debuglink(void)
{
	char dir[256], prog[PATHBUF];
	char *argv[] = {prog, "60", NULL};

	snprintf(dir, sizeof(dir), "%s/escape", nprogs);
	snprintf(prog, sizeof(prog), "%s/dbgesc", dir);
	if (!shell_ok("mkdir -p %s %s/elsewhere && cd %s && objcopy --only-keep-debug %s/chain "
		      "%s/elsewhere/dbgesc.debug && objcopy --strip-all "
		      "--add-gnu-debuglink=%s/elsewhere/dbgesc.debug %s/chain dbgesc && "
		      "ln -s %s/elsewhere/dbgesc.debug dbgesc.debug && chmod -R a+rX %s",
		      dir, tmp, dir, progs, tmp, tmp, progs, tmp, dir))
		return false;
	return spawn_nobody(argv, false, NULL, NULL) > 0;
}

/* Clients that connect to /metrics and never finish a request (item 12). */
static bool start_slow_clients(const char *addr)
{
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid > 0) {
		procs[nr_procs++] = pid;
		return true;
	}
	/* a burst over the slots each second, each holding its connection until dropped */
	for (double t0 = mono_sec(); mono_sec() - t0 < 60;) {
		int fds[12];

		for (int i = 0; i < 12; i++) {
			fds[i] = connect_to(addr);
			if (fds[i] >= 0 && write(fds[i], "GET /metr", 9) < 0)
				continue;
		}
		sleep_s(3);
		for (int i = 0; i < 12; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	_exit(0);
}

/*
 * Objects crafted to hold 154,000 distinct CFI rules, and a file mapped
 * executable 18,000 times (more LPM keys than the trie holds): item 5.
 */
static bool start_quota_hogs(void)
{
	char hog[PATHBUF], rout[PATHBUF], mout[PATHBUF], libs[11][PATHBUF];
	char *rules_argv[16] = {hog, "60", "dlopen"};
	char *mmap_argv[] = {hog, "60", "mmap", hog, "18000", NULL};

	snprintf(hog, sizeof(hog), "%s/quota_hog", nprogs);
	snprintf(rout, sizeof(rout), "%s/hog_rules.out", tmp);
	snprintf(mout, sizeof(mout), "%s/hog_mmap.out", tmp);
	for (int i = 0; i < 11; i++) {
		snprintf(libs[i], sizeof(libs[i]), "%s/librules_%s%d.so", nprogs,
			 i < 3 ? "big" : "mid", i < 3 ? i : i - 3);
		rules_argv[3 + i] = libs[i];
	}
	return spawn_nobody(rules_argv, false, rout, NULL) > 0 &&
	       spawn_nobody(mmap_argv, false, mout, NULL) > 0 && wait_output(rout, "ready") &&
	       wait_output(mout, "ready");
}

/* 16 processes mapping and unmapping code every 0.5 ms: a storm of reload requests (item 6). */
static bool start_request_storm(void)
{
	char storm[PATHBUF], out[PATHBUF];
	char *argv[] = {storm, "mmap", "16", "60", NULL};

	snprintf(storm, sizeof(storm), "%s/hostile_storm", nprogs);
	snprintf(out, sizeof(out), "%s/storm.out", tmp);
	return spawn_nobody(argv, false, out, NULL) > 0 && wait_output(out, "ready");
}

/* 2,000 distinct files mapped executable, the agent limited to 256 fds (item 13). */
static bool start_many_files(void)
{
	char storm[PATHBUF], out[PATHBUF], dir[PATHBUF], lib[PATHBUF];
	char *argv[] = {storm, "maps", dir, "2000", "60", NULL};

	snprintf(storm, sizeof(storm), "%s/hostile_storm", nprogs);
	snprintf(out, sizeof(out), "%s/maps.out", tmp);
	snprintf(dir, sizeof(dir), "%s/maps", tmp);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", nprogs);
	if (mkdir(dir, 0755) || !copy_file_n(lib, dir, 2000) ||
	    !shell_ok("chown -R 65534:65534 %s", dir))
		return false;
	return spawn_nobody(argv, false, out, NULL) > 0 && wait_output(out, "ready");
}

/* poisoned_leaf must name only the fake library's process (checked in every interval) */
static void note_poisoning(const char *profile_text);
static void check_poisoning(void);
/* each JIT's frames named by its map only when the map is its own */
static void note_perfmaps(const char *profile_text);
static void check_perfmaps(void);

struct attack {
	const char *name;
	bool (*start)(void);			/* before the agent */
	bool (*start_live)(const char *addr);	/* once its /metrics address is known */
	const char *counters[3];		/* /metrics lines that must be > 0 at the end */
	void (*note)(const char *profile_text); /* on `go tool pprof -traces` of each interval */
	void (*check)(void);			/* on what note saw in all of them */
};

static const struct attack attacks[] = {
    {"fifo_over_library", start_fifo, NULL, {"cfiprof_mapped_files_refused_total"}, NULL, NULL},
    {"mapping_churn", start_churn, NULL, {"cfiprof_process_reloads_total"}, NULL, NULL},
    {"build_id_poisoning", start_poisoning, NULL, {NULL}, note_poisoning, check_poisoning},
    /* one counter for the three refusals: each is judged by its own JIT's frames */
    {"perfmaps",
     start_perfmaps,
     NULL,
     {"cfiprof_perfmaps_refused_total"},
     note_perfmaps,
     check_perfmaps},
    {"debuglink_escape", start_debuglink, NULL, {"cfiprof_debug_files_refused_total"}, NULL, NULL},
    {"shared_map_quotas",
     start_quota_hogs,
     NULL,
     {"cfiprof_tables_refused_total{cause=\"rules_quota\"}",
      "cfiprof_mapping_keys_refused_total{cause=\"process_quota\"}"},
     NULL,
     NULL},
    {"request_storm",
     start_request_storm,
     NULL,
     {"cfiprof_table_requests_throttled_total"},
     NULL,
     NULL},
    /*
     * No refusal to count: one load holds at most a quarter of the agent's 256
     * fds, so nothing runs out; the suite-wide checks (every interval written,
     * the ordinary program complete, /metrics answering) are what it must keep.
     */
    {"many_files_few_fds", start_many_files, NULL, {NULL}, NULL, NULL},
    {"slow_metrics_clients",
     NULL,
     start_slow_clients,
     {"cfiprof_metrics_connections_dropped_total{reason=\"deadline\"}",
      "cfiprof_metrics_connections_dropped_total{reason=\"displaced\"}"},
     NULL,
     NULL},
};
#define NR_ATTACKS (sizeof(attacks) / sizeof(attacks[0]))

/* every attack's counters > 0 in a scrape's body */
static bool all_counted(const char *body)
{
	for (size_t i = 0; i < NR_ATTACKS; i++)
		for (int k = 0; k < 3 && attacks[i].counters[k]; k++)
			if (!(metric_value(body, attacks[i].counters[k]) > 0))
				return false;
	return true;
}

/*
 * In -traces output, the stacks of the process named comm, and how many of
 * them name frame (a whole frame line, not a part of one).
 */
struct comm_frames {
	int stacks, naming;
};

static void count_comm_frames(const char *traces, const char *comm, const char *frame,
			      struct comm_frames *cf)
{
	char label[64];
	const char *p = traces;

	snprintf(label, sizeof(label), "comm:  %s\n", comm);
	while ((p = strstr(p, label))) {
		const char *end = strstr(p, "-----------+"), *f = p;
		size_t n = strlen(frame);
		bool named = false;

		while (!named && (f = strstr(f + 1, frame)) && (!end || f < end))
			named = (f[-1] == ' ') && (f[n] == '\n' || f[n] == 0);
		cf->stacks++;
		cf->naming += named;
		p += strlen(label);
	}
}

/* each process's stacks naming its own leaf, and the other library's */
static struct comm_frames real_leaf, real_poisoned, fake_leaf, fake_real, jit_named[NR_JITS];

static void note_poisoning(const char *traces)
{
	count_comm_frames(traces, "dlopen_real", "dl_leaf", &real_leaf);
	count_comm_frames(traces, "dlopen_real", "poisoned_leaf", &real_poisoned);
	count_comm_frames(traces, "dlopen_fake", "poisoned_leaf", &fake_leaf);
	count_comm_frames(traces, "dlopen_fake", "dl_leaf", &fake_real);
}

/*
 * Each library named in its own process only, whichever the agent read
 * first, and each process's own frames seen: both spin the whole suite, so
 * at -F 99 even a share of a CPU a hundred times below a fair one over 12 s
 * leaves a dozen samples expected (none: e^-12).
 */
static void check_poisoning(void)
{
	printf("build_id_poisoning: dlopen_real %d stacks, %d with dl_leaf, %d with "
	       "poisoned_leaf; dlopen_fake %d stacks, %d with poisoned_leaf, %d with dl_leaf\n",
	       real_leaf.stacks, real_leaf.naming, real_poisoned.naming, fake_leaf.stacks,
	       fake_leaf.naming, fake_real.naming);
	CHECK(real_leaf.naming > 0 && fake_leaf.naming > 0,
	      "build_id_poisoning: %d of the real library's process's %d stacks name its dl_leaf, "
	      "%d of the fake's %d its poisoned_leaf (want some of each: else nothing to judge)",
	      real_leaf.naming, real_leaf.stacks, fake_leaf.naming, fake_leaf.stacks);
	CHECK(real_poisoned.naming == 0 && fake_real.naming == 0,
	      "build_id_poisoning: %d stacks of the real library's process named from the fake "
	      "one, %d of the fake's from the real one",
	      real_poisoned.naming, fake_real.naming);
}

static void note_perfmaps(const char *traces)
{
	for (size_t i = 0; i < NR_JITS; i++)
		count_comm_frames(traces, jit_maps[i].comm, jit_maps[i].name, &jit_named[i]);
}

/*
 * Each JIT spins in the code its map covers the whole suite (samples: as
 * check_poisoning's); the maps refused name none of its stacks, the trusted
 * one names them (a JIT's frame is always its one loop).
 */
static void check_perfmaps(void)
{
	for (size_t i = 0; i < NR_JITS; i++) {
		const struct jit_map *j = &jit_maps[i];
		const struct comm_frames *cf = &jit_named[i];

		printf("perfmaps: %s %d stacks, %d named %s\n", j->comm, cf->stacks, cf->naming,
		       j->name);
		CHECK(cf->stacks > 0, "perfmaps: no stack of %s: nothing to judge", j->comm);
		if (j->trusted)
			CHECK(cf->naming > 0,
			      "perfmaps: %s's own map named none of its %d stacks (maps not read?)",
			      j->comm, cf->stacks);
		else
			CHECK(cf->naming == 0,
			      "perfmaps: %d of %s's %d stacks named %s from a map it did not write",
			      cf->naming, j->comm, cf->stacks, j->name);
	}
}

/* ---- the agent ---- */

static void stop_attacks(void)
{
	for (int i = 0; i < nr_procs; i++)
		kill(procs[i], SIGKILL);
	for (int i = 0; i < nr_procs; i++)
		wait_timeout(procs[i], 2, NULL);
	for (int i = 0; i < nr_maps; i++)
		unlink(maps[i]);
	nr_procs = nr_maps = 0;
}

static void test_all_attacks_at_once(void)
{
	char out[256], log[PATHBUF], chain[PATHBUF], addr[64] = "", path[PATHBUF];
	char interval[16], names[64][96];
	/* few file descriptors, as a host whose limit is low (many_files_few_fds) */
	char *agent_argv[] = {"prlimit",
			      "--nofile=256:256",
			      ncfiprof,
			      "agent",
			      "--output-dir",
			      out,
			      "--interval",
			      interval,
			      "-d",
			      "60",
			      "--metrics-addr",
			      "127.0.0.1:0",
			      "-F",
			      "99",
			      NULL};
	char *ordinary[] = {chain, "60", NULL};
	char *body = NULL, *traces = NULL;
	double t0, elapsed, started = 0, running, cpu0 = 0, cpu1 = -1,
			    stop_s; /* CPU from its start: loads included */
	long hwm = -1;
	bool timed_out = false;
	pid_t agent, victim;
	int rc, files, caught_up = -1;
	uint64_t after_catch_up = 0;

	snprintf(out, sizeof(out), "%s/profiles", tmp);
	snprintf(log, sizeof(log), "%s/agent.log", tmp);
	snprintf(chain, sizeof(chain), "%s/chain", nprogs);
	snprintf(interval, sizeof(interval), "%g", INTERVAL_S);
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534), "%s for nobody: %s", out,
	      strerror(errno));
	for (size_t i = 0; i < NR_ATTACKS; i++)
		if (attacks[i].start)
			CHECK(attacks[i].start(), "starting attack %s", attacks[i].name);
	victim = spawn_nobody(ordinary, false, NULL, NULL);
	CHECK(victim > 0, "starting the ordinary program");
	/* beside 16 storming processes it must still run (and be sampled) every interval */
	if (victim > 0)
		setpriority(PRIO_PROCESS, (id_t)victim, -10);
	sleep_s(0.3);

	t0 = mono_sec();
	agent = spawn_nobody(agent_argv, true, NULL, log);
	CHECK(agent_metrics_addr(log, addr, sizeof(addr)),
	      "the agent did not say where /metrics is");
	/* intervals are counted from its start (BPF loaded, attached), not from its exec */
	started = mono_sec();
	for (size_t i = 0; i < NR_ATTACKS; i++)
		if (attacks[i].start_live && addr[0])
			CHECK(attacks[i].start_live(addr), "starting attack %s", attacks[i].name);

	sleep_s(SUITE_S);
	do {
		if (body)
			sleep_s(0.5);
		free(body);
		body = NULL;
		/* a scrape: a slow client may hold a slot a moment, so a few tries */
		for (int i = 0;
		     i < 5 && addr[0] && !(body && strstr(body, "cfiprof_intervals_total")); i++) {
			free(body);
			body = http_get(addr, "/metrics");
			if (!body || !strstr(body, "cfiprof_intervals_total"))
				sleep_s(0.2);
		}
	} while (body && !all_counted(body) && mono_sec() - started < SUITE_S + COUNTED_MAX_S);
	hwm = proc_status_kb(agent, "VmHWM:");
	cpu1 = proc_cpu_s(agent);
	elapsed = mono_sec() - t0;
	running = mono_sec() - started;
	CHECK(body && strstr(body, "cfiprof_intervals_total"),
	      "the agent answers /metrics beside every attack");
	for (size_t i = 0; i < NR_ATTACKS; i++) {
		for (int k = 0; k < 3 && attacks[i].counters[k]; k++) {
			double v = body ? metric_value(body, attacks[i].counters[k]) : -1;

			printf("%s: %s = %.0f\n", attacks[i].name, attacks[i].counters[k], v);
			CHECK(v > 0, "attack %s: %s = %.0f (want > 0: refused and counted)",
			      attacks[i].name, attacks[i].counters[k], v);
		}
	}

	kill(agent, SIGTERM);
	stop_s = mono_sec();
	rc = exit_code(wait_timeout(agent, 5, &timed_out), timed_out);
	stop_s = mono_sec() - stop_s;
	CHECK(!timed_out && rc == 0, "SIGTERM stops the agent within 5 s: exit %d after %.1f s%s",
	      rc, stop_s, timed_out ? " (killed)" : "");

	/* an interval file every interval: at least the intervals that fit, minus the first */
	files = interval_files(out, names, 64);
	CHECK(files >= (int)(running / INTERVAL_S) - 1,
	      "%d interval files in %.1f s running at --interval %g (want >= %d)", files, running,
	      INTERVAL_S, (int)(running / INTERVAL_S) - 1);
	for (int i = 0; i < files; i++) {
		struct chain_count cc;

		snprintf(path, sizeof(path), "%s/%.95s", out, names[i]);
		free(traces);
		traces = pprof_traces(path);
		cc = count_chain(traces, "chain");
		for (size_t k = 0; k < NR_ATTACKS; k++)
			if (attacks[k].note)
				attacks[k].note(traces);
		/*
		 * At its start the agent loads every process it finds, one after
		 * another, the attackers' (each up to its load time budget) among
		 * them: until the ordinary program's turn its samples may be
		 * tables-pending, nothing else.  From its first complete interval on,
		 * every one must be complete.
		 */
		if (caught_up < 0) {
			CHECK(cc.incomplete == cc.pending,
			      "interval %s, catching up: the ordinary program's %d stacks: %d "
			      "incomplete for another reason than tables-pending; first other: %s",
			      names[i], cc.samples, cc.incomplete - cc.pending, cc.first_bad);
			if (cc.samples == 0 || cc.incomplete)
				continue;
			caught_up = i;
		}
		/*
		 * Complete, every stack.  Whether an interval has any depends on the
		 * CPU the program gets beside 16 attackers and the host's load, not on
		 * the agent: a make test-stress run beside a qemu guest (over 20
		 * runnable threads on 2 CPUs) had one 1 s interval without any.  They
		 * are counted over all intervals.
		 */
		after_catch_up += (uint64_t)cc.samples;
		CHECK(cc.chain_ok == cc.samples && cc.incomplete == 0,
		      "interval %s: the ordinary program's %d stacks: %d its known chain, %d "
		      "incomplete (want all, none); first other: %s",
		      names[i], cc.samples, cc.chain_ok, cc.incomplete, cc.first_bad);
	}

	for (size_t k = 0; k < NR_ATTACKS; k++)
		if (attacks[k].check)
			attacks[k].check();
	printf("FIGURE: hostile suite: %zu attacks at once, %.1f s, agent peak RSS %.1f MB, CPU "
	       "%.2f s (%.1f%% of one core), %d interval files, stopped %.2f s after SIGTERM, the "
	       "ordinary program complete from interval %d on\n",
	       NR_ATTACKS, elapsed, hwm / 1024.0, cpu1 - cpu0, 100 * (cpu1 - cpu0) / elapsed, files,
	       stop_s, caught_up + 1);
	CHECK(caught_up < 0 || after_catch_up > 0,
	      "no stack of the ordinary program after interval %d", caught_up + 1);
	CHECK(caught_up >= 0 && caught_up < CATCH_UP_MAX,
	      "the ordinary program complete only from interval %d on (want within the first %d)",
	      caught_up + 1, CATCH_UP_MAX);
	CHECK(hwm > 0 && hwm / 1024.0 < RSS_MAX_MB, "agent peak RSS %.1f MB (want < %.0f MB)",
	      hwm / 1024.0, RSS_MAX_MB);
	CHECK(cpu1 >= 0 && 100 * (cpu1 - cpu0) / elapsed < CPU_MAX_PCT,
	      "agent CPU %.1f%% of one core (want < %.0f%%)", 100 * (cpu1 - cpu0) / elapsed,
	      CPU_MAX_PCT);
	free(body);
	free(traces);
	stop_attacks();
	if (harness_failed)
		dump_tail("agent log", log);
}

int main(int argc, char **argv)
{
	static const char *const copied[] = {"chain",
					     "hostile_fifo",
					     "faults_churn",
					     "jit_spin",
					     "dlopen",
					     "libdl_target.so",
					     "quota_hog",
					     "hostile_storm",
					     "librules_big0.so",
					     "librules_big1.so",
					     "librules_big2.so",
					     "librules_mid0.so",
					     "librules_mid1.so",
					     "librules_mid2.so",
					     "librules_mid3.so",
					     "librules_mid4.so",
					     "librules_mid5.so",
					     "librules_mid6.so",
					     "librules_mid7.so"};
	static const char *const tools[] = {"setpriv", "go", "objcopy", "gcc", NULL};

	harness_init(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nobody_setup("suite", copied, sizeof(copied) / sizeof(copied[0]), tools))
		return HARNESS_DONE();
	RUN_TEST(test_all_attacks_at_once);
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
