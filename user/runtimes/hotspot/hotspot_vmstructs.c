// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HotSpot's layout from its own VMStructs tables; see hotspot_vmstructs.h.
 * The tables' formats are runtime/vmStructs.hpp's: VMStructEntry {typeName,
 * fieldName, typeString, isStatic, offset, address}, VMTypeEntry {typeName,
 * superclassName, isOopType, isIntegerType, isUnsigned, size},
 * VMIntConstantEntry {name, value}, each array ended by an entry whose name
 * is NULL; where each member lies in an entry, and an entry's size, are
 * exported too (the gHotSpotVM*Offset and *Stride symbols), so those are
 * read rather than assumed.
 */
#include <stdlib.h>
#include <string.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"
#include "user/runtimes/target_mem.h"

_Static_assert(sizeof(struct hotspot_layout) <= 320, "the layout is meant to be small");

/* bytes read from libjvm.so for its symbol tables (JDK 17's: 2 MiB) */
#define HS_ELF_READ_MAX (64ull << 20)
/* entries of a table read at once */
#define HS_BATCH 32
/* an entry's bytes, at most (JDK 17's VMStructEntry: 48) */
#define HS_STRIDE_MAX 256
/* an offset in an object we read fields at */
#define HS_OFF_MAX 4096

const char *const hotspot_symbol_names[HS_SYMS] = {
    [HS_STRUCTS] = "gHotSpotVMStructs",
    [HS_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
    [HS_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
    [HS_STRUCT_TYPE_STRING] = "gHotSpotVMStructEntryTypeStringOffset",
    [HS_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
    [HS_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
    [HS_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
    [HS_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
    [HS_TYPES] = "gHotSpotVMTypes",
    [HS_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
    [HS_TYPE_IS_UNSIGNED] = "gHotSpotVMTypeEntryIsUnsignedOffset",
    [HS_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
    [HS_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
    [HS_INTS] = "gHotSpotVMIntConstants",
    [HS_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
    [HS_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
    [HS_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
};

/* how a wanted entry is used */
enum {
	W_STATIC = 1,	   /* its address, into a uint64_t of the layout */
	W_OFFSET_ONLY = 2, /* an embedded object or an array: no width */
	W_OPTIONAL = 4,	   /* older JDKs lack it */
	W_POINTER = 8,	   /* must be 8 bytes wide */
};

struct want {
	const char *type, *field;
	const char *alt_type, *alt_field; /* its spelling in other JDKs, or NULL */
	uint16_t slot;			  /* offsetof in struct hotspot_layout */
	uint8_t how;
};

#define L(m) ((uint16_t)offsetof(struct hotspot_layout, m))

/*
 * What the code cache reader reads, by the names vmStructs.cpp gives it in
 * JDK 17; the alternative is the JDK 11 (GenericGrowableArray,
 * CompiledMethod) or JDK 23+ (_code_offset, _data_offset) spelling.
 */
static const struct want wants[] = {
    {"CodeCache", "_heaps", NULL, NULL, L(code_heaps), W_STATIC},
    {"CodeCache", "_low_bound", NULL, NULL, L(code_low), W_STATIC},
    {"CodeCache", "_high_bound", NULL, NULL, L(code_high), W_STATIC},
    {"GrowableArrayBase", "_len", "GenericGrowableArray", "_len", L(array_len), 0},
    {"GrowableArray<int>", "_data", NULL, NULL, L(array_data), W_POINTER},
    {"CodeHeap", "_memory", NULL, NULL, L(heap_memory), W_OFFSET_ONLY},
    {"CodeHeap", "_segmap", NULL, NULL, L(heap_segmap), W_OFFSET_ONLY},
    {"CodeHeap", "_log2_segment_size", NULL, NULL, L(heap_log2_segment), 0},
    {"VirtualSpace", "_low_boundary", NULL, NULL, L(vs_low_boundary), W_POINTER},
    {"VirtualSpace", "_high_boundary", NULL, NULL, L(vs_high_boundary), W_POINTER},
    {"VirtualSpace", "_low", NULL, NULL, L(vs_low), W_POINTER},
    {"VirtualSpace", "_high", NULL, NULL, L(vs_high), W_POINTER},
    {"HeapBlock::Header", "_length", NULL, NULL, L(block_length), 0},
    {"HeapBlock::Header", "_used", NULL, NULL, L(block_used), 0},
    {"CodeBlob", "_name", NULL, NULL, L(blob_name), W_POINTER},
    {"CodeBlob", "_size", NULL, NULL, L(blob_size), 0},
    {"CodeBlob", "_header_size", NULL, NULL, L(blob_header_size), 0},
    {"CodeBlob", "_frame_complete_offset", NULL, NULL, L(blob_frame_complete), 0},
    {"CodeBlob", "_frame_size", NULL, NULL, L(blob_frame_size), 0},
    {"CodeBlob", "_code_begin", "CodeBlob", "_code_offset", L(blob_code_begin), 0},
    {"CodeBlob", "_code_end", "CodeBlob", "_data_offset", L(blob_code_end), 0},
    {"CodeBlob", "_kind", NULL, NULL, L(blob_kind), W_OPTIONAL},
    {"nmethod", "_method", "CompiledMethod", "_method", L(nm_method), W_POINTER},
    {"nmethod", "_entry_bci", NULL, NULL, L(nm_entry_bci), 0},
    {"nmethod", "_compile_id", NULL, NULL, L(nm_compile_id), 0},
    {"nmethod", "_state", NULL, NULL, L(nm_state), 0},
    {"nmethod", "_comp_level", NULL, NULL, L(nm_comp_level), 0},
    /* an OSR nmethod's second prologue (hotspot_marks.c); its rows miss it without */
    {"nmethod", "_osr_entry_point", NULL, NULL, L(nm_osr_entry), W_POINTER | W_OPTIONAL},
    {"Method", "_constMethod", NULL, NULL, L(method_const), W_POINTER},
    {"ConstMethod", "_constants", NULL, NULL, L(const_pool), W_POINTER},
    {"ConstMethod", "_name_index", NULL, NULL, L(const_name_index), 0},
    {"ConstMethod", "_signature_index", NULL, NULL, L(const_sig_index), 0},
    {"ConstantPool", "_pool_holder", NULL, NULL, L(pool_holder), W_POINTER},
    {"ConstantPool", "_length", NULL, NULL, L(pool_length), 0},
    {"Klass", "_name", NULL, NULL, L(klass_name), W_POINTER},
    {"Symbol", "_length", NULL, NULL, L(symbol_length), 0},
    {"Symbol", "_body", NULL, NULL, L(symbol_body), W_OFFSET_ONLY},
    {"Symbol", "_hash_and_refcount", NULL, NULL, L(symbol_hash), W_OPTIONAL},
    /* a class's methods, to tell overloads apart: names stay unsigned without them */
    {"InstanceKlass", "_methods", NULL, NULL, L(klass_methods), W_POINTER | W_OPTIONAL},
    {"Array<int>", "_length", NULL, NULL, L(md_array_length), W_OPTIONAL},
    {"Array<Method*>", "_data", NULL, NULL, L(md_array_data), W_OFFSET_ONLY | W_OPTIONAL},
    /* debug info: inline levels and lines (hotspot_scopes.h); frames named without them */
    {"nmethod", "_scopes_data_begin", "CompiledMethod", "_scopes_data_begin", L(nm_scopes_data),
     W_OPTIONAL},
    {"nmethod", "_scopes_pcs_offset", NULL, NULL, L(nm_scopes_pcs), W_OPTIONAL},
    {"nmethod", "_dependencies_offset", NULL, NULL, L(nm_dependencies), W_OPTIONAL},
    {"nmethod", "_metadata_offset", NULL, NULL, L(nm_metadata), W_OPTIONAL},
    {"nmethod", "_immutable_data", NULL, NULL, L(nm_immutable), W_POINTER | W_OPTIONAL},
    {"nmethod", "_immutable_data_size", NULL, NULL, L(nm_immutable_size), W_OPTIONAL},
    {"nmethod", "_scopes_data_offset", NULL, NULL, L(nm_scopes_data_off), W_OPTIONAL},
    {"CodeBlob", "_mutable_data", NULL, NULL, L(blob_mutable), W_POINTER | W_OPTIONAL},
    {"CodeBlob", "_mutable_data_size", NULL, NULL, L(blob_mutable_size), W_OPTIONAL},
    {"CodeBlob", "_relocation_size", NULL, NULL, L(blob_relocation_size), W_OPTIONAL},
    {"PcDesc", "_pc_offset", NULL, NULL, L(pcdesc_pc), W_OPTIONAL},
    {"PcDesc", "_scope_decode_offset", NULL, NULL, L(pcdesc_scope), W_OPTIONAL},
    {"ConstMethod", "_flags", "ConstMethod", "_flags._flags", L(const_flags), W_OPTIONAL},
    {"ConstMethod", "_code_size", NULL, NULL, L(const_code_size), W_OPTIONAL},
    /* an OopHandle: the address of the slot holding the class's java.lang.Class */
    {"Klass", "_java_mirror", NULL, NULL, L(klass_mirror), W_OPTIONAL},
    {"ConstMethod", "_constMethod_size", NULL, NULL, L(const_size), W_OPTIONAL},
    {"ConstantPool", "_source_file_name_index", NULL, NULL, L(pool_source_file), W_OPTIONAL},
};
#define NWANTS (sizeof(wants) / sizeof(wants[0]))

/* HeapBlock's own field: where its Header lies (offset 0 in every JDK so far) */
#define HEAP_BLOCK_HEADER "_header"

/* what the struct table said of one wanted entry */
struct found {
	bool ok, alt;
	uint64_t value; /* offset, or a static's address */
	char type[HOTSPOT_STRING_MAX];
};

/* The whole scan's state: the process, its strings, what was found. */
struct scan {
	uint32_t pid;
	struct hotspot_strings strings;
	uint64_t entry[HS_SYMS]; /* the companion symbols' values */
	struct found found[NWANTS];
	uint64_t block_header; /* HeapBlock::_header's offset */
	bool block_header_ok;
	uint64_t size_heap_block, size_pool;	 /* from the type table */
	uint64_t size_pcdesc, size_const_method; /* ... 0 when not listed */
	uint64_t vm_major, vm_minor;		 /* Abstract_VM_Version's, their addresses */
	uint8_t batch[HS_BATCH * HS_STRIDE_MAX]; /* entries read at once */
	uint64_t batch_table;			 /* of the table at */
	uint32_t batch_first, batch_n;		 /* entries [first, first + n) */
};

void hotspot_strings_init(struct hotspot_strings *s, uint32_t pid)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
}

/* The page at page (aligned), read once of the two kept; NULL when unreadable. */
static const uint8_t *page_of(struct hotspot_strings *s, uint64_t page)
{
	unsigned i;

	for (i = 0; i < 2; i++)
		if (s->ok[i] && s->page[i] == page)
			return s->buf[i];
	i = s->next;
	s->next ^= 1;
	s->reads++;
	s->ok[i] = !target_read(s->pid, page, s->buf[i], sizeof(s->buf[i]));
	s->page[i] = page;
	return s->ok[i] ? s->buf[i] : NULL;
}

int hotspot_cstr(struct hotspot_strings *s, uint64_t addr, char *out, size_t room)
{
	size_t max = room < HOTSPOT_STRING_MAX ? room : HOTSPOT_STRING_MAX;

	if (!max || !addr)
		return -1;
	if (addr + max < addr)
		return -1;
	for (size_t i = 0; i < max; i++) {
		const uint8_t *p = page_of(s, (addr + i) & ~4095ull);

		if (!p)
			return -1;
		out[i] = (char)p[(addr + i) & 4095];
		if (!out[i])
			return 0;
	}
	out[max - 1] = 0;
	return -1;
}

int hotspot_get(const uint8_t *obj, size_t have, struct hotspot_field f, int64_t *out)
{
	uint64_t v = 0;

	if (!(f.flags & HOTSPOT_F_FOUND) || !f.size || (size_t)f.off + f.size > have)
		return -1;
	memcpy(&v, obj + f.off, f.size); /* little-endian: the low bytes */
	if ((f.flags & HOTSPOT_F_SIGNED) && f.size < 8 && (v >> (f.size * 8 - 1)) & 1)
		v |= ~0ull << (f.size * 8);
	*out = (int64_t)v;
	return 0;
}

int hotspot_elf_symbols(int fd, struct hotspot_symbols *out)
{
	uint64_t left = HS_ELF_READ_MAX, size;
	size_t found;
	Elf *e;

	memset(out, 0, sizeof(*out));
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	found = elf_find_symbols(e, hotspot_symbol_names, out->value, HS_SYMS, &left, NULL);
	/* cut while read: what was found may be anything */
	if (!elf_read_close(e, fd, size) || found != HS_SYMS)
		return -1;
	return 0;
}

/*
 * The companion symbols' values (uint64_t variables of libjvm.so, set as
 * it loads) and the tables' addresses (pointers to the arrays) into
 * sc->entry[]; each entry's members checked to lie in its stride.
 */
static int read_companions(struct scan *sc, const struct hotspot_symbols *syms, uint64_t bias)
{
	static const struct {
		int stride, first, last;
	} tables[] = {{HS_STRUCT_STRIDE, HS_STRUCT_TYPE_NAME, HS_STRUCT_ADDRESS},
		      {HS_TYPE_STRIDE, HS_TYPE_NAME, HS_TYPE_SIZE},
		      {HS_INT_STRIDE, HS_INT_NAME, HS_INT_VALUE}};

	for (int i = 0; i < HS_SYMS; i++)
		if (!syms->value[i] ||
		    target_read(sc->pid, syms->value[i] + bias, &sc->entry[i], sizeof(uint64_t)))
			return -1;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		uint64_t stride = sc->entry[tables[t].stride];

		if (stride < 8 || stride > HS_STRIDE_MAX)
			return -1;
		for (int m = tables[t].first; m <= tables[t].last; m++)
			if (sc->entry[m] > stride - 8)
				return -1;
	}
	return sc->entry[HS_STRUCTS] && sc->entry[HS_TYPES] && sc->entry[HS_INTS] ? 0 : -1;
}

/*
 * Entry i of the table at base (stride bytes each) into *out, read
 * HS_BATCH entries at a time; one at a time where a batch would run past
 * readable memory (the last entries of a table at the end of a mapping).
 */
static int entry_at(struct scan *sc, uint64_t base, uint64_t stride, uint32_t i,
		    const uint8_t **out)
{
	if (sc->batch_table != base || i < sc->batch_first || i >= sc->batch_first + sc->batch_n) {
		sc->batch_table = base;
		sc->batch_first = i;
		sc->batch_n = HS_BATCH;
		if (target_read(sc->pid, base + i * stride, sc->batch, HS_BATCH * stride)) {
			sc->batch_n = 1;
			if (target_read(sc->pid, base + i * stride, sc->batch, stride)) {
				sc->batch_table = 0;
				return -1;
			}
		}
	}
	*out = sc->batch + (i - sc->batch_first) * stride;
	return 0;
}

/* Whether any wanted entry is of type t. */
/* The JDK's version: named in the summary when its layout is not one cfiprof reads. */
#define VM_VERSION "Abstract_VM_Version"

static bool type_wanted(const char *t)
{
	if (!strcmp(t, "HeapBlock") || !strcmp(t, VM_VERSION))
		return true;
	for (size_t w = 0; w < NWANTS; w++)
		if (!strcmp(t, wants[w].type) ||
		    (wants[w].alt_type && !strcmp(t, wants[w].alt_type)))
			return true;
	return false;
}

/* One struct entry (type t, field f) against the wanted ones. */
static void match_struct(struct scan *sc, const char *t, const char *f, const uint8_t *e)
{
	uint64_t off = target_u64(e, (uint16_t)sc->entry[HS_STRUCT_OFFSET]);
	uint64_t addr = target_u64(e, (uint16_t)sc->entry[HS_STRUCT_ADDRESS]);
	uint64_t ts = target_u64(e, (uint16_t)sc->entry[HS_STRUCT_TYPE_STRING]);
	uint32_t is_static = target_u32(e, (uint16_t)sc->entry[HS_STRUCT_IS_STATIC]);

	if (!strcmp(t, "HeapBlock") && !strcmp(f, HEAP_BLOCK_HEADER) && !is_static) {
		sc->block_header = off;
		sc->block_header_ok = true;
	}
	if (!strcmp(t, VM_VERSION) && is_static) {
		if (!strcmp(f, "_vm_major_version"))
			sc->vm_major = addr;
		else if (!strcmp(f, "_vm_minor_version"))
			sc->vm_minor = addr;
	}
	for (size_t w = 0; w < NWANTS; w++) {
		const struct want *x = &wants[w];
		bool primary = !strcmp(t, x->type) && !strcmp(f, x->field);
		bool alt =
		    !primary && x->alt_type && !strcmp(t, x->alt_type) && !strcmp(f, x->alt_field);
		struct found *fd = &sc->found[w];

		/* the primary spelling wins where a JDK has both */
		if (!primary && !(alt && (!fd->ok || fd->alt)))
			continue;
		if (!!(x->how & W_STATIC) != !!is_static)
			continue;
		fd->ok = true;
		fd->alt = alt;
		fd->value = is_static ? addr : off;
		fd->type[0] = 0;
		/* an unchecked field (Symbol::_body) has no type string */
		if (ts && hotspot_cstr(&sc->strings, ts, fd->type, sizeof(fd->type)))
			fd->ok = false;
	}
}

/* The struct table: the wanted entries into sc->found. */
static int scan_structs(struct scan *sc)
{
	uint64_t stride = sc->entry[HS_STRUCT_STRIDE], last_t = 0;
	char t[HOTSPOT_STRING_MAX], f[HOTSPOT_STRING_MAX];
	bool last_wanted = false;

	for (uint32_t i = 0; i < HOTSPOT_ENTRIES_MAX; i++) {
		uint64_t tp, fp;
		const uint8_t *e;

		if (entry_at(sc, sc->entry[HS_STRUCTS], stride, i, &e))
			return -1;
		tp = target_u64(e, (uint16_t)sc->entry[HS_STRUCT_TYPE_NAME]);
		fp = target_u64(e, (uint16_t)sc->entry[HS_STRUCT_FIELD_NAME]);
		if (!tp || !fp)
			return 0;
		/* a type's entries share its name's literal: one compare each */
		if (tp != last_t) {
			if (hotspot_cstr(&sc->strings, tp, t, sizeof(t)))
				return -1;
			last_t = tp;
			last_wanted = type_wanted(t);
		}
		if (!last_wanted)
			continue;
		if (hotspot_cstr(&sc->strings, fp, f, sizeof(f)))
			return -1;
		match_struct(sc, t, f, e);
	}
	return -1; /* no end within bounds */
}

/* Whether the type table's name n is the type string ts (volatile or not). */
static bool type_is(const char *n, const char *ts)
{
	return !strcmp(n, ts) || (!strncmp(ts, "volatile ", 9) && !strcmp(n, ts + 9));
}

/* One type entry (named n) against the found fields' types. */
static void match_type(struct scan *sc, struct hotspot_layout *out, const char *n, const uint8_t *e)
{
	uint64_t size = target_u64(e, (uint16_t)sc->entry[HS_TYPE_SIZE]);
	uint32_t is_unsigned = target_u32(e, (uint16_t)sc->entry[HS_TYPE_IS_UNSIGNED]);

	if (!strcmp(n, "HeapBlock"))
		sc->size_heap_block = size;
	if (!strcmp(n, "ConstantPool"))
		sc->size_pool = size;
	if (!strcmp(n, "PcDesc"))
		sc->size_pcdesc = size;
	if (!strcmp(n, "ConstMethod"))
		sc->size_const_method = size;
	for (size_t w = 0; w < NWANTS; w++) {
		struct hotspot_field *f = (struct hotspot_field *)((uint8_t *)out + wants[w].slot);

		if (!sc->found[w].ok || (wants[w].how & (W_STATIC | W_OFFSET_ONLY)) ||
		    !type_is(n, sc->found[w].type) ||
		    (size != 1 && size != 2 && size != 4 && size != 8))
			continue;
		f->size = (uint8_t)size;
		f->flags = (uint8_t)((f->flags & ~HOTSPOT_F_SIGNED) |
				     (is_unsigned ? 0 : HOTSPOT_F_SIGNED));
	}
}

/* The type table: the found fields' widths, the two sizes wanted. */
static int scan_types(struct scan *sc, struct hotspot_layout *out)
{
	uint64_t stride = sc->entry[HS_TYPE_STRIDE];
	char n[HOTSPOT_STRING_MAX];

	for (uint32_t i = 0; i < HOTSPOT_ENTRIES_MAX; i++) {
		const uint8_t *e;
		uint64_t np;

		if (entry_at(sc, sc->entry[HS_TYPES], stride, i, &e))
			return -1;
		np = target_u64(e, (uint16_t)sc->entry[HS_TYPE_NAME]);
		if (!np)
			return 0;
		/* a name longer than any wanted one is no wanted type */
		if (!hotspot_cstr(&sc->strings, np, n, sizeof(n)))
			match_type(sc, out, n, e);
	}
	return -1;
}

/* The integer constant named name into *value: 0, or -1 when not found. */
static int scan_int(struct scan *sc, const char *name, int32_t *value)
{
	uint64_t stride = sc->entry[HS_INT_STRIDE];
	char n[HOTSPOT_STRING_MAX];

	for (uint32_t i = 0; i < HOTSPOT_ENTRIES_MAX; i++) {
		const uint8_t *e;
		uint64_t np;

		if (entry_at(sc, sc->entry[HS_INTS], stride, i, &e))
			return -1;
		np = target_u64(e, (uint16_t)sc->entry[HS_INT_NAME]);
		if (!np)
			return -1;
		if (!hotspot_cstr(&sc->strings, np, n, sizeof(n)) && !strcmp(n, name)) {
			*value = (int32_t)target_u32(e, (uint16_t)sc->entry[HS_INT_VALUE]);
			return 0;
		}
	}
	return -1;
}

/* The found entries into the layout: -1 when one needed is missing or implausible. */
static int fill(struct scan *sc, struct hotspot_layout *out)
{
	for (size_t w = 0; w < NWANTS; w++) {
		const struct want *x = &wants[w];
		const struct found *fd = &sc->found[w];
		struct hotspot_field *f;

		if (!fd->ok) {
			if (x->how & W_OPTIONAL)
				continue;
			return -1;
		}
		if (x->how & W_STATIC) {
			memcpy((uint8_t *)out + x->slot, &fd->value, sizeof(fd->value));
			if (!fd->value)
				return -1;
			continue;
		}
		if (fd->value >= HS_OFF_MAX)
			return -1;
		f = (struct hotspot_field *)((uint8_t *)out + x->slot);
		f->off = (uint16_t)fd->value;
		f->flags = HOTSPOT_F_FOUND | (fd->alt ? HOTSPOT_F_ALT : 0);
		/* a pointer type needs no entry of the type table */
		if (!(x->how & W_OFFSET_ONLY) && fd->type[0] &&
		    fd->type[strlen(fd->type) - 1] == '*')
			f->size = 8;
	}
	return 0;
}

/* Whether the field f (found) has a width of those allowed (a mask of bytes: 1 << size). */
static bool width_in(struct hotspot_field f, unsigned mask)
{
	return (f.flags & HOTSPOT_F_FOUND) && f.size && ((1u << f.size) & mask);
}

/* The largest end (offset + size) of the n fields f[] found. */
static uint16_t end_of(const struct hotspot_field *const *f, size_t n)
{
	uint16_t end = 0;

	for (size_t i = 0; i < n; i++)
		if ((f[i]->flags & HOTSPOT_F_FOUND) && f[i]->off + f[i]->size > end)
			end = (uint16_t)(f[i]->off + f[i]->size);
	return end;
}

/*
 * Whether the debug info's fields (optional) are all found and plausible:
 * out->scopes (an nmethod's sections, PcDescs) and out->lines (the flag
 * that says a ConstMethod has a line number table), each on its own.
 */
static void finish_debug(struct scan *sc, struct hotspot_layout *out)
{
	const unsigned ints = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8;
	const struct hotspot_field *const pcdesc[] = {&out->pcdesc_pc, &out->pcdesc_scope};
	int32_t flag = 0;

	out->source_file = width_in(out->pool_source_file, ints);
	bool pcdescs = width_in(out->pcdesc_pc, 1u << 4) && width_in(out->pcdesc_scope, 1u << 4) &&
		       end_of(pcdesc, 2) <= sc->size_pcdesc && sc->size_pcdesc <= 64;

	out->scopes_immutable =
	    pcdescs && !HOTSPOT_HAS(out->nm_scopes_data) && width_in(out->nm_immutable, 1u << 8) &&
	    width_in(out->nm_immutable_size, ints) && width_in(out->nm_scopes_pcs, ints) &&
	    width_in(out->nm_scopes_data_off, ints) && width_in(out->blob_mutable, 1u << 8) &&
	    width_in(out->blob_mutable_size, ints) && width_in(out->blob_relocation_size, ints);
	out->scopes = out->scopes_immutable ||
		      (pcdescs && width_in(out->nm_scopes_data, 1u << 8) &&
		       width_in(out->nm_scopes_pcs, ints) && width_in(out->nm_dependencies, ints) &&
		       width_in(out->nm_metadata, ints));
	out->pcdesc_size = out->scopes ? (uint16_t)sc->size_pcdesc : 0;
	/*
	 * a flag of one bit, as JDK 17's ConstMethod::_has_linenumber_table (1)
	 * and JDK 21's on's ConstMethodFlags::_misc_has_linenumber_table are;
	 * an interpreted frame's line needs none of the nmethods' fields
	 */
	out->lines = width_in(out->const_flags, ints) && width_in(out->const_code_size, ints) &&
		     width_in(out->const_size, ints) && sc->size_const_method &&
		     sc->size_const_method < HS_OFF_MAX &&
		     (!scan_int(sc, "ConstMethod::_has_linenumber_table", &flag) ||
		      !scan_int(sc, "ConstMethodFlags::_misc_has_linenumber_table", &flag)) &&
		     flag > 0 && flag <= 0xffff && !(flag & (flag - 1));
	out->const_method_size = out->lines ? (uint16_t)sc->size_const_method : 0;
	out->has_line_table = out->lines ? (uint16_t)flag : 0;
}

/* The layout checked whole, its derived values set: 0, or -1 when implausible. */
static int finish(struct scan *sc, struct hotspot_layout *out)
{
	const unsigned ints = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8;
	const struct hotspot_field *ptrs[] = {
	    &out->array_data, &out->vs_low_boundary, &out->vs_high_boundary, &out->vs_low,
	    &out->vs_high,    &out->blob_name,	     &out->nm_method,	     &out->method_const,
	    &out->const_pool, &out->pool_holder,     &out->klass_name};
	const struct hotspot_field *nums[] = {&out->array_len,
					      &out->heap_log2_segment,
					      &out->block_length,
					      &out->block_used,
					      &out->blob_size,
					      &out->blob_header_size,
					      &out->blob_frame_complete,
					      &out->blob_frame_size,
					      &out->blob_code_begin,
					      &out->blob_code_end,
					      &out->nm_entry_bci,
					      &out->nm_compile_id,
					      &out->nm_state,
					      &out->nm_comp_level,
					      &out->const_name_index,
					      &out->const_sig_index,
					      &out->pool_length,
					      &out->symbol_length};
	/* a CodeBlob's fields first, then an nmethod's */
	const struct hotspot_field *const blob[] = {
	    &out->blob_name,	       &out->blob_size,	      &out->blob_header_size,
	    &out->blob_frame_complete, &out->blob_frame_size, &out->blob_code_begin,
	    &out->blob_code_end,       &out->blob_kind,	      &out->nm_method,
	    &out->nm_entry_bci,	       &out->nm_compile_id,   &out->nm_state,
	    &out->nm_comp_level,       &out->nm_osr_entry};
	const struct hotspot_field *const block[] = {&out->block_length, &out->block_used};

	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++)
		if (!width_in(*ptrs[i], 1u << 8))
			return -1;
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (!width_in(*nums[i], ints))
			return -1;
	/* both ends the same kind: addresses, or offsets from the blob */
	out->code_relative = (out->blob_code_begin.flags & HOTSPOT_F_ALT) != 0;
	if (out->code_relative != ((out->blob_code_end.flags & HOTSPOT_F_ALT) != 0) ||
	    (!out->code_relative && out->blob_code_begin.size != 8))
		return -1;
	if (!sc->block_header_ok || sc->block_header >= HS_OFF_MAX || !sc->size_heap_block ||
	    sc->size_heap_block > 64 || !sc->size_pool || sc->size_pool >= HS_OFF_MAX)
		return -1;
	out->block_length.off = (uint16_t)(out->block_length.off + sc->block_header);
	out->block_used.off = (uint16_t)(out->block_used.off + sc->block_header);
	if (end_of(block, 2) > sc->size_heap_block)
		return -1;
	out->heap_block_size = (uint16_t)sc->size_heap_block;
	out->pool_size = (uint16_t)sc->size_pool;
	out->blob_bytes = end_of(blob, 8);
	out->nmethod_bytes = end_of(blob, sizeof(blob) / sizeof(blob[0]));
	out->kind_nmethod = -1;
	if (HOTSPOT_HAS(out->blob_kind)) {
		int32_t v = -1;

		if (!width_in(out->blob_kind, ints) || scan_int(sc, "CodeBlobKind::Nmethod", &v) ||
		    v < 0 || v > 255)
			return -1;
		out->kind_nmethod = (int16_t)v;
	}
	finish_debug(sc, out);
	return 0;
}

/* Abstract_VM_Version's major.minor as major << 8 | minor; 0 when unlisted or implausible. */
static uint16_t vm_version(const struct scan *sc)
{
	int32_t major = 0, minor = 0;

	if (!sc->vm_major || !sc->vm_minor ||
	    target_read(sc->pid, sc->vm_major, &major, sizeof(major)) ||
	    target_read(sc->pid, sc->vm_minor, &minor, sizeof(minor)) || major < 1 || major > 127 ||
	    minor < 0 || minor > 255)
		return 0;
	return (uint16_t)(major << 8 | minor);
}

int hotspot_layout_read(uint32_t pid, const struct hotspot_symbols *syms, uint64_t bias,
			struct hotspot_layout *out)
{
	uint16_t version = 0;
	struct scan *sc;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	/* 20 KiB of pages, entries and type strings: off a reader thread's stack */
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -1;
	sc->pid = pid;
	hotspot_strings_init(&sc->strings, pid);
	if (!read_companions(sc, syms, bias) && !scan_structs(sc)) {
		version = vm_version(sc);
		if (!fill(sc, out) && !scan_types(sc, out) && !finish(sc, out))
			rc = 0;
	}
	free(sc);
	if (rc)
		memset(out, 0, sizeof(*out));
	out->vm_version = version;
	return rc;
}
