// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * V8's layout from its binary's v8dbg_* symbols; see v8_offsets.h.  The file
 * may be hostile: every value is range-checked before it becomes an offset.
 */
#include <stddef.h>
#include <string.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/runtimes/runtime_detect.h"
#include "user/runtimes/v8/v8_offsets.h"

_Static_assert(sizeof(struct v8_offsets) <= DETECT_INFO_BYTES, "detect info too small");

/*
 * Bytes read from one object: node's .dynsym and .dynstr (7 MiB) once per
 * batch of 32 names, .symtab and .strtab (10 MiB) when one is missing.
 */
#define V8_READ_MAX (32ull << 20)
#define V8_OFF_MAX  4096    /* an object field's offset */
#define V8_TYPE_MAX 0x10000 /* instance types, tags and masks: a Map's uint16 */

enum v8_kind {
	V8_OFF,	       /* a field offset: [0, V8_OFF_MAX) */
	V8_SOFF,       /* a frame slot from fp: (-V8_OFF_MAX, V8_OFF_MAX) */
	V8_U16,	       /* an instance type, tag or mask: [0, V8_TYPE_MAX) */
	V8_MASK,       /* a mask of an int's bits: its low 16 kept */
	V8_INDEX,      /* a ScopeInfo slot: [1, 64) */
	V8_SMI_SHIFT,  /* SmiShiftSize: the shift is one more (the tag) */
	V8_TAGGED,     /* TaggedSize: 8, or pointers are compressed (not read) */
	V8_UNCOMPILED, /* one of the UncompiledData types: their range */
	V8_MAJOR,      /* V8's version: [1, 256) */
	V8_MINOR,      /* [0, 256) */
	V8_BLOB_CODE,  /* the embedded builtins' code: the symbol's own address */
	V8_BLOB_SIZE,  /* ... their bytes: (0, 1 GiB) */
};

#define FIELD(f) offsetof(struct v8_offsets, f)

static const struct v8_sym {
	const char *name;
	uint16_t field; /* where in struct v8_offsets (V8_TAGGED, V8_UNCOMPILED: none) */
	uint8_t kind;
} syms[] = {
    {"v8dbg_off_fp_function", FIELD(bpf.fp_function), V8_SOFF},
    {"v8dbg_class_HeapObject__map__Map", FIELD(bpf.heap_object_map), V8_OFF},
    {"v8dbg_class_Map__instance_type__uint16_t", FIELD(bpf.map_instance_type), V8_OFF},
    {"v8dbg_type_JSFunction__JS_FUNCTION_TYPE", FIELD(bpf.js_function_type), V8_U16},
    {"v8dbg_class_JSFunction__shared__SharedFunctionInfo", FIELD(bpf.js_function_shared), V8_OFF},
    {"v8dbg_HeapObjectTag", FIELD(heap_object_tag), V8_U16},
    {"v8dbg_HeapObjectTagMask", FIELD(heap_object_tag_mask), V8_U16},
    {"v8dbg_SmiShiftSize", FIELD(smi_shift), V8_SMI_SHIFT},
    {"v8dbg_TaggedSize", 0, V8_TAGGED},
    {"v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", FIELD(sfi_type), V8_U16},
    {"v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", FIELD(scope_info_type), V8_U16},
    {"v8dbg_type_Script__SCRIPT_TYPE", FIELD(script_type), V8_U16},
    {"v8dbg_FirstNonstringType", FIELD(first_nonstring_type), V8_U16},
    {"v8dbg_IsNotStringMask", FIELD(is_not_string_mask), V8_MASK},
    {"v8dbg_StringEncodingMask", FIELD(string_encoding_mask), V8_U16},
    {"v8dbg_OneByteStringTag", FIELD(one_byte_tag), V8_U16},
    {"v8dbg_TwoByteStringTag", FIELD(two_byte_tag), V8_U16},
    {"v8dbg_StringRepresentationMask", FIELD(string_representation_mask), V8_U16},
    {"v8dbg_SeqStringTag", FIELD(seq_tag), V8_U16},
    {"v8dbg_ConsStringTag", FIELD(cons_tag), V8_U16},
    {"v8dbg_SlicedStringTag", FIELD(sliced_tag), V8_U16},
    {"v8dbg_ThinStringTag", FIELD(thin_tag), V8_U16},
    {"v8dbg_ExternalStringTag", FIELD(external_tag), V8_U16},
    {"v8dbg_class_String__length__int32_t", FIELD(string_length), V8_OFF},
    {"v8dbg_class_SeqOneByteString__chars__char", FIELD(seq_one_byte_chars), V8_OFF},
    {"v8dbg_class_SeqTwoByteString__chars__char", FIELD(seq_two_byte_chars), V8_OFF},
    {"v8dbg_class_ConsString__first__String", FIELD(cons_first), V8_OFF},
    {"v8dbg_class_ConsString__second__String", FIELD(cons_second), V8_OFF},
    {"v8dbg_class_SlicedString__parent__String", FIELD(sliced_parent), V8_OFF},
    {"v8dbg_class_SlicedString__offset__SMI", FIELD(sliced_offset), V8_OFF},
    {"v8dbg_class_ThinString__actual__String", FIELD(thin_actual), V8_OFF},
    {"v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object", FIELD(sfi_name_or_scope_info),
     V8_OFF},
    {"v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
     FIELD(sfi_script_or_debug_info), V8_OFF},
    {"v8dbg_class_SharedFunctionInfo__function_data__Object", FIELD(sfi_function_data), V8_OFF},
    {"v8dbg_class_Script__name__Object", FIELD(script_name), V8_OFF},
    {"v8dbg_class_Script__line_ends__Object", FIELD(script_line_ends), V8_OFF},
    {"v8dbg_class_Script__source__Object", FIELD(script_source), V8_OFF},
    {"v8dbg_class_FixedArrayBase__length__SMI", FIELD(fixed_array_length), V8_OFF},
    {"v8dbg_class_FixedArray__data__uintptr_t", FIELD(fixed_array_data), V8_OFF},
    {"v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", FIELD(fixed_array_type), V8_U16},
    {"v8dbg_type_DebugInfo__DEBUG_INFO_TYPE", FIELD(debug_info_type), V8_U16},
    {"v8dbg_type_UncompiledDataWithoutPreparseData__"
     "UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_TYPE",
     0, V8_UNCOMPILED},
    {"v8dbg_type_UncompiledDataWithPreparseData__UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE", 0,
     V8_UNCOMPILED},
    {"v8dbg_type_UncompiledDataWithoutPreparseDataWithJob__"
     "UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE",
     0, V8_UNCOMPILED},
    {"v8dbg_type_UncompiledDataWithPreparseDataAndJob__"
     "UNCOMPILED_DATA_WITH_PREPARSE_DATA_AND_JOB_TYPE",
     0, V8_UNCOMPILED},
    {"v8dbg_class_UncompiledData__start_position__int32_t", FIELD(uncompiled_start_position),
     V8_OFF},
    {"v8dbg_scopeinfo_idx_ncontextlocals", FIELD(scope_info_context_locals), V8_INDEX},
    {"v8dbg_scopeinfo_idx_first_vars", FIELD(scope_info_first_vars), V8_INDEX},
    {"_ZN2v88internal7Version6major_E", 0, V8_MAJOR},
    {"_ZN2v88internal7Version6minor_E", 0, V8_MINOR},
    /* in .symtab only: a stripped node names no builtins, and its interpreted frames go */
    {"v8_Default_embedded_blob_code_", 0, V8_BLOB_CODE},
    {"v8_Default_embedded_blob_code_size_", 0, V8_BLOB_SIZE},
};

/*
 * JSFunction's subclasses (class constructors, Array, Promise, RegExp and
 * the typed arrays' constructors) have instance types of their own right
 * after JS_FUNCTION_TYPE, which no v8dbg symbol bounds: how many, by V8
 * version, read off node 20's heap (V8 11.3: a class constructor's map
 * says JS_FUNCTION_TYPE + 15).  A version not listed names plain
 * functions only.
 */
static const struct {
	uint16_t version;
	uint16_t subclass_types;
} function_types[] = {
    {0x0b03, 15},
};

#define NR_SYMS (sizeof(syms) / sizeof(syms[0]))
_Static_assert(NR_SYMS <= 64, "the found mask is 64 bits");

/*
 * The int at vaddr (a v8dbg value): from the file, or 0 when it lies in a
 * section with no bytes in the file (.bss: the compiler put the zeros there).
 */
static int read_int(Elf *e, int fd, uint64_t vaddr, int32_t *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf_read_vaddr(e, fd, vaddr, out, sizeof(*out)))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (vaddr >= sh.sh_addr && vaddr - sh.sh_addr + sizeof(*out) <= sh.sh_size) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

/* Sym's value v into out when in its kind's range; the uncompiled types' range into *lo, *hi. */
static int store(const struct v8_sym *s, int32_t v, struct v8_offsets *out, int32_t *lo,
		 int32_t *hi)
{
	uint16_t u = (uint16_t)v;

	switch (s->kind) {
	case V8_OFF:
		if (v < 0 || v >= V8_OFF_MAX)
			return -1;
		break;
	case V8_SOFF:
		if (v <= -V8_OFF_MAX || v >= V8_OFF_MAX)
			return -1;
		break;
	case V8_U16:
		if (v < 0 || v >= V8_TYPE_MAX)
			return -1;
		break;
	case V8_MASK:
		/* IsNotStringMask is ~(FirstNonstringType - 1) as an int: negative */
		if (!u)
			return -1;
		break;
	case V8_INDEX:
		if (v < 1 || v >= 64)
			return -1;
		break;
	case V8_SMI_SHIFT:
		if (v < 0 || v > 31)
			return -1;
		u = (uint16_t)(v + 1);
		break;
	case V8_TAGGED:
		return v == 8 ? 0 : -1;
	case V8_UNCOMPILED:
		if (v < 0 || v >= V8_TYPE_MAX)
			return -1;
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
		return 0;
	case V8_MAJOR:
		if (v < 1 || v > 255)
			return -1;
		out->version = (uint16_t)(v << 8 | (out->version & 0xff));
		return 0;
	case V8_MINOR:
		if (v < 0 || v > 255)
			return -1;
		out->version = (uint16_t)((out->version & 0xff00) | v);
		return 0;
	case V8_BLOB_CODE:
		return 0; /* its address, not a value: v8_elf_offsets takes it */
	case V8_BLOB_SIZE:
		if (v <= 0 || v >= (1 << 30))
			return -1;
		out->bpf.builtins_hi = (uint64_t)v;
		return 0;
	}
	memcpy((char *)out + s->field, &u, sizeof(u));
	return 0;
}

/* What the readers assume of the values beyond their ranges. */
static bool consistent(const struct v8_offsets *o, int32_t lo, int32_t hi)
{
	/* a Smi has bit 0 clear: a HeapObject's tag has it set, within its mask */
	return (o->heap_object_tag & 1) && !(o->heap_object_tag & ~o->heap_object_tag_mask) &&
	       o->first_nonstring_type && !(o->first_nonstring_type & ~o->is_not_string_mask) &&
	       hi - lo == 3 && o->scope_info_context_locals < o->scope_info_first_vars;
}

int v8_elf_offsets(int fd, struct v8_offsets *out)
{
	int32_t lo = V8_TYPE_MAX, hi = -1;
	uint64_t left = V8_READ_MAX, values[NR_SYMS], present = 0;
	bool ok = true, version_ok = true;
	uint64_t blob = 0;
	uint16_t version;
	uint64_t size;
	Elf *e;

	memset(out, 0, sizeof(*out));
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	for (size_t base = 0; base < NR_SYMS; base += 32) {
		const char *names[32];
		size_t n = NR_SYMS - base < 32 ? NR_SYMS - base : 32;
		uint32_t found = 0;

		for (size_t i = 0; i < n; i++)
			names[i] = syms[base + i].name;
		elf_find_symbols(e, names, values + base, n, &left, &found);
		present |= (uint64_t)found << base;
	}
	for (size_t i = 0; i < NR_SYMS; i++) {
		bool is_version = syms[i].kind == V8_MAJOR || syms[i].kind == V8_MINOR;
		bool is_blob = syms[i].kind == V8_BLOB_CODE || syms[i].kind == V8_BLOB_SIZE;
		int32_t v = 0;

		/* the version whatever else is missing: a V8 whose layout is not read is counted */
		if (!ok && !is_version)
			continue;
		if (syms[i].kind == V8_BLOB_CODE) {
			blob = present >> i & 1 ? values[i] : 0;
			continue;
		}
		if (!(present >> i & 1) || read_int(e, fd, values[i], &v) ||
		    store(&syms[i], v, out, &lo, &hi)) {
			if (is_version)
				version_ok = false;
			else if (is_blob)
				blob = 0;
			else
				ok = false;
		}
	}
	version = version_ok ? out->version : 0;
	/* both or neither: the builtins' range in the object's addresses */
	if (blob && out->bpf.builtins_hi && blob + out->bpf.builtins_hi > blob) {
		out->bpf.builtins_lo = blob;
		out->bpf.builtins_hi += blob;
	} else {
		out->bpf.builtins_lo = out->bpf.builtins_hi = 0;
	}
	/* cut while read: what was found may be anything */
	if (!elf_read_close(e, fd, size)) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	if (!ok || !consistent(out, lo, hi)) {
		memset(out, 0, sizeof(*out));
		out->version = version;
		return version ? 1 : -1;
	}
	out->version = version;
	out->uncompiled_first_type = (uint16_t)lo;
	out->uncompiled_last_type = (uint16_t)hi;
	out->bpf.js_function_last = out->bpf.js_function_type;
	for (size_t i = 0; i < sizeof(function_types) / sizeof(function_types[0]); i++)
		if (function_types[i].version == out->version)
			out->bpf.js_function_last += function_types[i].subclass_types;
	return 0;
}
