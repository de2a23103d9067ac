/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * V8's object layout as the binary that embeds it exports it: Node.js
 * builds keep V8's postmortem metadata, v8dbg_* symbols whose values are
 * the offsets, types and tags of the objects a debugger reads (those in
 * .bss are 0).  Read from the file once per object, never from a process.
 */
#ifndef CFIPROF_V8_OFFSETS_H
#define CFIPROF_V8_OFFSETS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "bpf/v8_abi.h"

struct v8_offsets {
	struct cfi_v8_proc bpf; /* what BPF reads (its layout and maps_read_ns: 0) */
	uint16_t version;	/* V8's major << 8 | minor (v8::internal::Version) */
	/* what user space reads to name a SharedFunctionInfo (v8_sfi.c) */
	uint16_t heap_object_tag;      /* v8dbg_HeapObjectTag */
	uint16_t heap_object_tag_mask; /* v8dbg_HeapObjectTagMask */
	uint16_t smi_shift;	       /* v8dbg_SmiShiftSize + 1: a Smi's value is word >> this */
	uint16_t sfi_type;	       /* SHARED_FUNCTION_INFO_TYPE */
	uint16_t scope_info_type;      /* SCOPE_INFO_TYPE */
	uint16_t script_type;	       /* SCRIPT_TYPE */
	uint16_t first_nonstring_type; /* an instance type below this is a string's */
	uint16_t string_encoding_mask, one_byte_tag, two_byte_tag;
	uint16_t string_representation_mask, seq_tag, cons_tag, sliced_tag, thin_tag, external_tag;
	uint16_t string_length;		       /* String.length, an int32 */
	uint16_t seq_one_byte_chars;	       /* SeqOneByteString.chars */
	uint16_t seq_two_byte_chars;	       /* SeqTwoByteString.chars */
	uint16_t cons_first, cons_second;      /* ConsString.first / .second */
	uint16_t sliced_parent, sliced_offset; /* SlicedString.parent / .offset (a Smi) */
	uint16_t thin_actual;		       /* ThinString.actual */
	uint16_t sfi_name_or_scope_info;       /* SharedFunctionInfo.name_or_scope_info */
	uint16_t sfi_script_or_debug_info;     /* .script_or_debug_info */
	uint16_t sfi_function_data;	       /* .function_data */
	uint16_t script_name;		       /* Script.name */
	uint16_t script_line_ends;	       /* Script.line_ends: a FixedArray of Smis */
	uint16_t script_source;		       /* Script.source: a String */
	uint16_t fixed_array_length;	       /* FixedArrayBase.length, a Smi */
	uint16_t fixed_array_data;	       /* FixedArray.data: its first element */
	/* what v8_sfi.c reads besides; the struct must stay <= DETECT_INFO_BYTES */
	uint16_t is_not_string_mask; /* v8dbg_IsNotStringMask: a string's type has none */
	uint16_t fixed_array_type;   /* FIXED_ARRAY_TYPE: what computed line_ends are */
	uint16_t debug_info_type; /* DEBUG_INFO_TYPE: a debugged function's script_or_debug_info */
	uint16_t uncompiled_first_type; /* the 4 UNCOMPILED_DATA_*_TYPEs, consecutive */
	uint16_t uncompiled_last_type;
	uint16_t uncompiled_start_position; /* UncompiledData.start_position, an int32 */
	uint16_t scope_info_context_locals; /* ScopeInfo slot of the context local count */
	uint16_t scope_info_first_vars;	    /* ... where its variable part begins */
};

/*
 * The layout the ELF file fd exports: 0 when it has every v8dbg_* symbol
 * listed in v8_offsets.c and they hold together; 1 when it is a V8 (its
 * version read from v8::internal::Version) whose layout cannot be read
 * (built without the symbols, or with pointer compression): out is zero
 * but for its version; -1 when it is no V8 (or was cut while read).
 */
int v8_elf_offsets(int fd, struct v8_offsets *out);

#endif
