/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Field offsets of the supported Ruby versions: what BPF reads of the
 * control frames (struct cfi_ruby_proc) and what user space reads of an
 * iseq to name its frames and give them a line.  Debian ships no debug
 * information: they are Ruby's own structures', checked against offsetof()
 * over the MJIT header Ruby installs (rb_mjit_min_header-VERSION.h, which
 * holds vm_core.h's structures) by tests/unit/test_ruby.c, on x86-64 and
 * over Debian's arm64 header: the same layout on both.
 */
#ifndef CFIPROF_RUBY_OFFSETS_H
#define CFIPROF_RUBY_OFFSETS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

/* a VALUE's type in its flags (RUBY_T_MASK) */
#define RUBY_T_MASK 0x1f

struct ruby_offsets {
	uint16_t version; /* major << 8 | minor: 3.1 is 0x0301 */
	const char *name; /* "3.1" */
	struct cfi_ruby_proc bpf;
	uint16_t iseq_body;	      /* rb_iseq_t.body */
	uint16_t body_iseq_size;      /* rb_iseq_constant_body.iseq_size: VALUEs */
	uint16_t body_iseq_encoded;   /* .iseq_encoded: pc 0 */
	uint16_t body_path;	      /* .location.pathobj: a String, or [path, realpath] */
	uint16_t body_label;	      /* .location.label: a String */
	uint16_t body_first_lineno;   /* .location.first_lineno: a Fixnum */
	uint16_t body_info_entries;   /* .insns_info.body: struct iseq_insn_info_entry[] */
	uint16_t body_info_pos;	      /* .insns_info.positions (NULL once encoded) */
	uint16_t body_info_size;      /* .insns_info.size: entries */
	uint16_t body_info_succ;      /* .insns_info.succ_index_table */
	uint16_t info_entry_size;     /* sizeof(struct iseq_insn_info_entry) */
	uint16_t info_entry_line;     /* .line_no */
	uint16_t rstring_heap_len;    /* struct RString.as.heap.len */
	uint16_t rstring_heap_ptr;    /* .as.heap.ptr */
	uint16_t rstring_embed;	      /* .as.embed.ary */
	uint32_t rstring_noembed;     /* RSTRING_NOEMBED */
	uint32_t rstring_embed_mask;  /* RSTRING_EMBED_LEN_MASK */
	uint16_t rstring_embed_shift; /* RSTRING_EMBED_LEN_SHIFT */
	uint16_t rarray_heap_ptr;     /* struct RArray.as.heap.ptr */
	uint16_t rarray_embed;	      /* .as.ary */
	uint32_t rarray_embed_flag;   /* RARRAY_EMBED_FLAG */
	uint8_t t_string, t_array;    /* RUBY_T_STRING, RUBY_T_ARRAY (flags & 0x1f) */
	/* a C method's name: its method entry's ID, then the ID's String in global_symbols */
	uint16_t me_called_id;	 /* rb_callable_method_entry_t.called_id */
	uint16_t id_scope_shift; /* RUBY_ID_SCOPE_SHIFT: an ID's serial above it */
	uint16_t last_op_id;	 /* tLAST_OP_ID: IDs up to it are their own serial */
	/* symbol.c's, internal (no header has them): shown right by test_ruby_frames' names */
	uint16_t symbols_last_id; /* rb_symbols_t.last_id: the highest serial (u32) */
	uint16_t symbols_ids;	  /* .ids: an Array of Arrays of [String, Symbol] pairs */
	uint16_t id_entry_unit;	  /* ID_ENTRY_UNIT: serials per inner Array */
	uint16_t id_entry_size;	  /* ID_ENTRY_SIZE: VALUEs per serial */
};

/* The entry of a version, NULL when it has none. */
const struct ruby_offsets *ruby_offsets_find(uint16_t version);

#endif
