/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Finding an ELF section by name. */
#ifndef CFIPROF_ELF_SECTIONS_H
#define CFIPROF_ELF_SECTIONS_H

#include <gelf.h>

/* The first section named @name, its header in *@sh; NULL when there is none. */
Elf_Scn *elf_section_by_name(Elf *e, const char *name, GElf_Shdr *sh);

#endif
