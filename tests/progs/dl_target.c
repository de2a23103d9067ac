// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* dlopen'ed by dlopen.c: dl_entry -> dl_leaf spins. */
#include "spin.h"

volatile unsigned long dl_counter;

NOINLINE int dl_leaf(int x)
{
	SPIN_LOOP(dl_counter);
	return x;
}

NOINLINE int dl_entry(int argc, char **argv)
{
	volatile long buf[6];

	spin_init(argc, argv);
	buf[0] = argc;
	return dl_leaf(argc) + buf[0];
}
