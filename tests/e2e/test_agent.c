// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof agent, end to end, with short intervals while build/progs/chain runs:
 *  1. files: three 2-second intervals (--duration 6); each file opens in
 *     `go tool pprof -top` with `leaf`; the samples in the files add up to the
 *     BPF counters minus the counted losses (the agent's final log line); the
 *     metrics endpoint serves the documented names with sane values; SIGHUP
 *     re-reads the config file (labels team=a, then team=b);
 *  2. push: a loopback receiver checks method, path, query (name, from,
 *     until, format), tenant and bearer headers and that the body gunzips to
 *     a pprof with `leaf`; then answers 503, then stalls past the push
 *     timeout, then recovers; every interval arrives exactly once, in order;
 *  3. backend down: the spool keeps the profiles, its bound drops the oldest
 *     (counted and logged); SIGTERM flushes the partial interval;
 *  4. restart: what the spool kept is delivered in order first; kill -9
 *     leaves no BPF program or link behind; a second start works at once;
 *  5. churn: 2,000 short processes; tracked processes, RSS and table bytes
 *     return to their baseline;
 *  6. in a cgroup of the test's own (--cgroup): --max-processes and
 *     --max-table-bytes unload the least recently sampled processes (counted)
 *     and the busy program stays completely unwound; 300 processes living
 *     ~5 ms each have all their samples in the profiles.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
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
#include "tests/lib/test_cgroup.h"

#define PATHBUF (PATH_MAX + 256)

static char chain_bin[PATHBUF];
static char go_bin[PATH_MAX];

/* ---- processes ---- */

/* Waits until the file contains needle; true if it did within timeout. */
static bool wait_for_text(const char *path, const char *needle, double timeout)
{
	double deadline = mono_sec() + timeout;

	do {
		char *s = slurp(path);
		bool found = strstr(s, needle) != NULL;

		free(s);
		if (found)
			return true;
		usleep(50000);
	} while (mono_sec() < deadline);
	return false;
}

/* The value of key=VALUE in the last line of the log containing msg. */
static bool log_value(const char *log, const char *msg, const char *key, char *out, size_t len)
{
	char *s = slurp(log), *line = NULL, *p, pat[64];
	bool ok = false;

	for (p = strstr(s, msg); p; p = strstr(p + 1, msg))
		line = p;
	snprintf(pat, sizeof(pat), " %s=", key);
	if (line) {
		char *eol = strchr(line, '\n');

		if (eol)
			*eol = 0;
		p = strstr(line, pat);
		if (p) {
			p += strlen(pat);
			snprintf(out, len, "%.*s", (int)strcspn(p, " "), p);
			ok = true;
		}
	}
	free(s);
	return ok;
}

static uint64_t log_u64(const char *log, const char *msg, const char *key)
{
	char v[64];

	return log_value(log, msg, key, v, sizeof(v)) ? strtoull(v, NULL, 10) : UINT64_MAX;
}

/* ---- pprof decoding (just what the checks need) ---- */

struct pprof_info {
	bool ok;
	uint64_t nr_samples, total; /* sample messages, sum of value[0] */
	uint64_t duration_ns;
	bool has_leaf;
	char comments[512]; /* joined with ';' */
	char labels[512];   /* distinct label keys seen on the first sample */
};

/* What the checks need of a gzipped profile; .ok false if it does not decode. */
static struct pprof_info decode_pprof(const void *gz, size_t len)
{
	struct pprof_info pi = {0};
	struct decoded d;
	uint8_t *raw;
	size_t raw_len, n = 0;

	raw = gunzip_mem(gz, len, &raw_len);
	if (!raw)
		return pi;
	pi.ok = !decode(raw, raw_len, &d);
	pi.nr_samples = (uint64_t)d.nr_samples;
	for (int i = 0; i < d.nr_samples; i++)
		pi.total += d.samples[i].nr_vals ? d.samples[i].vals[0] : 0;
	pi.duration_ns = d.duration_nanos;
	for (int i = 0; i < d.nr_strs; i++)
		pi.has_leaf |= !strcmp(d.strs[i], "leaf");
	for (int i = 0; i < d.nr_comments; i++)
		if (d.comments[i] < (uint64_t)d.nr_strs && n < sizeof(pi.comments))
			n += (size_t)snprintf(pi.comments + n, sizeof(pi.comments) - n, "%s;",
					      d.strs[d.comments[i]]);
	n = 0;
	for (int i = 0; d.nr_samples && i < d.samples[0].nr_labels; i++)
		if (n < sizeof(pi.labels))
			n += (size_t)snprintf(pi.labels + n, sizeof(pi.labels) - n, "%s;",
					      d.samples[0].label_keys[i]);
	decoded_free(&d);
	free(raw);
	return pi;
}

static struct pprof_info decode_file(const char *path)
{
	size_t len;
	char *s = slurp_len(path, &len);
	struct pprof_info pi = decode_pprof(s, len);

	free(s);
	return pi;
}

/* go tool pprof ARGS FILE, offline with its caches in tmpdir. */
static char *run_pprof(const char *args, const char *file, int *status)
{
	return go_pprof(go_bin, tmpdir, args, file, status);
}

/* ---- what the interval files hold ---- */

/*
 * From `go tool pprof -traces -sample_index=samples` of each interval file
 * names[from..n) in dir: every sample, and those whose stack is complete with
 * chain's leaf;d;c;b;a;main (leaf first, no [incomplete: ...] frame).  False
 * if pprof fails on one.
 */
static bool profile_chain_samples(const char *dir, char **names, int from, int n, uint64_t *all,
				  uint64_t *chain)
{
	static const char *const want[] = {"leaf", "d", "c", "b", "a", "main"};
	const size_t nwant = sizeof(want) / sizeof(want[0]);
	char path[PATHBUF * 2];
	int f, status;

	*all = *chain = 0;
	for (f = from; f < n; f++) {
		char *out, *line, *save = NULL;
		uint64_t value = 0;
		bool in_block = false, have_value = false, incomplete = false;
		size_t matched = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, names[f]);
		out = run_pprof("-traces -sample_index=samples", path, &status);
		if (status || !out) {
			fprintf(stderr, "  go tool pprof -traces %s: exit %d\n%.1000s\n", path,
				status, out ? out : "");
			free(out);
			return false;
		}
		/* one extra separator at the end flushes the last block */
		for (line = strtok_r(out, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
			const char *p = line ? line : "-----------+";
			char *end;

			if (!strncmp(p, "-----------+", 12)) {
				if (in_block && have_value) {
					*all += value;
					if (!incomplete && matched == nwant)
						*chain += value;
				}
				in_block = true;
				have_value = incomplete = false;
				matched = 0;
				if (!line)
					break;
				continue;
			}
			while (*p == ' ' || *p == '\t')
				p++;
			if (!in_block || !*p)
				continue;
			if (!have_value) {
				/* label lines ("key: value") come before the value line */
				if (!isdigit((unsigned char)*p))
					continue;
				value = strtoull(p, &end, 10);
				if (*end != ' ' && *end != '\t')
					continue;
				have_value = true;
				for (p = end; *p == ' ' || *p == '\t'; p++)
					;
			}
			if (!strncmp(p, "[incomplete", 11))
				incomplete = true;
			/* the chain, consecutive, leaf first */
			if (matched < nwant && !strcmp(p, want[matched]))
				matched++;
			else if (matched < nwant)
				matched = !strcmp(p, want[0]);
		}
		free(out);
	}
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

/* ---- files in a directory ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir starting with prefix (NULL: all but dot files); caller frees. */
static int list_dir(const char *dir, const char *prefix, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (prefix ? strncmp(e->d_name, prefix, strlen(prefix)) : e->d_name[0] == '.')
			continue;
		v = realloc(v, (size_t)(n + 1) * sizeof(*v));
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, int n)
{
	while (n-- > 0)
		free(v[n]);
	free(v);
}

static uint64_t dir_bytes(const char *dir, int *files)
{
	char **v, path[PATHBUF];
	struct stat st;
	uint64_t total = 0;
	int n = list_dir(dir, NULL, &v), i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, v[i]);
		if (!stat(path, &st))
			total += (uint64_t)st.st_size;
	}
	if (files)
		*files = n;
	free_list(v, n);
	return total;
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

/* ---- HTTP: a tiny client for /metrics and the receiver for pushes ---- */

enum recv_mode { RECV_OK, RECV_503, RECV_STALL };

struct receiver {
	int fd, port;
	pthread_t thread;
	volatile bool stop;
	pthread_mutex_t lock;
	/* the plan: after the first accepted push, 503 for t503 s, then stall for tstall s */
	bool outage;
	double t503, tstall, first_ok_at;
	/* what the agent should send */
	char want_name[512], want_tenant[64], want_token[64];
	bool check_leaf;
	/* what it sent */
	int nr_ok, nr_503, nr_stall, nr_requests;
	uint64_t from_ok[256], until_ok[256];
	char first_err[512];
	bool first_checked;
};

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

static void url_decode(const char *in, size_t len, char *out, size_t outlen)
{
	size_t o = 0, i;

	for (i = 0; i < len && o + 1 < outlen; i++) {
		if (in[i] == '%' && i + 2 < len && isxdigit((unsigned char)in[i + 1]) &&
		    isxdigit((unsigned char)in[i + 2])) {
			out[o++] = (char)(hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i] == '+' ? ' ' : in[i];
		}
	}
	out[o] = 0;
}

static bool query_param(const char *query, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = query;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			p += kl + 1;
			url_decode(p, strcspn(p, "& "), out, len);
			return true;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return false;
}

static const char *header_value(const char *hdrs, const char *name, char *out, size_t len)
{
	const char *p = hdrs;
	size_t n = strlen(name);

	while ((p = strchr(p, '\n'))) {
		p++;
		if (!strncasecmp(p, name, n) && p[n] == ':') {
			p += n + 1;
			while (*p == ' ')
				p++;
			snprintf(out, len, "%.*s", (int)strcspn(p, "\r\n"), p);
			return out;
		}
	}
	return NULL;
}

/* Reads one request: headers into hdr (NUL-terminated), body malloc'd. */
static int read_request(int fd, char *hdr, size_t hlen, char **body, size_t *blen)
{
	size_t n = 0, clen = 0, have;
	char *end = NULL, v[32];
	ssize_t r;

	*body = NULL;
	while (n < hlen - 1) {
		if (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 3000) <= 0)
			return -1;
		r = read(fd, hdr + n, hlen - 1 - n);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		hdr[n] = 0;
		end = strstr(hdr, "\r\n\r\n");
		if (end)
			break;
	}
	if (!end)
		return -1;
	if (header_value(hdr, "Content-Length", v, sizeof(v)))
		clen = strtoul(v, NULL, 10);
	have = n - (size_t)(end + 4 - hdr);
	*body = malloc(clen + 1);
	memcpy(*body, end + 4, have < clen ? have : clen);
	end[2] = 0; /* headers end here */
	while (have < clen) {
		if (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 3000) <= 0)
			return -1;
		r = read(fd, *body + have, clen - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	*blen = clen;
	return 0;
}

static void reply(int fd, int code)
{
	char buf[256];
	const char *text = code == 200 ? "OK" : "Service Unavailable";

	snprintf(buf, sizeof(buf),
		 "HTTP/1.1 %d %s\r\nContent-Length: 3\r\nConnection: close\r\n\r\n%d", code, text,
		 code / 10 == 50 ? 503
		 : code == 200	 ? 200
				 : code);
	if (write(fd, buf, strlen(buf)) < 0)
		return;
}

/* Checks everything about the first push; returns "" or what is wrong. */
static void check_first(struct receiver *rv, const char *hdr, const char *body, size_t blen)
{
	char line[1024], path[1024], q[600], v[512];
	const char *query;
	struct pprof_info pi;
	size_t n = 0;
	uint64_t from, until;

#define BAD(...) (n += (size_t)snprintf(rv->first_err + n, sizeof(rv->first_err) - n, __VA_ARGS__))
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(hdr, "\r\n"), hdr);
	if (sscanf(line, "POST %1023s HTTP/1.1", path) != 1)
		BAD("request line '%s'; ", line);
	query = strchr(path, '?');
	if (!query || strncmp(path, "/ingest?", 8))
		BAD("path '%s'; ", path);
	query = query ? query + 1 : "";
	if (!query_param(query, "name", q, sizeof(q)) || strcmp(q, rv->want_name))
		BAD("name '%s' (want '%s'); ", q, rv->want_name);
	if (!query_param(query, "format", q, sizeof(q)) || strcmp(q, "pprof"))
		BAD("format '%s'; ", q);
	from = query_param(query, "from", q, sizeof(q)) ? strtoull(q, NULL, 10) : 0;
	until = query_param(query, "until", q, sizeof(q)) ? strtoull(q, NULL, 10) : 0;
	if (from < 1600000000 || until <= from || until - from > 5 ||
	    (uint64_t)time(NULL) + 2 < until)
		BAD("from %" PRIu64 " until %" PRIu64 "; ", from, until);
	if (!header_value(hdr, "X-Scope-OrgID", v, sizeof(v)) || strcmp(v, rv->want_tenant))
		BAD("tenant header; ");
	snprintf(q, sizeof(q), "Bearer %s", rv->want_token);
	if (!header_value(hdr, "Authorization", v, sizeof(v)) || strcmp(v, q))
		BAD("authorization header; ");
	pi = decode_pprof(body, blen);
	if (!pi.ok || !pi.nr_samples)
		BAD("body is not a gzip'd pprof with samples (%zu bytes); ", blen);
	if (rv->check_leaf && !pi.has_leaf)
		BAD("body has no 'leaf' function; ");
	if (!strstr(pi.labels, "hostname;") || !strstr(pi.labels, "pid;"))
		BAD("sample labels '%s'; ", pi.labels);
#undef BAD
	rv->first_checked = true;
}

static void *receiver_main(void *arg)
{
	struct receiver *rv = arg;
	char hdr[8192], *body, q[64];
	const char *query;
	size_t blen;
	int fd;

	while (!rv->stop) {
		enum recv_mode mode = RECV_OK;
		double t;

		if (poll(&(struct pollfd){.fd = rv->fd, .events = POLLIN}, 1, 100) <= 0)
			continue;
		fd = accept4(rv->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (read_request(fd, hdr, sizeof(hdr), &body, &blen)) {
			free(body);
			close(fd);
			continue;
		}
		pthread_mutex_lock(&rv->lock);
		rv->nr_requests++;
		if (rv->outage && rv->nr_ok) {
			t = mono_sec() - rv->first_ok_at;
			mode = t < rv->t503		   ? RECV_503
			       : t < rv->t503 + rv->tstall ? RECV_STALL
							   : RECV_OK;
		}
		if (mode == RECV_OK) {
			if (!rv->first_checked && rv->want_name[0])
				check_first(rv, hdr, body, blen);
			query = strchr(hdr, '?');
			if (rv->nr_ok < 256 && query) {
				rv->from_ok[rv->nr_ok] =
				    query_param(query + 1, "from", q, sizeof(q))
					? strtoull(q, NULL, 10)
					: 0;
				rv->until_ok[rv->nr_ok] =
				    query_param(query + 1, "until", q, sizeof(q))
					? strtoull(q, NULL, 10)
					: 0;
			}
			if (!rv->nr_ok)
				rv->first_ok_at = mono_sec();
			rv->nr_ok++;
		} else if (mode == RECV_503) {
			rv->nr_503++;
		} else {
			rv->nr_stall++;
		}
		pthread_mutex_unlock(&rv->lock);
		free(body);
		if (mode == RECV_STALL) {
			/* longer than the agent's push timeout: it gives up, and must retry */
			sleep_s(1.5);
		} else {
			reply(fd, mode == RECV_OK ? 200 : 503);
		}
		close(fd);
	}
	return NULL;
}

static int receiver_start(struct receiver *rv)
{
	rv->fd = listen_loopback(&rv->port);
	if (rv->fd < 0)
		return -1;
	pthread_mutex_init(&rv->lock, NULL);
	return pthread_create(&rv->thread, NULL, receiver_main, rv);
}

static void receiver_stop(struct receiver *rv)
{
	rv->stop = true;
	pthread_join(rv->thread, NULL);
	close(rv->fd);
	pthread_mutex_destroy(&rv->lock);
}

/* ---- the agent ---- */

static pid_t start_agent(char **extra, const char *log)
{
	char *argv[64];
	int n = 0;

	argv[n++] = (char *)cfiprof_bin;
	argv[n++] = "agent";
	while (*extra && n < 63)
		argv[n++] = *extra++;
	argv[n] = NULL;
	return spawn(argv, NULL, log);
}

/* Starts the agent and waits for its metrics address (the "agent started" line). */
static pid_t start_agent_metrics(char **argv, const char *log, char *addr, size_t len,
				 const char *what)
{
	pid_t pid = start_agent(argv, log);

	CHECK(wait_for_text(log, "agent started", 15), "%s: agent did not start", what);
	CHECK(log_value(log, "agent started", "metrics", addr, len), "%s: no metrics address",
	      what);
	return pid;
}

static bool agent_exited_cleanly(pid_t pid, double timeout, const char *log)
{
	bool timed_out;
	int st = wait_timeout(pid, timeout, &timed_out);
	bool ok = exit_code(st, timed_out) == 0;

	CHECK(ok, "agent exit status %d%s", st, timed_out ? " (killed: it did not exit in time)" : "");
	if (!ok)
		print_tail(log, 20);
	return ok;
}

static void check_metrics(const char *addr)
{
	char *r = http_get(addr, "/metrics");
	static const char *const names[] = {"cfiprof_samples_total",
					    "cfiprof_samples_lost_total",
					    "cfiprof_rule_cache_hits_total",
					    "cfiprof_tables_loaded",
					    "cfiprof_table_bytes",
					    "cfiprof_processes_tracked",
					    "process_resident_memory_bytes",
					    "cfiprof_kernel_map_bytes",
					    "cfiprof_intervals_total",
					    "cfiprof_bpf_run_seconds_total",
					    "process_cpu_seconds_total"};
	size_t i;
	double v;

	CHECK(r && strstr(r, "HTTP/1.1 200"), "GET /metrics: %.200s", r ? r : "(no answer)");
	if (!r)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(metric_value(r, names[i]) >= 0, "metric %s missing", names[i]);
	CHECK(strstr(r, "# TYPE cfiprof_samples_total counter"), "TYPE line missing");
	CHECK(metric_value(r, "cfiprof_samples_total") > 0, "no samples");
	CHECK(metric_value(r, "cfiprof_walks_total{reason=\"complete\"}") > 0, "no complete walks");
	CHECK(metric_value(r, "cfiprof_rule_cache_hits_total") > 0, "no rule cache hits");
	CHECK(metric_value(r, "cfiprof_tables_loaded") >= 1, "tables loaded");
	CHECK(metric_value(r, "cfiprof_table_bytes") > 1000, "table bytes");
	CHECK(metric_value(r, "cfiprof_processes_tracked") >= 2, "processes tracked");
	v = metric_value(r, "process_resident_memory_bytes");
	CHECK(v > 1e6 && v < 1e9, "rss %g", v);
	CHECK(metric_value(r, "cfiprof_kernel_map_bytes") > 4096, "kernel map bytes");
	CHECK(metric_value(r, "cfiprof_intervals_total") >= 1, "intervals");
	free(r);
	r = http_get(addr, "/nope");
	CHECK(r && strstr(r, "HTTP/1.1 404"), "GET /nope: %.100s", r ? r : "(no answer)");
	free(r);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* 1: files, counts, go tool pprof, metrics, SIGHUP */
/* A sample of the agent's own gauges through /metrics. */
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
	double samples, complete, evicted_procs, evicted_tables, table_bytes, processes;
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
	sleep_s(1);
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
	sleep_s(1);
	CHECK(read_walks(addr, &w), "measure: no metrics");
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
	char *idle[] = {"python3", "-c", "import time; time.sleep(30)", NULL};
	char *busy[] = {chain_bin, "30", NULL};
	struct walk_counts a = {0}, b = {0}, c = {0};
	double bytes, cpu_b, cpu_c;
	pid_t pid, busy_pid;
	int files_from;

	if (spawn_in_cgroup(idle) <= 0)
		CHECK(0, "cannot start python3");
	sleep_s(0.5);
	bytes = measure_table_bytes();
	CHECK(bytes > 100000, "python3's tables: %.0f bytes", bytes);
	snprintf(cap, sizeof(cap), "%.0f", bytes);
	snprintf(log, sizeof(log), "%s/capbytes.log", tmpdir);
	snprintf(dir, sizeof(dir), "%s/capbytes", tmpdir);
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "cap bytes");
	sleep_s(1);
	CHECK(read_walks(addr, &a), "cap bytes: no metrics");
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
	sleep_s(1);
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

static void test_files(void)
{
	char dir[PATHBUF], log[PATHBUF], conf[PATHBUF], path[PATHBUF * 2], addr[64];
	char *argv[] = {"--config",	conf, "--interval",	"2",	       "--duration", "6",
			"--output-dir", dir,  "--metrics-addr", "127.0.0.1:0", NULL};
	uint64_t sum = 0, profile_samples, bpf, lost, malformed;
	char **files;
	int n, i, status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/files", tmpdir);
	snprintf(log, sizeof(log), "%s/files.log", tmpdir);
	snprintf(conf, sizeof(conf), "%s/agent.conf", tmpdir);
	/* pid and tid labels too: the files are checked against the processes */
	write_file(conf, "# test config\nlabels = team=a\nlog-level = info\nsample-labels = all\n");
	pid = start_agent_metrics(argv, log, addr, sizeof(addr), "files");
	/* after the first interval: intervals_total >= 1 */
	CHECK(wait_for_text(log, "msg=interval", 10), "no first interval");
	check_metrics(addr);
	write_file(conf, "labels = team=b\nsample-labels = all\n");
	kill(pid, SIGHUP);
	CHECK(wait_for_text(log, "config reloaded", 5), "SIGHUP did not reload the config");
	if (!agent_exited_cleanly(pid, 20, log))
		return;
	CHECK(wait_for_text(log, "agent stopped", 0), "no final log line");
	n = list_dir(dir, "cfiprof-", &files);
	CHECK(n == 3, "%d interval files (want 3)", n);
	for (i = 0; i < n; i++) {
		struct pprof_info pi;
		char *out;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		out = run_pprof("-top", path, &status);
		CHECK(status == 0 && out && strstr(out, " leaf\n"),
		      "go tool pprof -top %s: exit %d, no leaf:\n%.1500s", files[i], status,
		      out ? out : "");
		free(out);
		pi = decode_file(path);
		CHECK(pi.ok && pi.nr_samples, "%s: not a pprof with samples", files[i]);
		CHECK(strstr(pi.labels, "hostname;") && strstr(pi.labels, "team;") &&
			  strstr(pi.labels, "comm;") && strstr(pi.labels, "tid;"),
		      "%s: sample labels '%s'", files[i], pi.labels);
		CHECK(pi.duration_ns > 1.5e9 && pi.duration_ns < 3e9, "%s: duration %" PRIu64,
		      files[i], pi.duration_ns);
		if (i == 0)
			CHECK(strstr(pi.comments, "team=a;") && strstr(pi.comments, "hostname="),
			      "first file comments '%s'", pi.comments);
		if (i == n - 1)
			CHECK(strstr(pi.comments, "team=b;"), "last file comments '%s' (SIGHUP)",
			      pi.comments);
		sum += pi.total;
	}
	free_list(files, n);
	n = list_dir(dir, ".tmp", &files);
	CHECK(n == 0, "%d temporary files left", n);
	free_list(files, n);
	profile_samples = log_u64(log, "agent stopped", "profile_samples");
	bpf = log_u64(log, "agent stopped", "bpf_samples");
	lost = log_u64(log, "agent stopped", "lost");
	malformed = log_u64(log, "agent stopped", "malformed");
	CHECK(sum == profile_samples, "files hold %" PRIu64 " samples, the agent wrote %" PRIu64,
	      sum, profile_samples);
	CHECK(bpf != UINT64_MAX && sum == bpf - lost - malformed,
	      "files hold %" PRIu64 " samples; BPF counted %" PRIu64 " - %" PRIu64
	      " lost - %" PRIu64 " malformed",
	      sum, bpf, lost, malformed);
	CHECK(sum > 50, "only %" PRIu64 " samples in 6 s at 19 Hz", sum);
	printf("files: 3 intervals, %" PRIu64 " samples = BPF %" PRIu64 " - %" PRIu64
	       " lost - %" PRIu64 " malformed\n",
	       sum, bpf, lost, malformed);
}

/* 2: push, with an outage of 503s and a stall in the middle */
static void test_push(void)
{
	char log[PATHBUF], spool[PATHBUF], token[PATHBUF], url[64], host[256];
	char *argv[] = {"--push",
			url,
			"--tenant",
			"acme",
			"--token-file",
			token,
			"--app-name",
			"testapp",
			"--sample-labels",
			"all",
			"--labels",
			"env=ci",
			"--interval",
			"1",
			"--duration",
			"6",
			"--spool-dir",
			spool,
			"--push-timeout",
			"1",
			"--push-backoff-max",
			"0.5",
			"--metrics-addr",
			"off",
			NULL};
	struct receiver rv = {.outage = true, .t503 = 1.5, .tstall = 1.5, .check_leaf = true};
	uint64_t intervals, failures;
	int i, files;
	bool in_order = true;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/push.log", tmpdir);
	snprintf(spool, sizeof(spool), "%s/spool-push", tmpdir);
	snprintf(token, sizeof(token), "%s/token", tmpdir);
	write_file(token, "s3cret\n");
	gethostname(host, sizeof(host));
	snprintf(rv.want_name, sizeof(rv.want_name), "testapp{hostname=%s,env=ci}", host);
	snprintf(rv.want_tenant, sizeof(rv.want_tenant), "acme");
	snprintf(rv.want_token, sizeof(rv.want_token), "s3cret");
	if (receiver_start(&rv)) {
		CHECK(0, "cannot start the receiver");
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rv.port);
	pid = start_agent(argv, log);
	agent_exited_cleanly(pid, 30, log);
	receiver_stop(&rv);
	CHECK(rv.first_checked && !rv.first_err[0], "first push: %s",
	      rv.first_checked ? rv.first_err : "never received");
	intervals = log_u64(log, "agent stopped", "intervals");
	failures = log_u64(log, "agent stopped", "push_failures");
	CHECK(intervals >= 5 && intervals != UINT64_MAX, "intervals %" PRIu64, intervals);
	CHECK((uint64_t)rv.nr_ok == intervals,
	      "%d profiles accepted, %" PRIu64 " intervals (%d 503s, %d stalls)", rv.nr_ok,
	      intervals, rv.nr_503, rv.nr_stall);
	for (i = 1; i < rv.nr_ok; i++)
		if (rv.from_ok[i] <= rv.from_ok[i - 1])
			in_order = false;
	CHECK(in_order, "profiles out of order or repeated");
	CHECK(rv.nr_503 >= 1 && rv.nr_stall >= 1, "outage not exercised: %d 503s, %d stalls",
	      rv.nr_503, rv.nr_stall);
	CHECK(failures != UINT64_MAX && failures >= 2, "push_failures %" PRIu64, failures);
	CHECK(wait_for_text(log, "push failed, will retry", 0) &&
		  wait_for_text(log, "push recovered", 0),
	      "retry / recovery not logged");
	CHECK(dir_bytes(spool, &files) == 0 && files == 0, "spool not empty: %d files", files);
	printf("push: %d delivered in order, %d 503s, %d stalls, %" PRIu64 " failed attempts\n",
	       rv.nr_ok, rv.nr_503, rv.nr_stall, failures);
}

/*
 * How many of ids[0..nr) (nr <= 16; one program can be behind several fds)
 * `bpftool prog show` lists, -1 if bpftool did not run cleanly; *sampler:
 * one of them is cfiprof's perf-event program, by name.
 */
static int bpftool_progs_listed(const uint64_t *ids, int nr, bool *sampler)
{
	char line[1024], name[64];
	unsigned long long id;
	bool found[16] = {0};
	int listed = 0, i;
	FILE *p = popen("bpftool prog show 2>/dev/null", "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		const char *n = strstr(line, " name ");
		bool ours = false;

		if (sscanf(line, "%llu: ", &id) != 1)
			continue;
		for (i = 0; i < nr && i < 16; i++)
			if (ids[i] == id)
				ours = found[i] = true;
		if (ours && sampler && n && sscanf(n, " name %63s", name) == 1 &&
		    (!strcmp(name, "on_sample") || !strcmp(name, "walk_tc")))
			*sampler = true;
	}
	for (i = 0; i < nr && i < 16; i++)
		listed += found[i];
	return pclose(p) ? -1 : listed;
}

#define FAKE_BYTES 30000
#define SPOOL_MAX  "60000"

/* 3: backend down; spool bound; SIGTERM flushes the partial interval.  4: restart, kill -9. */
static void test_spool_and_restart(void)
{
	char log[PATHBUF], log2[PATHBUF], log3[PATHBUF], spool[PATHBUF], dir[PATHBUF];
	char path[PATHBUF * 2], url[64], fdinfo[PATHBUF], *fake;
	char *argv[] = {"--push",
			url,
			"--spool-dir",
			spool,
			"--spool-max-bytes",
			SPOOL_MAX,
			"--interval",
			"2",
			"--output-dir",
			dir,
			"--push-timeout",
			"1",
			"--push-backoff-max",
			"0.5",
			"--metrics-addr",
			"off",
			NULL};
	struct receiver rv = {0};
	struct pprof_info pi;
	uint64_t dropped, spool_max = strtoull(SPOOL_MAX, NULL, 10), prog_ids[16];
	int dead_port, fd, i, n, files, nr_ids = 0, listed;
	bool sampler = false;
	char **names;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/down.log", tmpdir);
	snprintf(log2, sizeof(log2), "%s/restart.log", tmpdir);
	snprintf(log3, sizeof(log3), "%s/again.log", tmpdir);
	snprintf(spool, sizeof(spool), "%s/spool-down", tmpdir);
	snprintf(dir, sizeof(dir), "%s/down", tmpdir);
	mkdir(spool, 0755);
	/* three old profiles a previous run could not deliver: 90000 bytes > the bound */
	fake = calloc(1, FAKE_BYTES);
	for (i = 1; i <= 3; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%020" PRIu64 "-%020" PRIu64 ".pb.gz", spool,
			 (uint64_t)i * 1000000000u, (uint64_t)i * 1000000000u + 500000000u);
		f = fopen(path, "we");
		if (f) {
			fwrite(fake, 1, FAKE_BYTES, f);
			fclose(f);
		}
	}
	free(fake);
	/* a port nobody listens on: connection refused */
	fd = listen_loopback(&dead_port);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", dead_port);
	pid = start_agent(argv, log);
	CHECK(wait_for_text(log, "msg=interval", 15), "no first interval");
	sleep_s(1.0);
	kill(pid, SIGTERM);
	if (!agent_exited_cleanly(pid, 20, log))
		return;
	dropped = log_u64(log, "agent stopped", "push_dropped");
	CHECK(dropped >= 1 && dropped != UINT64_MAX, "push_dropped %" PRIu64, dropped);
	CHECK(wait_for_text(log, "spool full, dropped the oldest profile", 0), "drop not logged");
	CHECK(wait_for_text(log, "reason=signal", 0), "stop reason");
	CHECK(dir_bytes(spool, &files) <= spool_max && files >= 2,
	      "spool: %d files, %" PRIu64 " bytes (bound " SPOOL_MAX ")", files,
	      dir_bytes(spool, NULL));
	n = list_dir(dir, "cfiprof-", &names);
	CHECK(n == 2, "%d files after SIGTERM (want 2: one full, one partial)", n);
	if (n == 2) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[1]);
		pi = decode_file(path);
		CHECK(pi.ok && pi.duration_ns > 0.3e9 && pi.duration_ns < 1.9e9,
		      "partial interval: duration %" PRIu64 " ns", pi.duration_ns);
	}
	free_list(names, n);
	printf("backend down: spool %d files / %" PRIu64 " bytes, %" PRIu64
	       " dropped by the bound\n",
	       files, dir_bytes(spool, NULL), dropped);

	/* 4: the backend is back; a restart delivers the spool first, in order */
	if (receiver_start(&rv)) {
		CHECK(0, "cannot start the receiver");
		return;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rv.port);
	pid = start_agent(argv, log2);
	CHECK(wait_for_text(log2, "agent started", 15), "restart did not start");
	for (i = 0; i < 100 && rv.nr_ok < files; i++)
		sleep_s(0.1);
	CHECK(rv.nr_ok >= files, "%d of %d spooled profiles delivered", rv.nr_ok, files);
	pthread_mutex_lock(&rv.lock);
	/* the surviving fake (from=3) first, then the two real intervals */
	CHECK(rv.nr_ok >= 1 && rv.from_ok[0] == 3, "first delivered from=%" PRIu64,
	      rv.nr_ok ? rv.from_ok[0] : 0);
	for (i = 1; i < rv.nr_ok; i++)
		CHECK(rv.from_ok[i] >= rv.from_ok[i - 1], "delivery %d out of order", i);
	pthread_mutex_unlock(&rv.lock);
	/* its BPF programs, from its fds, before kill -9 */
	for (fd = 0; fd < 256 && nr_ids < 16; fd++) {
		char *s, *p;

		snprintf(fdinfo, sizeof(fdinfo), "/proc/%d/fdinfo/%d", pid, fd);
		s = slurp(fdinfo);
		p = strstr(s, "prog_id:");
		if (p)
			prog_ids[nr_ids++] = strtoull(p + 8, NULL, 10);
		free(s);
	}
	CHECK(nr_ids >= 1, "no BPF programs found in the agent's fds");
	/* the kernel's list, by bpftool, must show them (and the sampler by name) first */
	listed = bpftool_progs_listed(prog_ids, nr_ids, &sampler);
	CHECK(listed == nr_ids && sampler,
	      "bpftool prog show before kill -9: %d of %d agent programs listed (-1: bpftool "
	      "failed), on_sample/walk_tc %s",
	      listed, nr_ids, sampler ? "listed" : "missing");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* the kernel frees them after an RCU grace period, not at once */
	for (i = 0; i < 30; i++) {
		listed = bpftool_progs_listed(prog_ids, nr_ids, NULL);
		if (listed <= 0)
			break;
		sleep_s(0.1);
	}
	CHECK(listed == 0, "after kill -9: %d of %d programs still loaded (-1: bpftool failed)",
	      listed, nr_ids);
	{
		char *argv2[] = {"--output-dir",   dir,	  "--duration", "1",
				 "--metrics-addr", "off", NULL};

		pid = start_agent(argv2, log3);
		CHECK(agent_exited_cleanly(pid, 20, log3), "a second start after kill -9 failed");
	}
	receiver_stop(&rv);
	printf("restart: %d spooled profiles delivered in order; %d BPF programs gone after "
	       "kill -9\n",
	       rv.nr_ok, nr_ids);
}

int main(int argc, char **argv)
{
	const char *go;
	char *chain_argv[3];
	pid_t chain;

	harness_init(argc, argv);
	if (!e2e_setup("agent-test"))
		return HARNESS_DONE();
	snprintf(chain_bin, sizeof(chain_bin), "%s/chain", progs_dir);
	if (access(cfiprof_bin, X_OK) || access(chain_bin, X_OK)) {
		CHECK(0, "setup: %s and %s must be built (make, make %s)", cfiprof_bin, chain_bin,
		      chain_bin);
		return HARNESS_DONE();
	}
	go = find_go();
	CHECK(go != NULL, "go not found (golang-go)");
	snprintf(go_bin, sizeof(go_bin), "%s", go ? go : "go");
	signal(SIGPIPE, SIG_IGN);
	/* one test program for the whole run: leaf spins on one core */
	chain_argv[0] = chain_bin;
	chain_argv[1] = "60";
	chain_argv[2] = NULL;
	chain = spawn(chain_argv, NULL, NULL);
	sleep_s(0.2);
	RUN_TEST(test_files);
	RUN_TEST(test_push);
	RUN_TEST(test_spool_and_restart);
	kill(chain, SIGKILL);
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
	waitpid(chain, NULL, 0);
	e2e_finish();
	return HARNESS_DONE();
}
