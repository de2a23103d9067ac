/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protobuf wire format, written by hand for the two protobuf outputs
 * (pprof's profile.proto, OpenTelemetry's profiles.proto): both need only
 * varints, fixed64 and length-delimited fields, which is not worth a
 * protobuf runtime as a build dependency.  A length prefix precedes its
 * body, so a nested message is encoded into a scratch buffer first and
 * appended whole (pb_msg).
 */
#ifndef CFIPROF_OUTPUT_PROTOBUF_H
#define CFIPROF_OUTPUT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PB_WIRE_VARINT = 0, PB_WIRE_I64 = 1, PB_WIRE_LEN = 2 };

struct pbuf {
	uint8_t *data;
	size_t len, cap;
	bool oom; /* sticky, so encoders check once at the end rather than per field */
};

void pb_put(struct pbuf *b, const void *src, size_t n);
void pb_varint(struct pbuf *b, uint64_t v);
void pb_key(struct pbuf *b, int field, int wire);
/* A varint field; left out when 0, as proto3 decoders expect of a default. */
void pb_uint(struct pbuf *b, int field, uint64_t v);
/* A fixed64 field (timestamps); left out when 0. */
void pb_fixed64(struct pbuf *b, int field, uint64_t v);
/* A length-delimited field: bytes, a string, or an encoded message. */
void pb_bytes(struct pbuf *b, int field, const void *data, size_t n);
/*
 * A string field from a NUL-terminated string (NULL: ""): proto3 decoders
 * refuse a message whose string is not UTF-8, and names come from any
 * process's files, so each invalid byte is written as U+FFFD.
 */
void pb_str(struct pbuf *b, int field, const char *s);
/*
 * Appends sub as a length-delimited field of b (a nested message or a packed
 * repeated field) and empties sub for the next one.
 */
void pb_msg(struct pbuf *b, int field, struct pbuf *sub);
void pb_free(struct pbuf *b);

/*
 * Reading: a message is a span of bytes; each field read moves past it.  Any
 * malformed input (a varint past 10 bytes, a length past the end, a wire
 * type protobuf does not have) sets bad, after which every read gives 0.
 */
struct pb_reader {
	const uint8_t *p, *end;
	bool bad;
};

/* The next field's number and wire type; false at the end or once bad. */
bool pb_next(struct pb_reader *r, int *field, int *wire);
uint64_t pb_read_varint(struct pb_reader *r);
uint64_t pb_read_fixed64(struct pb_reader *r);
/* A length-delimited field's body as a reader of its own. */
struct pb_reader pb_read_len(struct pb_reader *r);
/* Moves past a field of wire type wire that is not read. */
void pb_skip(struct pb_reader *r, int wire);
/*
 * A repeated integer field, packed (PB_WIRE_LEN) or not: calls fn for each
 * value.  Decoders must take both spellings.
 */
void pb_read_ints(struct pb_reader *r, int wire, void (*fn)(void *ctx, uint64_t v), void *ctx);

/*
 * A string table: index 0 is "", each string appears once.  Strings are
 * borrowed (the profile outlives the write).
 */
struct strtab {
	const char **strs;
	size_t nr, cap;
	uint32_t *slots; /* open addressing; index + 1 into strs, 0 = free */
	size_t nr_slots; /* a power of two, kept at least twice nr */
	bool oom;	 /* sticky, as struct pbuf's */
};

/* The index of s (NULL: ""), added if new; 0 once out of memory (oom set). */
uint64_t str_index(struct strtab *t, const char *s);
void strtab_free(struct strtab *t);

#endif
