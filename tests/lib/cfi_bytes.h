/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Hand-made CIE / FDE byte strings for tests that feed the table compiler
 * crafted .eh_frame / .debug_frame sections (wrapped by tests/lib/mini_elf.h).
 * The .eh_frame builders assume the section sits at MINI_EH_ADDR.  Allocation
 * failure exits with status 2: a test input that cannot be built is no result.
 */
#ifndef CFIPROF_CFI_BYTES_H
#define CFIPROF_CFI_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/mini_elf.h"

struct bb {
	uint8_t *p;
	size_t n, cap;
};

static inline void put(struct bb *b, const void *d, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("realloc");
			exit(2);
		}
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static inline void put8(struct bb *b, uint8_t v)
{
	put(b, &v, 1);
}

static inline void put32(struct bb *b, uint32_t v)
{
	put(b, &v, 4);
}

static inline void put64(struct bb *b, uint64_t v)
{
	put(b, &v, 8);
}

static inline void uleb(struct bb *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		put8(b, c | (v ? 0x80 : 0));
	} while (v);
}

static inline void sleb(struct bb *b, int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			put8(b, c);
			return;
		}
		put8(b, c | 0x80);
	}
}

static inline void patch32(struct bb *b, size_t at, uint32_t v)
{
	memcpy(b->p + at, &v, 4);
}

/* Closes an entry opened at start: pads with DW_CFA_nop and sets its length. */
static inline void entry_end(struct bb *b, size_t start)
{
	while ((b->n - start) % 8)
		put8(b, 0);
	patch32(b, start, (uint32_t)(b->n - start - 4));
}

#define INSNS(...) ((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})

/* The usual GCC CIE: "zR", pcrel|sdata4, cfa = rsp+8, ra at cfa-8. */
static inline size_t eh_cie(struct bb *b, const char *aug, uint8_t enc, const uint8_t *ins,
			    size_t n)
{
	size_t start = b->n;

	put32(b, 0);
	put32(b, 0); /* CIE id in .eh_frame */
	put8(b, 1);
	put(b, aug, strlen(aug) + 1);
	uleb(b, 1);
	sleb(b, -8);
	uleb(b, 16);
	if (aug[0] == 'z') {
		uleb(b, 1);
		put8(b, enc);
	}
	put(b, (const uint8_t[]){0x0c, 0x07, 0x08, 0x90, 0x01}, 5);
	put(b, ins, n);
	entry_end(b, start);
	return start;
}

static inline size_t eh_fde(struct bb *b, size_t cie, uint64_t pc, uint32_t range,
			    const uint8_t *ins, size_t n)
{
	size_t start = b->n;

	put32(b, 0);
	put32(b, (uint32_t)(b->n - cie)); /* back to the CIE from this field */
	put32(b, (uint32_t)(pc - (MINI_EH_ADDR + b->n)));
	put32(b, range);
	uleb(b, 0);
	put(b, ins, n);
	entry_end(b, start);
	return start;
}

/* .debug_frame: CIE id ~0, absolute CIE offsets and addresses. */
static inline size_t dbg_cie(struct bb *b, uint8_t version, const uint8_t *ins, size_t n)
{
	size_t start = b->n;

	put32(b, 0);
	put32(b, 0xffffffffu);
	put8(b, version);
	put8(b, 0); /* augmentation "" */
	if (version >= 4) {
		put8(b, 8); /* address size */
		put8(b, 0); /* segment selector size */
	}
	uleb(b, 1);
	sleb(b, -8);
	if (version == 1)
		put8(b, 16);
	else
		uleb(b, 16);
	put(b, (const uint8_t[]){0x0c, 0x07, 0x08, 0x90, 0x01}, 5);
	put(b, ins, n);
	entry_end(b, start);
	return start;
}

static inline size_t dbg_fde(struct bb *b, size_t cie, uint64_t pc, uint64_t range,
			     const uint8_t *ins, size_t n)
{
	size_t start = b->n;

	put32(b, 0);
	put32(b, (uint32_t)cie);
	put64(b, pc);
	put64(b, range);
	put(b, ins, n);
	entry_end(b, start);
	return start;
}

#endif /* CFIPROF_CFI_BYTES_H */
