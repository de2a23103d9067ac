// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "common/heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE (2ul << 20)

void heap_prefer_huge_pages(size_t reserve)
{
	uintptr_t start, end;
	void *p;

	/* other threads' arenas would be mmap()ed heaps of their own, none advised */
	mallopt(M_ARENA_MAX, 1);
	/* libbpf's 6 MB copies of the kernel's BTF come from the advised heap too */
	mallopt(M_MMAP_THRESHOLD, (int)(reserve + HUGE_PAGE));
	/* what is freed stays in the heap, advised, for the next allocation */
	mallopt(M_TRIM_THRESHOLD, (int)(4 * reserve));
	start = (uintptr_t)sbrk(0);
	/* the heap grows past the reserve at once: the range to advise exists from here */
	p = malloc(reserve);
	if (!p)
		return;
	end = (uintptr_t)sbrk(0);
	free(p);
	start = (start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (end > start + HUGE_PAGE)
		madvise((void *)start, (end - start) & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
}
