// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof agent: the always-on fleet profiler.  Samples the whole host at a
 * low rate (19 Hz per CPU), user and kernel stacks; every --interval it swaps
 * the session's aggregator for an empty one, so the consumer never waits,
 * symbolizes the interval into a pprof labelled with the host, writes it to
 * --output-dir and/or hands it to the pusher.  SIGTERM / SIGINT flush the
 * partial interval; SIGHUP reopens the log and re-reads the config file.
 * Nothing is pinned: when the process dies, the kernel detaches everything.
 */
#include <argp.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "user/agent/agent.h"
#include "user/agent/config.h"
#include "user/agent/log.h"
#include "user/agent/metrics.h"
#include "user/agent/self_stats.h"
#include "user/agent/interval_files.h"
#include "user/agent/push.h"
#include "user/agent/sd_notify.h"
#include "user/track/cgroups.h"
#include "user/cli/commands.h"
#include "user/session/runtimes.h"
#include "user/session/session.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/src_lines.h"

#define MAX_FLAGS	    128
#define DEFAULT_METRICS	    "127.0.0.1:9491"
#define DEFAULT_SPOOL	    "/var/lib/cfiprof-agent/spool"
#define STOP_PUSH_GRACE_MAX 10.0 /* seconds SIGTERM may spend delivering the spool */
#define METRICS_RETRY_MAX   10.0 /* seconds between tries to listen, at most */

/* Flags as given, re-applied over the config file at start and on every SIGHUP. */
static struct {
	const struct agent_option *o;
	char *value;
} flags[MAX_FLAGS];
static int nr_flags;
static char *config_path;
static struct argp_option argp_opts[64];

static volatile sig_atomic_t hup_requested;

static void on_hup(int sig)
{
	(void)sig;
	hup_requested = 1;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	const struct agent_option *o;
	struct agent_config scratch;
	char err[256];

	if (key == AGENT_OPT_CONFIG) {
		config_path = arg;
		return 0;
	}
	if (key == ARGP_KEY_ARG)
		argp_error(state, "unexpected argument '%s'", arg);
	o = agent_option_by_key(key);
	if (!o)
		return ARGP_ERR_UNKNOWN;
	/* check now, so a bad flag is a usage error rather than a late failure */
	agent_config_defaults(&scratch);
	if (agent_config_set(&scratch, o, arg, err, sizeof(err))) {
		agent_config_free(&scratch);
		argp_error(state, "%s", err);
	}
	agent_config_free(&scratch);
	if (nr_flags == MAX_FLAGS)
		argp_error(state, "too many options");
	flags[nr_flags].o = o;
	flags[nr_flags].value = arg;
	nr_flags++;
	return 0;
}

static bool given_as_flag(const char *name, void *ctx)
{
	int i;

	(void)ctx;
	for (i = 0; i < nr_flags; i++)
		if (!strcmp(flags[i].o->name, name))
			return true;
	return false;
}

/* defaults < config file < flags */
static int load_config(struct agent_config *c, char *err, size_t errlen)
{
	int i;

	agent_config_defaults(c);
	if (config_path && agent_config_read_file(c, config_path, given_as_flag, NULL, err, errlen))
		goto fail;
	for (i = 0; i < nr_flags; i++)
		if (agent_config_set(c, flags[i].o, flags[i].value, err, errlen))
			goto fail;
	if (!c->metrics_addr &&
	    agent_config_set(c, agent_option_by_name("metrics-addr"), DEFAULT_METRICS, err, errlen))
		goto fail;
	if (agent_config_check(c, err, errlen))
		goto fail;
	return 0;
fail:
	agent_config_free(c);
	return -1;
}

static const char *spool_dir(const struct agent_config *c, char *buf, size_t len)
{
	if (c->spool_dir && *c->spool_dir)
		return c->spool_dir;
	if (c->output_dir && *c->output_dir) {
		snprintf(buf, len, "%s/spool", c->output_dir);
		return buf;
	}
	return DEFAULT_SPOOL;
}

/*
 * The settings of the Pyroscope pusher, or of the OTLP one: the same spool
 * bounds and retries, its own directory (OTLP's in the spool's otlp/, which
 * the other's listing passes over) so that neither sends the other's files.
 */
static struct agent_push_config push_config(const struct agent *a, enum agent_push_kind kind,
					    char *buf, size_t len)
{
	const char *dir = spool_dir(&a->cfg, buf, len);

	if (kind == AGENT_PUSH_OTLP) {
		if (dir != buf)
			snprintf(buf, len, "%s", dir);
		snprintf(buf + strlen(buf), len - strlen(buf), "/otlp");
		dir = buf;
	}
	return (struct agent_push_config){
	    .kind = kind,
	    .url = kind == AGENT_PUSH_OTLP ? a->cfg.otlp_url : a->cfg.push_url,
	    .app_name = a->cfg.app_name,
	    .labels = a->cfg.labels,
	    .hostname = a->hostname,
	    .tenant = a->cfg.tenant,
	    .token_file = a->cfg.token_file,
	    .spool_dir = dir,
	    .timeout = a->cfg.push_timeout,
	    .backoff_max = a->cfg.backoff_max,
	    .spool_max_bytes = a->cfg.spool_max_bytes,
	};
}

/* Settings SIGHUP cannot change keep their running values (the reload says which). */
static void keep_restart_settings(struct agent_config *n, struct agent_config *old)
{
	size_t i;

	for (i = 0; i < agent_nr_options; i++) {
		const struct agent_option *o = &agent_options[i];
		char *pn = (char *)n + o->off, *po = (char *)old + o->off;
		size_t sz = o->kind == OPT_STR	     ? sizeof(char *)
			    : o->kind == OPT_FLAG    ? sizeof(bool)
			    : o->kind == OPT_U32     ? sizeof(uint32_t)
			    : o->kind == OPT_SECONDS ? sizeof(double)
						     : sizeof(uint64_t);
		char tmp[sizeof(uint64_t) > sizeof(double) ? sizeof(uint64_t) : sizeof(double)];

		if (!o->restart)
			continue;
		/* swap, so each struct still owns its strings */
		memcpy(tmp, pn, sz);
		memcpy(pn, po, sz);
		memcpy(po, tmp, sz);
	}
}

static void reload(struct agent *a)
{
	struct agent_config n;
	struct agent_push_config pc;
	char err[512], diff[512], q[600], sbuf[PATH_MAX];
	int lerr;

	/* reopen first: after logrotate the reload's own lines belong in the new file */
	lerr = alog_open(a->cfg.log_file);
	if (lerr)
		alog(ALOG_ERROR, "cannot reopen the log file", "path=%s error=%s",
		     alog_quote(a->cfg.log_file, q, sizeof(q)),
		     alog_quote(strerror(-lerr), (char[128]){0}, 128));
	if (load_config(&n, err, sizeof(err))) {
		alog(ALOG_ERROR, "config reload failed, keeping the running config", "error=%s",
		     alog_quote(err, q, sizeof(q)));
		return;
	}
	agent_config_restart_diff(&a->cfg, &n, diff, sizeof(diff));
	if (diff[0])
		alog(ALOG_WARN, "changed settings need a restart, keeping their running values",
		     "settings=%s", diff);
	keep_restart_settings(&n, &a->cfg);
	if (!!(n.push_url && *n.push_url) != !!a->push) {
		alog(ALOG_WARN, "turning push on or off needs a restart", NULL);
		free(n.push_url);
		n.push_url = a->cfg.push_url;
		a->cfg.push_url = NULL;
	}
	if (!!(n.otlp_url && *n.otlp_url) != !!a->otlp) {
		alog(ALOG_WARN, "turning otlp on or off needs a restart", NULL);
		free(n.otlp_url);
		n.otlp_url = a->cfg.otlp_url;
		a->cfg.otlp_url = NULL;
	}
	if (n.log_file != a->cfg.log_file &&
	    strcmp(n.log_file ? n.log_file : "", a->cfg.log_file ? a->cfg.log_file : ""))
		alog_open(n.log_file);
	alog_set_level(n.log_level ? alog_parse_level(n.log_level) : ALOG_INFO);
	if (n.output_dir && *n.output_dir && (lerr = agent_mkdirs(n.output_dir)))
		alog(ALOG_ERROR, "cannot create the output directory", "dir=%s error=%s",
		     alog_quote(n.output_dir, q, sizeof(q)),
		     alog_quote(strerror(-lerr), (char[128]){0}, 128));
	agent_config_free(&a->cfg);
	a->cfg = n;
	if (a->cfg.hostname && *a->cfg.hostname)
		snprintf(a->hostname, sizeof(a->hostname), "%s", a->cfg.hostname);
	if (a->push) {
		pc = push_config(a, AGENT_PUSH_PYROSCOPE, sbuf, sizeof(sbuf));
		agent_push_configure(a->push, &pc);
	}
	if (a->otlp) {
		pc = push_config(a, AGENT_PUSH_OTLP, sbuf, sizeof(sbuf));
		agent_push_configure(a->otlp, &pc);
	}
	alog(ALOG_INFO, "config reloaded",
	     "config=%s interval=%.3fs output_dir=%s push=%s labels=%s",
	     alog_quote(config_path ? config_path : "-", q, sizeof(q)), a->cfg.interval,
	     a->cfg.output_dir ? a->cfg.output_dir : "-", a->cfg.push_url ? a->cfg.push_url : "-",
	     a->cfg.labels ? a->cfg.labels : "-");
}

/*
 * /metrics on its address, else another try an interval later (10 s at
 * most): a port another process holds, taken in a restart window, must not
 * keep the host from being profiled.
 */
static void metrics_try(struct agent *a)
{
	struct agent_metrics_src src = {&a->s,	 a->push,    a->otlp,
					&a->ctr, a->s.start, a->started_unix};
	double wait = a->cfg.interval < METRICS_RETRY_MAX ? a->cfg.interval : METRICS_RETRY_MAX;
	char err[256], q[320];
	uint64_t n;

	a->metrics = agent_metrics_start(a->cfg.metrics_addr, &src, a->metrics_bound,
					 sizeof(a->metrics_bound), err, sizeof(err));
	if (a->metrics) {
		if (a->metrics_retry_at)
			alog(ALOG_INFO, "serving metrics", "metrics=%s failed_attempts=%" PRIu64,
			     a->metrics_bound, a->ctr.metrics_bind_failures);
		a->metrics_retry_at = 0;
		return;
	}
	n = __atomic_add_fetch(&a->ctr.metrics_bind_failures, 1, __ATOMIC_RELAXED);
	/* the first, then one in 100: a port held for days must not fill the log */
	if (n == 1 || n % 100 == 0)
		alog(ALOG_ERROR, "cannot serve metrics: profiling goes on, retrying",
		     "addr=%s error=%s attempts=%" PRIu64 " retry_s=%.1f",
		     alog_quote(a->cfg.metrics_addr, q, sizeof(q)),
		     alog_quote(err, (char[320]){0}, 320), n, wait);
	snprintf(a->metrics_bound, sizeof(a->metrics_bound), "-");
	a->metrics_retry_at = mono_sec() + wait;
}

static void sleep_until(double t)
{
	double d = t - mono_sec();
	struct timespec ts;

	if (d <= 0)
		return;
	if (d > 0.25)
		d = 0.25;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(d * 1e9);
	/* a signal cuts the sleep short: SIGTERM and SIGHUP are handled at once */
	nanosleep(&ts, NULL);
}

static void run(struct agent *a)
{
	double start = a->s.start, next = start + a->cfg.interval, last = start;
	double end = a->cfg.duration > 0 ? start + a->cfg.duration : 0;
	double now, wake;

	while (!session_stop_requested) {
		if (hup_requested) {
			hup_requested = 0;
			reload(a);
			next = last + a->cfg.interval;
		}
		now = mono_sec();
		if (end && now >= end)
			break;
		if (a->metrics_retry_at && now >= a->metrics_retry_at)
			metrics_try(a);
		if (now >= next) {
			agent_end_interval(a);
			last = next;
			next += a->cfg.interval;
			/* after a stall (suspend, overload), start over rather than catch up */
			if (next <= mono_sec()) {
				last = mono_sec();
				next = last + a->cfg.interval;
			}
		}
		wake = end && end < next ? end : next;
		sleep_until(wake);
	}
}

static void log_started(struct agent *a, const char *metrics)
{
	char sbuf[PATH_MAX];

	alog(ALOG_INFO, "agent started",
	     "pid=%d hostname=%s freq=%u interval=%.3fs kernel=%s max_stacks=%" PRIu64
	     " table_rows=%u max_table_bytes=%" PRIu64 " max_processes=%u output_dir=%s push=%s"
	     " otlp=%s spool_dir=%s metrics=%s bpf_loop=%s",
	     getpid(), a->hostname, a->cfg.freq, a->cfg.interval,
	     a->cfg.user_only ? "false" : "true", a->cfg.max_stacks, a->cfg.table_rows,
	     a->cfg.max_table_bytes, a->cfg.max_processes,
	     a->cfg.output_dir ? a->cfg.output_dir : "-", a->cfg.push_url ? a->cfg.push_url : "-",
	     a->cfg.otlp_url ? a->cfg.otlp_url : "-",
	     a->push || a->otlp ? spool_dir(&a->cfg, sbuf, sizeof(sbuf)) : "-", metrics,
	     a->s.ld.uses_bpf_loop ? "true" : "false");
}

/* Where a stop's time went (seconds): what a unit's stop timeout has to cover. */
struct stop_times {
	double session; /* sampling detached, the ring drained, queued loads waited for */
	double flush;	/* the last, partial interval named and written */
	double push;	/* the spool delivered (--push-url) */
};

static void log_stopped(struct agent *a, const char *reason, const struct agent_push_stats *ps,
			const struct agent_push_stats *os, const struct stop_times *st)
{
	uint64_t c[CNT_MAX] = {0};

	loader_read_counters(&a->s.ld, c);
	/* the totals a test (or an operator) can hold against the files written */
	alog(ALOG_INFO, "agent stopped",
	     "reason=%s intervals=%" PRIu64 " profile_samples=%" PRIu64 " overflow=%" PRIu64
	     " bpf_samples=%" PRIu64 " bpf_written=%" PRIu64 " lost=%" PRIu64 " malformed=%" PRIu64
	     " events_lost=%" PRIu64 " push_successes=%" PRIu64 " push_failures=%" PRIu64
	     " push_dropped=%" PRIu64 " spool_files=%" PRIu64 " otlp_successes=%" PRIu64
	     " otlp_failures=%" PRIu64 " otlp_dropped=%" PRIu64 " otlp_spool_files=%" PRIu64
	     " rss_bytes=%" PRIu64
	     " cpu_seconds=%.3f uptime=%.3fs stop_ms=%.1f stop_session_ms=%.1f stop_flush_ms=%.1f"
	     " stop_push_ms=%.1f",
	     reason, a->ctr.intervals, a->ctr.profile_samples, a->ctr.profile_overflow,
	     c[CNT_SAMPLES], c[CNT_WRITTEN], c[CNT_LOST_RINGBUF], a->ctr.profile_malformed,
	     c[CNT_EVENTS_LOST], ps->successes, ps->failures, ps->dropped, ps->spool_files,
	     os->successes, os->failures, os->dropped, os->spool_files, agent_rss_bytes(),
	     agent_cpu_seconds(), mono_sec() - a->s.start,
	     (st->session + st->flush + st->push) * 1e3, st->session * 1e3, st->flush * 1e3,
	     st->push * 1e3);
}

static void build_argp_options(void)
{
	size_t i, n = 0;

	argp_opts[n++] = (struct argp_option){"config",
					      'c',
					      "FILE",
					      0,
					      "settings as 'key = value' lines, keys named like "
					      "the long options; options given here win",
					      0};
	for (i = 0; i < agent_nr_options && n < sizeof(argp_opts) / sizeof(argp_opts[0]) - 1; i++)
		argp_opts[n++] = (struct argp_option){agent_options[i].name, agent_options[i].key,
						      agent_options[i].arg,  0,
						      agent_options[i].doc,  0};
	argp_opts[n] = (struct argp_option){0};
}

static error_t parse_opt_c(int key, char *arg, struct argp_state *state)
{
	return parse_opt(key == 'c' ? AGENT_OPT_CONFIG : key, arg, state);
}

/*
 * Stops in the order that loses nothing: sampling detached and drained into
 * the final, partial interval, that interval written, then the pushes given
 * a bounded grace; each step's time in the last log line.
 */
static void agent_stop(struct agent *a)
{
	struct agent_push_stats ps = {0}, os = {0};
	struct stop_times st = {0};
	const char *reason = session_stop_requested ? "signal" : "duration";
	double t, grace;

	agent_sd_notify("STOPPING=1");
	t = mono_sec();
	session_stop(&a->s);
	st.session = mono_sec() - t;
	t = mono_sec();
	agent_flush_interval(a, &a->s.agg, unix_ns());
	agent_metrics_stop(a->metrics);
	a->metrics = NULL;
	st.flush = mono_sec() - t;
	t = mono_sec();
	grace =
	    a->cfg.push_timeout < STOP_PUSH_GRACE_MAX ? a->cfg.push_timeout : STOP_PUSH_GRACE_MAX;
	/* both deliver within one grace */
	agent_push_begin_stop(a->otlp, grace);
	agent_push_begin_stop(a->push, grace);
	agent_push_stop(a->otlp, grace, &os);
	a->otlp = NULL;
	agent_push_stop(a->push, grace, &ps);
	a->push = NULL;
	st.push = mono_sec() - t;
	log_stopped(a, reason, &ps, &os, &st);
}

/*
 * The ring buffer for the agent's rate when it samples CPU time only: a second
 * of every CPU's samples at 16 KiB each (a deep stack with its deferred copy),
 * a power of two from 1 MiB up to record's 8 MiB; the consumer reads it every
 * 100 ms.  The kernel maps all of it into the agent, twice (16 MiB of RSS for
 * record's 8 MiB).  Off-CPU blocks come at any rate: record's size then.
 */
static uint32_t agent_ring_bytes(const struct agent_config *cfg)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t want = (uint64_t)cfg->freq * (uint64_t)(cpus > 0 ? cpus : 1) * 16384;
	uint32_t bytes = 1u << 20;

	if (cfg->off_cpu)
		return 0;
	while (bytes < want && bytes < (8u << 20))
		bytes <<= 1;
	return bytes;
}

/*
 * The session the configuration asks for; -1 (logged) when its cgroup or
 * container cannot be found or the debuginfod environment cannot be set.
 */
static int session_opts_from_config(struct agent *a, struct session_opts *so)
{
	so->all = !a->cfg.cgroup && !a->cfg.container;
	if ((a->cfg.cgroup && cgroup_resolve(a->cfg.cgroup, so->cgroup, sizeof(so->cgroup))) ||
	    (a->cfg.container &&
	     cgroup_find_container(a->cfg.container, so->cgroup, sizeof(so->cgroup)))) {
		alog(ALOG_ERROR, "cannot resolve --cgroup / --container (see the line above)",
		     NULL);
		return -1;
	}
	so->freq = a->cfg.freq;
	so->ringbuf_bytes = agent_ring_bytes(&a->cfg);
	so->max_frames = a->cfg.max_frames;
	so->kernel = !a->cfg.user_only;
	/* off-CPU beside CPU: the CPU profile keeps its series, off_cpu is one more type */
	if (a->cfg.off_cpu) {
		char perr[128];

		event_list_parse(&so->events, "cpu-clock", perr, sizeof(perr));
		event_list_add_off_cpu(&so->events);
		so->min_block_ns = (uint64_t)(a->cfg.min_block * 1e9);
	}
	so->rows_max = a->cfg.table_rows;
	so->max_table_bytes = a->cfg.max_table_bytes;
	so->max_procs = a->cfg.max_processes;
	so->table_idle_ttl = a->cfg.table_idle_ttl;
	so->max_stacks = a->cfg.max_stacks;
	so->defer_stack = (uint32_t)a->cfg.defer_stack;
	if (a->cfg.runtimes) {
		char err[256];

		/* checked at the start (agent_config_check) */
		session_runtimes_parse(a->cfg.runtimes, &so->runtimes_off, err, sizeof(err));
	}
	/*
	 * A service's start waits for nobody: one load with every walk, not a
	 * second one while sampling runs (its parse of the kernel's BTF alone
	 * is 13 MB of peak memory, some of it kept by the heap).
	 */
	so->runtime_walks_first = true;
	so->defer_budget = a->cfg.defer_budget;
	so->table_cache_bytes = a->cfg.table_cache_size;
	so->build_workers = a->cfg.build_workers;
	so->lines = !a->cfg.no_source_lines;
	if (!a->cfg.table_cache || strcmp(a->cfg.table_cache, "off"))
		snprintf(so->table_cache, sizeof(so->table_cache), "%s",
			 a->cfg.table_cache ? a->cfg.table_cache : AGENT_TABLE_CACHE_DEFAULT);
	/*
	 * debuginfod only when asked: libdebuginfod (and libdw) read the servers and
	 * the cache from the environment, set here before any thread starts
	 */
	so->debuginfod =
	    a->cfg.debuginfod && *a->cfg.debuginfod && strcmp(a->cfg.debuginfod, "off");
	if (!so->debuginfod) {
		unsetenv("DEBUGINFOD_URLS");
	} else if (setenv("DEBUGINFOD_URLS", a->cfg.debuginfod, 1) ||
		   setenv("DEBUGINFOD_CACHE_PATH",
			  a->cfg.debuginfod_cache ? a->cfg.debuginfod_cache
						  : AGENT_DEBUGINFOD_CACHE_DEFAULT,
			  1)) {
		alog(ALOG_ERROR, "cannot set the debuginfod environment", NULL);
		return -1;
	}
	so->fetch.dbgd.timeout_ns = (uint64_t)(a->cfg.debuginfod_timeout * 1e9);
	so->fetch.dbgd.max_bytes = a->cfg.debuginfod_max_size;
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	static const struct argp argp = {
	    argp_opts,
	    parse_opt_c,
	    NULL,
	    "Continuous whole-host profiling: one pprof per interval, written to a directory "
	    "and/or pushed to a Pyroscope-compatible server.\n"
	    "\nSIGTERM / SIGINT write the partial interval and exit; SIGHUP reopens the log "
	    "and re-reads the config file.\vDURATION: seconds, or with s, m, h, d.  SIZE: bytes, "
	    "or with K, M, G.\n"
	    "\nExamples:\n  cfiprof agent -o /var/lib/cfiprof-agent/profiles\n"
	    "  cfiprof agent --push http://pyroscope:4040 --labels env=prod\n"
	    "  cfiprof agent -c /etc/cfiprof/agent.conf",
	    NULL,
	    NULL,
	    NULL};
	static struct agent a;
	struct session_opts so = {0};
	struct agent_push_config pc;
	struct sigaction sa = {0};
	char err[512], q[600], sbuf[PATH_MAX], kerr[256];
	int lerr, ret = 1;

	a.started_unix = (double)unix_ns() / 1e9;
	snprintf(a.metrics_bound, sizeof(a.metrics_bound), "off");
	build_argp_options();
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (load_config(&a.cfg, err, sizeof(err))) {
		fprintf(stderr, "cfiprof agent: %s\n", err);
		return 2;
	}
	alog_set_level(a.cfg.log_level ? alog_parse_level(a.cfg.log_level) : ALOG_INFO);
	lerr = alog_open(a.cfg.log_file);
	if (lerr) {
		fprintf(stderr, "cfiprof agent: cannot open %s: %s\n", a.cfg.log_file,
			strerror(-lerr));
		goto out;
	}
	if (a.cfg.hostname && *a.cfg.hostname)
		snprintf(a.hostname, sizeof(a.hostname), "%s", a.cfg.hostname);
	else if (gethostname(a.hostname, sizeof(a.hostname) - 1))
		snprintf(a.hostname, sizeof(a.hostname), "unknown");
	if (a.cfg.output_dir && *a.cfg.output_dir) {
		lerr = agent_mkdirs(a.cfg.output_dir);
		if (lerr) {
			alog(ALOG_ERROR, "cannot create the output directory", "dir=%s error=%s",
			     alog_quote(a.cfg.output_dir, q, sizeof(q)),
			     alog_quote(strerror(-lerr), (char[128]){0}, 128));
			goto out;
		}
		agent_remove_temporaries(a.cfg.output_dir);
	}
	if (a.cfg.push_url && *a.cfg.push_url) {
		/* before sampling starts: what a previous run spooled goes out first */
		pc = push_config(&a, AGENT_PUSH_PYROSCOPE, sbuf, sizeof(sbuf));
		a.push = agent_push_start(&pc);
		if (!a.push)
			goto out;
	}
	if (a.cfg.otlp_url && *a.cfg.otlp_url) {
		pc = push_config(&a, AGENT_PUSH_OTLP, sbuf, sizeof(sbuf));
		a.otlp = agent_push_start(&pc);
		if (!a.otlp)
			goto out;
	}
	if (session_opts_from_config(&a, &so))
		goto out;
	if (session_start(&a.s, &so)) {
		alog(ALOG_ERROR, "cannot start profiling (see the lines above)", NULL);
		a.session_started = true; /* partly started: session_free cleans up */
		goto out;
	}
	a.session_started = true;
	/* always on beside everything else: a tighter bound than record's (read on this thread) */
	sym_cache_lines_ctx(a.s.syms)->max_open_bytes = AGENT_LINES_OPEN_BYTES;
	sym_cache_lines_ctx(a.s.syms)->max_object_bytes = AGENT_LINES_OPEN_BYTES;
	/*
	 * One object's DWARF open is not interruptible (903 ms, 2.9 s on a
	 * loaded host): opened apart, the interval never waits for it and keeps
	 * its cadence; without the thread, lookups open as before.
	 */
	if (sym_cache_lines_on(a.s.syms) && src_lines_opener_start(sym_cache_lines_ctx(a.s.syms)))
		alog(ALOG_WARN, "source lines: no thread to open DWARF apart: intervals open it",
		     NULL);
	a.from_ns = a.s.start_unix_ns;
	if (!a.cfg.user_only) {
		a.ks = session_kernel_symbols(&a.s, kerr, sizeof(kerr));
		if (!a.ks)
			alog(ALOG_WARN, "kernel frames will show as addresses", "why=%s",
			     alog_quote(kerr, q, sizeof(q)));
	}
	a.stats_fd = -1;
	if (a.cfg.bpf_stats) {
		/* not the sysctl: the kernel turns stats off again when this fd closes, even on a
		 * crash */
		a.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (a.stats_fd < 0)
			alog(ALOG_WARN, "cannot enable BPF run-time stats", "error=%s",
			     alog_quote(strerror(errno), q, sizeof(q)));
	}
	sa.sa_handler = on_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	/* a backend or a metrics client that hangs up must not kill the agent */
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(a.cfg.metrics_addr, "off") && *a.cfg.metrics_addr)
		metrics_try(&a);
	log_started(&a, a.metrics_bound);
	/* sampling (with /metrics up, or being retried): what a Type=notify unit waits for */
	lerr = agent_sd_notify("READY=1\nSTATUS=sampling");
	if (lerr < 0)
		alog(ALOG_WARN, "cannot notify systemd", "error=%s",
		     alog_quote(strerror(-lerr), q, sizeof(q)));
	run(&a);
	ret = 0;
	agent_stop(&a);
out:
	agent_metrics_stop(a.metrics);
	agent_push_stop(a.push, 0, NULL);
	agent_push_stop(a.otlp, 0, NULL);
	if (a.session_started)
		session_free(&a.s);
	if (a.stats_fd > 0)
		close(a.stats_fd);
	ksyms_free(a.ks);
	agent_config_free(&a.cfg);
	return ret;
}
