// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * faults_badcfi SECS LIB [LIB...]: dlopen()s each LIB (copies of
 * libfaults_badcfi.so with corrupted CFI, made by tests/e2e/test_faults.c), runs
 * each one's bc_entry in its own thread ("bc_lib0", "bc_lib1", ...: spins
 * forever inside the library), while the main thread spins for SECS ("3c":
 * of the process's CPU time) in main -> bc_a -> bc_b -> bc_leaf, then the
 * process exits.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "spin.h"

volatile unsigned long counter;

typedef int (*entry_fn)(int);

NOINLINE int bc_leaf(int x)
{
	SPIN_LOOP(counter);
	return x + 1;
}

NOINLINE int bc_b(int x)
{
	volatile long buf[11];

	buf[2] = x;
	return bc_leaf(x) + buf[2];
}

NOINLINE int bc_a(int x)
{
	volatile char buf[200];

	buf[9] = x;
	return bc_b(x + 1) * 2 + buf[9];
}

static entry_fn entries[8];

static void *lib_thread(void *arg)
{
	long i = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "bc_lib%ld", i);
	pthread_setname_np(pthread_self(), name);
	return (void *)(long)entries[i]((int)i + 1);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int i;

	if (argc < 3 || argc > 10) {
		fprintf(stderr, "usage: faults_badcfi SECS LIB [LIB...]\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "faults_badcfi: dlopen %s: %s\n", argv[i], dlerror());
			return 1;
		}
		entries[i - 2] = (entry_fn)dlsym(h, "bc_entry");
		if (!entries[i - 2] || pthread_create(&t, NULL, lib_thread, (void *)(long)(i - 2)))
			return 1;
	}
	/* "3c": the process's CPU time, its library threads' included */
	{
		double secs = spin_secs(argv[1]);

		spin_deadline = spin_now() + secs;
	}
	bc_a(argc);
	fflush(stdout);
	_exit(0);
}
