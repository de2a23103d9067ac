// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Non-blocking opens restricted to regular files, and opens inside a root; see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/safe_open.h"

/* fd of a regular file, made blocking again; anything else is closed and refused. */
static int regular_or_refuse(int fd)
{
	struct stat st;
	int flags;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
static int open_regular_flags(const char *path, int extra)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra);

	return regular_or_refuse(fd < 0 ? -errno : fd);
}

int open_regular(const char *path)
{
	return open_regular_flags(path, 0);
}

int open_regular_nofollow(const char *path)
{
	return open_regular_flags(path, O_NOFOLLOW);
}

FILE *fopen_regular(const char *path)
{
	int fd = open_regular(path);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* openat2 under root_fd with the given resolve flags, regular files only, never blocking */
static int open_at_root(int root_fd, const char *path, uint64_t resolve)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_NO_MAGICLINKS | resolve,
	};
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

	return regular_or_refuse(fd < 0 ? -errno : (int)fd);
}

int open_in_root(int root_fd, const char *path)
{
	/*
	 * Never through a symlink: the paths come from /proc/PID/maps, which the
	 * kernel writes already resolved, so a link there was planted afterwards.
	 */
	return open_at_root(root_fd, path, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
}

int open_beneath_root(int root_fd, const char *path)
{
	while (*path == '/')
		path++;
	return open_at_root(root_fd, path, RESOLVE_BENEATH);
}

int open_proc_root(uint32_t pid)
{
	char root[64];
	int fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

const char *path_in_proc_root(uint32_t pid, const char *path)
{
	char link[64], root[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%u/root", pid);
	n = readlink(link, root, sizeof(root));
	/* "/" (ours, or a namespace's own root), or a root we cannot name */
	if (n <= 1 || n >= (ssize_t)sizeof(root) || root[0] != '/')
		return path;
	if (!strncmp(path, root, (size_t)n) && path[n] == '/')
		return path + n;
	return path;
}

int open_in_proc_root(uint32_t pid, const char *path)
{
	int rfd, fd;

	rfd = open_proc_root(pid);
	if (rfd < 0)
		return rfd;
	fd = open_in_root(rfd, path_in_proc_root(pid, path));
	close(rfd);
	return fd;
}
