// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The source line of a Python instruction from its code object's table, in
 * each format CPython has used (python_lines.h).  The tables are the
 * process's (hostile): every read is bounded by the table's length.
 */
#include <stdbool.h>

#include "user/runtimes/python/python_lines.h"

/* 6-bit groups, least significant first, 0x40 set on all but the last (Objects/locations.md). */
static bool read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return false;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool read_svarint(const uint8_t *t, size_t len, size_t *i, int32_t *out)
{
	uint32_t u;

	if (!read_varint(t, len, i, &u))
		return false;
	*out = u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return true;
}

uint32_t python_linetable_line(const uint8_t *t, size_t len, int32_t firstlineno, uint32_t unit)
{
	int64_t line = firstlineno;
	uint32_t at = 0, skip;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		uint32_t code = first >> 3 & 15, units = (first & 7) + 1;
		int32_t delta = 0;
		bool none = false;

		if (!(first & 0x80))
			return 0; /* not the first byte of an entry: not a location table */
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line delta, columns */
			if (!read_svarint(t, len, &i, &delta) || !read_varint(t, len, &i, &skip) ||
			    !read_varint(t, len, &i, &skip) || !read_varint(t, len, &i, &skip))
				return 0;
			break;
		case 13: /* no columns */
			if (!read_svarint(t, len, &i, &delta))
				return 0;
			break;
		case 10:
		case 11:
		case 12: /* one line: delta code - 10, two column bytes */
			delta = (int32_t)code - 10;
			i += 2;
			break;
		default: /* short form: same line, one column byte */
			i += 1;
			break;
		}
		line += delta;
		if (unit < at + units)
			return none || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		at += units;
	}
	return 0;
}

/*
 * 3.10's co_linetable (Objects/lnotab_notes.txt): (bytes, line delta) pairs
 * from firstlineno, a delta of -128 a range without a line.
 */
static uint32_t linetable_310_line(const uint8_t *t, size_t len, int32_t firstlineno, uint32_t unit)
{
	int64_t line = firstlineno;
	uint64_t at = 0, target = (uint64_t)unit * 2;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)t[i + 1];

		if (delta != -128)
			line += delta;
		if (target < at + t[i])
			return delta == -128 || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		at += t[i];
	}
	return 0;
}

/*
 * 3.8's and 3.9's co_lnotab: (bytes, line delta) pairs, each delta the line
 * from that byte on (PyCode_Addr2Line).
 */
static uint32_t lnotab_line(const uint8_t *t, size_t len, int32_t firstlineno, uint32_t byte)
{
	int64_t line = firstlineno;
	uint64_t at = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		at += t[i];
		if (at > byte)
			break;
		line += (int8_t)t[i + 1];
	}
	return line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
}

uint32_t python_code_line(enum python_code_kind kind, const uint8_t *table, size_t len,
			  int32_t firstlineno, uint32_t unit)
{
	switch (kind) {
	case PY_CODE_LINETABLE_310:
		return linetable_310_line(table, len, firstlineno, unit);
	case PY_CODE_LNOTAB:
		return lnotab_line(table, len, firstlineno, unit * 2);
	default:
		return python_linetable_line(table, len, firstlineno, unit);
	}
}
