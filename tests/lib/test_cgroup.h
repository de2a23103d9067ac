/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A cgroup v2 directory of the test's own, so that an agent sampling it
 * (--cgroup) sees the test's programs and not the rest of the host: caps,
 * short processes, what an interval names.
 */
#ifndef CFIPROF_TESTS_TEST_CGROUP_H
#define CFIPROF_TESTS_TEST_CGROUP_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"

static char cg_dir[PATH_MAX];

static inline void cgroup_kill_all(void)
{
	char path[PATH_MAX + 32], *procs, *line, *save = NULL;

	if (!cg_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
	procs = slurp(path);
	for (line = procs ? strtok_r(procs, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		kill(atoi(line), SIGKILL);
	free(procs);
}

static inline void cgroup_remove(void)
{
	int i;

	if (!cg_dir[0])
		return;
	cgroup_kill_all();
	for (i = 0; i < 100 && rmdir(cg_dir) && errno == EBUSY; i++)
		usleep(20000);
	cg_dir[0] = '\0';
}

static inline bool cgroup_make(void)
{
	static const char *const mounts[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
	char probe[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		/* only the cgroup v2 hierarchy has cgroup.controllers */
		snprintf(probe, sizeof(probe), "%s/cgroup.controllers", mounts[i]);
		if (access(probe, F_OK))
			continue;
		snprintf(cg_dir, sizeof(cg_dir), "%s/cfiprof-test-%d", mounts[i],
			 (int)getpid());
		if (!mkdir(cg_dir, 0755))
			return true;
		/*
		 * a killed run's, its pid ours now: rmdir takes it only when no
		 * task is left in it (a live one's fails with EBUSY)
		 */
		if (errno == EEXIST && !rmdir(cg_dir) && !mkdir(cg_dir, 0755))
			return true;
		fprintf(stderr, "mkdir %s: %s\n", cg_dir, strerror(errno));
	}
	cg_dir[0] = '\0';
	return false;
}

/* Like spawn, but the child joins our cgroup before it execs. */
static inline pid_t spawn_in_cgroup(char *const argv[])
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		char path[PATH_MAX + 32];
		int fd, null = open("/dev/null", O_WRONLY);

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg_dir);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1 || null < 0)
			_exit(126);
		close(fd);
		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

#endif
