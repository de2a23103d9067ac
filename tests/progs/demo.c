// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The demo workload for `make demo`: built without frame pointers, with a
 * shape worth a flame graph — a recursion, calls back from libc's qsort, a
 * hash loop and a pipeline of stages.  Runs argv[1] seconds (default 5).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static uint64_t fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

NOINLINE static void sort_stage(uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (uint32_t)(i * 2654435761u);
	qsort(v, n, sizeof(*v), compare_u32);
}

NOINLINE static uint64_t hash_block(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

NOINLINE static uint64_t hash_stage(const uint8_t *buf, size_t n)
{
	uint64_t h = 0;
	size_t off;

	for (off = 0; off + 4096 <= n; off += 4096)
		h ^= hash_block(buf + off, 4096);
	return h;
}

NOINLINE static void pipeline(uint32_t *v, size_t n)
{
	sort_stage(v, n);
	sink += hash_stage((const uint8_t *)v, n * sizeof(*v));
	sink += fib(24);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 5.0);
	size_t n = 1 << 16;
	uint32_t *v = malloc(n * sizeof(*v));

	if (!v)
		return 1;
	while (now() < end)
		pipeline(v, n);
	free(v);
	printf("demo: done (%llu)\n", (unsigned long long)sink);
	return 0;
}
