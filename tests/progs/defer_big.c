// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The known chain of defer_late, in a library linked with many filler FDEs (progs.mk). */
#include "spin.h"

volatile unsigned long big_counter;

NOINLINE int big_leaf(int x)
{
	SPIN_LOOP(big_counter);
	return x + 1;
}

NOINLINE int big_c(int x)
{
	volatile char buf[40];

	buf[0] = x;
	return big_leaf(x) + buf[0];
}

NOINLINE int big_b(int x)
{
	volatile long buf[21];

	buf[5] = x;
	return big_c(x + 1) * 2 + buf[5];
}

int big_entry(int argc, char **argv)
{
	spin_init(argc, argv);
	return big_b(argc) > 0 ? 1 : 0;
}
