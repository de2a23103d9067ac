/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run a runtime: what each object a load opens says of it
 * (read once per object key, from the file, never from the process), then,
 * for each process whose mappings hold such an object, its runtime_procs
 * entry, written before its tables are built (early: its deferred samples
 * carry the runtime's part too) and settled at the load's end.  The runtime
 * says what an object holds and what its entry is (struct detect_ops); this
 * file keeps the objects, the processes and their counts.
 */
#ifndef CFIPROF_RUNTIME_DETECT_H
#define CFIPROF_RUNTIME_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/track/runtime_hooks.h"

/* what a runtime keeps of one object */
#define DETECT_INFO_BYTES 192

struct detect_ops {
	uint8_t runtime; /* enum cfi_runtime */
	/* whether an object's path may be the runtime's: a cheap filter (NULL: any object) */
	bool (*may_be)(const char *path);
	/*
	 * What the open object says: 0 when it holds the runtime (info, up to
	 * DETECT_INFO_BYTES, filled), -1 when not.  Reads the file only.
	 */
	int (*object)(int fd, const char *path, void *info);
	/*
	 * The runtime_procs part (data, up to RT_PROC_BYTES: *size) of process
	 * pid, which maps the object info says of at bias (pc - bias = its
	 * address), its mappings read at read_ns: 0, or -1 when its version is
	 * not supported.  *version (major << 8 | minor, 0: unknown) either way.
	 */
	int (*entry)(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		     size_t *size, uint16_t *version);
	/*
	 * What a build of a version it does not read is called in the summary
	 * (its *version has DETECT_VERSION_VARIANT set): "thread-safe" for PHP.
	 */
	const char *variant;
	/* its BPF part reads frames by their rbp: the walk keeps each frame's (frame_bps) */
	bool keep_bp;
};

/* in entry's *version: a build of that version the runtime does not read */
#define DETECT_VERSION_VARIANT 0x8000

/* the unsupported versions the summary names, with their processes */
#define DETECT_UNSUPPORTED_VERSIONS 4

struct runtime_detect_stats {
	uint64_t procs;	      /* processes found running a supported version */
	uint64_t unsupported; /* ... a version without an entry */
	uint32_t nr_unsup_versions;
	uint16_t unsup_version[DETECT_UNSUPPORTED_VERSIONS]; /* the first ones seen */
	uint64_t unsup_procs[DETECT_UNSUPPORTED_VERSIONS];
	const char *variant; /* detect_ops.variant */
};

struct runtime_detect;

/* procs_fd: the runtime_procs map (-1: none, user space only: tests). */
struct runtime_detect *runtime_detect_new(const struct detect_ops *ops, int procs_fd);
void runtime_detect_free(struct runtime_detect *rd);
/* rd's hooks for the tracker (user/track/runtime_hooks.h). */
void runtime_detect_hooks(struct runtime_detect *rd, struct runtime_hooks *out);
void runtime_detect_stats(struct runtime_detect *rd, struct runtime_detect_stats *out);
/* An object a load opened (path as mapped): what it says of the runtime, read once per key. */
void runtime_detect_object(struct runtime_detect *rd, const char *key, const char *path, int fd);
/*
 * A process's mappings read at read_ns (bpf clock; the kernel ignores an
 * entry older than an exec): its entry written, or removed.  early: before
 * its load builds tables (nothing removed or counted when the mappings hold
 * none of the runtime's objects).
 */
struct proc_mapping;
void runtime_detect_proc(struct runtime_detect *rd, uint32_t pid, const struct proc_mapping *maps,
			 uint32_t nr, uint64_t read_ns, bool early);
/*
 * "2 PHP processes of unsupported versions 8.1 (1), 8.2 thread-safe (1)"
 * into buf ("" when none).
 */
void runtime_detect_describe_unsupported(const struct runtime_detect_stats *st, const char *what,
					 char *buf, size_t len);
/* pid's runtime_procs part as last written into data (size bytes); false when it has none. */
bool runtime_detect_lookup(struct runtime_detect *rd, uint32_t pid, void *data, size_t size);

#endif
