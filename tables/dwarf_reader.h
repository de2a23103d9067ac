/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bounds-checked readers for DWARF data.  Every reader takes the cursor and
 * the end of the enclosing entry, so a bad length can never walk past it.
 * They return false (and leave the cursor unspecified) on truncation.
 */
#ifndef CFI_DWARF_READER_H
#define CFI_DWARF_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool rd_u8(const uint8_t **p, const uint8_t *end, uint8_t *v)
{
	if (*p >= end)
		return false;
	*v = *(*p)++;
	return true;
}

static inline bool rd_fixed(const uint8_t **p, const uint8_t *end, unsigned int size, uint64_t *v)
{
	uint64_t x = 0;

	if ((uint64_t)(end - *p) < size)
		return false;
	/* x86-64 only: little endian */
	memcpy(&x, *p, size);
	*p += size;
	*v = x;
	return true;
}

static inline bool rd_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		else if (b & 0x7f)
			return false; /* does not fit in 64 bits */
		shift += 7;
	} while (b & 0x80);
	*v = x;
	return true;
}

static inline bool rd_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t x = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		x |= ~0ull << shift;
	*v = (int64_t)x;
	return true;
}

/* Skips a NUL-terminated string; false if it runs past end. */
static inline bool rd_str(const uint8_t **p, const uint8_t *end, const char **s)
{
	const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));

	if (!nul)
		return false;
	*s = (const char *)*p;
	*p = nul + 1;
	return true;
}

#endif
