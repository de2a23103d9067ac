// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> big_entry -> big_b -> big_c -> big_leaf, all but main in
 * libdefer_big.so, which is dlopen()ed once the program runs: its tables
 * (hundreds of thousands of FDEs) are built while the program already spins
 * in it, so its first samples are taken before they exist.
 *
 * defer_late SECONDS [LIB...]: dlopen()s each LIB (copies of libdefer_big.so,
 * each an object of its own) instead, and spins in the last one.
 * DEFER_START_AT=T (CLOCK_REALTIME seconds): the dlopen()s and the spin
 * start at T, so no sample of the process before T asks for their tables.
 * DEFER_END_AT=T: the spin ends at T, however long the dlopen()s took (its
 * samples all taken before T), instead of after SECONDS.
 * DEFER_LEADERLESS=1: all of that in a thread, which then exit()s, while main
 * leaves at once (pthread_exit): the process ends with a thread not its leader.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv);

static bool in_thread;
static int run_argc;
static char **run_argv;

/* main again, in a thread: its samples keep main -> big_entry -> ... */
static void *run_thread(void *arg)
{
	(void)arg;
	in_thread = true;
	exit(main(run_argc, run_argv));
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32], secs[32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int (*entry)(int, char **);
	void *h = NULL;
	pthread_t t;
	int i;

	if (getenv("DEFER_LEADERLESS") && !in_thread) {
		run_argc = argc;
		run_argv = argv;
		if (pthread_create(&t, NULL, run_thread, NULL))
			return 1;
		pthread_exit(NULL);
	}

	if (n <= 0)
		return 1;
	exe[n] = 0;
	snprintf(lib, sizeof(lib), "%s/libdefer_big.so", dirname(exe));
	if (getenv("DEFER_START_AT")) {
		double t = atof(getenv("DEFER_START_AT"));
		struct timespec at = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};

		clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL);
	}
	for (i = 2; i < argc || (i == 2 && argc <= 2); i++) {
		h = dlopen(i < argc ? argv[i] : lib, RTLD_NOW);
		if (!h) {
			fprintf(stderr, "defer_late: %s\n", dlerror());
			return 1;
		}
	}
	if (getenv("DEFER_END_AT") && argc > 1) {
		struct timespec now;
		double left;

		clock_gettime(CLOCK_REALTIME, &now);
		left = atof(getenv("DEFER_END_AT")) - ((double)now.tv_sec + now.tv_nsec / 1e9);
		snprintf(secs, sizeof(secs), "%.6f", left > 0.001 ? left : 0.001);
		argv[1] = secs;
	}
	/* spin_init reads SECONDS only */
	if (argc > 2)
		argc = 2;
	entry = (int (*)(int, char **))dlsym(h, "big_entry");
	if (!entry)
		return 1;
	return entry(argc, argv) > 0 ? 0 : 0;
}
