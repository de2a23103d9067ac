/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The heap of a one-shot command (record, top, report, tables), set up for few
 * page faults: a start touches tens of MB once (libbpf's copy of the kernel's
 * BTF, kallsyms, symbol tables), a table build tens more, and where a page
 * fault is expensive (a PVM guest: ~30 us per 4 KiB page, ~1.5 us when
 * populated ahead) those faults were a third of cfiprof's CPU at start.
 */
#ifndef CFIPROF_HEAP_H
#define CFIPROF_HEAP_H

#include <stddef.h>

/*
 * One arena, large blocks from the heap rather than their own mmap, and the
 * first @reserve bytes of heap advised as transparent huge pages (a 2 MiB page
 * is one fault).  Call before any thread starts.  Not for the agent: huge pages
 * keep freed memory resident, and the agent's memory is budgeted.
 */
void heap_prefer_huge_pages(size_t reserve);

/* what record, top, report and tables advise: a start's BTF, kallsyms and first tables */
#define HEAP_RESERVE (64ul << 20)

#endif
