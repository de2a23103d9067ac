// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * LPM keys of address ranges: they tile a range with aligned blocks, minimally,
 * and a byte-wise LPM model and the kernel's own LPM trie find each address in
 * the right range (another pid never matches).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/xorshift.h"
#include "user/track/mapping_keys.h"

struct block {
	unsigned __int128 base, size;
};

static int by_base(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

/*
 * Decodes the keys and checks they tile [start, end) with aligned blocks and
 * that no two neighbours could merge into one aligned block (minimality).
 * Returns NULL when fine, else what is wrong.
 */
static const char *check_tiling(uint32_t pid, uint64_t start, uint64_t end, int *nr)
{
	struct cfi_mapping_key keys[MAPPING_KEYS_MAX + 1];
	struct block b[MAPPING_KEYS_MAX + 1];
	unsigned __int128 pos = start;
	int n, i;

	memset(keys, 0xa5, sizeof(keys));
	n = mapping_keys_for_range(pid, start, end, keys);
	*nr = n;
	if (n < 0 || n > MAPPING_KEYS_MAX)
		return "count out of bounds";
	if (start >= end)
		return n == 0 ? NULL : "keys for an empty range";
	if (n == 0)
		return "no keys";
	for (i = 0; i < n; i++) {
		unsigned int bits;

		if (keys[i].pid != pid)
			return "pid not carried";
		if (keys[i].prefixlen < 32 || keys[i].prefixlen > 96)
			return "prefixlen outside [32, 96]";
		bits = 96 - keys[i].prefixlen;
		b[i].base = __builtin_bswap64(keys[i].addr_be);
		b[i].size = (unsigned __int128)1 << bits;
		if (b[i].base & (b[i].size - 1))
			return "block not aligned to its size";
	}
	qsort(b, (size_t)n, sizeof(b[0]), by_base);
	for (i = 0; i < n; i++) {
		if (b[i].base != pos)
			return b[i].base < pos ? "blocks overlap" : "gap between blocks";
		if (i > 0 && b[i].size == b[i - 1].size && !(b[i - 1].base & (2 * b[i].size - 1)))
			return "two blocks could merge: not minimal";
		pos += b[i].size;
	}
	return pos == end ? NULL : "blocks do not end at end";
}

/* Byte-wise longest-prefix match, as the kernel's LPM trie compares keys. */
static const struct cfi_mapping_key *lpm_lookup(const struct cfi_mapping_key *keys, int n, uint32_t pid,
					    uint64_t addr)
{
	struct cfi_mapping_key q = {.prefixlen = 96, .pid = pid, .addr_be = __builtin_bswap64(addr)};
	const unsigned char *qd = (const unsigned char *)&q.pid;
	const struct cfi_mapping_key *best = NULL;
	int i;

	for (i = 0; i < n; i++) {
		const unsigned char *kd = (const unsigned char *)&keys[i].pid;
		uint32_t full = keys[i].prefixlen / 8, rem = keys[i].prefixlen % 8;

		if (memcmp(kd, qd, full))
			continue;
		if (rem && ((kd[full] ^ qd[full]) & (0xff00 >> rem) & 0xff))
			continue;
		if (!best || keys[i].prefixlen > best->prefixlen)
			best = &keys[i];
	}
	return best;
}

static void test_mapping_keys(void)
{
	static const uint64_t special[][2] = {
	    {0, 1},
	    {0, 4096},
	    {0, 1ull << 47},
	    {0, UINT64_MAX},
	    {1, UINT64_MAX},
	    {1, 2},
	    {4095, 4097},
	    {(1ull << 47) - 4096, 1ull << 47},
	    {0x7ffff7fc1000ull, 0x7ffff7fc3000ull},
	    {(1ull << 47) - 1, (1ull << 47) + 1},
	    {(1ull << 47) + 12345, (1ull << 48) - 777},
	    {1ull << 63, UINT64_MAX},
	    {(1ull << 63) - 1, UINT64_MAX},
	    {UINT64_MAX - 1, UINT64_MAX},
	    {UINT64_MAX - 4096, UINT64_MAX},
	    {0xffffffffff600000ull, 0xffffffffff601000ull},
	    {5, 5},
	    {7, 3},
	};
	const char *why, *first_why = NULL;
	uint64_t bad_s = 0, bad_e = 0;
	int i, n, maxn = 0, bad = 0, lpm_bad = 0;

	for (i = 0; i < (int)(sizeof(special) / sizeof(special[0])); i++) {
		why = check_tiling(1234, special[i][0], special[i][1], &n);
		CHECK(!why, "range [%" PRIx64 ", %" PRIx64 "): %s (%d keys)", special[i][0],
		      special[i][1], why, n);
	}
	/* the worst case needs 2 * 63 blocks */
	check_tiling(7, 1, UINT64_MAX, &n);
	CHECK(n == 126, "[1, 2^64-1) needs 126 blocks, got %d", n);

	for (i = 0; i < 20000; i++) {
		unsigned int sbits = (unsigned int)rnd_below(65),
			     lbits = (unsigned int)rnd_below(65);
		uint64_t s = sbits == 64 ? rnd() : rnd() & ((1ull << sbits) - 1);
		uint64_t len = lbits == 64 ? rnd() : rnd() & ((1ull << lbits) - 1);
		uint64_t e;

		switch (i % 4) {
		case 0: /* page aligned, like real mappings */
			s &= ~0xfffull;
			len = (len | 0xfff) + 1;
			break;
		case 1: /* user space, below 2^47 */
			s &= (1ull << 47) - 1;
			break;
		case 2: /* near the top of the address space */
			s = UINT64_MAX - (len & 0xffffff) - 1;
			break;
		default:
			break;
		}
		if (!len)
			len = 1;
		e = s + len < s || s + len == 0 ? UINT64_MAX : s + len;
		if (e <= s)
			continue;
		why = check_tiling((uint32_t)rnd(), s, e, &n);
		if (n > maxn)
			maxn = n;
		if (why && !bad++) {
			first_why = why;
			bad_s = s;
			bad_e = e;
		}
	}
	CHECK(!bad, "%d random ranges badly tiled, first [%" PRIx64 ", %" PRIx64 "): %s", bad,
	      bad_s, bad_e, first_why);
	CHECK(maxn <= MAPPING_KEYS_MAX, "max keys %d", maxn);

	/* brute force: exactly the addresses of the range match a key of the pid */
	for (i = 0; i < 3000; i++) {
		struct cfi_mapping_key keys[MAPPING_KEYS_MAX];
		uint64_t base = i % 3 == 0 ? 0 : i % 3 == 1 ? (1ull << 47) - 256 : UINT64_MAX - 600;
		uint64_t s = base + rnd_below(300), e = s + 1 + rnd_below(300);
		uint64_t probes[4] = {s, e};
		int p;
		int64_t d;

		if (e < s)
			e = UINT64_MAX;
		n = mapping_keys_for_range(77, s, e, keys);
		for (p = 0; p < 2; p++) {
			for (d = -70; d <= 70; d++) {
				uint64_t a = probes[p] + (uint64_t)d;
				bool in = a >= s && a < e;
				bool wrapped = (d < 0 && a > probes[p]) || (d > 0 && a < probes[p]);

				if (wrapped)
					continue;
				if (!!lpm_lookup(keys, n, 77, a) != in && !lpm_bad++)
					fprintf(stderr,
						"lpm: [%" PRIx64 ", %" PRIx64 ") at %" PRIx64
						": expected %d\n",
						s, e, a, in);
				/* another pid never matches */
				if (lpm_lookup(keys, n, 78, a) && !lpm_bad++)
					fprintf(stderr, "lpm: pid 78 matched pid 77's key\n");
			}
		}
	}
	CHECK(!lpm_bad, "%d LPM mismatches", lpm_bad);
}

/* The same keys in the kernel's own LPM trie: the model above must agree with it. */
static void test_mapping_keys_kernel_lpm(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	struct cfi_mapping_key keys[MAPPING_KEYS_MAX];
	uint32_t pid;
	int fd, bad = 0, k, n;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_lpm", sizeof(struct cfi_mapping_key),
			    sizeof(struct cfi_mapping_val), 8192, &o);
	if (fd < 0) {
		CHECK(0, "LPM trie create: %s", strerror(errno));
		return;
	}
	/* one range per pid, so the ranges cannot overlap */
	for (pid = 1; pid <= 40; pid++) {
		uint64_t s = rnd() & ((1ull << 47) - 1);
		uint64_t e = s + 1 + rnd_below(pid < 20 ? 5000 : 1ull << 30);
		struct cfi_mapping_val val = {.obj_id = pid, .flags = 0, .bias = s};
		int64_t d;

		if (pid == 40) {
			s = UINT64_MAX - 5000;
			e = UINT64_MAX;
		}
		n = mapping_keys_for_range(pid, s, e, keys);
		for (k = 0; k < n; k++) {
			if (bpf_map_update_elem(fd, &keys[k], &val, BPF_ANY) && !bad++)
				fprintf(stderr, "lpm update: %s\n", strerror(errno));
		}
		for (d = -3; d <= 3; d++) {
			uint64_t probes[3] = {s + (uint64_t)d, e + (uint64_t)d, s + (e - s) / 2};
			int p;

			for (p = 0; p < 3; p++) {
				struct cfi_mapping_key q = {.prefixlen = 96,
							.pid = pid,
							.addr_be = __builtin_bswap64(probes[p])};
				struct cfi_mapping_val got;
				bool in = probes[p] >= s && probes[p] < e;
				bool hit = !bpf_map_lookup_elem(fd, &q, &got) && got.obj_id == pid;

				if (hit != in && !bad++)
					fprintf(stderr,
						"kernel lpm: pid %u [%" PRIx64 ", %" PRIx64
						") at %" PRIx64 ": hit %d\n",
						pid, s, e, probes[p], hit);
			}
		}
	}
	CHECK(!bad, "%d kernel LPM mismatches", bad);
	close(fd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_mapping_keys);
	RUN_TEST(test_mapping_keys_kernel_lpm);
	return HARNESS_DONE();
}
