/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening files whose paths come from outside (recordings, /proc/PID/maps,
 * /tmp/perf-PID.map, debug links, a container's libraries): a FIFO or device
 * planted there must not block or feed the profiler, so only regular files are
 * opened; and a path inside a process's root must stay inside it.  Every open
 * takes an O_PATH handle first (no driver's open runs, no FIFO waits), checks
 * what it holds with fstat, and only then reopens it for reading through
 * /proc/self/fd: a device bind-mounted over a library in a user's own mount
 * namespace is never opened.  Refusals are counted by cause.
 */
#ifndef CFIPROF_SAFE_OPEN_H
#define CFIPROF_SAFE_OPEN_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The file an open must reach (st_dev, st_ino): a mapping's, from /proc/PID/maps. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

enum safe_open_refusal {
	SAFE_OPEN_DEVICE,      /* a character or block device */
	SAFE_OPEN_FIFO,	       /* a FIFO */
	SAFE_OPEN_OTHER_TYPE,  /* a socket or a directory */
	SAFE_OPEN_SYMLINK,     /* a symlink where none is followed (-ELOOP) */
	SAFE_OPEN_OUT_OF_ROOT, /* a link out of the root (-EXDEV) */
	SAFE_OPEN_OTHER_FILE,  /* a regular file, not the one expected (-ESTALE) */
	SAFE_OPEN_REFUSAL_CAUSES,
};

/* Opens refused for that cause so far (process-wide), and the cause's name for metrics. */
uint64_t safe_open_refused(enum safe_open_refusal r);
const char *safe_open_refusal_name(enum safe_open_refusal r);

/*
 * Read-only fd of a regular file, or -errno: -EINVAL for anything else, and
 * -ESTALE for another file than @want (NULL: any); never blocks.
 */
int open_regular(const char *path);
int open_regular_as(const char *path, const struct file_id *want);
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
int open_in_root_as(int root_fd, const char *path, const struct file_id *want);
/*
 * The same, but symlinks that stay beneath root_fd are followed: for trees a
 * distribution builds of relative links, such as /usr/lib/debug/.build-id on
 * Fedora.  One that leads out (absolute, or ".." past the root) is refused,
 * -EXDEV (openat2 RESOLVE_BENEATH); so is a magic link.  @path is taken
 * from the root whether it starts with '/' or not.
 */
int open_beneath_root(int root_fd, const char *path);
/* O_PATH fd of /proc/PID/root, the process's root directory, or -errno. */
int open_proc_root(uint32_t pid);
/*
 * @path (as /proc/PID/maps names it, from our root) as the process sees it
 * inside its root: a chrooted process's files are named from ours
 * ("/srv/ctr/usr/lib/x.so" for its "/usr/lib/x.so"), a pivot_root'ed
 * container's already from its own.  Returns @path past the prefix, or @path.
 */
const char *path_in_proc_root(uint32_t pid, const char *path);
/* open_in_root inside /proc/PID/root, i.e. the process's mount namespace and chroot. */
int open_in_proc_root(uint32_t pid, const char *path);
int open_in_proc_root_as(uint32_t pid, const char *path, const struct file_id *want);

#endif
