/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tiny in-memory ELF64 x86-64 writer, so the malformed-input test and the
 * fuzzer can hand the table compiler hand-made .eh_frame / .debug_frame bytes
 * without going through a toolchain.  Allocated sections get sh_offset ==
 * sh_addr and one PT_LOAD maps offset 0 at address 0, so whichever of section
 * headers or program headers the library trusts, they agree.
 */
#ifndef CFIPROF_MINI_ELF_H
#define CFIPROF_MINI_ELF_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mini_sec {
	const char *name;
	uint32_t type;	/* SHT_PROGBITS, ... */
	uint64_t flags; /* SHF_ALLOC marks a section that gets sh_offset == sh_addr */
	uint64_t addr;
	const void *data; /* NULL: zero filled */
	size_t size;
};

#define MINI_TEXT_ADDR 0x1000u
#define MINI_TEXT_SIZE 0x1000u
#define MINI_EH_ADDR   0x2000u

static inline size_t mini_align(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/*
 * Returns a malloc'ed image of exactly *len bytes (so ASan sees any read past
 * its end), or NULL.  Allocated sections must be given in increasing address
 * order and must not overlap.
 */
static inline uint8_t *mini_elf_build(const struct mini_sec *secs, int nsecs, size_t *len)
{
	size_t shstr_size = 1, off, shoff, total, alloc_end;
	uint8_t *img;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	char *shstr;
	size_t name_off;
	int i;

	off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	for (i = 0; i < nsecs; i++) {
		shstr_size += strlen(secs[i].name) + 1;
		if (secs[i].flags & SHF_ALLOC) {
			if (secs[i].addr < off)
				return NULL;
			off = secs[i].addr + secs[i].size;
		}
	}
	alloc_end = off;
	for (i = 0; i < nsecs; i++)
		if (!(secs[i].flags & SHF_ALLOC))
			off = mini_align(off, 8) + secs[i].size;
	shstr_size += strlen(".shstrtab") + 1;
	off += shstr_size;
	shoff = mini_align(off, 8);
	total = shoff + (size_t)(nsecs + 2) * sizeof(Elf64_Shdr);

	img = calloc(1, total);
	if (!img)
		return NULL;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = MINI_TEXT_ADDR;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = nsecs + 2;
	eh->e_shstrndx = nsecs + 1;

	ph = (Elf64_Phdr *)(img + sizeof(Elf64_Ehdr));
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_filesz = alloc_end;
	ph->p_memsz = alloc_end;
	ph->p_align = 0x1000;

	sh = (Elf64_Shdr *)(img + shoff);
	off = alloc_end;
	shstr = NULL;
	name_off = 1;
	for (i = 0; i < nsecs; i++) {
		Elf64_Shdr *s = &sh[i + 1];

		s->sh_type = secs[i].type;
		s->sh_flags = secs[i].flags;
		s->sh_addralign = 1;
		s->sh_size = secs[i].size;
		if (secs[i].flags & SHF_ALLOC) {
			s->sh_addr = secs[i].addr;
			s->sh_offset = secs[i].addr;
		} else {
			off = mini_align(off, 8);
			s->sh_offset = off;
			off += secs[i].size;
		}
		if (secs[i].data && secs[i].type != SHT_NOBITS)
			memcpy(img + s->sh_offset, secs[i].data, secs[i].size);
	}
	/* names go last so every section's data is already in place */
	shstr = (char *)img + off;
	sh[nsecs + 1].sh_type = SHT_STRTAB;
	sh[nsecs + 1].sh_offset = off;
	sh[nsecs + 1].sh_size = shstr_size;
	sh[nsecs + 1].sh_addralign = 1;
	for (i = 0; i < nsecs; i++) {
		sh[i + 1].sh_name = name_off;
		strcpy(shstr + name_off, secs[i].name);
		name_off += strlen(secs[i].name) + 1;
	}
	sh[nsecs + 1].sh_name = name_off;
	strcpy(shstr + name_off, ".shstrtab");

	*len = total;
	return img;
}

/*
 * The common case: a 4 KiB .text at MINI_TEXT_ADDR and the given bytes as
 * .eh_frame at MINI_EH_ADDR (or as .debug_frame when debug is set, which is
 * not allocated and keeps absolute addresses).
 */
static inline uint8_t *mini_elf_cfi(const void *cfi, size_t cfi_len, int debug, size_t *len)
{
	struct mini_sec secs[2] = {
	    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
	     MINI_TEXT_SIZE},
	    {debug ? ".debug_frame" : ".eh_frame", SHT_PROGBITS, debug ? 0 : SHF_ALLOC,
	     debug ? 0 : MINI_EH_ADDR, cfi, cfi_len},
	};

	return mini_elf_build(secs, 2, len);
}

#endif /* CFIPROF_MINI_ELF_H */
