// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* /proc/PID/stat (and the NSpid line of /proc/PID/status): see proc_stat.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/track/proc_stat.h"

#define PF_EXITING 0x00000004u

/* Fields after the comm, counted from the state (field 3 of proc(5)). */
#define FIELD_FLAGS 6	   /* field 9 */
#define FIELD_STARTTIME 19 /* field 22 */

int proc_stat_parse(const char *text, struct proc_stat_info *out)
{
	/* the comm may hold spaces and parentheses: the last ')' ends it */
	const char *p = strrchr(text, ')');
	unsigned long long v;
	char *end;
	int field;

	if (!p || p[1] != ' ' || !p[2])
		return -1;
	p += 2;
	memset(out, 0, sizeof(*out));
	out->state = *p++;
	for (field = 1; field <= FIELD_STARTTIME; field++) {
		if (*p != ' ')
			return -1;
		p++;
		errno = 0;
		v = strtoull(p, &end, 10);
		/* tty_nr, tpgid and a few others may be negative */
		if (end == p && *p == '-')
			v = strtoull(p + 1, &end, 10);
		if (end == p || errno)
			return -1;
		if (field == FIELD_FLAGS)
			out->flags = (uint32_t)v;
		else if (field == FIELD_STARTTIME)
			out->start_time = v;
		p = end;
	}
	return 0;
}

int proc_stat_read(uint32_t pid, struct proc_stat_info *out)
{
	char path[32], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	buf[n] = 0;
	return proc_stat_parse(buf, out) ? -EINVAL : 0;
}

bool proc_stat_dying(const struct proc_stat_info *s)
{
	return (s->flags & PF_EXITING) || s->state == 'Z' || s->state == 'X' || s->state == 'x';
}

uint32_t proc_ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (tok = strtok_r(line + 6, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			ns = (uint32_t)strtoul(tok, NULL, 10);
		break;
	}
	fclose(f);
	return ns;
}

int proc_read_identity(uint32_t pid, uint32_t *uid, bool *same_tmp)
{
	char path[64];
	struct stat st, root, self_root, mnt, self_mnt;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	/* same root directory and mount namespace as ours: its /tmp is our /tmp */
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	*same_tmp = !stat(path, &root) && !stat("/proc/self/root", &self_root) &&
		    root.st_dev == self_root.st_dev && root.st_ino == self_root.st_ino;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	*same_tmp = *same_tmp && !stat(path, &mnt) && !stat("/proc/self/ns/mnt", &self_mnt) &&
		    mnt.st_ino == self_mnt.st_ino;
	return 0;
}
