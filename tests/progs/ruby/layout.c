// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby's layout as its own structures give it, printed as "field value" per
 * line with the names of struct ruby_offsets (user/runtimes/ruby/ruby_offsets.h):
 * test_ruby builds this with the MJIT header the installed Ruby ships
 * (rb_mjit_min_header-VERSION.h: vm_core.h's structures, force-included)
 * and compares with the table's entry.
 */
#include <stddef.h>
#include <stdio.h>

#define P(name, expr) printf("%s %zu\n", name, (size_t)(expr))

int main(void)
{
	P("version", (unsigned int)ruby_api_version[0] << 8 | (unsigned int)ruby_api_version[1]);
	P("bpf.ec_vm_stack", offsetof(rb_execution_context_t, vm_stack));
	P("bpf.ec_vm_stack_size", offsetof(rb_execution_context_t, vm_stack_size));
	P("bpf.ec_cfp", offsetof(rb_execution_context_t, cfp));
	P("bpf.cfp_size", sizeof(rb_control_frame_t));
	P("bpf.cfp_pc", offsetof(rb_control_frame_t, pc));
	P("bpf.cfp_iseq", offsetof(rb_control_frame_t, iseq));
	P("bpf.cfp_ep", offsetof(rb_control_frame_t, ep));
	P("bpf.frame_cframe", VM_FRAME_FLAG_CFRAME);
	P("bpf.frame_finish", VM_FRAME_FLAG_FINISH);
	P("bpf.frame_magic_mask", VM_FRAME_MAGIC_MASK);
	P("bpf.frame_cfunc", VM_FRAME_MAGIC_CFUNC);
	P("me_called_id", offsetof(rb_callable_method_entry_t, called_id));
	P("id_scope_shift", RUBY_ID_SCOPE_SHIFT);
	P("last_op_id", tLAST_OP_ID);
	P("iseq_body", offsetof(struct rb_iseq_struct, body));
	P("body_iseq_size", offsetof(struct rb_iseq_constant_body, iseq_size));
	P("body_iseq_encoded", offsetof(struct rb_iseq_constant_body, iseq_encoded));
	P("body_path", offsetof(struct rb_iseq_constant_body, location.pathobj));
	P("body_label", offsetof(struct rb_iseq_constant_body, location.label));
	P("body_first_lineno", offsetof(struct rb_iseq_constant_body, location.first_lineno));
	P("body_info_entries", offsetof(struct rb_iseq_constant_body, insns_info.body));
	P("body_info_pos", offsetof(struct rb_iseq_constant_body, insns_info.positions));
	P("body_info_size", offsetof(struct rb_iseq_constant_body, insns_info.size));
	P("body_info_succ", offsetof(struct rb_iseq_constant_body, insns_info.succ_index_table));
	P("info_entry_size", sizeof(struct iseq_insn_info_entry));
	P("info_entry_line", offsetof(struct iseq_insn_info_entry, line_no));
	P("rstring_heap_len", offsetof(struct RString, as.heap.len));
	P("rstring_heap_ptr", offsetof(struct RString, as.heap.ptr));
	P("rstring_embed", offsetof(struct RString, as.embed.ary));
	P("rstring_noembed", RSTRING_NOEMBED);
	P("rstring_embed_mask", RSTRING_EMBED_LEN_MASK);
	P("rstring_embed_shift", RSTRING_EMBED_LEN_SHIFT);
	P("rarray_heap_ptr", offsetof(struct RArray, as.heap.ptr));
	P("rarray_embed", offsetof(struct RArray, as.ary));
	P("rarray_embed_flag", RARRAY_EMBED_FLAG);
	P("t_string", RUBY_T_STRING);
	P("t_array", RUBY_T_ARRAY);
	/* what BPF reads of a control frame at once holds every field it reads */
	P("fits", offsetof(rb_control_frame_t, ep) + 8 <= RUBY_CFP_READ_CHECK &&
		      offsetof(rb_control_frame_t, iseq) + 8 <= RUBY_CFP_READ_CHECK);
	return 0;
}
