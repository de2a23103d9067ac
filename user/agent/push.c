// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pusher thread and its spool; one request to the backend is ingest.c's.  See push.h. */
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

#include "common/vec.h"
#include "common/clock.h"
#include "elf/safe_open.h"
#include "user/agent/log.h"
#include "user/agent/ingest.h"
#include "user/agent/interval_files.h"
#include "user/agent/push.h"
#include "user/output/pprof.h"
#include "user/profile/profile.h"

#define SPOOL_SUFFIX	".pb.gz"
#define BACKOFF_FIRST	1.0 /* seconds */
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

/* Where this pusher sends, for its log lines: both may run at once. */
static const char *push_to(const struct agent_push *ap)
{
	return ap->cfg.kind == AGENT_PUSH_OTLP ? "otlp" : "pyroscope";
}

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

	if (VEC_RESERVE(ap->q, ap->nr, ap->cap, 64))
		return -ENOMEM;
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

/* The one entry being sent. Lock held. */
static size_t inflight_index(const struct agent_push *ap)
{
	size_t i = 0;

	while (i + 1 < ap->nr && !ap->q[i].inflight)
		i++;
	return i;
}

static void *pusher_main(void *arg)
{
	struct agent_push *ap = arg;
	struct agent_push_config cfg;
	struct spool_entry e;
	char name[SPOOL_NAME_MAX], path[PATH_MAX], why[256];
	enum push_result r;
	CURL *h = ingest_handle_new();
	char *data;
	size_t len = 0;
	long status;
	size_t i;
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
			r = cfg.kind == AGENT_PUSH_OTLP
				? otlp_post(h, &cfg, data, len, &status, why, sizeof(why))
				: ingest_post(h, &cfg, e.service, e.from_ns, e.until_ns, data, len,
					      &status, why, sizeof(why));
			free(data);
		}
		cfg_free(&cfg);

		pthread_mutex_lock(&ap->lock);
		/*
		 * Where the entry is now: a profile of the same interval spooled
		 * meanwhile may sort before it.  Only the pusher removes an
		 * in-flight entry and the bound skips it, so it is still queued.
		 */
		i = inflight_index(ap);
		if (r == PUSH_OK) {
			ap->st.successes++;
			ap->st.last_success_unix = (uint64_t)time(NULL);
			if (ap->consecutive_failures)
				alog(ALOG_INFO, "push recovered",
				     "after_failures=%u spool_files=%" PRIu64 " to=%s",
				     ap->consecutive_failures, ap->st.spool_files - 1, push_to(ap));
			ap->consecutive_failures = 0;
			alog(ALOG_DEBUG, "pushed", "file=%s bytes=%" PRIu64 " status=%ld", name,
			     e.bytes, status);
		} else {
			ap->st.failures++;
		}
		if (r == PUSH_DROP) {
			ap->st.dropped++;
			ap->st.dropped_bytes += e.bytes;
			alog(ALOG_ERROR, "push rejected, profile dropped", "file=%s why=%s to=%s",
			     name, alog_quote(why, (char[300]){0}, 300), push_to(ap));
		}
		if (r != PUSH_RETRY) {
			unlink(path);
			queue_remove(ap, i);
			continue;
		}
		ap->q[i].inflight = false;
		ap->consecutive_failures++;
		{
			double d = backoff(ap);

			alog(ALOG_WARN, "push failed, will retry",
			     "why=%s retry_in=%.2fs failures=%u spool_files=%" PRIu64
			     " spool_bytes=%" PRIu64 " to=%s",
			     alog_quote(why, (char[300]){0}, 300), d, ap->consecutive_failures,
			     ap->st.spool_files, ap->st.spool_bytes, push_to(ap));
			wait_until(ap, mono_sec() + d);
		}
		/* the bound may have been passed while this one was in flight */
		enforce_bound(ap);
	}
	pthread_mutex_unlock(&ap->lock);
	ingest_handle_free(h);
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
	if (!ingest_init())
		goto fail;
	scan_spool(ap);
	if (pthread_create(&ap->thread, NULL, pusher_main, ap))
		goto fail;
	pthread_setname_np(ap->thread, "cfiprof-push");
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

void agent_push_begin_stop(struct agent_push *ap, double grace)
{
	if (!ap)
		return;
	pthread_mutex_lock(&ap->lock);
	if (!ap->stopping) {
		ap->stopping = true;
		ap->stop_deadline = mono_sec() + grace;
	}
	pthread_cond_broadcast(&ap->cond);
	pthread_mutex_unlock(&ap->lock);
}

void agent_push_stop(struct agent_push *ap, double grace, struct agent_push_stats *final)
{
	if (!ap)
		return;
	agent_push_begin_stop(ap, grace);
	if (ap->started)
		pthread_join(ap->thread, NULL);
	if (ap->nr)
		alog(ALOG_WARN, "profiles left in the spool for the next start",
		     "spool_dir=%s files=%zu bytes=%" PRIu64, ap->spool_dir, ap->nr,
		     ap->st.spool_bytes);
	if (final)
		*final = ap->st;
	ingest_cleanup();
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
