/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run a Go program, of which version, and where its g is:
 * found in the executable a load opens (.go.buildinfo's version, PT_TLS),
 * told to the BPF side through the go_procs map (bpf/go.bpf.h), which reads
 * the sampled goroutine's profiler labels.
 */
#ifndef CFIPROF_GO_DETECT_H
#define CFIPROF_GO_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct maps_entry;
struct proc_mapping;
struct go_detect;
struct runtime_hooks;

struct go_detect_stats {
	uint64_t procs;		/* processes found running a Go version with offsets */
	uint64_t unsupported;	/* ... a Go program without them, or whose g is not found */
	uint16_t unsup_version; /* the last of those (major << 8 | minor, 0: unknown) */
};

/* go_procs_fd: the BPF map (-1: none, user space only: tests). */
struct go_detect *go_detect_new(int go_procs_fd);
void go_detect_free(struct go_detect *gd);

/* An object a load opened: what it says of Go, read once per key. */
void go_detect_object(struct go_detect *gd, const char *key, int fd);
/*
 * A process's mappings read at read_ns (bpf clock): its go_procs entry is
 * written, or removed (the kernel ignores one older than an exec).
 */
void go_detect_proc_read_at(struct go_detect *gd, uint32_t pid, const struct proc_mapping *maps,
			    uint32_t nr, uint64_t read_ns);
/*
 * A process's new mappings as its load opened them (fds[i] -1 when not
 * open), before it builds their tables: the BPF side reads labels from then
 * on, so its samples taken meanwhile (the deferred ones) carry them.
 * Written when they hold a Go program; the load's end decides otherwise.
 */
void go_detect_early(struct go_detect *gd, uint32_t pid, const struct proc_mapping *maps,
		     const int *fds, uint32_t nr, uint64_t read_ns);
/* The process's tables went (exit, eviction): the kernel stops reading its labels. */
void go_detect_unload(struct go_detect *gd, uint32_t pid);
/* The process left the tracker: user space forgets it too. */
void go_detect_forget(struct go_detect *gd, uint32_t pid);
void go_detect_stats(struct go_detect *gd, struct go_detect_stats *out);
/* gd's hooks for the tracker (user/track/runtime_hooks.h). */
void go_detect_hooks(struct go_detect *gd, struct runtime_hooks *out);

/*
 * What an ELF file says of Go: its version (major << 8 | minor) from
 * .go.buildinfo and g's offset from the thread pointer.  0 when it is a Go
 * program whose g was found, 1 when a Go program whose g was not (*version
 * set), -1 when no Go program.  For tests too.
 */
int go_elf_info(int fd, uint16_t *version, int32_t *tls_g);

/* The field offsets of a Go version (g.m, m.curg, g.labels); false when none. */
bool go_offsets_find(uint16_t version, struct cfi_go_proc *out);

#endif
