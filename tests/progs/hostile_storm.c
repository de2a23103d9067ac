// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Processes that cost the profiler's loader as much as they can
 * (tests/e2e/test_hostile.c):
 *   hostile_storm mmap NPROCS SECONDS
 *       NPROCS children each map and unmap a page of executable memory every
 *       half millisecond: each asks for a reload as often as the per-process
 *       limit lets it (one a millisecond), NPROCS times over.
 *   hostile_storm maps DIR N SECONDS
 *       dlopen()s DIR/lib.so, then maps DIR/c0.so .. DIR/c{N-1}.so executable
 *       (copies of one library, each its own inode: a table and an open file
 *       each for the loader), then spins in lib.so's dl_entry -> dl_leaf.
 *       lib.so is mapped first, so it lies above every copy and is the last
 *       one the loader reaches.
 * Both print "ready" on stdout once the mappings are in place.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

static int storm(int nprocs, double secs)
{
	const struct timespec half_ms = {.tv_nsec = 500000};
	double end = spin_now() + secs;
	int i;

	for (i = 0; i < nprocs; i++) {
		if (fork() == 0) {
			/*
			 * Gone with the parent the test kills: left to run out their
			 * SECONDS, 16 of them stormed the next tests' agents (the
			 * hostile suite, right after test_hostile, caught up 3-6 times
			 * later in full make test runs than alone).
			 */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			while (spin_now() < end) {
				void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (p != MAP_FAILED)
					munmap(p, 4096);
				nanosleep(&half_ms, NULL);
			}
			_exit(0);
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int many_maps(const char *dir, int n, char *secs)
{
	char path[4096];
	char *spin_args[] = {"hostile_storm", secs, NULL};
	int (*fn)(int, char **);
	void *h;
	int i;

	snprintf(path, sizeof(path), "%s/lib.so", dir);
	h = dlopen(path, RTLD_NOW);
	fn = h ? (int (*)(int, char **))dlsym(h, "dl_entry") : NULL;
	if (!fn)
		return 4;
	for (i = 0; i < n; i++) {
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/c%d.so", dir, i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) ||
		    mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			MAP_FAILED) {
			perror(path);
			return 5;
		}
		close(fd);
	}
	printf("ready\n");
	fflush(stdout);
	return fn(2, spin_args) ? 0 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "mmap"))
		return storm(atoi(argv[2]), atof(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "maps"))
		return many_maps(argv[2], atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: hostile_storm mmap NPROCS SECONDS | maps DIR N SECONDS\n");
	return 2;
}
