// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/maps parsing: strict, so a malformed line is rejected, not guessed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/track/proc_maps.h"

static const char deleted_suffix[] = " (deleted)";

int proc_maps_parse_line(const char *line, struct maps_entry *e)
{
	char perms[8];
	int n = 0;
	size_t len;
	const char *p;

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
	if (len >= sizeof(e->path))
		return -1;
	memcpy(e->path, p, len);
	e->path[len] = 0;
	if (len > sizeof(deleted_suffix) - 1 &&
	    !strcmp(e->path + len - (sizeof(deleted_suffix) - 1), deleted_suffix)) {
		e->deleted = true;
		e->path[len - (sizeof(deleted_suffix) - 1)] = 0;
	}
	return 0;
}

int proc_maps_read(int pid, bool exec_only, struct maps_entry **out)
{
	char path[64], *line = NULL;
	struct maps_entry *v = NULL, e;
	size_t cap = 0, nr = 0, lcap = 0;
	FILE *f;
	int err = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
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
		v[nr++] = e;
	}
	if (ferror(f))
		err = -EIO;
out:
	free(line);
	fclose(f);
	if (err) {
		free(v);
		return err;
	}
	/* empty: a kernel thread, or a process that exited between open and read */
	*out = v;
	return (int)nr;
}
