// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library tests/e2e/test_faults.c copies and corrupts (.eh_frame CIE / FDE
 * lengths and opcodes): bc_entry -> bc_lib_leaf spins forever.
 */
#define NOINLINE __attribute__((noinline, noclone, used))

volatile unsigned long bc_lib_counter;

NOINLINE int bc_lib_leaf(int x)
{
	for (;;)
		bc_lib_counter += (unsigned long)x;
	return x;
}

NOINLINE int bc_lib_mid(int x)
{
	volatile long buf[7];

	buf[3] = x;
	return bc_lib_leaf(x) + (int)buf[3];
}

NOINLINE int bc_entry(int x)
{
	volatile char buf[90];

	buf[5] = (char)x;
	return bc_lib_mid(x + 1) + buf[5];
}
