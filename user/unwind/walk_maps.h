/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps the walker reads, as user space sees them: what bpf/walker.h built
 * as ordinary C looks up when it finishes a walk the kernel could not.  The
 * rows and rules arrays are the mmap()ed BPF arrays; the hash and trie maps
 * are read through callbacks (bpf syscalls in the profiler, plain arrays in
 * tests), so user space walks exactly the tables the kernel walks.
 */
#ifndef CFIPROF_WALK_MAPS_H
#define CFIPROF_WALK_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct walk_maps_ops {
	bool (*proc)(void *ctx, uint32_t pid, struct cfi_proc_val *out);
	bool (*mapping)(void *ctx, uint32_t pid, uint64_t pc, struct cfi_mapping_val *out);
	bool (*page)(void *ctx, uint32_t obj_id, uint32_t page, struct cfi_page_val *out);
};

struct walk_maps {
	const struct walk_maps_ops *ops;
	void *ctx;
	const struct cfi_row *rows;
	uint32_t nr_rows;
	const struct cfi_rule *rules;
	uint32_t nr_rules;
};

/* The profiler's own maps, read with bpf_map_lookup_elem. */
struct walk_maps_bpf {
	int procs_fd, mappings_fd, pages_fd;
};

void walk_maps_from_bpf(struct walk_maps *m, struct walk_maps_bpf *fds, const struct cfi_row *rows,
			uint32_t nr_rows, const struct cfi_rule *rules, uint32_t nr_rules);

#endif
