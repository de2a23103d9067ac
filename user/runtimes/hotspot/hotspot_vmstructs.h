/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot's layout as HotSpot itself describes it: libjvm.so exports the
 * tables its Serviceability Agent reads (runtime/vmStructs.cpp): every
 * exported field by type and field name with its offset (or, for a static,
 * its address), every exported type with its size, integer constants by
 * name.  The tables hold pointers relocated at load time, so they are read
 * from the live process (process_vm_readv), from the symbols' addresses:
 * their values in libjvm.so plus where it is loaded.  What the code cache
 * reader (hotspot_codecache.h) needs is looked up by NAME, with the older
 * or newer spelling where JDKs 11 to 25 differ, so a JDK that moves a field
 * needs no table of ours; a JDK that lacks one is refused.  The process may
 * be hostile: every pointer is an address to try, every count and string
 * is bounded.
 */
#ifndef CFIPROF_HOTSPOT_VMSTRUCTS_H
#define CFIPROF_HOTSPOT_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The libjvm.so symbols the tables are found by, in hotspot_symbol_names' order. */
enum hotspot_sym {
	HS_STRUCTS,	     /* gHotSpotVMStructs: a pointer to the VMStructEntry array */
	HS_STRUCT_TYPE_NAME, /* gHotSpotVMStructEntry*Offset: uint64_t offsets in an entry */
	HS_STRUCT_FIELD_NAME,
	HS_STRUCT_TYPE_STRING,
	HS_STRUCT_IS_STATIC,
	HS_STRUCT_OFFSET,
	HS_STRUCT_ADDRESS,
	HS_STRUCT_STRIDE, /* gHotSpotVMStructEntryArrayStride: sizeof(VMStructEntry) */
	HS_TYPES,	  /* gHotSpotVMTypes, and its entries' layout */
	HS_TYPE_NAME,
	HS_TYPE_IS_UNSIGNED,
	HS_TYPE_SIZE,
	HS_TYPE_STRIDE,
	HS_INTS, /* gHotSpotVMIntConstants, and its entries' layout */
	HS_INT_NAME,
	HS_INT_VALUE,
	HS_INT_STRIDE,
	HS_SYMS,
};

extern const char *const hotspot_symbol_names[HS_SYMS];

/* The symbols' values in libjvm.so (link-time: the load bias not added). */
struct hotspot_symbols {
	uint64_t value[HS_SYMS];
};

/* A field of a HotSpot type: where it is in its object and how wide. */
struct hotspot_field {
	uint16_t off;
	uint8_t size;  /* bytes: 1, 2, 4 or 8; 0 when only its offset is known */
	uint8_t flags; /* HOTSPOT_F_* */
};
#define HOTSPOT_F_FOUND	 1 /* in this JDK's table */
#define HOTSPOT_F_SIGNED 2 /* its type is a signed integer */
#define HOTSPOT_F_ALT	 4 /* found under its other spelling (hotspot_vmstructs.c) */

/*
 * What the code cache reader needs of one JVM: offsets in objects (and
 * their widths), sizes of types, addresses of statics.
 */
struct hotspot_layout {
	uint64_t code_heaps; /* &CodeCache::_heaps, a GrowableArray<CodeHeap*>* */
	uint64_t code_low;   /* &CodeCache::_low_bound, an address */
	uint64_t code_high;  /* &CodeCache::_high_bound */
	/* GrowableArray(Base)::_len (GenericGrowableArray before JDK 16), GrowableArray<int>::_data
	 */
	struct hotspot_field array_len, array_data;
	/* CodeHeap: its code's VirtualSpace, its segment map's, log2 of a segment's bytes */
	struct hotspot_field heap_memory, heap_segmap, heap_log2_segment;
	struct hotspot_field vs_low_boundary, vs_high_boundary, vs_low, vs_high; /* VirtualSpace */
	/* HeapBlock::Header's, from the HeapBlock */
	struct hotspot_field block_length, block_used;
	struct hotspot_field blob_name, blob_size, blob_header_size, blob_frame_complete,
	    blob_frame_size;
	/*
	 * CodeBlob::_code_begin / _code_end (addresses; JDK 9 to 22), or when
	 * code_relative CodeBlob::_code_offset / _data_offset (from the blob;
	 * JDK 23 on).
	 */
	struct hotspot_field blob_code_begin, blob_code_end;
	struct hotspot_field blob_kind; /* CodeBlob::_kind (JDK 23 on); size 0 without */
	/* nmethod's (CompiledMethod::_method before JDK 23) */
	struct hotspot_field nm_method, nm_entry_bci, nm_compile_id, nm_state, nm_comp_level;
	struct hotspot_field nm_osr_entry; /* nmethod::_osr_entry_point; size 0 without */
	struct hotspot_field method_const; /* Method::_constMethod */
	struct hotspot_field const_pool, const_name_index, const_sig_index; /* ConstMethod */
	struct hotspot_field pool_holder, pool_length;			    /* ConstantPool */
	struct hotspot_field klass_name;				    /* Klass::_name */
	struct hotspot_field klass_mirror; /* Klass::_java_mirror (an OopHandle); size 0 without */
	struct hotspot_field symbol_length, symbol_body;		    /* Symbol */
	/* Symbol::_hash_and_refcount (JDK 17 on): its high half a random number made with it */
	struct hotspot_field symbol_hash;
	struct hotspot_field klass_methods; /* InstanceKlass::_methods; size 0 without */
	/* Array<T>::_length (Array<int>'s), Array<Method*>::_data: a class's methods */
	struct hotspot_field md_array_length, md_array_data;
	/*
	 * Compiled code's debug info (hotspot_scopes.h), optional: a JDK that
	 * lacks one of these has no inline levels or lines in its frames.
	 * nmethod's (CompiledMethod's before JDK 23) _scopes_data_begin, an
	 * address; nmethod's offsets (from itself) of its scopes' PcDescs, of
	 * what follows them and of its metadata; PcDesc's pc and scope offsets.
	 */
	struct hotspot_field nm_scopes_data, nm_scopes_pcs, nm_dependencies, nm_metadata;
	/*
	 * JDK 25's instead (scopes_immutable): nmethod::_immutable_data (an
	 * address) and its size, where the PcDescs lie from _scopes_pcs_offset to
	 * _scopes_data_offset and the scopes data after them; the metadata in
	 * CodeBlob::_mutable_data (an address) past its _relocation_size
	 */
	struct hotspot_field nm_immutable, nm_immutable_size, nm_scopes_data_off;
	struct hotspot_field blob_mutable, blob_mutable_size, blob_relocation_size;
	struct hotspot_field pcdesc_pc, pcdesc_scope;
	/* ConstMethod's flags, bytecode size and own size (words); the source file's pool index */
	struct hotspot_field const_flags, const_code_size, const_size, pool_source_file;
	uint16_t heap_block_size; /* sizeof(HeapBlock): the CodeBlob follows it */
	uint16_t pool_size;	  /* sizeof(ConstantPool): its slots follow it */
	uint16_t blob_bytes;	  /* of a CodeBlob, what holds its fields read here */
	uint16_t nmethod_bytes;	  /* ... of an nmethod */
	int16_t kind_nmethod;	  /* CodeBlobKind::Nmethod; -1 without blob_kind */
	bool code_relative;
	uint16_t pcdesc_size;	    /* sizeof(PcDesc): the PcDescs' stride */
	uint16_t const_method_size; /* sizeof(ConstMethod): its bytecodes follow it */
	uint16_t has_line_table;    /* ConstMethod::_has_linenumber_table: its flag's bit */
	bool scopes;		    /* the debug info's fields are all found */
	bool scopes_immutable;	    /* ... as JDK 25 lays them out */
	bool lines;		    /* ... and the line number tables' */
	bool source_file;	    /* pool_source_file is found */
	/*
	 * Abstract_VM_Version's major and minor (major << 8 | minor), 0 when not
	 * listed: kept when the rest is not read, to say which JDK that was.
	 */
	uint16_t vm_version;
};

/* Whether the layout's fields are found. */
#define HOTSPOT_HAS(f) (((f).flags & HOTSPOT_F_FOUND) != 0)

/* bounds on what is read of a process */
#define HOTSPOT_ENTRIES_MAX 10000 /* entries of one table */
#define HOTSPOT_STRING_MAX  128	  /* bytes of a string, its NUL included */

/*
 * The symbols of libjvm.so (its .dynsym, read through fd) into *out: 0, or
 * -1 when it is not an ELF file or lacks one.
 */
int hotspot_elf_symbols(int fd, struct hotspot_symbols *out);

/*
 * HotSpot's tables in process pid, where libjvm.so is loaded bias bytes
 * above its link-time addresses, into *out: 0, or -1 when a table is
 * unreadable, malformed or lacks an entry the code cache reader needs
 * (out->vm_version is then still set if the struct table says it).
 */
int hotspot_layout_read(uint32_t pid, const struct hotspot_symbols *syms, uint64_t bias,
			struct hotspot_layout *out);

/*
 * The integer field f of the object whose first bytes are obj[0, have):
 * *out sign- or zero-extended as its type says; 0, or -1 when the field is
 * not found or not all in obj.
 */
int hotspot_get(const uint8_t *obj, size_t have, struct hotspot_field f, int64_t *out);

/*
 * Strings of a process read a page at a time: the names HotSpot points at
 * are string literals of libjvm.so, a few pages read once.
 */
struct hotspot_strings {
	uint32_t pid;
	uint32_t reads; /* pages read */
	uint64_t page[2];
	uint8_t ok[2];
	uint8_t next;
	uint8_t buf[2][4096];
};

void hotspot_strings_init(struct hotspot_strings *s, uint32_t pid);

/*
 * The C string at addr into out (room bytes, at most HOTSPOT_STRING_MAX
 * used): 0, or -1 when unreadable or longer.
 */
int hotspot_cstr(struct hotspot_strings *s, uint64_t addr, char *out, size_t room);

#endif
