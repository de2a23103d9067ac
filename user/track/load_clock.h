/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A load's time budget, spent by the threads that do its work.  What bounds
 * a load is the loader's time one process may take from the others: the
 * time a thread waited for a CPU (a busy host, the agent unit's CPUQuota
 * throttling it) is the machine's, not the load's, and moves the deadline
 * on by as much, up to a cap.  Time running or blocked (a file that stalls
 * its reads) is the load's.  A wall-clock deadline alone cut every load of
 * a starved loader, and a load cut before it got anything done is never
 * taken up again: the process kept frame pointers for good.
 */
#ifndef CFIPROF_LOAD_CLOCK_H
#define CFIPROF_LOAD_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* the deadline moves on by at most this many budgets */
#define LOAD_CLOCK_STRETCH_MAX 8

struct load_clock {
	uint64_t deadline; /* CLOCK_MONOTONIC */
	uint64_t latest;   /* the deadline never moves past it */
	uint64_t waited;   /* the thread's wait for a CPU when the deadline last moved */
	bool wait_known;   /* waited was read (not: the kernel's count was unreadable) */
};

/*
 * This thread's time waiting for a CPU since it started, in ns (the
 * kernel's schedstat run delay).  False where it cannot be read (no
 * schedstat, no file descriptor left): then nothing moves a deadline.
 */
bool thread_cpu_wait(uint64_t *ns);

/*
 * A budget of budget_ns from now.  Its waits are counted from
 * load_clock_rebase() on: a load that finds nothing changed reads no count.
 */
void load_clock_start(struct load_clock *c, uint64_t budget_ns);

/* Waits counted from now on, on this thread. */
void load_clock_rebase(struct load_clock *c);

/* The same deadline on a thread started for it: its count of waits began with it. */
void load_clock_adopt(struct load_clock *c, const struct load_clock *from);

/*
 * The budget is spent: the deadline is past once the time this thread
 * waited for a CPU since the last call moved it on.  Reads the kernel's
 * count only once the wall-clock deadline has passed.
 */
bool load_clock_past(struct load_clock *c);

#endif
