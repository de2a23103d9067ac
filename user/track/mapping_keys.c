// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An LPM trie matches prefixes, not ranges: a mapping [start, end) becomes the
 * minimal set of aligned power-of-two blocks that tile it exactly.
 */
#include "user/track/mapping_keys.h"

int mapping_keys_for_range(uint32_t pid, uint64_t start, uint64_t end,
			   struct cfi_mapping_key keys[MAPPING_KEYS_MAX])
{
	int n = 0;

	while (start < end && n < MAPPING_KEYS_MAX) {
		unsigned int bits = start ? (unsigned int)__builtin_ctzll(start) : 64;

		/* the largest aligned block at start that stays inside the range */
		while (bits > 0 && (bits >= 64 || end - start < (1ull << bits)))
			bits--;
		keys[n].prefixlen = 32 + 64 - bits;
		keys[n].pid = pid;
		keys[n].addr_be = __builtin_bswap64(start);
		n++;
		start += 1ull << bits;
	}
	return n;
}
