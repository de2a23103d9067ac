/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run a CPython interpreter, of which version, and where its
 * runtime state is: found in the mappings a load reads (the python binary or
 * libpython, its exported _PyRuntime and Py_Version), told to the BPF side
 * through the python_procs map (bpf/python.bpf.h).
 */
#ifndef CFIPROF_PYTHON_DETECT_H
#define CFIPROF_PYTHON_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/python/python_offsets.h"
#include "user/runtimes/runtime_detect.h"

struct maps_entry;
struct proc_mapping;
struct python_detect;


/* python_procs_fd: the BPF map (-1: none, user space only: tests). */
struct python_detect *python_detect_new(int python_procs_fd);
void python_detect_free(struct python_detect *pd);

/*
 * An object a load opened: read what it says of CPython (once per key) when
 * its name says it may be an interpreter (python3.N, libpython3.N.so).
 */
void python_detect_object(struct python_detect *pd, const char *key, const char *path, int fd);
/* A process's new mappings: its runtime_procs entry is written, or removed (tests). */
void python_detect_proc(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr);
/* The offsets of pid's interpreter, NULL when it has none supported. */
const struct python_offsets *python_detect_lookup(struct python_detect *pd, uint32_t pid);
/* The same, in the form python_names_new takes (ctx: the python_detect). */
const struct python_offsets *python_detect_offsets(void *pd, uint32_t pid);
void python_detect_stats(struct python_detect *pd, struct runtime_detect_stats *out);
/* The shared detector under pd (runtime_detect.h). */
struct runtime_detect *python_detect_engine(struct python_detect *pd);
/*
 * The processes of unsupported versions, for a user: "1 Python process of
 * unsupported version 3.12", "3 Python processes of unsupported versions
 * 3.12 (2), 3.13 (1)"; "" when none.
 */
void python_detect_describe_unsupported(const struct runtime_detect_stats *st, char *buf,
					size_t len);

/*
 * What an ELF file says of CPython: the version from Py_Version (0 if none,
 * then from the file name), the vaddr of _PyRuntime (0 if none).  0 when it
 * was read, -1 when not an ELF file.  For tests too.
 */
int python_elf_info(int fd, const char *path, uint16_t *version, uint64_t *runtime_vaddr);

#endif
