// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Opens that look before they open, restricted to regular files; see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/safe_open.h"

static uint64_t refused[SAFE_OPEN_REFUSAL_CAUSES];

static const char *const refusal_names[SAFE_OPEN_REFUSAL_CAUSES] = {
    [SAFE_OPEN_DEVICE] = "device",	     [SAFE_OPEN_FIFO] = "fifo",
    [SAFE_OPEN_OTHER_TYPE] = "not_regular",  [SAFE_OPEN_SYMLINK] = "symlink",
    [SAFE_OPEN_OUT_OF_ROOT] = "out_of_root", [SAFE_OPEN_OTHER_FILE] = "other_file",
};

const char *safe_open_refusal_name(enum safe_open_refusal r)
{
	return (unsigned int)r < SAFE_OPEN_REFUSAL_CAUSES ? refusal_names[r] : "?";
}

uint64_t safe_open_refused(enum safe_open_refusal r)
{
	return (unsigned int)r < SAFE_OPEN_REFUSAL_CAUSES
		   ? __atomic_load_n(&refused[r], __ATOMIC_RELAXED)
		   : 0;
}

static int refuse(enum safe_open_refusal r, int err)
{
	__atomic_fetch_add(&refused[r], 1, __ATOMIC_RELAXED);
	return err;
}

/* A resolution error that is a refusal (counted), or err as it is. */
static int resolve_error(int err)
{
	if (err == -ELOOP)
		return refuse(SAFE_OPEN_SYMLINK, err);
	if (err == -EXDEV)
		return refuse(SAFE_OPEN_OUT_OF_ROOT, err);
	return err;
}

/* -errno when the file behind the O_PATH fd may not be opened for reading, else 0. */
static int check_path_fd(int pfd, const struct file_id *want, struct stat *st)
{
	if (fstat(pfd, st))
		return -errno;
	if (S_ISLNK(st->st_mode)) /* O_PATH | O_NOFOLLOW stops on the link itself */
		return refuse(SAFE_OPEN_SYMLINK, -ELOOP);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return refuse(SAFE_OPEN_DEVICE, -EINVAL);
	if (S_ISFIFO(st->st_mode))
		return refuse(SAFE_OPEN_FIFO, -EINVAL);
	if (!S_ISREG(st->st_mode))
		return refuse(SAFE_OPEN_OTHER_TYPE, -EINVAL);
	if (want && (st->st_dev != want->dev || st->st_ino != want->ino))
		return refuse(SAFE_OPEN_OTHER_FILE, -ESTALE);
	return 0;
}

/*
 * @pfd (an O_PATH fd, taken over; or -errno, returned) opened for reading
 * when it holds a regular file (@want's, if not NULL), else refused, counted.
 */
static int open_path_fd(int pfd, const struct file_id *want)
{
	char self[48];
	struct stat st;
	int fd, flags, err;

	if (pfd < 0)
		return resolve_error(pfd);
	err = check_path_fd(pfd, want, &st);
	if (err) {
		close(pfd);
		return err;
	}
	/*
	 * The reopen reaches the inode just checked, whatever the path names by
	 * now; O_NONBLOCK and O_NOCTTY only in case that ever changes.
	 */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return err;
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/*
 * O_PATH first: opening a device runs its driver's open (a watchdog arms, a
 * tty's lines change) and a FIFO's waits for a writer; a path handle does
 * neither, and its fstat says what the path holds.
 */
static int open_path_flags(const char *path, int extra, const struct file_id *want)
{
	int pfd = open(path, O_PATH | O_CLOEXEC | extra);

	return open_path_fd(pfd < 0 ? -errno : pfd, want);
}

int open_regular(const char *path)
{
	return open_path_flags(path, 0, NULL);
}

int open_regular_nofollow(const char *path)
{
	return open_path_flags(path, O_NOFOLLOW, NULL);
}

int open_regular_as(const char *path, const struct file_id *want)
{
	return open_path_flags(path, 0, want);
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

/*
 * openat2 under root_fd with the given resolve flags, regular files only.  Not
 * RESOLVE_NO_XDEV: /tmp (perf maps), /usr or a container's volumes are mounts
 * of their own; what a mount over a path holds is checked on the handle.
 */
static int open_at_root(int root_fd, const char *path, uint64_t resolve, const struct file_id *want)
{
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC,
	    .resolve = RESOLVE_NO_MAGICLINKS | resolve,
	};
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

	return open_path_fd(fd < 0 ? -errno : (int)fd, want);
}

int open_in_root(int root_fd, const char *path)
{
	return open_in_root_as(root_fd, path, NULL);
}

int open_in_root_as(int root_fd, const char *path, const struct file_id *want)
{
	/*
	 * Never through a symlink: the paths come from /proc/PID/maps, which the
	 * kernel writes already resolved, so a link there was planted afterwards.
	 */
	return open_at_root(root_fd, path, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS, want);
}

int open_beneath_root(int root_fd, const char *path)
{
	while (*path == '/')
		path++;
	return open_at_root(root_fd, path, RESOLVE_BENEATH, NULL);
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
	return open_in_proc_root_as(pid, path, NULL);
}

int open_in_proc_root_as(uint32_t pid, const char *path, const struct file_id *want)
{
	int rfd, fd;

	rfd = open_proc_root(pid);
	if (rfd < 0)
		return rfd;
	fd = open_in_root_as(rfd, path_in_proc_root(pid, path), want);
	close(rfd);
	return fd;
}
