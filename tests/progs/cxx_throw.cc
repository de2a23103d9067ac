// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> x_a -> x_b, which catches an exception thrown from x_d (two frames
 * down) and, inside the catch block, calls x_leaf which spins.  The catch
 * block usually lives in x_b.cold, with its own FDE.
 */
#include <stdexcept>

extern "C" {
#include "spin.h"
}

volatile unsigned long counter;

extern "C" NOINLINE int x_leaf(int x)
{
	SPIN_LOOP(counter);
	return x;
}

extern "C" NOINLINE int x_d(int x)
{
	if (x >= 0)
		throw std::runtime_error("x_d");
	return x;
}

extern "C" NOINLINE int x_c(int x)
{
	volatile char buf[48];

	buf[0] = x;
	return x_d(x) + buf[0];
}

extern "C" NOINLINE int x_b(int x)
{
	volatile long buf[7];

	buf[0] = x;
	try {
		return x_c(x) + buf[0];
	} catch (const std::exception &e) {
		return x_leaf(x) + buf[0] + (e.what()[0] == 'x');
	}
}

extern "C" NOINLINE int x_a(int x)
{
	volatile int buf[20];

	buf[0] = x;
	return x_b(x + 1) + buf[0];
}

int main(int argc, char **argv)
{
	spin_init(argc, argv);
	return x_a(argc) > 0 ? 0 : 0;
}
