// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main -> a -> b -> c -> d -> leaf, each with its own frame size; leaf spins. */
#include <string.h>

#include "spin.h"

volatile unsigned long counter;

/* The work after each call keeps it a call, not a tail jump. */
NOINLINE int leaf(int x)
{
	SPIN_LOOP(counter);
	return x + 1;
}

NOINLINE int d(int x)
{
	volatile char buf[24];

	buf[0] = x;
	return leaf(x) + buf[0];
}

NOINLINE int c(int x)
{
	volatile long buf[13];

	buf[3] = x;
	return d(x + 1) + buf[3];
}

NOINLINE int b(int x)
{
	volatile int buf[100];

	buf[7] = x;
	return c(x + 2) * 3 + buf[7];
}

NOINLINE int a(int x)
{
	volatile char buf[1000];

	memset((char *)buf, x, sizeof(buf));
	return b(x + 3) - buf[999];
}

int main(int argc, char **argv)
{
	spin_init(argc, argv);
	return a(argc) > 0 ? 0 : 0;
}
