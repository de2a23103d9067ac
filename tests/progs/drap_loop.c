// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> drap_loop -> drap_small, called over and over: drap_small realigns its
 * stack through a DRAP register, so a good share of samples land in its prologue
 * and epilogue, where the CFA is r10 (only the sample's own registers know it).
 */
#include "spin.h"

volatile unsigned long counter;

NOINLINE int drap_small(int n)
{
	char big[64] __attribute__((aligned(64)));
	char vla[n];

	big[0] = (char)n;
	vla[0] = 1;
	__asm__ volatile("" ::"r"(big), "r"(vla) : "memory");
	return big[0] + vla[0];
}

NOINLINE unsigned long drap_loop(void)
{
	unsigned long s = 0;

	do {
		for (int i = 0; i < 100000; i++)
			s += drap_small((i & 7) + 1);
	} while (!spin_done());
	return s;
}

int main(int argc, char **argv)
{
	spin_init(argc, argv);
	counter = drap_loop();
	return 0;
}
