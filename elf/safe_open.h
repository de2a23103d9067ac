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
/* The same, but a symlink as the last component is refused (-ELOOP). */
int open_regular_nofollow(const char *path);
/* open_regular as a FILE (mode "re"), NULL + errno on failure. */
FILE *fopen_regular(const char *path);

/*
 * Opens the regular file path (read-only, never blocking) relative to root_fd,
 * with ".." and absolute paths kept inside that root (openat2 RESOLVE_IN_ROOT)
 * and no symlink followed at all (-ELOOP): a process can plant
 * "lib.so -> /etc/shadow" or a FIFO where its library was, and neither leaves
 * its root nor blocks the reader.  Returns an fd or -errno (-EINVAL: not a
 * regular file).
 */
int open_in_root(int root_fd, const char *path);
/*
 * The same, but symlinks are followed, never out of root_fd (an absolute or
 * ".." target resolves inside it; no magic links): for trees a distribution
 * builds of links, such as /usr/lib/debug/.build-id on Fedora.
 */
int open_in_root_follow(int root_fd, const char *path);
/* O_PATH fd of /proc/PID/root, the process's root directory, or -errno. */
int open_proc_root(uint32_t pid);
/* open_in_root inside /proc/PID/root, i.e. the process's mount namespace and chroot. */
int open_in_proc_root(uint32_t pid, const char *path);

#endif
