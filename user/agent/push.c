// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The push to a Pyroscope-compatible backend, with its spool; see agent_push.h. */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dynlib.h"
#include "elf/safe_open.h"
#include "user/agent/log.h"
#include "user/agent/interval_files.h"
#include "user/agent/push.h"
#include "user/output/pprof.h"
#include "user/profile/profile.h"

/* libcurl, loaded by the first agent_push_start() (common/dynlib.h) */
static const char *const curl_names[] = {
    "curl_easy_cleanup",
    "curl_easy_escape",
    "curl_easy_getinfo",
    "curl_easy_init",
    "curl_easy_perform",
    "curl_easy_reset",
    "curl_easy_setopt",
    "curl_easy_strerror",
    "curl_free",
    "curl_global_cleanup",
    "curl_global_init",
    "curl_slist_append",
    "curl_slist_free_all",
    NULL,
};
static struct {
	void (*easy_cleanup)(CURL *h);
	char *(*easy_escape)(CURL *h, const char *s, int len);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	CURL *(*easy_init)(void);
	CURLcode (*easy_perform)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*free)(void *p);
	void (*global_cleanup)(void);
	CURLcode (*global_init)(long flags);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} curl;
static struct dynlib curl_lib = DYNLIB_INIT("libcurl.so.4", curl_names, &curl);

#define SPOOL_SUFFIX	".pb.gz"
#define BACKOFF_FIRST	1.0 /* seconds */
#define CONNECT_TIMEOUT 5.0
/* "FROM-UNTIL@SERVICE.pb.gz" */
#define SPOOL_NAME_MAX (2 * 20 + 2 + PROF_SERVICE_MAX + sizeof(SPOOL_SUFFIX))

struct spool_entry {
	uint64_t from_ns, until_ns, bytes;
	bool inflight; /* being sent: the bound drops others first */
	char service[PROF_SERVICE_MAX]; /* pushed under this name; "": the configured one */
};

struct agent_push {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started, stopping;
	double stop_deadline;	      /* monotonic */
	struct agent_push_config cfg; /* strings owned */
	char *spool_dir;
	struct spool_entry *q;
	size_t nr, cap;
	struct agent_push_stats st;
	unsigned int consecutive_failures;
	unsigned int seed;
};

static void spool_name(const struct spool_entry *e, char *buf, size_t len)
{
	/* zero-padded: the directory listing sorts in delivery order */
	snprintf(buf, len, "%020" PRIu64 "-%020" PRIu64 "%s%s" SPOOL_SUFFIX, e->from_ns,
		 e->until_ns, e->service[0] ? "@" : "", e->service);
}

bool agent_service_name_ok(const char *s)
{
	size_t n = strspn(s, PROF_SERVICE_CHARS);

	return n && !s[n] && n < PROF_SERVICE_MAX;
}

/* "FROM-UNTIL.pb.gz" or "FROM-UNTIL@SERVICE.pb.gz" into e; false for any other name. */
static bool spool_parse(const char *name, struct spool_entry *e)
{
	size_t n = strlen(name), sl = strlen(SPOOL_SUFFIX);
	int used = 0;

	memset(e, 0, sizeof(*e));
	if (sscanf(name, "%20" SCNu64 "-%20" SCNu64 "%n", &e->from_ns, &e->until_ns, &used) != 2 ||
	    n < (size_t)used + sl || strcmp(name + n - sl, SPOOL_SUFFIX))
		return false;
	if ((size_t)used + sl == n)
		return true;
	if (name[used] != '@' || n - sl - used - 1 >= sizeof(e->service))
		return false;
	memcpy(e->service, name + used + 1, n - sl - used - 1);
	return agent_service_name_ok(e->service);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static void cfg_free(struct agent_push_config *c)
{
	free((char *)c->url);
	free((char *)c->app_name);
	free((char *)c->labels);
	free((char *)c->hostname);
	free((char *)c->tenant);
	free((char *)c->token_file);
	free((char *)c->spool_dir);
	memset(c, 0, sizeof(*c));
}

static int cfg_copy(struct agent_push_config *dst, const struct agent_push_config *src)
{
	*dst = *src;
	dst->url = dup_or_null(src->url);
	dst->app_name = strdup(src->app_name && *src->app_name ? src->app_name : "cfiprof");
	dst->labels = dup_or_null(src->labels);
	dst->hostname = dup_or_null(src->hostname);
	dst->tenant = dup_or_null(src->tenant);
	dst->token_file = dup_or_null(src->token_file);
	dst->spool_dir = dup_or_null(src->spool_dir);
	if (!dst->url || !dst->app_name || (src->labels && *src->labels && !dst->labels) ||
	    (src->hostname && *src->hostname && !dst->hostname)) {
		cfg_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static int by_from(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	if (x->from_ns != y->from_ns)
		return x->from_ns < y->from_ns ? -1 : 1;
	if (x->until_ns != y->until_ns)
		return x->until_ns < y->until_ns ? -1 : 1;
	return strcmp(x->service, y->service);
}

static int queue_add(struct agent_push *ap, const struct spool_entry *e)
{
	size_t i;

	if (ap->nr == ap->cap) {
		size_t cap = ap->cap ? ap->cap * 2 : 64;
		struct spool_entry *q = realloc(ap->q, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		ap->q = q;
		ap->cap = cap;
	}
	/* almost always the newest: insert from the back */
	for (i = ap->nr; i > 0 && by_from(&ap->q[i - 1], e) > 0; i--)
		ap->q[i] = ap->q[i - 1];
	ap->q[i] = *e;
	ap->nr++;
	ap->st.spool_files++;
	ap->st.spool_bytes += e->bytes;
	return 0;
}

static void queue_remove(struct agent_push *ap, size_t i)
{
	ap->st.spool_files--;
	ap->st.spool_bytes -= ap->q[i].bytes;
	memmove(&ap->q[i], &ap->q[i + 1], (ap->nr - i - 1) * sizeof(*ap->q));
	ap->nr--;
}

/* Drops the oldest profiles not being sent until the spool fits its bound. Lock held. */
static void enforce_bound(struct agent_push *ap)
{
	char name[SPOOL_NAME_MAX], path[PATH_MAX];
	size_t i = 0;

	while (ap->cfg.spool_max_bytes && ap->st.spool_bytes > ap->cfg.spool_max_bytes &&
	       i < ap->nr) {
		if (ap->q[i].inflight) {
			i++;
			continue;
		}
		spool_name(&ap->q[i], name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", ap->spool_dir, name);
		unlink(path);
		ap->st.dropped++;
		ap->st.dropped_bytes += ap->q[i].bytes;
		alog(ALOG_WARN, "spool full, dropped the oldest profile",
		     "file=%s bytes=%" PRIu64 " from=%" PRIu64 " spool_bytes=%" PRIu64
		     " spool_max_bytes=%" PRIu64 " dropped_total=%" PRIu64,
		     name, ap->q[i].bytes, (uint64_t)(ap->q[i].from_ns / 1000000000u),
		     ap->st.spool_bytes - ap->q[i].bytes, ap->cfg.spool_max_bytes, ap->st.dropped);
		queue_remove(ap, i);
	}
}

/* What a previous run (or a crash) left: delivered first, in order. */
static int scan_spool(struct agent_push *ap)
{
	DIR *d = opendir(ap->spool_dir);
	struct spool_entry e = {0};
	struct dirent *de;
	struct stat st;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!spool_parse(de->d_name, &e) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		e.bytes = (uint64_t)st.st_size;
		if (queue_add(ap, &e))
			break;
	}
	closedir(d);
	if (ap->nr)
		alog(ALOG_INFO, "spool has profiles from a previous run",
		     "spool_dir=%s files=%zu bytes=%" PRIu64, ap->spool_dir, ap->nr,
		     ap->st.spool_bytes);
	enforce_bound(ap);
	return 0;
}

/*
 * A spool file: only what the agent wrote there, so never through a symlink
 * (one planted in the spool would push whatever it points to) and never a
 * FIFO (the pusher would block for good).
 */
static int read_file(const char *path, char **data, size_t *len)
{
	int fd = open_regular_nofollow(path), err = 0;
	struct stat st;
	FILE *f;

	*data = NULL;
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	if (fstat(fileno(f), &st)) {
		err = -errno;
		goto out;
	}
	*len = (size_t)st.st_size;
	*data = malloc(*len ? *len : 1);
	if (!*data) {
		err = -ENOMEM;
		goto out;
	}
	if (fread(*data, 1, *len, f) != *len) {
		err = -EIO;
		free(*data);
		*data = NULL;
	}
out:
	fclose(f);
	return err;
}

int agent_push_read_token(const char *path, char *buf, size_t len)
{
	/* a symlink is followed (Kubernetes mounts secrets as ones), a FIFO never opened */
	FILE *f = fopen_regular(path);
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return n ? 0 : -ENODATA;
}

struct response {
	char text[256];
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct response *r = ctx;
	size_t want = size * n, room = sizeof(r->text) - 1 - r->len;

	/* the start of an error body is worth logging; the rest is discarded */
	if (room) {
		memcpy(r->text + r->len, p, want < room ? want : room);
		r->len += want < room ? want : room;
		r->text[r->len] = 0;
	}
	return want;
}

/* "APP{hostname=H,k=v}", as Pyroscope's ingest expects the name */
int agent_push_name(const char *app_name, const char *hostname, const char *labels, char *buf,
		    size_t len)
{
	int n = snprintf(buf, len, "%s{%s%s%s%s}", app_name, hostname ? "hostname=" : "",
			 hostname ? hostname : "", hostname && labels ? "," : "", labels ? labels : "");

	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

enum push_result { PUSH_OK, PUSH_RETRY, PUSH_DROP };

static enum push_result push_one(CURL *h, const struct agent_push_config *c,
				 const struct spool_entry *e, const char *data, size_t len,
				 long *status, char *why, size_t whylen)
{
	struct curl_slist *hdrs = NULL;
	char name[AGENT_PUSH_NAME_MAX], url[4096], hdr[4352], token[4096];
	struct response resp = {0};
	uint64_t from = e->from_ns / 1000000000ull, until = e->until_ns / 1000000000ull;
	size_t ul = strlen(c->url);
	enum push_result r = PUSH_RETRY;
	char *esc = NULL;
	CURLcode cc;

	*status = 0;
	why[0] = 0;
	if (until <= from)
		until = from + 1;
	if (agent_push_name(e->service[0] ? e->service : c->app_name, c->hostname, c->labels, name,
			    sizeof(name))) {
		snprintf(why, whylen, "name too long");
		return PUSH_DROP;
	}
	esc = curl.easy_escape(h, name, 0);
	if (!esc) {
		snprintf(why, whylen, "out of memory");
		return PUSH_RETRY;
	}
	while (ul && c->url[ul - 1] == '/')
		ul--;
	/* a URL that already ends in /ingest is taken as the endpoint itself */
	snprintf(url, sizeof(url), "%.*s%s?name=%s&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof",
		 (int)ul, c->url,
		 ul >= 7 && !strncmp(c->url + ul - 7, "/ingest", 7) ? "" : "/ingest", esc, from,
		 until);
	curl.free(esc);
	hdrs = curl.slist_append(hdrs, "Content-Type: application/octet-stream");
	if (c->tenant) {
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", c->tenant);
		hdrs = curl.slist_append(hdrs, hdr);
	}
	if (c->token_file) {
		int err = agent_push_read_token(c->token_file, token, sizeof(token));

		if (err) {
			snprintf(why, whylen, "cannot read token file %s: %s", c->token_file,
				 strerror(-err));
			goto out;
		}
		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", token);
		hdrs = curl.slist_append(hdrs, hdr);
	}
	/* no "Expect: 100-continue" round trip for bodies over 1 KiB */
	hdrs = curl.slist_append(hdrs, "Expect:");
	curl.easy_reset(h);
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_POST, 1L);
	curl.easy_setopt(h, CURLOPT_POSTFIELDS, data);
	curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "cfiprof-agent/0.1");
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
	curl.easy_setopt(
	    h, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)((c->timeout < CONNECT_TIMEOUT ? c->timeout : CONNECT_TIMEOUT) * 1000));
	/* threads: no SIGALRM-based DNS timeouts */
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	cc = curl.easy_perform(h);
	if (cc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl.easy_strerror(cc));
		goto out;
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300) {
		r = PUSH_OK;
		goto out;
	}
	snprintf(why, whylen, "HTTP %ld: %.120s", *status, resp.text);
	/*
	 * The backend says this profile itself is bad: retrying cannot help and
	 * would hold up every later one.  Auth errors and throttling are retried:
	 * a fixed token or a calmer backend then gets everything.
	 */
	if (*status == 400 || *status == 413 || *status == 415 || *status == 422)
		r = PUSH_DROP;
out:
	curl.slist_free_all(hdrs);
	return r;
}

/* Exponential backoff from 1 s up to backoff_max, with half of it random ("equal jitter"). */
static double backoff(struct agent_push *ap)
{
	unsigned int n = ap->consecutive_failures;
	double d = BACKOFF_FIRST;

	while (n-- > 1 && d < ap->cfg.backoff_max)
		d *= 2;
	if (d > ap->cfg.backoff_max)
		d = ap->cfg.backoff_max;
	return d / 2 + d / 2 * ((double)rand_r(&ap->seed) / RAND_MAX);
}

/* Waits until the monotonic time until, or less when stopping. Lock held. */
static void wait_until(struct agent_push *ap, double until)
{
	struct timespec ts;
	double now, end;

	for (;;) {
		now = mono_sec();
		end = ap->stopping && ap->stop_deadline < until ? ap->stop_deadline : until;
		if (now >= end)
			return;
		/* condition variables time out on CLOCK_REALTIME: wait in short steps */
		end -= now;
		ts = realtime_after_ms(end > 0.5 ? 500 : (uint64_t)(end * 1e3));
		pthread_cond_timedwait(&ap->cond, &ap->lock, &ts);
	}
}

static void *pusher_main(void *arg)
{
	struct agent_push *ap = arg;
	struct agent_push_config cfg;
	struct spool_entry e;
	char name[SPOOL_NAME_MAX], path[PATH_MAX], why[256];
	enum push_result r;
	CURL *h = curl.easy_init();
	char *data;
	size_t len = 0;
	long status;
	int err;

	if (!h) {
		alog(ALOG_ERROR, "push disabled: cannot create a curl handle", NULL);
		return NULL;
	}
	pthread_mutex_lock(&ap->lock);
	for (;;) {
		while (!ap->nr && !ap->stopping)
			pthread_cond_wait(&ap->cond, &ap->lock);
		if (!ap->nr || (ap->stopping && mono_sec() >= ap->stop_deadline))
			break;
		ap->q[0].inflight = true;
		e = ap->q[0];
		if (cfg_copy(&cfg, &ap->cfg)) {
			ap->q[0].inflight = false;
			wait_until(ap, mono_sec() + BACKOFF_FIRST);
			continue;
		}
		pthread_mutex_unlock(&ap->lock);

		spool_name(&e, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/%s", ap->spool_dir, name);
		err = read_file(path, &data, &len);
		if (err) {
			r = PUSH_DROP;
			status = 0;
			snprintf(why, sizeof(why), "cannot read %s: %s", name,
				 err == -EINVAL ? "not a regular file" : strerror(-err));
		} else {
			r = push_one(h, &cfg, &e, data, len, &status, why, sizeof(why));
			free(data);
		}
		cfg_free(&cfg);

		pthread_mutex_lock(&ap->lock);
		/* only the pusher removes an in-flight entry: it is still the first */
		if (r == PUSH_OK) {
			ap->st.successes++;
			ap->st.last_success_unix = (uint64_t)time(NULL);
			if (ap->consecutive_failures)
				alog(ALOG_INFO, "push recovered",
				     "after_failures=%u spool_files=%" PRIu64,
				     ap->consecutive_failures, ap->st.spool_files - 1);
			ap->consecutive_failures = 0;
			alog(ALOG_DEBUG, "pushed", "file=%s bytes=%" PRIu64 " status=%ld", name,
			     e.bytes, status);
		} else {
			ap->st.failures++;
		}
		if (r == PUSH_DROP) {
			ap->st.dropped++;
			ap->st.dropped_bytes += e.bytes;
			alog(ALOG_ERROR, "push rejected, profile dropped", "file=%s why=%s", name,
			     alog_quote(why, (char[300]){0}, 300));
		}
		if (r != PUSH_RETRY) {
			unlink(path);
			queue_remove(ap, 0);
			continue;
		}
		ap->q[0].inflight = false;
		ap->consecutive_failures++;
		{
			double d = backoff(ap);

			alog(ALOG_WARN, "push failed, will retry",
			     "why=%s retry_in=%.2fs failures=%u spool_files=%" PRIu64
			     " spool_bytes=%" PRIu64,
			     alog_quote(why, (char[300]){0}, 300), d, ap->consecutive_failures,
			     ap->st.spool_files, ap->st.spool_bytes);
			wait_until(ap, mono_sec() + d);
		}
		/* the bound may have been passed while this one was in flight */
		enforce_bound(ap);
	}
	pthread_mutex_unlock(&ap->lock);
	curl.easy_cleanup(h);
	return NULL;
}

struct agent_push *agent_push_start(const struct agent_push_config *cfg)
{
	struct agent_push *ap = calloc(1, sizeof(*ap));
	int err;

	if (!ap)
		return NULL;
	pthread_mutex_init(&ap->lock, NULL);
	pthread_cond_init(&ap->cond, NULL);
	ap->seed = (unsigned int)(time(NULL) ^ getpid());
	if (cfg_copy(&ap->cfg, cfg) || !(ap->spool_dir = strdup(cfg->spool_dir)))
		goto fail;
	err = agent_mkdirs(ap->spool_dir);
	if (err) {
		alog(ALOG_ERROR, "cannot create the spool directory", "dir=%s error=%s",
		     ap->spool_dir, alog_quote(strerror(-err), (char[128]){0}, 128));
		goto fail;
	}
	agent_remove_temporaries(ap->spool_dir);
	if (!dynlib_load(&curl_lib)) {
		alog(ALOG_ERROR, "cannot push: libcurl is missing", "error=%s package=libcurl4",
		     alog_quote(curl_lib.err, (char[300]){0}, 300));
		goto fail;
	}
	if (curl.global_init(CURL_GLOBAL_DEFAULT))
		goto fail;
	scan_spool(ap);
	if (pthread_create(&ap->thread, NULL, pusher_main, ap))
		goto fail;
	ap->started = true;
	return ap;
fail:
	cfg_free(&ap->cfg);
	free(ap->spool_dir);
	free(ap->q);
	free(ap);
	return NULL;
}

int agent_push_configure(struct agent_push *ap, const struct agent_push_config *cfg)
{
	struct agent_push_config n;

	if (cfg_copy(&n, cfg))
		return -ENOMEM;
	pthread_mutex_lock(&ap->lock);
	cfg_free(&ap->cfg);
	ap->cfg = n;
	enforce_bound(ap);
	pthread_mutex_unlock(&ap->lock);
	return 0;
}

int agent_push_enqueue(struct agent_push *ap, uint64_t from_ns, uint64_t until_ns,
		       const char *service, const void *data, size_t len)
{
	struct spool_entry e = {.from_ns = from_ns, .until_ns = until_ns, .bytes = len};
	char name[SPOOL_NAME_MAX];
	int err;

	if (service && !agent_service_name_ok(service))
		return -EINVAL;
	if (service)
		snprintf(e.service, sizeof(e.service), "%s", service);
	spool_name(&e, name, sizeof(name));
	err = agent_write_atomic(ap->spool_dir, name, data, len);
	pthread_mutex_lock(&ap->lock);
	if (!err)
		err = queue_add(ap, &e);
	if (err) {
		/* a full disk loses this profile like the bound would: counted the same */
		ap->st.dropped++;
		ap->st.dropped_bytes += len;
		alog(ALOG_ERROR, "cannot spool the profile, dropped",
		     "file=%s error=%s dropped_total=%" PRIu64, name,
		     alog_quote(strerror(-err), (char[128]){0}, 128), ap->st.dropped);
	} else {
		enforce_bound(ap);
	}
	pthread_cond_broadcast(&ap->cond);
	pthread_mutex_unlock(&ap->lock);
	return err;
}

void agent_push_get_stats(struct agent_push *ap, struct agent_push_stats *out)
{
	pthread_mutex_lock(&ap->lock);
	*out = ap->st;
	pthread_mutex_unlock(&ap->lock);
}

void agent_push_stop(struct agent_push *ap, double grace, struct agent_push_stats *final)
{
	if (!ap)
		return;
	pthread_mutex_lock(&ap->lock);
	ap->stopping = true;
	ap->stop_deadline = mono_sec() + grace;
	pthread_cond_broadcast(&ap->cond);
	pthread_mutex_unlock(&ap->lock);
	if (ap->started)
		pthread_join(ap->thread, NULL);
	if (ap->nr)
		alog(ALOG_WARN, "profiles left in the spool for the next start",
		     "spool_dir=%s files=%zu bytes=%" PRIu64, ap->spool_dir, ap->nr,
		     ap->st.spool_bytes);
	if (final)
		*final = ap->st;
	curl.global_cleanup();
	cfg_free(&ap->cfg);
	free(ap->spool_dir);
	free(ap->q);
	pthread_cond_destroy(&ap->cond);
	pthread_mutex_destroy(&ap->lock);
	free(ap);
}

int agent_push_profile(struct agent_push *ap, const struct profile *p, bool by_service,
		       uint64_t from_ns, uint64_t until_ns, const void *gz, size_t gz_len)
{
	const char **services;
	struct profile sub;
	size_t nr, i, len;
	int failed = 0;
	char *data;
	FILE *f;

	if (!by_service) {
		agent_push_enqueue(ap, from_ns, until_ns, NULL, gz, gz_len);
		return 0;
	}
	services = profile_services(p, &nr);
	if (!services) {
		alog(ALOG_ERROR, "out of memory while splitting the interval by service", NULL);
		return 1;
	}
	for (i = 0; i < nr; i++) {
		int err;

		data = NULL;
		len = 0;
		err = profile_subset(p, services[i], &sub);
		if (!err) {
			f = open_memstream(&data, &len);
			err = !f || pprof_write(f, &sub);
			if (f)
				fclose(f);
			profile_free(&sub);
		}
		if (err) {
			alog(ALOG_ERROR, "cannot encode a service's profile", "service=%s",
			     services[i] ? services[i] : "-");
			failed++;
		} else {
			agent_push_enqueue(ap, from_ns, until_ns, services[i], data, len);
		}
		free(data);
	}
	free(services);
	return failed;
}
