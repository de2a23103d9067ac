// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps parsing: strict, so a malformed line is rejected, not guessed. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
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

int proc_maps_read(int pid, bool exec_only, struct maps_entry **out)
{
	char path[64], *line = NULL, *paths = NULL, *base;
	struct maps_entry *v = NULL, *block, e;
	size_t cap = 0, nr = 0, lcap = 0, paths_len = 0, i;
	FILE *f, *ps = NULL;
	int err = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* the kept entries' paths, one after another: joined to the entries at the end */
	ps = open_memstream(&paths, &paths_len);
	if (!ps) {
		err = -ENOMEM;
		goto out;
	}
	while (getline(&line, &lcap, f) > 0) {
		long at;

		if (proc_maps_parse_line(line, &e) || (exec_only && !e.exec))
			continue;
		if (VEC_RESERVE(v, nr, cap, 32)) {
			err = -ENOMEM;
			goto out;
		}
		at = ftell(ps);
		if (at < 0 || fputs(e.path, ps) == EOF || fputc(0, ps) == EOF) {
			err = -ENOMEM;
			goto out;
		}
		e.path = (const char *)(uintptr_t)at; /* the stream's buffer moves as it grows */
		v[nr++] = e;
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(ps) && !err)
		err = -ENOMEM;
	ps = NULL;
	/* empty: a kernel thread, or a process that exited between open and read */
	if (err || !nr)
		goto out;
	/* one block, so that callers free entries and paths at once */
	block = realloc(v, nr * sizeof(*v) + paths_len);
	if (!block) {
		err = -ENOMEM;
		goto out;
	}
	v = block;
	base = (char *)(v + nr);
	memcpy(base, paths, paths_len);
	for (i = 0; i < nr; i++)
		v[i].path = base + (uintptr_t)v[i].path;
	*out = v;
	v = NULL;
out:
	if (ps)
		fclose(ps);
	free(paths);
	free(v);
	free(line);
	fclose(f);
	return err ? err : (int)nr;
}
