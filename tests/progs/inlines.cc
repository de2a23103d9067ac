// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Known inline chains, for source lines and inline frames (test_src_lines,
 * test_cli_outputs:inline_frames): built -O2 -g, leaf_mix is inlined into
 * middle_sum, which is inlined into outer_work, which is not inlined into
 * main.  C++ so that the inlined levels have mangled linkage names.
 */
#include <cstdio>
#include <cstdlib>

static volatile unsigned long sink;

namespace inl {
static inline __attribute__((always_inline)) unsigned long leaf_mix(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 7);
}

static inline __attribute__((always_inline)) unsigned long middle_sum(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += leaf_mix(i + s);
	return s;
}

__attribute__((noinline)) unsigned long outer_work(unsigned long n)
{
	return middle_sum(n) + 1;
}
} // namespace inl

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 0) : 100000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;

	for (int r = 0; r < rounds; r++)
		sink += inl::outer_work(n);
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
