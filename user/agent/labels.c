// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Adding labels to a finished pprof; see agent_labels.h.
 *
 * Protobuf lets this be done without decoding the profile: a top-level
 * Sample field is copied with one more Label field appended to its body
 * (fields of a message may come in any order), and the new strings are
 * appended to the repeated string_table, whose next index is the number of
 * entries already there.  Only the top level is walked, so the cost is one
 * inflate and one deflate of a profile of a few hundred kilobytes at most.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "user/agent/labels.h"

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };
enum { PROFILE_SAMPLE = 2, PROFILE_STRING_TABLE = 6, PROFILE_COMMENT = 13 };
enum { SAMPLE_LABEL = 3, LABEL_KEY = 1, LABEL_STR = 2 };

#define MAX_LABELS 32

struct buf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->oom || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *np;

		while (cap - b->len < n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	put(b, t, n);
}

static int get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*pos < len && shift < 64) {
		uint8_t c = p[(*pos)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* gzip (or zlib) -> raw bytes */
static int inflate_all(const void *in, size_t len, struct buf *out)
{
	z_stream zs = {0};
	uint8_t chunk[65536];
	int ret;

	/* 15 + 32: detect gzip or zlib headers */
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return -1;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = inflate(&zs, Z_NO_FLUSH);
		if (ret != Z_OK && ret != Z_STREAM_END) {
			inflateEnd(&zs);
			return -1;
		}
		put(out, chunk, sizeof(chunk) - zs.avail_out);
	} while (ret != Z_STREAM_END && !out->oom);
	inflateEnd(&zs);
	return out->oom ? -1 : 0;
}

static int deflate_all(const struct buf *in, struct buf *out)
{
	z_stream zs = {0};
	uint8_t chunk[65536];
	int ret;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	zs.next_in = in->p;
	zs.avail_in = (uInt)in->len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			deflateEnd(&zs);
			return -1;
		}
		put(out, chunk, sizeof(chunk) - zs.avail_out);
	} while (ret != Z_STREAM_END && !out->oom);
	deflateEnd(&zs);
	return out->oom ? -1 : 0;
}

/* Number of string_table entries: the index the first appended string gets. */
static int count_strings(const struct buf *pb, uint64_t *nr)
{
	size_t pos = 0;
	uint64_t key, v;

	*nr = 0;
	while (pos < pb->len) {
		if (get_varint(pb->p, pb->len, &pos, &key))
			return -1;
		switch (key & 7) {
		case WIRE_VARINT:
			if (get_varint(pb->p, pb->len, &pos, &v))
				return -1;
			break;
		case WIRE_I64:
			pos += 8;
			break;
		case WIRE_I32:
			pos += 4;
			break;
		case WIRE_LEN:
			if (get_varint(pb->p, pb->len, &pos, &v) || v > pb->len - pos)
				return -1;
			pos += v;
			if ((key >> 3) == PROFILE_STRING_TABLE)
				(*nr)++;
			break;
		default:
			return -1;
		}
		if (pos > pb->len)
			return -1;
	}
	return 0;
}

int agent_pprof_add_labels(const void *in, size_t in_len, const struct agent_label *labels,
			   int nr_labels, void **out, size_t *out_len)
{
	struct buf raw = {0}, pb = {0}, lab = {0}, gz = {0};
	uint64_t nr_strings, key, v, first_new;
	size_t pos = 0, start, body;
	char comment[512];
	int i, ret = -1;

	*out = NULL;
	*out_len = 0;
	if (nr_labels > MAX_LABELS)
		nr_labels = MAX_LABELS;
	if (inflate_all(in, in_len, &raw) || count_strings(&raw, &nr_strings) || !nr_strings)
		goto out;
	/* the new strings, in this order: key0, value0, "key0=value0", key1, ... */
	first_new = nr_strings;
	for (i = 0; i < nr_labels; i++) {
		struct buf one = {0};

		put_varint(&one, LABEL_KEY << 3 | WIRE_VARINT);
		put_varint(&one, first_new + 3 * (uint64_t)i);
		put_varint(&one, LABEL_STR << 3 | WIRE_VARINT);
		put_varint(&one, first_new + 3 * (uint64_t)i + 1);
		put_varint(&lab, SAMPLE_LABEL << 3 | WIRE_LEN);
		put_varint(&lab, one.len);
		put(&lab, one.p, one.len);
		lab.oom |= one.oom;
		free(one.p);
	}
	while (pos < raw.len) {
		start = pos;
		if (get_varint(raw.p, raw.len, &pos, &key))
			goto out;
		if ((key & 7) != WIRE_LEN) {
			/* a scalar field: copy it through as it is */
			if ((key & 7) == WIRE_VARINT) {
				if (get_varint(raw.p, raw.len, &pos, &v))
					goto out;
			} else {
				pos += (key & 7) == WIRE_I64 ? 8 : 4;
			}
			if (pos > raw.len)
				goto out;
			put(&pb, raw.p + start, pos - start);
			continue;
		}
		if (get_varint(raw.p, raw.len, &pos, &v) || v > raw.len - pos)
			goto out;
		body = pos;
		pos += v;
		if ((key >> 3) != PROFILE_SAMPLE) {
			put(&pb, raw.p + start, pos - start);
			continue;
		}
		put_varint(&pb, key);
		put_varint(&pb, v + lab.len);
		put(&pb, raw.p + body, v);
		put(&pb, lab.p, lab.len);
	}
	for (i = 0; i < nr_labels; i++) {
		const char *strs[3] = {labels[i].key, labels[i].value, comment};
		int k;

		snprintf(comment, sizeof(comment), "%s=%s", labels[i].key, labels[i].value);
		for (k = 0; k < 3; k++) {
			put_varint(&pb, PROFILE_STRING_TABLE << 3 | WIRE_LEN);
			put_varint(&pb, strlen(strs[k]));
			put(&pb, strs[k], strlen(strs[k]));
		}
		/* repeated scalars may come unpacked; readers merge them with the packed ones */
		put_varint(&pb, PROFILE_COMMENT << 3 | WIRE_VARINT);
		put_varint(&pb, first_new + 3 * (uint64_t)i + 2);
	}
	if (pb.oom || lab.oom || deflate_all(&pb, &gz))
		goto out;
	*out = gz.p;
	*out_len = gz.len;
	gz.p = NULL;
	ret = 0;
out:
	free(raw.p);
	free(pb.p);
	free(lab.p);
	free(gz.p);
	return ret;
}
