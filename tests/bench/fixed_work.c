// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A fixed amount of CPU work for tests/bench/startup.sh: an LCG updating a
 * 16 KiB table, N steps (argv[1]).  Its time spreads ~3% from run to run
 * here, against xz's ~20%, so a profiler's few percent can be told apart.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static uint32_t table[4096];

__attribute__((noinline)) static uint64_t step(uint64_t x)
{
	x = x * 6364136223846793005ull + 1442695040888963407ull;
	table[(x >> 40) & 4095] += (uint32_t)x;
	return x;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000000ull, x = 1, i;
	struct rusage ru;

	for (i = 0; i < n; i++)
		x = step(x);
	/* printed so the work is not optimized away */
	printf("%llu %u\n", (unsigned long long)x, table[7]);
	/* its own CPU time, in us: startup.sh tells the time it waited from the time it ran */
	if (!getrusage(RUSAGE_SELF, &ru))
		fprintf(stderr, "cpu_us %lld\n",
			(long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	/* the time it was runnable but waited for a CPU (the sampler's threads ran there), in us */
	FILE *f = fopen("/proc/self/schedstat", "re");
	unsigned long long on_cpu, waited;

	if (f && fscanf(f, "%llu %llu", &on_cpu, &waited) == 2)
		fprintf(stderr, "run_delay_us %llu\n", waited / 1000);
	if (f)
		fclose(f);
	return 0;
}
