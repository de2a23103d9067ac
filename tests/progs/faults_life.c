// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process lifecycle events in the middle of profiling (tests/e2e/test_faults.c):
 *   faults_life exit SECS
 *       main -> fl_a -> fl_leaf spins until SIGUSR1 arrives, then SECS more,
 *       then the process exits (profiled with -p and a longer -d: the
 *       profiler must outlive it).
 *   faults_life exec SECS PROG [ARGS...]
 *       spins SECS as above, then execv()s PROG: same pid, new image.
 *   faults_life dlclose SECS LIB1 LIB2 ROUNDS
 *       each round dlopen()s LIB1 or LIB2 in turn (both export
 *       ENTRY(int argc, char **argv) spinning argv[1] seconds; the entry is
 *       dl_entry or pltlib_entry), calls it through fl_dl, dlclose()s it; the
 *       two libraries usually land at the same address.  Then spins SECS in
 *       main -> fl_a -> fl_leaf.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spin.h"

volatile unsigned long counter;

typedef int (*entry_fn)(int, char **);

NOINLINE int fl_leaf(int x)
{
	SPIN_LOOP(counter);
	return x + 1;
}

NOINLINE int fl_a(int x)
{
	volatile char buf[48];

	buf[0] = x;
	return fl_leaf(x) + buf[0];
}

NOINLINE int fl_dl(entry_fn fn, int argc, char **argv)
{
	volatile long buf[5];

	buf[1] = argc;
	return fn(argc, argv) + buf[1];
}

static double exit_secs;

static void on_usr1(int sig)
{
	(void)sig;
	spin_deadline = spin_now() + exit_secs; /* clock_gettime is async-signal-safe */
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? spin_secs(argv[2]) : 1.0;

	if (argc > 2 && !strcmp(argv[1], "exit")) {
		exit_secs = secs;
		spin_deadline = spin_now() + 3600;
		signal(SIGUSR1, on_usr1);
		return fl_a(1) > 0 ? 0 : 0;
	}
	if (argc > 3 && !strcmp(argv[1], "exec")) {
		spin_deadline = spin_now() + secs;
		if (fl_a(1) < 0)
			return 1;
		execv(argv[3], argv + 3);
		perror("execv");
		return 1;
	}
	if (argc > 5 && !strcmp(argv[1], "dlclose")) {
		int rounds = atoi(argv[5]), i;

		for (i = 0; i < rounds; i++) {
			const char *lib = argv[3 + (i & 1)];
			void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
			char *fake_argv[] = {argv[0], argv[2], NULL};
			entry_fn fn;

			if (!h) {
				fprintf(stderr, "faults_life: dlopen %s: %s\n", lib, dlerror());
				return 1;
			}
			fn = (entry_fn)dlsym(h, "dl_entry");
			if (!fn)
				fn = (entry_fn)dlsym(h, "pltlib_entry");
			if (!fn) {
				fprintf(stderr, "faults_life: %s: no entry\n", lib);
				return 1;
			}
			fl_dl(fn, 2, fake_argv);
			if (dlclose(h)) {
				fprintf(stderr, "faults_life: dlclose %s: %s\n", lib, dlerror());
				return 1;
			}
		}
		spin_deadline = spin_now() + secs;
		return fl_a(1) > 0 ? 0 : 0;
	}
	fprintf(stderr, "usage: faults_life exit SECS | exec SECS PROG [ARGS] | "
			"dlclose SECS LIB1 LIB2 ROUNDS\n");
	return 2;
}
