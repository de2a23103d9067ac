// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Files by (device, inode), held open for loads from the kernel's mapping
 * lists (see file_index.h).  A chained hash over a fixed pool; when the pool
 * is full the least recently noted entry is closed and reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/hash.h"
#include "user/track/file_index.h"

struct file_index_entry {
	uint64_t dev, ino;
	uint64_t stamp;
	uint32_t next; /* entry index + 1 in the same bucket, 0: none */
	int fd;
	char path[256];
};

int file_index_init(struct file_index *fi, uint32_t max)
{
	memset(fi, 0, sizeof(*fi));
	pthread_mutex_init(&fi->lock, NULL);
	if (!max)
		return 0;
	fi->nr_buckets = 1;
	while (fi->nr_buckets < max * 2)
		fi->nr_buckets <<= 1;
	fi->ents = calloc(max, sizeof(*fi->ents));
	fi->buckets = calloc(fi->nr_buckets, sizeof(*fi->buckets));
	if (!fi->ents || !fi->buckets) {
		file_index_free(fi);
		return -ENOMEM;
	}
	fi->max = max;
	return 0;
}

void file_index_free(struct file_index *fi)
{
	for (uint32_t i = 0; i < fi->nr; i++)
		close(fi->ents[i].fd);
	free(fi->ents);
	free(fi->buckets);
	pthread_mutex_destroy(&fi->lock);
	memset(fi, 0, sizeof(*fi));
}

static uint32_t bucket_of(const struct file_index *fi, uint64_t dev, uint64_t ino)
{
	uint64_t key[2] = {dev, ino};

	return (uint32_t)hash_bytes(HASH_FNV_OFFSET, key, sizeof(key)) & (fi->nr_buckets - 1);
}

/* lock held: the entry for the file, or NULL. */
static struct file_index_entry *find_locked(struct file_index *fi, uint64_t dev, uint64_t ino)
{
	uint32_t i = fi->buckets[bucket_of(fi, dev, ino)];

	while (i) {
		struct file_index_entry *e = &fi->ents[i - 1];

		if (e->dev == dev && e->ino == ino)
			return e;
		i = e->next;
	}
	return NULL;
}

/* lock held: takes entry k out of its bucket's chain. */
static void unlink_locked(struct file_index *fi, uint32_t k)
{
	struct file_index_entry *e = &fi->ents[k];
	uint32_t *link = &fi->buckets[bucket_of(fi, e->dev, e->ino)];

	while (*link && *link != k + 1)
		link = &fi->ents[*link - 1].next;
	if (*link)
		*link = e->next;
}

/* lock held: closes the least recently noted file; the last entry takes its slot. */
static void drop_oldest_locked(struct file_index *fi)
{
	uint32_t oldest = 0, last = fi->nr - 1, b;

	for (uint32_t i = 1; i < fi->nr; i++) {
		if (fi->ents[i].stamp < fi->ents[oldest].stamp)
			oldest = i;
	}
	unlink_locked(fi, oldest);
	close(fi->ents[oldest].fd);
	fi->evicted++;
	if (oldest != last) {
		unlink_locked(fi, last);
		fi->ents[oldest] = fi->ents[last];
		b = bucket_of(fi, fi->ents[oldest].dev, fi->ents[oldest].ino);
		fi->ents[oldest].next = fi->buckets[b];
		fi->buckets[b] = oldest + 1;
	}
	fi->nr--;
}

/* lock held: a free slot, within cap entries. */
static uint32_t slot_locked(struct file_index *fi, uint32_t cap)
{
	while (fi->nr && fi->nr >= cap)
		drop_oldest_locked(fi);
	return fi->nr++;
}

void file_index_note(struct file_index *fi, const struct stat *st, int fd, const char *path,
		     uint32_t cap)
{
	struct file_index_entry *e;
	uint32_t k, b;
	int dup_fd;

	if (cap > fi->max)
		cap = fi->max;
	if (!cap || !S_ISREG(st->st_mode))
		return;
	pthread_mutex_lock(&fi->lock);
	/* the limit went down: give files back first */
	while (fi->nr > cap)
		drop_oldest_locked(fi);
	e = find_locked(fi, st->st_dev, st->st_ino);
	if (e) {
		e->stamp = ++fi->clock;
		pthread_mutex_unlock(&fi->lock);
		return;
	}
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0) {
		pthread_mutex_unlock(&fi->lock);
		return;
	}
	k = slot_locked(fi, cap);
	e = &fi->ents[k];
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->stamp = ++fi->clock;
	e->fd = dup_fd;
	snprintf(e->path, sizeof(e->path), "%s", path);
	b = bucket_of(fi, e->dev, e->ino);
	e->next = fi->buckets[b];
	fi->buckets[b] = k + 1;
	pthread_mutex_unlock(&fi->lock);
}

int file_index_open(struct file_index *fi, uint32_t dev_major, uint32_t dev_minor, uint64_t ino,
		    char *path, size_t len)
{
	struct file_index_entry *e;
	int fd = -1;

	if (!fi->max)
		return -1;
	pthread_mutex_lock(&fi->lock);
	e = find_locked(fi, makedev(dev_major, dev_minor), ino);
	if (e) {
		fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
		snprintf(path, len, "%s", e->path);
		e->stamp = ++fi->clock;
	}
	if (fd >= 0)
		fi->hits++;
	else
		fi->misses++;
	pthread_mutex_unlock(&fi->lock);
	return fd;
}
