// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Atomic interval files and their retention; see interval_files.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/vec.h"
#include "common/mkdirs.h"
#include "user/agent/interval_files.h"

#define TMP_PREFIX ".tmp-"

int agent_mkdirs(const char *dir)
{
	return mkdirs(dir, 0750, 0750);
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int agent_write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	const char *p = data;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/" TMP_PREFIX "%s.XXXXXX", dir, name) >=
		(int)sizeof(tmp) ||
	    snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	/* mkostemp makes 0600; profiles are for whoever may read the directory */
	if (fchmod(fd, 0640) || fsync(fd)) {
		err = -errno;
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		err = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, dst)) {
		err = -errno;
		goto fail;
	}
	/* the rename itself is durable only once the directory is */
	return fsync_dir(dir);
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return err;
}

void agent_remove_temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

void agent_profile_name(uint64_t unix_ns, char *buf, size_t len)
{
	time_t secs = (time_t)(unix_ns / 1000000000ull);
	char ts[32];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%S", &tm);
	/* milliseconds: names sort by time and short intervals do not collide */
	snprintf(buf, len, AGENT_PROFILE_PREFIX "%s.%03uZ" AGENT_PROFILE_SUFFIX, ts,
		 (unsigned)(unix_ns / 1000000ull % 1000));
}

struct kept {
	char *name;
	uint64_t bytes;
	time_t mtime;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct kept *)a)->name, ((const struct kept *)b)->name);
}

static bool is_profile(const char *name)
{
	size_t n = strlen(name), sl = strlen(AGENT_PROFILE_SUFFIX);

	return !strncmp(name, AGENT_PROFILE_PREFIX, strlen(AGENT_PROFILE_PREFIX)) && n > sl &&
	       !strcmp(name + n - sl, AGENT_PROFILE_SUFFIX);
}

int agent_retain(const char *dir, double max_age, uint64_t max_bytes, struct agent_retention *r)
{
	struct kept *v = NULL;
	size_t nr = 0, cap = 0, i;
	time_t now = time(NULL);
	struct dirent *e;
	struct stat st;
	uint64_t total = 0;
	int err = 0;
	DIR *d;

	memset(r, 0, sizeof(*r));
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		/* a symlink is no profile of ours: neither counted nor removed */
		if (!is_profile(e->d_name) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (VEC_RESERVE(v, nr, cap, 64)) {
			err = -ENOMEM;
			goto out;
		}
		v[nr].name = strdup(e->d_name);
		if (!v[nr].name) {
			err = -ENOMEM;
			goto out;
		}
		v[nr].bytes = (uint64_t)st.st_size;
		v[nr].mtime = st.st_mtime;
		total += v[nr].bytes;
		nr++;
	}
	/* names carry the interval's start time: name order is age order */
	qsort(v, nr, sizeof(*v), by_name);
	for (i = 0; i < nr; i++) {
		bool too_old = max_age > 0 && (double)(now - v[i].mtime) > max_age;
		bool too_big = max_bytes && total > max_bytes;

		/* the newest file stays even when alone it is over the bound */
		if ((!too_old && !too_big) || (i == nr - 1 && !too_old))
			continue;
		if (unlinkat(dirfd(d), v[i].name, 0))
			continue;
		total -= v[i].bytes;
		r->removed++;
		r->removed_bytes += v[i].bytes;
	}
	r->files = nr - r->removed;
	r->bytes = total;
out:
	for (i = 0; i < nr; i++)
		free(v[i].name);
	free(v);
	closedir(d);
	return err;
}
