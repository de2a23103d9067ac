/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Opening a process's files as that process sees them, without escaping its root. */
#ifndef CFIPROF_OPEN_IN_ROOT_H
#define CFIPROF_OPEN_IN_ROOT_H

#include <stdint.h>

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
