/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A mmap()able map (a BPF array) mapped into this process only as far as it
 * is used.  The kernel maps every page of a BPF array at mmap(), so mapping
 * the whole rows map made all of it resident in the profiler's RSS (16 MiB
 * by default) whatever the tables held.  Here the whole range is reserved
 * (address space only) and the map's pages are mapped in from its start, a
 * chunk at a time, as what is written grows; the base address never moves,
 * and nothing once mapped is unmapped before map_window_free.
 */
#ifndef CFIPROF_COMMON_MAP_WINDOW_H
#define CFIPROF_COMMON_MAP_WINDOW_H

#include <pthread.h>
#include <stddef.h>

/* what is mapped at a time beyond the part in use */
#define MAP_WINDOW_CHUNK (1u << 20)

struct map_window {
	void *base;
	size_t len;    /* the whole map, page-rounded */
	size_t mapped; /* bytes mapped from base (atomic: read without the lock) */
	int fd;
	pthread_mutex_t lock;
};

/* Reserves len bytes for fd's map and maps its first chunk; 0 or -errno. */
int map_window_init(struct map_window *w, int fd, size_t len);
/* The map mapped at least up to byte end (no further than its length); 0 or -errno. */
int map_window_cover(struct map_window *w, size_t end);
void map_window_free(struct map_window *w);

#endif
