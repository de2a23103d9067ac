// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> drap_fn -> drap_leaf.  drap_fn has a 64-byte aligned local and a VLA,
 * so GCC realigns the stack through a DRAP register: its CFA is *(rbp - 8).
 */
#include <string.h>

#include "spin.h"

volatile unsigned long counter;

NOINLINE int drap_leaf(volatile char *p, int n)
{
	SPIN_LOOP(counter);
	return p[0] + n;
}

NOINLINE int drap_fn(int n)
{
	char big[64] __attribute__((aligned(64)));
	char vla[n];

	memset(big, 1, sizeof(big));
	memset(vla, 2, n);
	return drap_leaf(big, n) + drap_leaf(vla, 0) + 1;
}

int main(int argc, char **argv)
{
	spin_init(argc, argv);
	return drap_fn(argc + 16) > 0 ? 0 : 0;
}
