// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Field offsets of the supported Ruby versions; see ruby_offsets.h. */
#include <stddef.h>

#include "user/runtimes/ruby/ruby_offsets.h"
#include "user/runtimes/runtime_versions.h"

static const struct ruby_offsets versions[] = {
    {
	.version = 0x0301,
	.name = "3.1",
	.bpf =
	    {
		.version = 0x0301,
		.ec_vm_stack = 0,
		.ec_vm_stack_size = 8,
		.ec_cfp = 16,
		.cfp_size = 64,
		.cfp_pc = 0,
		.cfp_iseq = 16,
		.cfp_ep = 32,
		.frame_cframe = 0x0080,
		.frame_finish = 0x0020,
		.frame_magic_mask = 0x7fff0001,
		.frame_cfunc = 0x55550001,
	    },
	.me_called_id = 24,
	.id_scope_shift = 4,
	.last_op_id = 0xa9,
	.symbols_last_id = 0,
	.symbols_ids = 16,
	.id_entry_unit = 512,
	.id_entry_size = 2,
	.iseq_body = 16,
	.body_iseq_size = 4,
	.body_iseq_encoded = 8,
	.body_path = 64,
	.body_label = 80,
	.body_first_lineno = 88,
	.body_info_entries = 120,
	.body_info_pos = 128,
	.body_info_size = 136,
	.body_info_succ = 144,
	.info_entry_size = 12,
	.info_entry_line = 0,
	.rstring_heap_len = 16,
	.rstring_heap_ptr = 24,
	.rstring_embed = 16,
	.rstring_noembed = 0x2000,
	.rstring_embed_mask = 0x7c000,
	.rstring_embed_shift = 14,
	.rarray_heap_ptr = 32,
	.rarray_embed = 16,
	.rarray_embed_flag = 0x2000,
	.t_string = 5,
	.t_array = 7,
    },
};

const struct ruby_offsets *ruby_offsets_find(uint16_t version)
{
	return RUNTIME_VERSION_FIND(versions, version);
}
