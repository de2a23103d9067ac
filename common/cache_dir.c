// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The cache directory (cache_dir.h). */
#include "common/cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
