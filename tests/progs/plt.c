// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main -> p_a -> pltlib_entry (libpltlib.so, through the PLT) -> pltlib_leaf. */
#include "spin.h"

int pltlib_entry(int argc, char **argv);

NOINLINE int p_a(int argc, char **argv)
{
	volatile int buf[11];

	buf[0] = argc;
	return pltlib_entry(argc, argv) + buf[0];
}

int main(int argc, char **argv)
{
	return p_a(argc, argv) > 0 ? 0 : 0;
}
