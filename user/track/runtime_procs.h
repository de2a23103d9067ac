/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The runtime_procs map (bpf/runtimes.bpf.h): one entry per process that
 * runs a runtime, written and removed by that runtime's detector.  A
 * process has one runtime: the first of CFI_RUNTIMES' order that claims it
 * (a Go program embedding CPython shows Python's frames, as before the map
 * was shared), and a detector removes only its own entry.
 */
#ifndef CFIPROF_RUNTIME_PROCS_H
#define CFIPROF_RUNTIME_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * pid's entry for runtime rt, its own part data (size bytes, at most
 * RT_PROC_BYTES), keep_bp when its BPF part reads frames by their rbp: 0,
 * or -1 (errno set; EEXIST: an earlier runtime's entry is kept).  fd -1
 * (no map: tests) writes nothing and succeeds.
 */
int runtime_procs_put(int fd, uint32_t pid, uint8_t rt, bool keep_bp, const void *data,
		      size_t size);
/* Removes pid's entry when it is runtime rt's. */
void runtime_procs_drop(int fd, uint32_t pid, uint8_t rt);
/* Whether pid has an entry (a runtime's detector claimed it). */
bool runtime_procs_has(int fd, uint32_t pid);

#endif
