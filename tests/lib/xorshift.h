/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Random numbers for model tests: a fixed seed keeps failures reproducible. */
#ifndef CFIPROF_TESTS_XORSHIFT_H
#define CFIPROF_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64* */
static inline uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#endif
