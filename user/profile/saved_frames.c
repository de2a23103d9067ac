// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User frames kept by a recording; see saved_frames.h. */
#include "user/profile/saved_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "user/symbolize/src_lines.h"

struct entry {
	uint32_t pid, n;
	uint64_t map_start, file, addr;
	struct saved_level *levels;
};

struct saved_frames {
	struct entry *v; /* open addressing; levels NULL = free */
	size_t nr, cap;
};

struct saved_frames *saved_frames_new(void)
{
	return calloc(1, sizeof(struct saved_frames));
}

static void levels_free(struct saved_level *lv, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		free(lv[i].function);
		free(lv[i].system_name);
		free(lv[i].file);
	}
	free(lv);
}

void saved_frames_free(struct saved_frames *sf)
{
	size_t i;

	if (!sf)
		return;
	for (i = 0; i < sf->cap; i++)
		if (sf->v[i].levels)
			levels_free(sf->v[i].levels, sf->v[i].n);
	free(sf->v);
	free(sf);
}

static size_t slot_of(const struct saved_frames *sf, uint32_t pid, uint64_t map_start,
		      uint64_t file, uint64_t addr)
{
	uint64_t h =
	    (addr * 0x9e3779b97f4a7c15ull) ^ (map_start * 0xbf58476d1ce4e5b9ull) ^ file ^ pid;
	size_t mask = sf->cap - 1, i;

	for (i = (h ^ h >> 29) & mask; sf->v[i].levels; i = (i + 1) & mask) {
		const struct entry *e = &sf->v[i];

		if (e->pid == pid && e->map_start == map_start && e->file == file &&
		    e->addr == addr)
			break;
	}
	return i;
}

static int grow(struct saved_frames *sf)
{
	struct saved_frames n = {.cap = sf->cap ? sf->cap * 2 : 1024, .nr = sf->nr};
	size_t i;

	n.v = calloc(n.cap, sizeof(*n.v));
	if (!n.v)
		return -1;
	for (i = 0; i < sf->cap; i++)
		if (sf->v[i].levels)
			n.v[slot_of(&n, sf->v[i].pid, sf->v[i].map_start, sf->v[i].file,
				    sf->v[i].addr)] = sf->v[i];
	free(sf->v);
	*sf = n;
	return 0;
}

int saved_frames_add(struct saved_frames *sf, uint32_t pid, uint64_t map_start, uint64_t file,
		     uint64_t addr, uint32_t level, const struct saved_level *lv)
{
	struct saved_level *levels, *d;
	struct entry *e;

	if ((sf->nr + 1) * 2 > sf->cap && grow(sf))
		return -1;
	e = &sf->v[slot_of(sf, pid, map_start, file, addr)];
	if ((e->levels ? e->n : 0) != level || level >= SRC_FRAMES_MAX) {
		errno = EINVAL;
		return -1;
	}
	levels = realloc(e->levels, (level + 1) * sizeof(*levels));
	if (!levels)
		return -1;
	if (!e->levels) {
		*e = (struct entry){.pid = pid, .map_start = map_start, .file = file, .addr = addr};
		sf->nr++;
	}
	e->levels = levels;
	d = &levels[level];
	d->function = strdup(lv->function);
	d->system_name = strdup(lv->system_name);
	d->file = strdup(lv->file);
	d->line = lv->line;
	d->start_line = lv->start_line;
	e->n = level + 1;
	if (!d->function || !d->system_name || !d->file)
		return -1; /* the level stays, freed with the table */
	return 0;
}

const struct saved_level *saved_frames_find(const struct saved_frames *sf, uint32_t pid,
					    uint64_t map_start, uint64_t file, uint64_t addr,
					    uint32_t *n)
{
	const struct entry *e;

	if (!sf || !sf->cap)
		return NULL;
	e = &sf->v[slot_of(sf, pid, map_start, file, addr)];
	/* a recording from before the file was kept: its locations have none */
	if (!e->levels && file)
		e = &sf->v[slot_of(sf, pid, map_start, 0, addr)];
	if (!e->levels)
		return NULL;
	*n = e->n;
	return e->levels;
}

uint64_t saved_frames_file(const char *path)
{
	uint64_t h = hash_str(path ? path : "");

	return h ? h : 1;
}

size_t saved_frames_count(const struct saved_frames *sf)
{
	return sf->nr;
}
