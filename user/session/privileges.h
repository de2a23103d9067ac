/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Which capabilities profiling needs, checked up front so the error names them. */
#ifndef CFIPROF_PRIVILEGES_H
#define CFIPROF_PRIVILEGES_H

#include <stdbool.h>

/* Prints what is missing and returns false when BPF or perf events cannot work. */
bool privileges_check(bool other_processes);

#endif
