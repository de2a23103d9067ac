// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An nmethod's debug info decoded from its bytes; see hotspot_debuginfo.h. */
#include "user/runtimes/hotspot/hotspot_debuginfo.h"

/* CompressedStream's UNSIGNED5: 64 high codes, the low ones below them, 5 bytes at most */
#define U5_LG_H	 6
#define U5_HIGH	 192
#define U5_BYTES 5

uint32_t hotspot_read_u5(struct hotspot_stream *s)
{
	uint32_t sum = 0;

	for (int i = 0; i < U5_BYTES; i++) {
		uint32_t b;

		if (s->bad || s->pos >= s->len) {
			s->bad = true;
			return 0;
		}
		b = s->buf[s->pos++];
		if (b < s->excluded) {
			s->bad = true;
			return 0;
		}
		/* the fifth byte ends the number whatever it is (read_int_mb's MAX_i) */
		sum += (b - s->excluded) << (U5_LG_H * i);
		if (b < U5_HIGH)
			break;
	}
	return sum;
}

int32_t hotspot_read_signed(struct hotspot_stream *s)
{
	uint32_t v = hotspot_read_u5(s);

	return (int32_t)((v >> 1) ^ (0u - (v & 1)));
}

int hotspot_scope_at(const uint8_t *data, uint32_t len, uint32_t offset, uint8_t excluded,
		     struct hotspot_scope *out)
{
	struct hotspot_stream s = {.buf = data, .len = len, .pos = offset, .excluded = excluded};

	if (!offset || offset >= len)
		return -1;
	out->sender = hotspot_read_u5(&s);
	out->method = hotspot_read_u5(&s);
	/* DebugInfoReadStream::read_bci: read_int() + InvocationEntryBci */
	out->bci = (int32_t)(hotspot_read_u5(&s) - 1);
	return s.bad ? -1 : 0;
}

int64_t hotspot_pcdesc_find(const struct hotspot_pcdesc *pcs, uint32_t n, uint32_t off)
{
	uint32_t lo = 0, hi = n;

	/* the first whose pc offset is >= off: [lo, hi) holds it */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pcs[mid].pc_offset < 0 || (uint32_t)pcs[mid].pc_offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? (int64_t)lo : -1;
}

int32_t hotspot_line_of(const uint8_t *table, uint32_t len, int32_t bci, int32_t code_size,
			uint8_t excluded)
{
	struct hotspot_stream s = {.buf = table, .len = len, .excluded = excluded};
	int32_t at = 0, line = 0, best_bci = 0, best_line = -1;

	/* SynchronizationEntryBCI (-1): the method's entry */
	if (bci == -1)
		bci = 0;
	if (bci < 0 || bci >= code_size)
		return -1;
	for (uint32_t pairs = 0; pairs < len; pairs++) {
		uint8_t b;

		if (s.pos >= s.len)
			return -1;
		b = table[s.pos++];
		if (!b)
			return best_line;
		if (b == 0xff) {
			/* wrapping as HotSpot's jint does, not overflowing */
			at = (int32_t)((uint32_t)at + (uint32_t)hotspot_read_signed(&s));
			line = (int32_t)((uint32_t)line + (uint32_t)hotspot_read_signed(&s));
			if (s.bad)
				return -1;
		} else {
			at = (int32_t)((uint32_t)at + (b >> 3));
			line = (int32_t)((uint32_t)line + (b & 7));
		}
		if (at == bci)
			return line;
		if (at < bci && at >= best_bci) {
			best_bci = at;
			best_line = line;
		}
	}
	return -1;
}
