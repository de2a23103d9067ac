// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* See mkdirs.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/mkdirs.h"

int mkdirs(const char *dir, mode_t parent_mode, mode_t mode)
{
	char path[PATH_MAX], *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, parent_mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	return 0;
}
