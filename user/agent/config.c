// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's settings: flags, the config file and their defaults; see agent_config.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/cfiprof_abi.h"
#include "common/parse.h"
#include "elf/safe_open.h"
#include "user/agent/config.h"
#include "user/agent/http_server.h"
#include "user/agent/log.h"
#include "user/agent/push.h"
#include "user/profile/profile.h"
#include "user/session/runtimes.h"
#include "user/session/session.h"

#define OFF(f) offsetof(struct agent_config, f)

const struct agent_option agent_options[] = {
    {"freq", 'F', "HZ", "samples per second per CPU (default 19)", OPT_U32, OFF(freq), true, 1,
     10000},
    {"user-only", 'u', NULL, "no kernel stacks", OPT_FLAG, OFF(user_only), true, 0, 0},
    {"runtimes", 1055, "LIST",
     "language runtimes whose frames are read, comma-separated (cfiprof list --runtimes "
     "names them), or all (default) or none; one left out costs no start time",
     OPT_STR, OFF(runtimes), true, 0, 0},
    {"bpf-stats", 1017, NULL,
     "measure BPF run time for the metrics (enables run-time stats of every BPF program "
     "while the agent runs, like kernel.bpf_stats_enabled=1)",
     OPT_FLAG, OFF(bpf_stats), true, 0, 0},
    {"max-frames", 1001, "N", "user frames per stack (default 512)", OPT_U32, OFF(max_frames), true,
     1, MAX_USER_FRAMES_LIMIT},
    {"max-stacks", 1002, "N",
     "distinct stacks kept per interval; more go to [overflow] (default 65536)", OPT_U64,
     OFF(max_stacks), true, 16, 1u << 24},
    {"table-rows", 1003, "N",
     "unwind table rows the kernel maps hold, 4 bytes each (default 4194304)", OPT_U32,
     OFF(table_rows), true, 1024, 1u << 28},
    {"max-table-bytes", 1020, "SIZE",
     "bytes of unwind tables in the kernel maps; beyond them the least recently sampled "
     "processes' tables are unloaded (default: all that --table-rows holds)",
     OPT_SIZE, OFF(max_table_bytes), true, 65536, 1e12},
    {"max-processes", 1021, "N",
     "processes with tables loaded; beyond it the least recently sampled is unloaded "
     "(default 8192)",
     OPT_U32, OFF(max_processes), true, 1, 65536},
    {"table-idle-ttl", 1022, "DURATION",
     "tables of an object no process maps stay loaded this long, for the next process of the "
     "same program (default 30s; 0 unloads at once)",
     OPT_SECONDS, OFF(table_idle_ttl), true, 0, 86400},
    {"defer-stack", 1023, "SIZE",
     "bytes of user stack a sample taken before its process's tables are loaded carries, so "
     "that its walk is finished once they are (default 64K, at most 256K; 0: off)",
     OPT_SIZE, OFF(defer_stack), true, 0, DEFER_STACK_MAX},
    {"defer-budget", 1024, "SIZE",
     "stack bytes copied per second at most (default: a quarter of all samples at full size)",
     OPT_SIZE, OFF(defer_budget), true, 0, 1e12},
    {"table-cache", 1025, "DIR",
     "keep compiled unwind tables in DIR across restarts, so new processes of known programs "
     "unwind at once (default " AGENT_TABLE_CACHE_DEFAULT "; off disables)",
     OPT_STR, OFF(table_cache), true, 0, 0},
    {"table-cache-size", 1026, "SIZE",
     "bytes the table cache may hold; the least recently used go first (default 256M)",
     OPT_SIZE, OFF(table_cache_size), true, 1 << 20, 1e13},
    {"build-workers", 1040, "N",
     "tables of one process built at once, one thread each (default: the CPUs, at most 4; "
     "1: one after the other)",
     OPT_U32, OFF(build_workers), true, 1, 64},
    {"debuginfod", 1043, "URLS",
     "fetch the debug files of stripped objects by build-id from these debuginfod servers, on "
     "worker threads, bounded (default off; $DEBUGINFOD_URLS is not used)",
     OPT_STR, OFF(debuginfod), true, 0, 0},
    {"debuginfod-cache", 1044, "DIR",
     "where fetched debug files are kept (default " AGENT_DEBUGINFOD_CACHE_DEFAULT ")", OPT_STR,
     OFF(debuginfod_cache), true, 0, 0},
    {"debuginfod-timeout", 1045, "DURATION", "one fetch, connection to last byte (default 10s)",
     OPT_SECONDS, OFF(debuginfod_timeout), true, 0.1, 3600},
    {"debuginfod-max-size", 1046, "SIZE", "largest debug file fetched (default 512M)", OPT_SIZE,
     OFF(debuginfod_max_size), true, 4096, 1e12},
    {"no-source-lines", 1047, NULL,
     "name frames from symbols only: no source lines and inline frames from DWARF", OPT_FLAG,
     OFF(no_source_lines), true, 0, 0},
    {"source-lines-time", 1048, "DURATION",
     "time an interval may spend looking up source lines and inline frames; frames past it "
     "keep their function names, and are looked up in the next interval (default 200ms)",
     OPT_SECONDS, OFF(source_lines_time), false, 0, 3600},
    {"metrics-addr", 1004, "HOST:PORT",
     "Prometheus metrics on http://HOST:PORT/metrics (default 127.0.0.1:9491; off disables)",
     OPT_STR, OFF(metrics_addr), true, 0, 0},
    {"log-file", 1005, "PATH", "log here instead of stderr (reopened on SIGHUP)", OPT_STR,
     OFF(log_file), false, 0, 0},
    {"log-level", 1006, "LEVEL", "debug, info (default), warn or error", OPT_STR, OFF(log_level),
     false, 0, 0},
    {"interval", 'i', "DURATION", "one profile per DURATION (default 60s)", OPT_SECONDS,
     OFF(interval), false, 0.1, 86400},
    {"interval-wait", 1054, "DURATION",
     "how long an interval's end waits for samples taken before it that are still being "
     "unwound, such as a new process's waiting for its tables (default: a tenth of the "
     "interval, at most 1s)",
     OPT_SECONDS, OFF(interval_wait), false, 0, 86400},
    {"duration", 'd', "DURATION", "exit after DURATION (default: run until SIGTERM)", OPT_SECONDS,
     OFF(duration), true, 0, 1e9},
    {"output-dir", 'o', "DIR", "write each interval's pprof here (atomically)", OPT_STR,
     OFF(output_dir), false, 0, 0},
    {"retain-age", 1007, "DURATION", "delete profiles older than this (default 24h; 0 keeps)",
     OPT_SECONDS, OFF(retain_age), false, 0, 1e9},
    {"retain-bytes", 1008, "SIZE",
     "keep at most SIZE bytes of profiles in --output-dir, oldest go first (default 1G)", OPT_SIZE,
     OFF(retain_bytes), false, 0, 1e18},
    /* no -p: record's and top's -p is a pid */
    {"push", 1100, "URL", "push each interval to this Pyroscope-compatible server (URL/ingest)",
     OPT_STR, OFF(push_url), false, 0, 0},
    {"otlp", 1053, "URL",
     "send each interval as OTLP profiles to this OpenTelemetry receiver: POST "
     "URL/v1development/profiles, gzipped protobuf (a Collector's OTLP/HTTP port, Pyroscope's "
     "HTTP port), with the spool, retries, --tenant and --token-file of --push",
     OPT_STR, OFF(otlp_url), false, 0, 0},
    {"service-name", 1041, "NAME",
     "Pyroscope service_name of every sample and the push's application name (default: each "
     "process's container, systemd service or cgroup, else its comm; the push's name is then "
     "cfiprof)",
     OPT_STR, OFF(app_name), false, 0, 0},
    {"max-services", 1052, "N",
     "distinct services an interval pushes at most (without --service-name): those with the "
     "fewest samples become one, \"other\", counted (default 32)",
     OPT_U32, OFF(max_services), false, 2, 4096},
    {"app-name", 1009, "NAME", "the former name of --service-name", OPT_STR, OFF(app_name), false,
     0, 0},
    {"sample-labels", 1042, "LIST",
     "per-sample labels besides service_name, hostname and --labels: comma-separated from pid, "
     "tid, comm, ns_pid, cgroup, container, stop_reason, or all, or none (default comm: each "
     "distinct value is a series in Pyroscope)",
     OPT_STR, OFF(sample_labels), false, 0, 0},
    {"labels", 'l', "K=V[,K=V...]", "labels added to the push name and to every sample", OPT_STR,
     OFF(labels), false, 0, 0},
    {"tenant", 1010, "ID", "tenant for the push (X-Scope-OrgID header)", OPT_STR, OFF(tenant),
     false, 0, 0},
    {"token-file", 1011, "PATH", "bearer token for the push, read from PATH at every push", OPT_STR,
     OFF(token_file), false, 0, 0},
    {"spool-dir", 1012, "DIR",
     "undelivered profiles wait here (default: OUTPUT-DIR/spool, else "
     "/var/lib/cfiprof-agent/spool)",
     OPT_STR, OFF(spool_dir), false, 0, 0},
    {"spool-max-bytes", 1013, "SIZE",
     "bound of the spool; beyond it the oldest are dropped and counted (default 256M)", OPT_SIZE,
     OFF(spool_max_bytes), false, 0, 1e18},
    {"push-timeout", 1014, "DURATION", "timeout of one push (default 10s)", OPT_SECONDS,
     OFF(push_timeout), false, 0.1, 3600},
    {"push-backoff-max", 1015, "DURATION",
     "longest wait between retries; waits double from 1s with jitter (default 5m)", OPT_SECONDS,
     OFF(backoff_max), false, 0.05, 86400},
    {"cgroup", 1018, "PATH",
     "profile only this cgroup v2 directory and below (absolute, or under the cgroup2 mount)",
     OPT_STR, OFF(cgroup), true, 0, 0},
    {"container", 1019, "ID",
     "profile only this container (docker, containerd, CRI-O, podman id prefix; nspawn name)",
     OPT_STR, OFF(container), true, 0, 0},
    {"hostname", 1016, "NAME", "hostname label (default: gethostname)", OPT_STR, OFF(hostname),
     false, 0, 0},
    {"off-cpu", 1050, NULL,
     "off-CPU time too: each profile has cpu/nanoseconds and off_cpu/nanoseconds (the stacks "
     "threads blocked in, weighted by the time until they ran again)",
     OPT_FLAG, OFF(off_cpu), true, 0, 0},
    {"min-block", 1051, "DURATION", "off-CPU blocks shorter than this are counted, not sampled "
     "(default 0)", OPT_SECONDS, OFF(min_block), true, 0, 3600},
};
const size_t agent_nr_options = sizeof(agent_options) / sizeof(agent_options[0]);

void agent_config_defaults(struct agent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->freq = 19;
	c->max_frames = DEFAULT_USER_FRAMES;
	c->max_stacks = 1u << 16;
	c->table_rows = 4u << 20;
	c->max_processes = 8192;
	c->table_idle_ttl = SESSION_TABLE_IDLE_TTL;
	c->defer_stack = SESSION_DEFER_STACK;
	c->interval = 60;
	c->retain_age = 24 * 3600;
	c->retain_bytes = 1ull << 30;
	c->push_timeout = 10;
	c->backoff_max = 300;
	c->spool_max_bytes = 256ull << 20;
	c->source_lines_time = 0.2;
	c->max_services = AGENT_MAX_SERVICES_DEFAULT;
}

static char **str_field(struct agent_config *c, const struct agent_option *o)
{
	return (char **)((char *)c + o->off);
}

void agent_config_free(struct agent_config *c)
{
	size_t i;

	for (i = 0; i < agent_nr_options; i++)
		if (agent_options[i].kind == OPT_STR) {
			free(*str_field(c, &agent_options[i]));
			*str_field(c, &agent_options[i]) = NULL;
		}
}

const struct agent_option *agent_option_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < agent_nr_options; i++)
		if (!strcmp(agent_options[i].name, name))
			return &agent_options[i];
	return NULL;
}

const struct agent_option *agent_option_by_key(int key)
{
	size_t i;

	for (i = 0; i < agent_nr_options; i++)
		if (agent_options[i].key == key)
			return &agent_options[i];
	return NULL;
}

int agent_config_set(struct agent_config *c, const struct agent_option *o, const char *value,
		     char *err, size_t errlen)
{
	void *field = (char *)c + o->off;
	double v = 0;
	char *dup;
	int bad = 0;

	switch (o->kind) {
	case OPT_FLAG:
		/* a bare flag on the command line means true */
		if (!value)
			value = "true";
		if (parse_bool(value, (bool *)field))
			goto invalid;
		return 0;
	case OPT_STR:
		dup = strdup(value ? value : "");
		if (!dup) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		free(*(char **)field);
		*(char **)field = dup;
		return 0;
	case OPT_SECONDS:
		bad = parse_seconds(value, &v);
		break;
	case OPT_SIZE:
		bad = parse_size(value, &v);
		break;
	case OPT_U32:
	case OPT_U64:
		bad = parse_double(value, &v) || v != floor(v);
		break;
	}
	if (bad || v < o->min || v > o->max)
		goto invalid;
	if (o->kind == OPT_SECONDS)
		*(double *)field = v;
	else if (o->kind == OPT_U32)
		*(uint32_t *)field = (uint32_t)v;
	else
		*(uint64_t *)field = (uint64_t)v;
	return 0;
invalid:
	if (o->kind == OPT_FLAG || o->kind == OPT_STR)
		snprintf(err, errlen, "invalid %s '%s'", o->name, value);
	else
		snprintf(err, errlen, "invalid %s '%s' (%g..%g%s)", o->name, value, o->min, o->max,
			 o->kind == OPT_SECONDS ? " seconds" : "");
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int agent_config_read_file(struct agent_config *c, const char *path,
			   bool (*skip)(const char *name, void *ctx), void *ctx, char *err,
			   size_t errlen)
{
	const struct agent_option *o;
	char *line = NULL, *key, *val, *eq, sub[256];
	size_t cap = 0;
	int lineno = 0, ret = -1;
	FILE *f;

	/* a FIFO named as the config would block the agent's start (or its SIGHUP) for good */
	f = fopen_regular(path);
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path,
			 errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		key = trim(line);
		if (!*key || *key == '#' || *key == ';')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value'", path, lineno);
			goto out;
		}
		*eq = 0;
		key = trim(key);
		val = trim(eq + 1);
		/* values may be quoted to keep leading or trailing blanks */
		if (strlen(val) >= 2 && val[0] == '"' && val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = 0;
			val++;
		}
		o = agent_option_by_name(key);
		if (!o) {
			snprintf(err, errlen, "%s:%d: unknown setting '%s'", path, lineno, key);
			goto out;
		}
		if (skip && skip(key, ctx))
			continue;
		if (agent_config_set(c, o, val, sub, sizeof(sub))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, sub);
			goto out;
		}
	}
	ret = 0;
out:
	free(line);
	fclose(f);
	return ret;
}

/* A label value, host name or app name: what Pyroscope's name syntax and pprof labels carry. */
static bool plain_value(const char *v, size_t max)
{
	size_t n = strlen(v);

	return n && n <= max && !strpbrk(v, "{}\",=\n\r\t");
}

static int check_labels(const char *labels, char *err, size_t errlen)
{
	const char *p = labels;
	char val[AGENT_LABEL_MAX + 1];
	int n = 0;

	/* k=v[,k=v]: names as Prometheus and Pyroscope accept them */
	while (p && *p) {
		const char *k = p, *v;

		if (!isalpha((unsigned char)*p) && *p != '_')
			goto bad;
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
			p++;
		if (*p != '=' || p == k || p - k > AGENT_LABEL_MAX)
			goto bad;
		v = ++p;
		while (*p && *p != ',')
			p++;
		if ((size_t)(p - v) > AGENT_LABEL_MAX)
			goto bad;
		snprintf(val, sizeof(val), "%.*s", (int)(p - v), v);
		if (!plain_value(val, AGENT_LABEL_MAX))
			goto bad;
		/* the host name is one more label */
		if (++n > AGENT_MAX_LABELS - 1) {
			snprintf(err, errlen, "too many labels (at most %d)", AGENT_MAX_LABELS - 1);
			return -1;
		}
		if (*p == ',')
			p++;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "invalid labels '%.64s' (K=V[,K=V...], each name and value 1..%d bytes, no braces, "
		 "quotes or '=' in values)",
		 labels, AGENT_LABEL_MAX);
	return -1;
}

/* A push or OTLP URL (NULL or "": none): http(s), within its buffers. */
static int check_url(const char *url, const char *what, char *err, size_t errlen)
{
	if (!url || !*url)
		return 0;
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(err, errlen, "invalid %s URL '%.64s' (http:// or https://)", what, url);
		return -1;
	}
	if (strlen(url) > AGENT_URL_MAX) {
		snprintf(err, errlen, "%s URL longer than %d bytes", what, AGENT_URL_MAX);
		return -1;
	}
	return 0;
}

/*
 * The tenant and token of a push or OTLP send: a header value each, so no
 * control characters; a missing, empty or non-regular token file (a FIFO) is
 * an error now, not at each push.
 */
static int check_auth(const struct agent_config *c, char *err, size_t errlen)
{
	if (c->tenant && !plain_value(c->tenant, AGENT_LABEL_MAX)) {
		snprintf(err, errlen, "invalid tenant '%.64s' (1..%d bytes, no quotes or control characters)",
			 c->tenant, AGENT_LABEL_MAX);
		return -1;
	}
	if (c->token_file && *c->token_file) {
		char token[4096];
		int e = agent_push_read_token(c->token_file, token, sizeof(token));

		if (e) {
			snprintf(err, errlen, "cannot read token-file %.1024s: %s", c->token_file,
				 e == -EINVAL ? "not a regular file" : strerror(-e));
			return -1;
		}
	}
	return 0;
}

/* What the push sends must fit its buffers: refuse at start, not drop every profile later. */
static int check_push(const struct agent_config *c, char *err, size_t errlen)
{
	char host[256] = "", name[AGENT_PUSH_NAME_MAX];
	const char *app = c->app_name && *c->app_name ? c->app_name : "cfiprof";

	if (!plain_value(app, AGENT_LABEL_MAX)) {
		snprintf(err, errlen, "invalid service-name '%.64s' (1..%d bytes, no braces, quotes, ',' or '=')",
			 app, AGENT_LABEL_MAX);
		return -1;
	}
	if (c->hostname && *c->hostname)
		snprintf(host, sizeof(host), "%s", c->hostname);
	else
		gethostname(host, sizeof(host) - 1);
	if (agent_push_name(app, host, c->labels, name, sizeof(name))) {
		snprintf(err, errlen, "service-name, hostname and labels make a push name over %d bytes",
			 AGENT_PUSH_NAME_MAX - 1);
		return -1;
	}
	return check_auth(c, err, errlen);
}

int agent_labels_omitted(const char *list, uint32_t *omitted)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} names[] = {
	    {"pid", PROF_LABEL_PID},		{"tid", PROF_LABEL_TID},
	    {"comm", PROF_LABEL_COMM},		{"ns_pid", PROF_LABEL_NS_PID},
	    {"cgroup", PROF_LABEL_CGROUP},	{"container", PROF_LABEL_CONTAINER},
	    {"stop_reason", PROF_LABEL_STOP_REASON}, {"all", PROF_LABELS_ALL},
	    {"none", 0},
	};
	uint32_t keep = 0;
	const char *p = list ? list : AGENT_SAMPLE_LABELS_DEFAULT;
	size_t i, n;

	while (*p) {
		n = strcspn(p, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && !memcmp(p, names[i].name, n))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -1;
		keep |= names[i].bit;
		p += n + (p[n] == ',');
	}
	*omitted = PROF_LABELS_ALL & ~keep;
	return 0;
}

int agent_config_check(const struct agent_config *c, char *err, size_t errlen)
{
	uint32_t omitted, off;
	char sub[256];

	if (!(c->output_dir && *c->output_dir) && !(c->push_url && *c->push_url) &&
	    !(c->otlp_url && *c->otlp_url)) {
		snprintf(err, errlen, "nothing to do: give --output-dir, --push, --otlp or several");
		return -1;
	}
	if (c->interval_wait >= c->interval) {
		snprintf(err, errlen,
			 "invalid interval-wait %gs (it must be shorter than the interval, %gs)",
			 c->interval_wait, c->interval);
		return -1;
	}
	if (c->log_level && alog_parse_level(c->log_level) < 0) {
		snprintf(err, errlen, "invalid log-level '%s'", c->log_level);
		return -1;
	}
	if (check_url(c->push_url, "push", err, errlen) ||
	    check_url(c->otlp_url, "otlp", err, errlen))
		return -1;
	if (c->hostname && *c->hostname && !plain_value(c->hostname, AGENT_LABEL_MAX)) {
		snprintf(err, errlen, "invalid hostname '%.64s' (1..%d bytes, no braces, quotes, ',' or '=')",
			 c->hostname, AGENT_LABEL_MAX);
		return -1;
	}
	if (check_labels(c->labels, err, errlen))
		return -1;
	if (c->runtimes && session_runtimes_parse(c->runtimes, &off, sub, sizeof(sub))) {
		snprintf(err, errlen, "invalid runtimes: %s", sub);
		return -1;
	}
	if (c->app_name && *c->app_name && !plain_value(c->app_name, AGENT_LABEL_MAX)) {
		snprintf(err, errlen,
			 "invalid service-name '%.64s' (1..%d bytes, no braces, quotes, ',' or '=')",
			 c->app_name, AGENT_LABEL_MAX);
		return -1;
	}
	if (agent_labels_omitted(c->sample_labels, &omitted)) {
		snprintf(err, errlen,
			 "invalid sample-labels '%.64s' (pid, tid, comm, ns_pid, cgroup, container, "
			 "stop_reason, all or none, comma-separated)",
			 c->sample_labels);
		return -1;
	}
	if (c->debuginfod_cache &&
	    (!*c->debuginfod_cache || strlen(c->debuginfod_cache) >= PATH_MAX)) {
		snprintf(err, errlen, "invalid debuginfod-cache '%.64s' (a directory)",
			 c->debuginfod_cache);
		return -1;
	}
	if (c->table_cache && (!*c->table_cache || strlen(c->table_cache) >= PATH_MAX)) {
		snprintf(err, errlen, "invalid table-cache '%.64s' (a directory, or off)",
			 c->table_cache);
		return -1;
	}
	/* a bad address is a mistake to refuse now; a taken port is retried while sampling */
	if (c->metrics_addr && *c->metrics_addr && strcmp(c->metrics_addr, "off") &&
	    http_addr_check(c->metrics_addr, err, errlen))
		return -1;
	if (c->otlp_url && *c->otlp_url && check_auth(c, err, errlen))
		return -1;
	return c->push_url && *c->push_url ? check_push(c, err, errlen) : 0;
}

void agent_config_restart_diff(const struct agent_config *a, const struct agent_config *b,
			       char *out, size_t len)
{
	size_t i, n = 0;

	out[0] = 0;
	for (i = 0; i < agent_nr_options; i++) {
		const struct agent_option *o = &agent_options[i];
		const char *pa = (const char *)a + o->off, *pb = (const char *)b + o->off;
		bool same;

		if (!o->restart)
			continue;
		switch (o->kind) {
		case OPT_STR:
			same = !strcmp(*(char *const *)pa ? *(char *const *)pa : "",
				       *(char *const *)pb ? *(char *const *)pb : "");
			break;
		case OPT_FLAG:
			same = *(const bool *)pa == *(const bool *)pb;
			break;
		case OPT_U32:
			same = *(const uint32_t *)pa == *(const uint32_t *)pb;
			break;
		case OPT_SECONDS:
			same = *(const double *)pa == *(const double *)pb;
			break;
		default:
			same = *(const uint64_t *)pa == *(const uint64_t *)pb;
			break;
		}
		if (!same && n + strlen(o->name) + 2 < len)
			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "," : "", o->name);
	}
}
