/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The directory of what one start keeps for the next (/var/cache/cfiprof, or
 * $CFIPROF_CACHE_DIR): the kernel types' cache, inflated debug files.  Only a
 * directory and files this user owns and nobody else may write are used.
 */
#ifndef CFIPROF_CACHE_DIR_H
#define CFIPROF_CACHE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define CACHE_DIR_DEFAULT "/var/cache/cfiprof"

/* The directory's path. */
const char *cache_dir_path(void);
/* Owned by this user and writable by nobody else. */
bool cache_private(const struct stat *st);
/*
 * An O_PATH descriptor of the directory, created (0700, parents 0755) when
 * create and missing; -EPERM when it is not private, else -errno.
 */
int cache_dir_open(bool create);
/*
 * The cache file name opened for reading (O_RDONLY | O_NONBLOCK), through an
 * O_PATH descriptor so that the file checked is the file read: a regular
 * file this user owns, nobody else may write, of min_size bytes at least.
 * -1 otherwise.
 */
int cache_file_open(const char *name, off_t min_size);
/* The cache file name made p (len bytes) whole, or left as it was: 0 or -errno. */
int cache_file_write(const char *name, const void *p, size_t len);

/* A file being written for the cache: it becomes its name whole, or not at all. */
struct cache_tmp {
	int dir; /* the cache directory (O_PATH): the caller closes it */
	int fd;	 /* the temporary file, written by the caller */
	char tmp[160];
};

/* The temporary file for name in the cache directory, created 0600: 0 or -errno. */
int cache_tmp_open(struct cache_tmp *t, const char *name);
/*
 * Closes it and renames it name where err is 0, else removes it: 0 or the
 * first error.  t->dir stays open.
 */
int cache_tmp_commit(struct cache_tmp *t, const char *name, int err);
/* write(2) until all of p is written: 0 or -errno. */
int cache_write_all(int fd, const void *p, size_t len);
/* The same at offset off (pwrite(2)); off < 0: at the file's position. */
int cache_pwrite_all(int fd, const void *p, size_t len, off_t off);

#endif
