// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A mmap()able map mapped as far as it is used (see map_window.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "common/map_window.h"

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

int map_window_init(struct map_window *w, int fd, size_t len)
{
	void *p;
	int err;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->len = len;
	/* address space only: no memory, nothing resident, no commit charge */
	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	w->base = p;
	pthread_mutex_init(&w->lock, NULL);
	err = map_window_cover(w, 1);
	if (err) {
		map_window_free(w);
		return err;
	}
	return 0;
}

int map_window_cover(struct map_window *w, size_t end)
{
	size_t mapped, want;
	void *p;
	int err = 0;

	if (end <= __atomic_load_n(&w->mapped, __ATOMIC_ACQUIRE))
		return 0;
	if (end > w->len)
		return -ERANGE;
	pthread_mutex_lock(&w->lock);
	mapped = w->mapped;
	want = round_up(end, MAP_WINDOW_CHUNK);
	if (want > w->len)
		want = w->len;
	if (want > mapped) {
		/* over the reservation: the pages already mapped below stay as they are */
		p = mmap((char *)w->base + mapped, want - mapped, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, w->fd, (off_t)mapped);
		if (p == MAP_FAILED)
			err = -errno;
		else
			__atomic_store_n(&w->mapped, want, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

void map_window_free(struct map_window *w)
{
	if (w->base) {
		munmap(w->base, w->len);
		pthread_mutex_destroy(&w->lock);
	}
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}
