// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Non-blocking opens restricted to regular files; see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/safe_open.h"

int open_regular(const char *path)
{
	/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), flags;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
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
