/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot's code cache read from a live JVM with its own layout
 * (hotspot_vmstructs.h): its code heaps, the code blob holding a pc, the
 * Java method an nmethod compiles, and every blob of every heap, for the
 * unwind rows of JIT code and the names of its frames.
 *
 * A code heap (memory/heap.hpp) is a reserved range whose committed part
 * [low, high) is cut into segments of 2^log2 bytes; blocks are whole
 * segments, each starting with a HeapBlock header (its length in segments,
 * whether it is used) that a CodeBlob follows.  The segment map, a byte per
 * segment, finds a block from any pc in it as CodeHeap::find_start does:
 * 0xFF is a segment no block holds, 0 a block's first segment, any other
 * value how many segments to go back to get nearer it.
 *
 * The JVM changes all this while it is read (compiling, freeing, growing a
 * heap): every pointer is an address to try, every blob is checked against
 * its block, every walk is bounded; a blob read may be one freed since,
 * which its nmethod's compile id tells apart from the one that replaced it.
 */
#ifndef CFIPROF_HOTSPOT_CODECACHE_H
#define CFIPROF_HOTSPOT_CODECACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/hotspot/hotspot_vmstructs.h"

#define HOTSPOT_HEAPS_MAX 8 /* JDK 9 on: 3 with segmentation, else 1 */

struct hotspot_heap {
	uint64_t addr;		/* the CodeHeap */
	uint64_t low_boundary;	/* its _memory's: reserved from there (what jcmd prints) */
	uint64_t low;		/* ... _low: segment 0 (the same, for a code heap) */
	uint64_t high;		/* ... _high: committed up to there */
	uint64_t high_boundary; /* ... _high_boundary: reserved up to there */
	uint64_t segmap;	/* its segment map's _low: a byte per segment */
	uint8_t log2_segment;	/* log2 of a segment's bytes */
};

struct hotspot_heaps {
	uint32_t n;
	struct hotspot_heap heap[HOTSPOT_HEAPS_MAX];
};

/*
 * The code heaps of process pid (CodeCache::_heaps): 0, or -1 when
 * unreadable or implausible.  Heaps grow: read them again when a pc a
 * heap's reserved range holds lies above its committed part.
 */
int hotspot_heaps_read(uint32_t pid, const struct hotspot_layout *l, struct hotspot_heaps *out);

#define HOTSPOT_BLOB_NAME_MAX 64

/* One CodeBlob as read. */
struct hotspot_blob {
	uint64_t addr;	     /* the CodeBlob (its block's header before it) */
	uint64_t code_begin; /* its instructions: [code_begin, code_end) */
	uint64_t code_end;
	int32_t size;		/* bytes of the blob from addr */
	int32_t frame_size;	/* words, return address included; -1: not known (C1's
				   stubs that set up no frame, Runtime1's no_frame_size) */
	int32_t frame_complete; /* from code_begin: where its frame is set up, -1: never */
	bool is_nmethod;	/* compiled Java code (also native wrappers) */
	bool is_interpreter;	/* the template interpreter's */
	char name[HOTSPOT_BLOB_NAME_MAX]; /* CodeBlob::_name: "nmethod", "Interpreter"... */
	uint64_t name_addr; /* where _name points: one string per kind, a libjvm literal */
	/* nmethods only; 0 otherwise */
	uint64_t method;    /* its Method* */
	int32_t compile_id; /* unique in the JVM's life: tells a blob reused */
	int32_t entry_bci;  /* -1 (InvocationEntryBci) but for on-stack replacement */
	int8_t state;	    /* nmethod::_state (JDK 17: 0 in use, 2 not entrant...) */
	int8_t comp_level;  /* tier: 1-3 C1, 4 C2 */
	/*
	 * an on-stack replacement nmethod's OSR entry, from code_begin (0: none):
	 * the interpreter jumps there as if calling it, and it sets its frame
	 * up again
	 */
	int32_t osr_entry;
};

/*
 * The blob of process pid holding pc, found through its heap's segment
 * map: 0, or -1 when no used block of heaps holds it, or what holds it is
 * no plausible blob (freed, changed while read, garbage).
 */
int hotspot_blob_at(uint32_t pid, const struct hotspot_layout *l, const struct hotspot_heaps *h,
		    uint64_t pc, struct hotspot_blob *out);

/* The pointer field f of the object at addr of process pid: 0 when unreadable. */
uint64_t hotspot_ptr_read(uint32_t pid, uint64_t addr, struct hotspot_field f);
/* The integer field f of the object at addr into *v: 0, or -1 when unreadable. */
int hotspot_int_read(uint32_t pid, uint64_t addr, struct hotspot_field f, int64_t *v);

/* A Java method's name: "pkg.Class.method", its descriptor apart. */
struct hotspot_method_name {
	/* class, '.', method: '/' turned '.', a hidden class's "+0x..." suffix "/0x..." */
	char name[2 * HOTSPOT_STRING_MAX];
	char signature[HOTSPOT_STRING_MAX]; /* "(I)I" */
	char file[HOTSPOT_STRING_MAX];	    /* its class's source file ("Busy.java"), "" unknown */
	bool cut;			    /* a symbol longer than the bound was cut */
	/*
	 * another method of its class has its name (an overload): the signature
	 * tells them apart; false when the class's methods cannot be read
	 */
	bool overloaded;
};

/* The Klass* holding the ConstMethod at cm (its ConstantPool's holder): 0 when unreadable. */
uint64_t hotspot_const_method_holder(uint32_t pid, const struct hotspot_layout *l, uint64_t cm);

/* The name of the Method at method of process pid: 0, or -1 when unreadable. */
int hotspot_method_name(uint32_t pid, const struct hotspot_layout *l, uint64_t method,
			struct hotspot_method_name *out);

/*
 * The digest of the Method at method as it is now (bpf/hotspot_abi.h's
 * hotspot_method_digest, read as the kernel reads it): 0 when unreadable.
 */
uint16_t hotspot_method_digest_now(uint32_t pid, const struct hotspot_layout *l, uint64_t method);

/*
 * The compressed line number table of the Method at method (what follows
 * its ConstMethod's bytecodes, within the ConstMethod) into table[0,
 * room): its bytes there (*len, the table cut at room) and the method's
 * bytecode size; 0, or -1 when it has none (l->lines false, native,
 * compiled without -g:lines) or is unreadable.
 */
int hotspot_method_lines(uint32_t pid, const struct hotspot_layout *l, uint64_t method,
			 uint8_t *table, uint32_t room, uint32_t *len, int32_t *code_size);

/* What a walk of every blob may spend; 0 in a field: its default. */
struct hotspot_walk_budget {
	uint32_t blocks; /* blocks visited, default (and at most) 1,000,000 */
	uint32_t reads;	 /* reads of the process, default 2,000,000 */
	uint64_t ns;	 /* monotonic time, default 2 s */
};

struct hotspot_walk_stats {
	uint32_t blocks;     /* visited, used or free */
	uint32_t blobs;	     /* given to the callback */
	uint32_t free;	     /* free blocks */
	uint32_t bad;	     /* used blocks whose blob was not plausible (changing) */
	uint32_t reads;	     /* of the process */
	uint32_t torn;	     /* heaps whose walk met a segment map not as a block starts */
	bool cut;	     /* the budget ran out: not every heap was walked to its end */
	uint64_t free_block; /* a free block's address seen (the last), 0 when none */
};

/* Called for each blob; returning non-zero ends the walk. */
typedef int (*hotspot_blob_fn)(const struct hotspot_blob *blob, void *arg);

/*
 * Every used block of every heap in address order, each block's blob read
 * (nmethods' too, their Method* not followed) and given to fn, within the
 * budget (may be NULL).  0 when each heap was walked to its end (or fn
 * ended it), 1 when cut by the budget, -1 when a heap's memory could not be
 * read; *stats (may be NULL) says what was seen.
 */
int hotspot_blobs_walk(uint32_t pid, const struct hotspot_layout *l, const struct hotspot_heaps *h,
		       const struct hotspot_walk_budget *budget, hotspot_blob_fn fn, void *arg,
		       struct hotspot_walk_stats *stats);

#endif
