// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof agent, end to end, with short intervals while build/progs/chain runs:
 *  1. files: three 2-second intervals (--duration 6); each file opens in
 *     `go tool pprof -top` with `leaf`, and has samples in this suite's own
 *     chain's leaf (by the mapping's path); the samples in the files add up to the
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
 *     leaves no BPF program or link behind; a second start works at once.
 *
 * The agent in a cgroup of its own (churn, caps, short processes) is
 * test_agent_caps.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/*
 * run.sh: beside others (its agent samples the whole host, but its checks count what that
 * agent counted and look for the leaf of its own copy of chain, by the mapping's path)
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
#include "tests/lib/agent_run.h"

#define PATHBUF (PATH_MAX + 256)

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
		BAD("body has no sample in the own chain's leaf; ");
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

/* Whether thread @name is among @pid's (their comm, as top -H and perf show them). */
static bool has_thread(pid_t pid, const char *name)
{
	char dir[PATHBUF];

	return thread_dir(pid, name, dir, sizeof(dir));
}

/* 1: files, counts, go tool pprof, metrics, SIGHUP */
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
	/* where its CPU goes can be told apart: each thread named after its job */
	CHECK(has_thread(pid, "cfiprof-load") && has_thread(pid, "cfiprof-ring") &&
		  has_thread(pid, "cfiprof-http") && has_thread(pid, "cfiprof-dwarf"),
	      "the agent's threads are not named (top -H, perf --sort comm)");
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
		CHECK(pi.has_leaf, "%s: no sample in the leaf of %s", files[i], leaf_binary);
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
	uint64_t dropped, spool_max = strtoull(SPOOL_MAX, NULL, 10), prog_ids[16], oldest_from;
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
	CHECK(wait_for_text(log,
			    "spool full, dropped the oldest profile\" file="
			    "00000000001000000000-00000000001500000000.pb.gz",
			    0),
	      "the oldest profile (from=1) not dropped first, or not logged");
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
	/*
	 * Which of the old profiles the bound kept depends on how big the real
	 * ones were (one per service the host runs: 10-12 here, more beside
	 * make test-stress's hogs): the oldest left, whichever it is, goes first.
	 */
	n = list_dir(spool, NULL, &names);
	oldest_from = n > 0 ? strtoull(names[0], NULL, 10) / 1000000000u : 0;
	free_list(names, n);
	printf("backend down: spool %d files / %" PRIu64 " bytes, %" PRIu64
	       " dropped by the bound, the oldest left from=%" PRIu64 "\n",
	       files, dir_bytes(spool, NULL), dropped, oldest_from);

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
	/* the oldest spooled profile first (a surviving fake, from=3 here), then the rest */
	CHECK(rv.nr_ok >= 1 && oldest_from && rv.from_ok[0] == oldest_from,
	      "first delivered from=%" PRIu64 ", the oldest spooled from=%" PRIu64,
	      rv.nr_ok ? rv.from_ok[0] : 0, oldest_from);
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
	static char own_chain[PATHBUF];
	char *chain_argv[3];
	pid_t chain;

	harness_init(argc, argv);
	if (!agent_suite_setup("agent-test"))
		return HARNESS_DONE();
	/* one test program for the whole run: leaf spins on one core; a copy of its own, so
	 * that a leaf found is this one's, not another suite's chain beside it */
	snprintf(own_chain, sizeof(own_chain), "%s/chain", tmpdir);
	CHECK(sh_fmt("cp %s %s", chain_bin, own_chain) == 0, "copy %s", chain_bin);
	leaf_binary = own_chain;
	chain_argv[0] = own_chain;
	chain_argv[1] = "60";
	chain_argv[2] = NULL;
	chain = spawn(chain_argv, NULL, NULL);
	sleep_s(0.2);
	RUN_TEST(test_files);
	RUN_TEST(test_push);
	RUN_TEST(test_spool_and_restart);
	kill(chain, SIGKILL);
	waitpid(chain, NULL, 0);
	e2e_finish();
	return HARNESS_DONE();
}
