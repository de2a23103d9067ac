/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The formats of an nmethod's debug info (JDK 17's code/compressedStream,
 * debugInfo, scopeDesc, pcDesc and oops/method.cpp), decoded from bytes
 * already copied out of the JVM: no memory of the process is read here, so
 * every decoder is tested on bytes built from the format alone.  The bytes
 * are a hostile process's: every read is bounded by its buffer, every
 * count by the caller's limit, and a malformed stream says so.
 *
 *  - CompressedReadStream::read_int (UNSIGNED5, Pack200's): a byte below
 *    192 ends a number; each byte is worth 64 times the one before, five
 *    bytes at most.  From JDK 20 on (utilities/unsigned5.hpp) the zero byte
 *    is excluded, so that a stream can end at a 0: each byte is worth one
 *    less (X = 1, 191 low codes).  read_signed_int zigzag-decodes one.
 *  - A scope (ScopeDesc::decode_body) at its decode offset in the scopes
 *    data: the sender's decode offset, the method (an index into the
 *    nmethod's metadata, 1-based, 0 for none), the bci + 1 (read_bci adds
 *    InvocationEntryBci, -1), then the locals', expressions' and monitors'
 *    offsets (not read here).  Offset 0 (serialized_null) is no scope: a
 *    PcDesc with it has the nmethod's own method at no bci.
 *  - A PcDesc per safepoint, call return and handler, in increasing pc
 *    offset (from the nmethod's code begin), between two sentinels
 *    (pc offset -1 first, INT_MAX last).
 *  - The compressed line number table after a method's bytecodes
 *    (CompressedLineNumberReadStream): a byte b, 0 ending the table, 0xff
 *    followed by a signed bci delta and line delta, else bci += b >> 3 and
 *    line += b & 7.
 */
#ifndef CFIPROF_HOTSPOT_DEBUGINFO_H
#define CFIPROF_HOTSPOT_DEBUGINFO_H

#include <stdbool.h>
#include <stdint.h>

/* bounds on what is decoded of one nmethod */
#define HOTSPOT_SCOPE_DEPTH_MAX	 32	     /* scopes of one pc: 31 levels inlined into it */
#define HOTSPOT_PCDESCS_MAX	 8192	     /* PcDescs of an nmethod (C2's largest: ~2,000) */
#define HOTSPOT_SCOPES_BYTES_MAX (256 << 10) /* of its scopes data */
#define HOTSPOT_LINES_BYTES_MAX	 8192	     /* of a method's line number table read */

/*
 * A CompressedReadStream over buf[0, len) at pos, of a JDK whose UNSIGNED5
 * excludes the bytes below excluded (0 before JDK 20, 1 from it:
 * hotspot_u5_excluded); bad once a read ran past len or met an excluded byte.
 */
struct hotspot_stream {
	const uint8_t *buf;
	uint32_t len, pos;
	uint8_t excluded;
	bool bad;
};

/* The bytes UNSIGNED5 excludes in a JDK of vm_version (major << 8 | minor). */
static inline uint8_t hotspot_u5_excluded(uint16_t vm_version)
{
	return vm_version >= 20 << 8;
}

/* The next UNSIGNED5 number (0 and bad when the stream ends inside it). */
uint32_t hotspot_read_u5(struct hotspot_stream *s);
/* The next zigzag-coded signed number. */
int32_t hotspot_read_signed(struct hotspot_stream *s);

/* A scope's header. */
struct hotspot_scope {
	uint32_t sender; /* its caller's decode offset, 0 for the outermost */
	uint32_t method; /* its method's metadata index (1-based; 0: none) */
	int32_t bci;	 /* -1: none (the method's entry) */
};

/*
 * The scope at offset of data[0, len), of a JDK excluding the bytes below
 * excluded: 0, or -1 when offset is 0 or outside, or it is cut.
 */
int hotspot_scope_at(const uint8_t *data, uint32_t len, uint32_t offset, uint8_t excluded,
		     struct hotspot_scope *out);

/* What a pc is looked up by: a PcDesc's pc offset and its scope's decode offset. */
struct hotspot_pcdesc {
	int32_t pc_offset;
	uint32_t scope;
};

/*
 * The PcDesc for pc offset off among pcs[0, n) (sorted, sentinels left
 * out): the first at or after off, as HotSpot's own approximate lookup
 * (PcDescContainer::find_pc_desc_internal, pc_desc_near) finds it for
 * AsyncGetCallTrace.  A caller's pc is its return address, which is what
 * the PcDesc of its call is keyed by: found exactly.  A leaf's pc is
 * anywhere: the next PcDesc is that of the safepoint or call the code
 * runs to, in the same scope as the pc but for the rare instruction
 * scheduled across a scope's end.  Its index, or -1 when off is past them
 * all.
 */
int64_t hotspot_pcdesc_find(const struct hotspot_pcdesc *pcs, uint32_t n, uint32_t off);

/*
 * The line of bci in a compressed line number table table[0, len) of a
 * method of code_size bytes of bytecode, as Method::line_number_from_bci:
 * the exact bci's, else the line of the greatest bci below it; -1 when
 * none (or the table is cut before its end).  excluded: the JDK's
 * UNSIGNED5 (struct hotspot_stream).
 */
int32_t hotspot_line_of(const uint8_t *table, uint32_t len, int32_t bci, int32_t code_size,
			uint8_t excluded);

#endif
