// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps parsing: strict, so a malformed line is rejected, not guessed. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/proc_maps.h"

static const char deleted_suffix[] = " (deleted)";

int proc_maps_parse_line(char *line, struct maps_entry *e)
{
	char perms[8], *p;
	int n = 0;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 "%n", &e->start,
		   &e->end, perms, &e->offset, &e->dev_major, &e->dev_minor, &e->inode, &n) != 7)
		return -1;
	if (e->end <= e->start || strlen(perms) != 4)
		return -1;
	e->read = perms[0] == 'r';
	e->write = perms[1] == 'w';
	e->exec = perms[2] == 'x';
	e->priv = perms[3] == 'p';
	p = line + n;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strcspn(p, "\n");
	if (len >= PATH_MAX)
		return -1;
	p[len] = 0;
	if (len > sizeof(deleted_suffix) - 1 &&
	    !strcmp(p + len - (sizeof(deleted_suffix) - 1), deleted_suffix)) {
		e->deleted = true;
		p[len - (sizeof(deleted_suffix) - 1)] = 0;
	}
	e->path = p;
	return 0;
}

/* Paths of the entries read so far, one after another, each NUL-terminated. */
struct path_arena {
	char *v;
	size_t len, cap;
};

/* Appends @s; returns its offset, or -1 (ENOMEM). */
static ssize_t arena_add(struct path_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	ssize_t at = (ssize_t)a->len;

	if (a->len + n > a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 4096;
		char *v;

		while (ncap < a->len + n)
			ncap *= 2;
		v = realloc(a->v, ncap);
		if (!v)
			return -1;
		a->v = v;
		a->cap = ncap;
	}
	memcpy(a->v + a->len, s, n);
	a->len += n;
	return at;
}

int proc_maps_read(int pid, bool exec_only, struct maps_entry **out)
{
	char path[64], *line = NULL, *base;
	struct maps_entry *v = NULL, *block, e;
	struct path_arena paths = {0};
	size_t cap = 0, nr = 0, lcap = 0, i;
	FILE *f;
	int err = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		ssize_t at;

		if (proc_maps_parse_line(line, &e) || (exec_only && !e.exec))
			continue;
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct maps_entry *n = realloc(v, ncap * sizeof(*n));

			if (!n) {
				err = -ENOMEM;
				goto out;
			}
			v = n;
			cap = ncap;
		}
		at = arena_add(&paths, e.path);
		if (at < 0) {
			err = -ENOMEM;
			goto out;
		}
		e.path = (const char *)(uintptr_t)at; /* the arena moves as it grows */
		v[nr++] = e;
	}
	if (ferror(f))
		err = -EIO;
	/* empty: a kernel thread, or a process that exited between open and read */
	if (err || !nr)
		goto out;
	/* one block, so that callers free entries and paths at once */
	block = realloc(v, nr * sizeof(*v) + paths.len);
	if (!block) {
		err = -ENOMEM;
		goto out;
	}
	v = block;
	base = (char *)(v + nr);
	memcpy(base, paths.v, paths.len);
	for (i = 0; i < nr; i++)
		v[i].path = base + (uintptr_t)v[i].path;
	*out = v;
	v = NULL;
out:
	free(v);
	free(paths.v);
	free(line);
	fclose(f);
	return err ? err : (int)nr;
}
