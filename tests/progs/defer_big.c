// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The known chain of defer_late, in a library linked with many filler FDEs (progs.mk).
 * DEFER_STACK_FAULTS=1: big_leaf spends its time in big_fault's page faults instead;
 * DEFER_VDSO=1: in the vDSO (spin_done, nothing else).
 */
#include <stdint.h>
#include <sys/mman.h>

#include "spin.h"

#define PAGE	    4096ul
#define FAULT_PAGES 8

volatile unsigned long big_counter;
/* what big_leaf spends its time on, read by big_entry: no getenv in the leaf's samples */
static int stack_faults, in_vdso;

/*
 * A frame of 8 pages not there yet, touched from the lowest page up: a
 * sample in one of its faults has sp in a page not yet mapped in, and pages
 * above it missing too, up to the return address.
 */
NOINLINE int big_fault(int x)
{
	volatile char buf[FAULT_PAGES * PAGE];

	for (unsigned long p = 0; p < FAULT_PAGES; p++)
		buf[p * PAGE] = (char)x;
	return buf[0];
}

NOINLINE int big_leaf(int x)
{
	char here;
	/* below this frame's page and the one under it: big_fault's frame, dropped each round */
	uintptr_t top = ((uintptr_t)&here & ~(PAGE - 1)) - PAGE;

	if (stack_faults) {
		do {
			big_fault(x);
			madvise((void *)(top - 2 * FAULT_PAGES * PAGE), 2 * FAULT_PAGES * PAGE,
				MADV_DONTNEED);
		} while (++big_counter % 16 || !spin_done());
		return x + 1;
	}
	if (in_vdso) {
		while (!spin_done())
			big_counter++;
		return x + 1;
	}
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
	stack_faults = getenv("DEFER_STACK_FAULTS") != NULL;
	in_vdso = getenv("DEFER_VDSO") != NULL;
	return big_b(argc) > 0 ? 1 : 0;
}
