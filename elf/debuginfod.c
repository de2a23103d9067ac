// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Debug files fetched by build-id on worker threads; see debuginfod.h. */
#include "elf/debuginfod.h"

#include <elfutils/debuginfod.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dynlib.h"
#include "elf/build_id.h"

/* libdebuginfod, loaded by the first dbgd_new() (common/dynlib.h) */
static const char *const dbgd_names[] = {
    "debuginfod_begin",	      "debuginfod_end",		"debuginfod_find_debuginfo",
    "debuginfod_get_url",     "debuginfod_get_user_data", "debuginfod_set_progressfn",
    "debuginfod_set_user_data", NULL,
};
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	const char *(*get_url)(debuginfod_client *c);
	void *(*get_user_data)(debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
} dbgd_fn;
static struct dynlib dbgd_lib = DYNLIB_INIT("libdebuginfod.so.1", dbgd_names, &dbgd_fn);

#define MAX_WORKERS 16

struct request {
	char build_id[ELF_BUILD_ID_HEX_LEN];
	dbgd_done_fn fn;
	void *ctx;
};

struct worker {
	struct dbgd *d;
	pthread_t thread;
	debuginfod_client *client;
	/* the fetch under way: its build-id, when it must end, and why it was stopped */
	const char *build_id;
	uint64_t deadline_ns;
	bool over_time, over_size;
};

struct dbgd {
	struct dbgd_opts o;
	char cache_dir[PATH_MAX]; /* libdebuginfod's, where a fetch is written ("": unknown) */
	pthread_mutex_t lock;
	pthread_cond_t work_cond, idle_cond;
	struct request *queue;
	uint32_t head, len, running;
	int stopping; /* atomic: read by the progress callbacks */
	uint32_t nr_workers;
	struct worker workers[MAX_WORKERS];
	struct dbgd_stats stats; /* lock */
};

const char *dbgd_outcome_name(enum dbgd_outcome o)
{
	static const char *const names[DBGD_OUTCOME_MAX] = {
	    [DBGD_FETCHED] = "fetched",	    [DBGD_CACHED] = "cached",
	    [DBGD_NOT_FOUND] = "not-found", [DBGD_TIMED_OUT] = "timed-out",
	    [DBGD_TOO_LARGE] = "too-large", [DBGD_FAILED] = "failed",
	    [DBGD_CANCELLED] = "cancelled",
	};

	return o < DBGD_OUTCOME_MAX ? names[o] : "unknown";
}

/*
 * libdebuginfod calls this at least once a second while a transfer runs
 * (also while it connects or the server stalls); non-zero aborts the fetch.
 */
/*
 * Bytes written so far of the fetch under way: libdebuginfod writes it into
 * CACHE/BUILD-ID/debuginfo.XXXXXX, decompressed (it asks for gzip and curl
 * inflates), while the progress it reports counts the bytes received.
 */
static uint64_t bytes_written(const struct worker *w)
{
	char dir[PATH_MAX];
	struct dirent *e;
	uint64_t sum = 0;
	struct stat st;
	DIR *d;

	if (!w->d->cache_dir[0] || !w->build_id ||
	    snprintf(dir, sizeof(dir), "%s/%s", w->d->cache_dir, w->build_id) >= (int)sizeof(dir))
		return 0;
	d = opendir(dir);
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "debuginfo.", 10) &&
		    !fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	if (d)
		closedir(d);
	return sum;
}

static int progress(debuginfod_client *c, long done, long total)
{
	struct worker *w = dbgd_fn.get_user_data(c);

	if (__atomic_load_n(&w->d->stopping, __ATOMIC_RELAXED))
		return 1;
	if (mono_ns() >= w->deadline_ns) {
		w->over_time = true;
		return 1;
	}
	/* the bytes received, declared, and written (a compressed body inflates on disk) */
	if ((done > 0 && (uint64_t)done > w->d->o.max_bytes) ||
	    (total > 0 && (uint64_t)total > w->d->o.max_bytes) ||
	    bytes_written(w) > w->d->o.max_bytes) {
		w->over_size = true;
		return 1;
	}
	return 0;
}

static enum dbgd_outcome fetch(struct worker *w, const char *build_id, int *fd, char **path)
{
	struct stat st;
	int r;

	*fd = -1;
	*path = NULL;
	w->over_time = w->over_size = false;
	w->build_id = build_id;
	w->deadline_ns = mono_ns() + w->d->o.timeout_ns;
	r = dbgd_fn.find_debuginfo(w->client, (const unsigned char *)build_id, 0, path);
	if (r < 0) {
		free(*path);
		*path = NULL;
		if (w->over_size)
			return DBGD_TOO_LARGE;
		if (w->over_time)
			return DBGD_TIMED_OUT;
		if (__atomic_load_n(&w->d->stopping, __ATOMIC_RELAXED))
			return DBGD_CANCELLED;
		return r == -ENOENT ? DBGD_NOT_FOUND : DBGD_FAILED;
	}
	/* a cache hit never reaches the progress callback: its size is checked here */
	if (fstat(r, &st) < 0 || (uint64_t)st.st_size > w->d->o.max_bytes) {
		close(r);
		free(*path);
		*path = NULL;
		return DBGD_TOO_LARGE;
	}
	*fd = r;
	pthread_mutex_lock(&w->d->lock);
	w->d->stats.bytes += (uint64_t)st.st_size;
	pthread_mutex_unlock(&w->d->lock);
	/* libdebuginfod names the server it downloaded from; none for its cache */
	return dbgd_fn.get_url(w->client) ? DBGD_FETCHED : DBGD_CACHED;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct dbgd *d = w->d;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct request rq;
		enum dbgd_outcome out;
		uint64_t t0;
		char *path;
		int fd;

		while (!d->len && !d->stopping)
			pthread_cond_wait(&d->work_cond, &d->lock);
		if (d->stopping)
			break;
		rq = d->queue[d->head];
		d->head = (d->head + 1) % d->o.max_queue;
		d->len--;
		d->running++;
		pthread_mutex_unlock(&d->lock);

		t0 = mono_ns();
		out = w->client ? fetch(w, rq.build_id, &fd, &path) : DBGD_FAILED;
		if (!w->client)
			fd = -1, path = NULL;
		rq.fn(rq.ctx, rq.build_id, out, fd, path);
		free(path);

		pthread_mutex_lock(&d->lock);
		d->stats.outcomes[out]++;
		d->stats.busy_ns += mono_ns() - t0;
		d->running--;
		if (!d->len && !d->running)
			pthread_cond_broadcast(&d->idle_cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/*
 * The cache directory libdebuginfod uses, found as it finds it:
 * $DEBUGINFOD_CACHE_PATH, else an existing ~/.debuginfod_client_cache, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client.
 */
static void cache_dir_of_client(char *buf, size_t len)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	struct stat st;

	buf[0] = 0;
	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if (home && *home) {
		snprintf(buf, len, "%s/.debuginfod_client_cache", home);
		if (!stat(buf, &st) && S_ISDIR(st.st_mode))
			return;
	}
	if (xdg && *xdg)
		snprintf(buf, len, "%s/debuginfod_client", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.cache/debuginfod_client", home);
	else
		buf[0] = 0;
}

struct dbgd *dbgd_new(const struct dbgd_opts *o)
{
	struct dbgd *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;
	uint32_t i;

	if (!d)
		return NULL;
	if (!dynlib_load(&dbgd_lib)) {
		fprintf(stderr, "cfiprof: debuginfod: %s (Debian: libdebuginfod1)\n", dbgd_lib.err);
		free(d);
		return NULL;
	}
	d->o = o ? *o : (struct dbgd_opts){0};
	cache_dir_of_client(d->cache_dir, sizeof(d->cache_dir));
	if (!d->o.timeout_ns)
		d->o.timeout_ns = DBGD_TIMEOUT_DEFAULT;
	if (!d->o.max_bytes)
		d->o.max_bytes = DBGD_MAX_BYTES_DEFAULT;
	if (!d->o.workers)
		d->o.workers = DBGD_WORKERS_DEFAULT;
	if (d->o.workers > MAX_WORKERS)
		d->o.workers = MAX_WORKERS;
	if (!d->o.max_queue)
		d->o.max_queue = DBGD_QUEUE_DEFAULT;
	d->queue = calloc(d->o.max_queue, sizeof(*d->queue));
	if (!d->queue) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work_cond, NULL);
	/* dbgd_wait's deadline is on the monotonic clock */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->idle_cond, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < d->o.workers; i++) {
		struct worker *w = &d->workers[i];

		w->d = d;
		/* one client per thread: a client is not shared between fetches at once */
		w->client = dbgd_fn.begin();
		if (w->client) {
			dbgd_fn.set_user_data(w->client, w);
			dbgd_fn.set_progressfn(w->client, progress);
		}
		if (pthread_create(&w->thread, NULL, worker_main, w)) {
			if (w->client)
				dbgd_fn.end(w->client);
			break;
		}
		d->nr_workers++;
	}
	if (!d->nr_workers) {
		dbgd_free(d);
		errno = EAGAIN;
		return NULL;
	}
	return d;
}

int dbgd_request(struct dbgd *d, const char *build_id, dbgd_done_fn fn, void *ctx)
{
	struct request *rq;
	size_t n = strlen(build_id);

	/* the hex of a build-id, nothing libdebuginfod would put into a URL or a path otherwise */
	if (n < 2 || n >= ELF_BUILD_ID_HEX_LEN || strspn(build_id, "0123456789abcdef") != n)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->len == d->o.max_queue || d->stopping) {
		d->stats.queue_full++;
		pthread_mutex_unlock(&d->lock);
		return -EAGAIN;
	}
	rq = &d->queue[(d->head + d->len) % d->o.max_queue];
	memcpy(rq->build_id, build_id, n + 1);
	rq->fn = fn;
	rq->ctx = ctx;
	d->len++;
	pthread_cond_signal(&d->work_cond);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

bool dbgd_wait(struct dbgd *d, uint64_t deadline_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000ull),
			      .tv_nsec = (long)(deadline_ns % 1000000000ull)};
	bool idle;

	pthread_mutex_lock(&d->lock);
	while ((d->len || d->running) &&
	       pthread_cond_timedwait(&d->idle_cond, &d->lock, &ts) != ETIMEDOUT)
		;
	idle = !d->len && !d->running;
	pthread_mutex_unlock(&d->lock);
	return idle;
}

void dbgd_free(struct dbgd *d)
{
	uint32_t i;

	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->stopping, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&d->work_cond);
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < d->nr_workers; i++)
		pthread_join(d->workers[i].thread, NULL);
	for (i = 0; i < d->o.workers; i++)
		if (d->workers[i].client)
			dbgd_fn.end(d->workers[i].client);
	/* the workers are gone: whoever is still waiting hears it now */
	for (; d->len; d->len--, d->head = (d->head + 1) % d->o.max_queue) {
		struct request *rq = &d->queue[d->head];

		rq->fn(rq->ctx, rq->build_id, DBGD_CANCELLED, -1, NULL);
		d->stats.outcomes[DBGD_CANCELLED]++;
	}
	pthread_cond_destroy(&d->work_cond);
	pthread_cond_destroy(&d->idle_cond);
	pthread_mutex_destroy(&d->lock);
	free(d->queue);
	free(d);
}

void dbgd_get_stats(struct dbgd *d, struct dbgd_stats *out)
{
	pthread_mutex_lock(&d->lock);
	*out = d->stats;
	pthread_mutex_unlock(&d->lock);
}
