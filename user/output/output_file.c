// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Creating output files with a fixed mode; see output_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/parse.h"

#include "user/output/output_file.h"

/*
 * Whether a symlink in @path's directory can only be root's: /dev/stdout and
 * /dev/fd/N are links on purpose, but anyone may plant one in /dev/shm or
 * /dev/mqueue.
 */
static bool link_dir_trusted(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			  path) >= (int)sizeof(dir))
		return false;
	return !stat(dir, &st) && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

FILE *output_create(const char *path, mode_t mode)
{
	const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY;
	/*
	 * A symlink planted where the profile goes must not send a privileged
	 * profiler's output over another file.
	 */
	int fd = open(path, flags | O_NOFOLLOW, mode);
	struct stat st;
	FILE *f;

	if (fd < 0 && errno == ELOOP && !strncmp(path, "/dev/", 5) && link_dir_trusted(path))
		fd = open(path, flags, mode);
	if (fd < 0)
		return NULL;
	/*
	 * An existing file keeps its old mode through O_CREAT; the umask narrows a
	 * new one.  Not a device or a pipe: -o /dev/null would make it root's only.
	 */
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && fchmod(fd, mode))) {
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

/* The directory part of path ("." for a bare name), in buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

static bool dir_writable(const char *path)
{
	char dir[PATH_MAX];

	dir_of(path, dir, sizeof(dir));
	return !faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

/* /dev/stdout and friends are links on purpose (output_create's rule) */
/* A link output_create follows: under /dev, in a directory only root can write. */
static bool under_dev(const char *path)
{
	return !strncmp(path, "/dev/", 5) && link_dir_trusted(path);
}

int output_check(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (!*path || path[strlen(path) - 1] == '/') {
		errno = EISDIR;
		return -1;
	}
	if (!lstat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (S_ISLNK(st.st_mode) && !under_dev(path)) {
			errno = ELOOP;
			return -1;
		}
		/* a device, a FIFO, or a file in a directory we may not write: in place */
		if (!S_ISREG(st.st_mode) || !dir_writable(path))
			return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS);
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	dir_of(path, dir, sizeof(dir));
	return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

/* path with its directory resolved, in buf; false if the directory does not exist */
static bool resolved(const char *path, char *buf, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(path, '/');

	dir_of(path, dir, sizeof(dir));
	if (!realpath(dir, real))
		return false;
	return (size_t)snprintf(buf, len, "%s/%s", real, base ? base + 1 : path) < len;
}

bool output_same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	struct stat sa, sb;

	/* hard links, or a device both name */
	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (resolved(a, ra, sizeof(ra)) && resolved(b, rb, sizeof(rb)))
		return !strcmp(ra, rb);
	return !strcmp(a, b);
}

struct output_owner output_owner_from_env(void)
{
	struct output_owner o = {0};
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	uint32_t uid, gid;

	/* only root may give files away, and only sudo says to whom */
	if (geteuid() || !u || !g || parse_u32(u, 0, UINT32_MAX - 1, &uid) ||
	    parse_u32(g, 0, UINT32_MAX - 1, &gid))
		return o;
	return (struct output_owner){.set = true, .uid = uid, .gid = gid};
}

/* Whether path is written where it is: a device or FIFO, or a directory we may not write. */
static bool in_place(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return false;
	return !S_ISREG(st.st_mode) || !dir_writable(path);
}

static int open_temporary(struct output_file *o, mode_t mode, const struct output_owner *owner)
{
	const char *base = strrchr(o->path, '/');
	size_t dirlen = base ? (size_t)(base - o->path) + 1 : 0;
	size_t len = strlen(o->path) + sizeof("/..XXXXXX");
	int fd, e;

	base = base ? base + 1 : o->path;
	o->tmp = malloc(len);
	if (!o->tmp)
		return -1;
	/* hidden, and beside the final name: the rename stays in one filesystem */
	snprintf(o->tmp, len, "%.*s.%s.XXXXXX", (int)dirlen, o->path, base);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, mode) || (owner && owner->set && fchown(fd, owner->uid, owner->gid)))
		goto fail_unlink;
	o->f = fdopen(fd, "w");
	if (o->f)
		return 0;
fail_unlink:
	e = errno;
	unlink(o->tmp);
	if (fd >= 0)
		close(fd);
	errno = e;
fail:
	e = errno;
	free(o->tmp);
	o->tmp = NULL;
	errno = e;
	return -1;
}

int output_open(struct output_file *o, const char *path, mode_t mode,
		const struct output_owner *owner)
{
	*o = (struct output_file){.path = path};
	if (output_check(path))
		return -1;
	if (in_place(path)) {
		o->f = output_create(path, mode);
		return o->f ? 0 : -1;
	}
	return open_temporary(o, mode, owner);
}

int output_commit(struct output_file *o, bool keep_old)
{
	char old[PATH_MAX];
	int err = output_finish(o) ? errno : 0;

	if (o->tmp && !err && keep_old) {
		if (snprintf(old, sizeof(old), "%s.old", o->path) >= (int)sizeof(old))
			err = ENAMETOOLONG;
		else if (rename(o->path, old) && errno != ENOENT)
			err = errno;
	}
	if (o->tmp && !err && rename(o->tmp, o->path))
		err = errno;
	if (o->tmp && err)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	errno = err;
	return err ? -1 : 0;
}

int output_finish(struct output_file *o)
{
	int err = 0;

	if (fflush(o->f) || ferror(o->f))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno;
	o->f = NULL;
	errno = err;
	return err ? -1 : 0;
}

int output_finish_for_parent(struct output_file *o)
{
	int ret = output_finish(o);

	free(o->tmp);
	o->tmp = NULL;
	return ret;
}

void output_abort(struct output_file *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
}
