/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The files recent loads opened, by device and inode, each held open: a
 * process gone before anyone read /proc/PID/maps is loaded from the kernel's
 * list of its mappings (RECORD_MAPS_*, inodes only) with the very files other
 * processes of the same program had mapped.  Bounded in entries and in the
 * file descriptors it holds; the least recently noted go first.
 */
#ifndef CFIPROF_FILE_INDEX_H
#define CFIPROF_FILE_INDEX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct file_index_entry;

struct file_index {
	pthread_mutex_t lock;
	struct file_index_entry *ents; /* max of them */
	uint32_t *buckets;	       /* entry index + 1, chained through next */
	uint32_t max, nr, nr_buckets;
	uint64_t clock; /* stamps entries: the smallest is the least recently noted */
	uint64_t hits, misses, evicted;
};

/* max entries (fds held) at most; 0 disables the index.  -ENOMEM on failure. */
int file_index_init(struct file_index *fi, uint32_t max);
void file_index_free(struct file_index *fi);
/*
 * fd was opened for path and fstat()ed as *st: keeps a duplicate (once per
 * file), holding at most cap (the file limit may have been lowered since).
 */
void file_index_note(struct file_index *fi, const struct stat *st, int fd, const char *path,
		     uint32_t cap);
/*
 * A new descriptor of the file (major:minor, ino), with the path it was mapped
 * under copied to path (len bytes); -1 if not held.
 */
int file_index_open(struct file_index *fi, uint32_t dev_major, uint32_t dev_minor, uint64_t ino,
		    char *path, size_t len);

#endif
