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
/* write(2) until all of p is written: 0 or -errno. */
int cache_write_all(int fd, const void *p, size_t len);
/* The same at offset off (pwrite(2)); off < 0: at the file's position. */
int cache_pwrite_all(int fd, const void *p, size_t len, off_t off);

#endif
