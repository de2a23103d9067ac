// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's own figures, read from the kernel and malloc; see self_stats.h. */
#include "user/agent/self_stats.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A "Name:   N kB" line of /proc/self/status, in bytes. */
static uint64_t status_bytes(const char *field)
{
	FILE *f = fopen("/proc/self/status", "re");
	size_t n = strlen(field);
	char line[256];
	uint64_t kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

uint64_t agent_rss_bytes(void)
{
	return status_bytes("VmRSS");
}

uint64_t agent_virtual_bytes(void)
{
	return status_bytes("VmSize");
}

uint64_t agent_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

double agent_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The kernel charges each BPF map's memory to the fd holding it ("memlock:" in fdinfo). */
uint64_t agent_kernel_map_bytes(void)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *e;
	uint64_t total = 0, v;
	char line[256];
	bool is_map;
	FILE *f;
	int fd;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		f = fdopen(fd, "re");
		if (!f) {
			close(fd);
			continue;
		}
		is_map = false;
		v = 0;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "map_type:", 9))
				is_map = true;
			sscanf(line, "memlock: %" SCNu64, &v);
		}
		fclose(f);
		if (is_map)
			total += v;
	}
	closedir(d);
	return total;
}

/*
 * The heap in use, apart from what malloc keeps free in its arenas: the
 * resident size moves with fragmentation, this only with what is held.
 */
uint64_t agent_heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}
