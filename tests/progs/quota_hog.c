// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A process that tries to take every shared unwind map for itself
 * (tests/e2e/test_hostile.c, quota cases), then spins so that it is sampled
 * and loaded:
 *   quota_hog SECONDS dlopen LIB...    dlopen's objects holding tens of
 *                                      thousands of distinct CFI rules
 *   quota_hog SECONDS mmap FILE COUNT  maps FILE executable COUNT times at
 *                                      distinct addresses, each range
 *                                      [k MiB + 4 KiB, (k + 1) MiB - 4 KiB):
 *                                      15 LPM keys each
 * Prints "ready N" once everything is mapped.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spin.h"

static volatile unsigned long hog_counter;

static NOINLINE void hog_leaf(void)
{
	SPIN_LOOP(hog_counter);
}

static int map_many(const char *path, long count)
{
	const uintptr_t base = 0x200000000000ul, mib = 1ul << 20;
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;

	for (long k = 0; fd >= 0 && k < count; k++) {
		void *want = (void *)(base + (uintptr_t)k * mib + 4096);
		void *p = mmap(want, mib - 8192, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);

		n += p == want;
	}
	return n;
}

int main(int argc, char **argv)
{
	int n = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SECONDS dlopen LIB... | SECONDS mmap FILE COUNT\n",
			argv[0]);
		return 2;
	}
	spin_init(argc, argv);
	if (!strcmp(argv[2], "mmap")) {
		n = map_many(argv[3], atol(argv[4]));
	} else {
		for (int i = 3; i < argc; i++) {
			if (dlopen(argv[i], RTLD_NOW | RTLD_LOCAL))
				n++;
			else
				fprintf(stderr, "%s\n", dlerror());
		}
	}
	printf("ready %d\n", n);
	fflush(stdout);
	hog_leaf();
	return 0;
}
