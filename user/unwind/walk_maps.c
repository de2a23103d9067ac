// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The walker's maps read through bpf syscalls; see walk_maps.h. */
#include <bpf/bpf.h>

#include "user/unwind/walk_maps.h"

static bool bpf_proc(void *ctx, uint32_t pid, struct cfi_proc_val *out)
{
	struct walk_maps_bpf *f = ctx;

	return bpf_map_lookup_elem(f->procs_fd, &pid, out) == 0;
}

static bool bpf_mapping(void *ctx, uint32_t pid, uint64_t pc, struct cfi_mapping_val *out)
{
	struct walk_maps_bpf *f = ctx;
	struct cfi_mapping_key key = {
	    .prefixlen = 32 + 64,
	    .pid = pid,
	    .addr_be = __builtin_bswap64(pc),
	};

	return bpf_map_lookup_elem(f->mappings_fd, &key, out) == 0;
}

static bool bpf_page(void *ctx, uint32_t obj_id, uint32_t page, struct cfi_page_val *out)
{
	struct walk_maps_bpf *f = ctx;
	struct cfi_page_key key = {.obj_id = obj_id, .page = page};

	return bpf_map_lookup_elem(f->pages_fd, &key, out) == 0;
}

static const struct walk_maps_ops bpf_ops = {
    .proc = bpf_proc,
    .mapping = bpf_mapping,
    .page = bpf_page,
};

void walk_maps_from_bpf(struct walk_maps *m, struct walk_maps_bpf *fds, const struct cfi_row *rows,
			uint32_t nr_rows, const struct cfi_rule *rules, uint32_t nr_rules)
{
	m->ops = &bpf_ops;
	m->ctx = fds;
	m->rows = rows;
	m->nr_rows = nr_rows;
	m->rules = rules;
	m->nr_rules = nr_rules;
}
