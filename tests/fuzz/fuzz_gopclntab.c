/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for Go's .gopclntab (elf/gopclntab.h): the input is an ELF
 * file, read from memory and from a memfd (pread), with and without its section
 * headers (then found by scanning); every function's name and range, and the
 * chains at pcs inside them and anywhere, are looked up.
 */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf_read.h"
#include "elf/gopclntab.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void gopclntab_probe(const struct gopclntab *g, const uint8_t *data, size_t size)
{
	uint64_t n = gopclntab_nfunc(g), i, start, end;
	struct gopclntab_frame fr[8];
	const char *name;

	for (i = 0; i < n && i < 4096; i++) {
		if (gopclntab_func(g, i, &start, &end, &name))
			continue;
		if (!name || gopclntab_frames(g, start, fr, 8) > 8)
			abort();
		if (end > start)
			gopclntab_frames(g, start + (end - start) / 2, fr, 8);
	}
	gopclntab_frames(g, fuzz_u64(data, size, 0), fr, 8);
	gopclntab_frames(g, fuzz_u64(data, size, size / 2), fr, 1);
}

static void gopclntab_mem(const uint8_t *data, size_t size)
{
	struct gopclntab *g = NULL;
	const char *why = NULL;
	int r = gopclntab_read_mem(data, size, &g, &why);

	if ((r == 0) != (g != NULL) || (r < 0 && !why))
		abort();
	if (g)
		gopclntab_probe(g, data, size);
	gopclntab_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *g = NULL;
	char path[64];
	uint8_t *copy;
	Elf *e;
	int fd;

	gopclntab_mem(data, size);
	/* the same bytes without section headers: found by scanning the segments */
	if (size >= sizeof(Elf64_Ehdr) && (copy = malloc(size))) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)copy;

		memcpy(copy, data, size);
		if (copy[EI_CLASS] == ELFCLASS64) {
			eh->e_shoff = 0;
			eh->e_shnum = 0;
			eh->e_shstrndx = 0;
			gopclntab_mem(copy, size);
		}
		free(copy);
	}
	/* and through pread, as the symbolizer reads a file */
	fd = fuzz_memfd("go.elf", data, size, path, sizeof(path));
	e = fd >= 0 ? elf_read_begin(fd) : NULL;
	if (e && gopclntab_read(e, fd, &g, NULL) == 0)
		gopclntab_probe(g, data, size);
	gopclntab_free(g);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return 0;
}
