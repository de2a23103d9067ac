// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Creating output files with a fixed mode; see output_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/output/output_file.h"

FILE *output_create(const char *path, mode_t mode)
{
	/*
	 * A symlink planted where the profile goes (in /tmp, say) must not send
	 * a privileged profiler's output over another file; /dev/stdout and
	 * friends are links on purpose.
	 */
	int nofollow = strncmp(path, "/dev/", 5) ? O_NOFOLLOW : 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | nofollow, mode);
	FILE *f;

	if (fd < 0)
		return NULL;
	/* an existing file keeps its old mode through O_CREAT; the umask narrows a new one */
	if (fchmod(fd, mode)) {
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
