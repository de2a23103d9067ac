// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Creating output files with a fixed mode; see output_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/output/output_file.h"

/*
 * Whether a symlink in @path's directory can only be root's: /dev/stdout and
 * /dev/fd/N are links on purpose, but anyone may plant one in /dev/shm or
 * /dev/mqueue.
 */
static bool link_dir_trusted(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return false;
	return !stat(dir, &st) && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

FILE *output_create(const char *path, mode_t mode)
{
	const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY;
	/*
	 * A symlink planted where the profile goes must not send a privileged
	 * profiler's output over another file.
	 */
	int fd = open(path, flags | O_NOFOLLOW, mode);
	struct stat st;
	FILE *f;

	if (fd < 0 && errno == ELOOP && !strncmp(path, "/dev/", 5) && link_dir_trusted(path))
		fd = open(path, flags, mode);
	if (fd < 0)
		return NULL;
	/*
	 * An existing file keeps its old mode through O_CREAT; the umask narrows a
	 * new one.  Not a device or a pipe: -o /dev/null would make it root's only.
	 */
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && fchmod(fd, mode))) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

int output_parse_mode(const char *s, mode_t *mode)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777)
		return -1;
	*mode = (mode_t)v;
	return 0;
}
