// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Safe opens inside a process's root directory; see open_in_root.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/open_in_root.h"

int open_in_root(int root_fd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

int open_in_proc_root(uint32_t pid, const char *path)
{
	char root[64];
	int rfd, fd;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	fd = open_in_root(rfd, path);
	close(rfd);
	return fd;
}
