/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small ELF whose symbols cost a lot once named (issue 26 item 3): its
 * .symtab has @nsyms functions named by one long string, between two normal
 * ones.  Written byte by byte (tests/lib/mini_elf.h), no toolchain.
 *
 * Layout: "normal_first" at LONG_NAMES_FIRST, long-named symbol i at
 * long_names_addr(i), "normal_last" after them; each LONG_NAMES_STEP bytes.
 * With @shift, symbol i's name starts i bytes into the string, so no two
 * names are the same pointer (sharing identical names would not help).
 */
#ifndef CFIPROF_TESTS_LONG_NAMES_ELF_H
#define CFIPROF_TESTS_LONG_NAMES_ELF_H

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cfi_bytes.h"
#include "tests/lib/mini_elf.h"

#define LONG_NAMES_STEP	 16
#define LONG_NAMES_FIRST MINI_TEXT_ADDR
/* the long string's first bytes: a mangled-looking name cut anywhere is still recognisable */
#define LONG_NAMES_HEAD "_ZN4long"

static inline uint64_t long_names_addr(size_t i)
{
	return LONG_NAMES_FIRST + LONG_NAMES_STEP * (i + 1);
}

static inline void long_names_sym(struct bb *syms, uint32_t name, uint64_t addr)
{
	Elf64_Sym s = {0};

	s.st_name = name;
	s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	s.st_shndx = 1;
	s.st_value = addr;
	s.st_size = LONG_NAMES_STEP;
	put(syms, &s, sizeof(s));
}

/* Writes the ELF to @path (mode 0644); its size, or 0 on failure. */
static inline size_t long_names_elf(const char *path, size_t nsyms, size_t name_len, bool shift)
{
	struct bb syms = {0}, strs = {0};
	Elf64_Sym null_sym = {0};
	size_t i, len = 0, text = LONG_NAMES_STEP * (nsyms + 2);
	uint32_t first, last, lng;
	uint8_t *img = NULL;
	int fd;

	put(&strs, "", 1);
	first = (uint32_t)strs.n;
	put(&strs, "normal_first", sizeof("normal_first"));
	last = (uint32_t)strs.n;
	put(&strs, "normal_last", sizeof("normal_last"));
	lng = (uint32_t)strs.n;
	put(&strs, LONG_NAMES_HEAD, strlen(LONG_NAMES_HEAD));
	for (i = strlen(LONG_NAMES_HEAD); i < name_len; i++)
		put8(&strs, (uint8_t)('a' + i % 26));
	put8(&strs, 0);
	put(&syms, &null_sym, sizeof(null_sym));
	long_names_sym(&syms, first, LONG_NAMES_FIRST);
	for (i = 0; i < nsyms; i++)
		long_names_sym(&syms, lng + (shift ? (uint32_t)i : 0), long_names_addr(i));
	long_names_sym(&syms, last, long_names_addr(nsyms));
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     mini_align(text, 4096)},
		    {".symtab", SHT_SYMTAB, 0, 0, syms.p, syms.n},
		    {".strtab", SHT_STRTAB, 0, 0, strs.p, strs.n},
		};
		Elf64_Shdr *sh;

		img = mini_elf_build(secs, 3, &len);
		if (img) {
			sh = (Elf64_Shdr *)(img + ((Elf64_Ehdr *)img)->e_shoff);
			sh[2].sh_link = 3;
			sh[2].sh_info = 1;
			sh[2].sh_entsize = sizeof(Elf64_Sym);
		}
	}
	fd = img ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	if (fd < 0 || write(fd, img, len) != (ssize_t)len)
		len = 0;
	if (fd >= 0)
		close(fd);
	free(img);
	free(syms.p);
	free(strs.p);
	return len;
}

#endif
