// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The protobuf wire format and string table of the protobuf outputs; see protobuf.h. */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "user/output/protobuf.h"
#include "user/output/utf8.h"

void pb_put(struct pbuf *b, const void *src, size_t n)
{
	if (b->oom || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *d;

		while (cap - b->len < n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->oom = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
}

void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	pb_put(b, tmp, n);
}

void pb_key(struct pbuf *b, int field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pbuf *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_WIRE_VARINT);
	pb_varint(b, v);
}

void pb_fixed64(struct pbuf *b, int field, uint64_t v)
{
	uint8_t le[8];

	if (!v)
		return;
	/* little-endian whatever the host's order */
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	pb_key(b, field, PB_WIRE_I64);
	pb_put(b, le, sizeof(le));
}

void pb_bytes(struct pbuf *b, int field, const void *data, size_t n)
{
	pb_key(b, field, PB_WIRE_LEN);
	pb_varint(b, n);
	pb_put(b, data, n);
}

void pb_str(struct pbuf *b, int field, const char *s)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t len = 0, bad = 0, n;
	uint32_t cp;

	for (size_t i = 0; u[i]; i += n, len += n) {
		n = utf8_next(u + i, &cp);
		/* utf8_next reads an invalid byte as one byte of U+FFFD; a real one is 3 */
		bad += cp == 0xfffd && n == 1;
	}
	pb_key(b, field, PB_WIRE_LEN);
	pb_varint(b, len + 2 * bad);
	if (!bad) {
		pb_put(b, u, len);
		return;
	}
	for (size_t i = 0; u[i]; i += n) {
		n = utf8_next(u + i, &cp);
		if (cp == 0xfffd && n == 1)
			pb_put(b, replacement, 3);
		else
			pb_put(b, u + i, n);
	}
}

void pb_msg(struct pbuf *b, int field, struct pbuf *sub)
{
	if (sub->oom)
		b->oom = true;
	else
		pb_bytes(b, field, sub->data, sub->len);
	sub->len = 0;
	sub->oom = false;
}

void pb_free(struct pbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

bool pb_next(struct pb_reader *r, int *field, int *wire)
{
	uint64_t key;

	if (r->bad || r->p >= r->end)
		return false;
	key = pb_read_varint(r);
	*field = (int)(key >> 3 & 0x1fffffff);
	*wire = (int)(key & 7);
	return !r->bad;
}

uint64_t pb_read_varint(struct pb_reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; !r->bad && shift < 70; shift += 7) {
		uint8_t b;

		if (r->p >= r->end)
			break;
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

uint64_t pb_read_fixed64(struct pb_reader *r)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->p < 8) {
		r->bad = true;
		return 0;
	}
	for (int i = 7; i >= 0; i--)
		v = v << 8 | r->p[i];
	r->p += 8;
	return v;
}

struct pb_reader pb_read_len(struct pb_reader *r)
{
	struct pb_reader sub = {.bad = true};
	uint64_t n = pb_read_varint(r);

	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return sub;
	}
	sub = (struct pb_reader){r->p, r->p + n, false};
	r->p += n;
	return sub;
}

void pb_skip(struct pb_reader *r, int wire)
{
	switch (wire) {
	case PB_WIRE_VARINT:
		pb_read_varint(r);
		break;
	case PB_WIRE_I64:
		pb_read_fixed64(r);
		break;
	case PB_WIRE_LEN:
		pb_read_len(r);
		break;
	case 5: /* I32 */
		if (r->end - r->p < 4)
			r->bad = true;
		else
			r->p += 4;
		break;
	default: /* groups (3, 4) are proto2's, long gone: refused */
		r->bad = true;
	}
}

void pb_read_ints(struct pb_reader *r, int wire, void (*fn)(void *ctx, uint64_t v), void *ctx)
{
	struct pb_reader packed;

	if (wire == PB_WIRE_VARINT) {
		uint64_t v = pb_read_varint(r);

		if (!r->bad)
			fn(ctx, v);
		return;
	}
	if (wire != PB_WIRE_LEN) {
		pb_skip(r, wire);
		return;
	}
	packed = pb_read_len(r);
	while (!packed.bad && packed.p < packed.end) {
		uint64_t v = pb_read_varint(&packed);

		if (!packed.bad)
			fn(ctx, v);
	}
	if (packed.bad)
		r->bad = true;
}

static uint32_t *strtab_slot(struct strtab *t, const char *s)
{
	size_t mask = t->nr_slots - 1, i;

	for (i = hash_str(s) & mask; t->slots[i]; i = (i + 1) & mask)
		if (!strcmp(t->strs[t->slots[i] - 1], s))
			break;
	return &t->slots[i];
}

static int strtab_grow(struct strtab *t)
{
	size_t nr_slots = t->nr_slots ? t->nr_slots * 2 : 1024, i;
	uint32_t *old = t->slots;
	const char **strs;

	strs = realloc(t->strs, nr_slots / 2 * sizeof(*strs));
	if (!strs)
		return -1;
	t->strs = strs;
	t->cap = nr_slots / 2;
	t->slots = calloc(nr_slots, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -1;
	}
	t->nr_slots = nr_slots;
	for (i = 0; i < t->nr; i++)
		*strtab_slot(t, t->strs[i]) = i + 1;
	free(old);
	return 0;
}

uint64_t str_index(struct strtab *t, const char *s)
{
	uint32_t *slot;

	if (!s)
		s = "";
	if (t->oom)
		return 0;
	/* both protos reserve index 0 for "" */
	if (!t->nr && *s) {
		str_index(t, "");
		if (t->oom)
			return 0;
	}
	if (t->nr >= t->cap && strtab_grow(t)) {
		t->oom = true;
		return 0;
	}
	slot = strtab_slot(t, s);
	if (!*slot) {
		t->strs[t->nr++] = s;
		*slot = t->nr;
	}
	return *slot - 1;
}

void strtab_free(struct strtab *t)
{
	free(t->strs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
