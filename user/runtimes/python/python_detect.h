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

struct maps_entry;
struct proc_mapping;
struct python_detect;

#define PY_UNSUPPORTED_VERSIONS 4

struct python_detect_stats {
	uint64_t procs; /* processes found running a supported interpreter */
	uint64_t
	    unsupported; /* ... an interpreter of a version without an entry, or no _PyRuntime */
	/* the first versions of those (major << 8 | minor), each with its processes */
	uint16_t unsup_version[PY_UNSUPPORTED_VERSIONS];
	uint64_t unsup_procs[PY_UNSUPPORTED_VERSIONS];
	uint32_t nr_unsup_versions;
};

struct runtime_hooks;

/* python_procs_fd: the BPF map (-1: none, user space only: tests). */
struct python_detect *python_detect_new(int python_procs_fd);
void python_detect_free(struct python_detect *pd);

/*
 * An object a load opened: read what it says of CPython (once per key) when
 * its name says it may be an interpreter (python3.N, libpython3.N.so).
 */
void python_detect_object(struct python_detect *pd, const char *key, const char *path, int fd);
/* A process's new mappings: its python_procs entry is written, or removed. */
void python_detect_proc(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr);
/*
 * The same for mappings read at read_ns (bpf clock): the kernel ignores the
 * entry if the process exec'd after that (a load that finished late).
 */
void python_detect_proc_read_at(struct python_detect *pd, uint32_t pid,
				const struct proc_mapping *maps, uint32_t nr, uint64_t read_ns);
/*
 * A process's new mappings as its load opened and named them (nr of them,
 * fds[i] -1 when not open: kept from the last load, or not named), before it
 * builds their tables: the BPF side reads its Python frames from then on, so
 * its samples taken meanwhile (the deferred ones) carry them.  Written when
 * they hold an interpreter; the load's end (python_detect_proc) decides
 * otherwise.
 */
void python_detect_early(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			 const struct maps_entry *ents, const int *fds, uint32_t nr,
			 uint64_t read_ns);
/* The process's tables went (exit, eviction): the kernel stops reading its frames. */
void python_detect_unload(struct python_detect *pd, uint32_t pid);
/* The process left the tracker: user space forgets it too. */
void python_detect_forget(struct python_detect *pd, uint32_t pid);
/* The offsets of pid's interpreter, NULL when it has none supported. */
const struct python_offsets *python_detect_lookup(struct python_detect *pd, uint32_t pid);
/* The same, in the form python_names_new takes (ctx: the python_detect). */
const struct python_offsets *python_detect_offsets(void *pd, uint32_t pid);
void python_detect_stats(struct python_detect *pd, struct python_detect_stats *out);
/* pd's hooks for the tracker (user/track/runtime_hooks.h). */
void python_detect_hooks(struct python_detect *pd, struct runtime_hooks *out);
/*
 * The processes of unsupported versions, for a user: "1 Python process of
 * unsupported version 3.12", "3 Python processes of unsupported versions
 * 3.12 (2), 3.13 (1)"; "" when none.
 */
void python_detect_describe_unsupported(const struct python_detect_stats *st, char *buf,
					size_t len);

/*
 * What an ELF file says of CPython: the version from Py_Version (0 if none,
 * then from the file name), the vaddr of _PyRuntime (0 if none).  0 when it
 * was read, -1 when not an ELF file.  For tests too.
 */
int python_elf_info(int fd, const char *path, uint16_t *version, uint64_t *runtime_vaddr);

#endif
