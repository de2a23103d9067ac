// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> vs_loop calls clock_gettime without pause, so most samples land in
 * the vDSO (__vdso_clock_gettime, and with kvm-clock the symbol-less
 * vread_pvclock it calls): its frames must be named the same live and from a
 * saved recording (tests/e2e/test_cli_outputs.c).
 */
#include <stdlib.h>
#include <time.h>

#include "spin.h"

volatile long sink;

NOINLINE void vs_loop(double seconds)
{
	struct timespec t, t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
		sink += t.tv_nsec;
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	vs_loop(argc > 1 ? atof(argv[1]) : 1.0);
	return 0;
}
