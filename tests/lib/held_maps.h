/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BPF maps a running process holds (cfiprof's), found through its fdinfo. */
#ifndef CFIPROF_TESTS_HELD_MAPS_H
#define CFIPROF_TESTS_HELD_MAPS_H

#include <bpf/bpf.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The fd of the map called name among those process pid holds, -1 if none. */
static inline int map_of_process(pid_t pid, const char *name)
{
	char dir[64], path[PATH_MAX], line[256];
	struct dirent *de;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	while (d && fd < 0 && (de = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		while (f && fd < 0 && fgets(line, sizeof(line), f)) {
			struct bpf_map_info info = {0};
			__u32 len = sizeof(info);
			unsigned int id;
			int m;

			if (sscanf(line, "map_id: %u", &id) != 1)
				continue;
			m = bpf_map_get_fd_by_id(id);
			if (m >= 0 && !bpf_obj_get_info_by_fd(m, &info, &len) &&
			    !strcmp(info.name, name))
				fd = m;
			else if (m >= 0)
				close(m);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return fd;
}

#endif
