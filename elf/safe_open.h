/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening files whose paths come from outside (recordings, /proc/PID/maps,
 * /tmp/perf-PID.map, debug links, a container's libraries): a FIFO or device
 * planted there must not block or feed the profiler, so only regular files are
 * opened; and a path inside a process's root must stay inside it.
 */
#ifndef CFIPROF_SAFE_OPEN_H
#define CFIPROF_SAFE_OPEN_H

#include <stdint.h>
#include <stdio.h>

/* Read-only fd of a regular file, or -errno (-EINVAL for anything else); never blocks. */
int open_regular(const char *path);
/* The same as a FILE (mode "re"), NULL + errno on failure. */
FILE *fopen_regular(const char *path);

/*
 * Opens path (read-only) relative to root_fd, resolving every symlink and
 * ".." inside that root (openat2 RESOLVE_IN_ROOT) and refusing /proc magic
 * links: a container can plant "lib.so -> /etc/shadow" and it still resolves
 * inside the container.  Returns an fd or -errno.
 */
int open_in_root(int root_fd, const char *path);
/* The same inside /proc/PID/root, i.e. the process's mount namespace and chroot. */
int open_in_proc_root(uint32_t pid, const char *path);

#endif
