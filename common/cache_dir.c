// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The cache directory (cache_dir.h). */
#include "common/cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/mkdirs.h"

const char *cache_dir_path(void)
{
	const char *d = getenv("CFIPROF_CACHE_DIR");

	return d && *d ? d : CACHE_DIR_DEFAULT;
}

bool cache_private(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int cache_dir_open(bool create)
{
	int fd = open(cache_dir_path(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err;
	struct stat st;

	if (fd < 0 && errno == ENOENT && create) {
		err = mkdirs(cache_dir_path(), 0755, 0700);
		if (err)
			return err;
		fd = open(cache_dir_path(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !cache_private(&st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int cache_pwrite_all(int fd, const void *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p = (const char *)p + n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int cache_write_all(int fd, const void *p, size_t len)
{
	return cache_pwrite_all(fd, p, len, -1);
}

int cache_file_open(const char *name, off_t min_size)
{
	int dir = cache_dir_open(false), pfd, fd = -1;
	struct stat st, st2;
	char path[64];

	if (dir < 0)
		return -1;
	pfd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	close(dir);
	if (pfd < 0)
		return -1;
	if (!fstat(pfd, &st) && S_ISREG(st.st_mode) && cache_private(&st) &&
	    st.st_size >= min_size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		/* the file checked, whatever was renamed meanwhile */
		if (fd >= 0 &&
		    (fstat(fd, &st2) || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev)) {
			close(fd);
			fd = -1;
		}
	}
	close(pfd);
	return fd;
}

int cache_tmp_open(struct cache_tmp *t, const char *name)
{
	t->fd = -1;
	t->dir = cache_dir_open(true);
	if (t->dir < 0)
		return t->dir;
	snprintf(t->tmp, sizeof(t->tmp), ".%.120s.%ld.tmp", name, (long)syscall(SYS_gettid));
	t->fd = openat(t->dir, t->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t->fd < 0) {
		int err = -errno;

		close(t->dir);
		t->dir = -1;
		return err;
	}
	return 0;
}

int cache_tmp_commit(struct cache_tmp *t, const char *name, int err)
{
	if (close(t->fd) && !err)
		err = -errno;
	t->fd = -1;
	/* a whole file or none: another start reads it whenever it finds it */
	if (!err && renameat(t->dir, t->tmp, t->dir, name))
		err = -errno;
	if (err)
		unlinkat(t->dir, t->tmp, 0);
	return err;
}

int cache_file_write(const char *name, const void *p, size_t len)
{
	struct cache_tmp t;
	int err = cache_tmp_open(&t, name);

	if (err)
		return err;
	err = cache_tmp_commit(&t, name, cache_write_all(t.fd, p, len));
	close(t.dir);
	return err;
}
