// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* recurse N deep (argv[2], default 300), then spin in the leaf. */
#include "spin.h"

volatile unsigned long counter;

NOINLINE int leaf(int x)
{
	SPIN_LOOP(counter);
	return x;
}

NOINLINE int rec(int n)
{
	volatile int pad[3];

	pad[1] = n;
	if (n <= 1)
		return leaf(n) + pad[1];
	return rec(n - 1) + pad[1];
}

int main(int argc, char **argv)
{
	int depth = argc > 2 ? atoi(argv[2]) : 300;

	spin_init(argc, argv);
	return rec(depth) > 0 ? 0 : 0;
}
