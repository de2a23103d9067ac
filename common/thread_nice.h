/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one way a thread changes its own scheduling weight: the loaders ahead of
 * the workload (negative: needs CAP_SYS_NICE, else it keeps the default),
 * a cache written for the next start behind everything (positive).
 */
#ifndef CFIPROF_THREAD_NICE_H
#define CFIPROF_THREAD_NICE_H

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Work nobody waits for (the kernel types' cache, written once per kernel):
 * 10 weighs a tenth of the default, yet is not starved by a workload busy on
 * every CPU as SCHED_IDLE would be.  Not for the runtimes' walks: under a
 * busy machine their samples went without runtime frames for seconds.
 */
#define BACKGROUND_NICE 10

/* Sets the calling thread's nice value (not its process's). */
static inline void thread_nice(int nice)
{
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

#endif
