// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared library called through the PLT: pltlib_entry -> pltlib_leaf spins. */
#include "spin.h"

volatile unsigned long pltlib_counter;

NOINLINE int pltlib_leaf(int x)
{
	SPIN_LOOP(pltlib_counter);
	return x;
}

NOINLINE int pltlib_entry(int argc, char **argv)
{
	volatile char buf[72];

	spin_init(argc, argv);
	buf[0] = argc;
	return pltlib_leaf(argc) + buf[0];
}
