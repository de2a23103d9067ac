// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One process of a simulated fleet host (tests/bench/agent_fleet.sh): it maps a
 * large library, waits for its turn, calls into the library for a burst of CPU
 * so that a whole-host sampler sees it, and then stops itself (SIGSTOP: the
 * bench waits for every member to be stopped) until it is killed.
 * Hundreds of these share one libLLVM-sized object, as a host's services share
 * their runtime libraries.
 *
 * usage: fleet_member LIBRARY DELAY_MS BURST_MS
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	void *(*create)(void);
	void (*dispose)(void *);
	double end;
	void *lib;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LIBRARY DELAY_MS BURST_MS\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "fleet_member: %s\n", dlerror());
		return 1;
	}
	/* LLVM's C API: each call runs the library's own code (allocation, tables) */
	create = (void *(*)(void))dlsym(lib, "LLVMContextCreate");
	dispose = (void (*)(void *))dlsym(lib, "LLVMContextDispose");
	if (!create || !dispose) {
		fprintf(stderr, "fleet_member: %s has no LLVMContextCreate/Dispose\n", argv[1]);
		return 1;
	}
	usleep((useconds_t)atoi(argv[2]) * 1000);
	end = now_ms() + atoi(argv[3]);
	while (now_ms() < end)
		dispose(create());
	raise(SIGSTOP);
	return 0;
}
