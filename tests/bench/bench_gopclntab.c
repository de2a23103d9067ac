// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What reading .gopclntab costs (issue 29): for each Go binary given (default:
 * Debian's gofmt, go and prometheus), the time to read it with names only and
 * with the inline trees, the functions it holds, and the time of a lookup (the
 * chain at one pc inside each function, in turn).  ROUNDS interleaved rounds,
 * medians; a markdown table on standard output.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/gopclntab.h"

#define ROUNDS 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ms to read path (with the inline trees or not); the table in *out when asked. */
static double read_ms(const char *path, bool inl, struct gopclntab **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct gopclntab *g = NULL;
	double t0 = mono_sec(), ms;
	int rc = e ? (inl ? gopclntab_read(e, fd, &g, NULL) : gopclntab_read_names(e, fd, &g, NULL))
		   : -1;

	ms = (mono_sec() - t0) * 1e3;
	if (rc && out)
		*out = NULL;
	if (out && !rc)
		*out = g;
	else
		gopclntab_free(g);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc ? -1 : ms;
}

static void bench(const char *path)
{
	double names[ROUNDS], inl[ROUNDS], look[ROUNDS];
	struct gopclntab *g = NULL;
	uint64_t n = 0, levels = 0;

	for (int r = 0; r < ROUNDS; r++) {
		names[r] = read_ms(path, false, NULL);
		inl[r] = read_ms(path, true, r == ROUNDS - 1 ? &g : NULL);
	}
	if (!g || names[0] < 0) {
		printf("| %s | (no .gopclntab read) | | | |\n", path);
		return;
	}
	n = gopclntab_nfunc(g);
	for (int r = 0; r < ROUNDS; r++) {
		struct gopclntab_frame fr[32];
		double t0 = mono_sec();

		levels = 0;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t start, end;
			const char *name;
			int k;

			if (gopclntab_func(g, i, &start, &end, &name) || end <= start)
				continue;
			k = gopclntab_frames(g, start + (end - start) / 2, fr, 32);
			levels += k > 0 ? (uint64_t)k : 0;
		}
		look[r] = (mono_sec() - t0) * 1e9 / (double)(n ? n : 1);
	}
	printf("| %s | %" PRIu64 " | %.1f | %.1f | %.0f | %.2f |\n", path, n, median(names, ROUNDS),
	       median(inl, ROUNDS), median(look, ROUNDS), (double)levels / (double)(n ? n : 1));
	gopclntab_free(g);
}

int main(int argc, char **argv)
{
	static const char *const def[] = {"/usr/lib/go-1.19/bin/gofmt", "/usr/lib/go-1.19/bin/go",
					  "/usr/bin/prometheus"};

	elf_version(EV_CURRENT);
	printf("## .gopclntab read cost (%d rounds, medians)\n\n", ROUNDS);
	printf("| binary | functions | read, names (ms) | read, with inline trees (ms) | "
	       "lookup (ns) | levels per lookup |\n|---|---|---|---|---|---|\n");
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bench(argv[i]);
	else
		for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
			bench(def[i]);
	return 0;
}
