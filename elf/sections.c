// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Section lookup by name; see sections.h. */
#include "elf/sections.h"

#include <string.h>

Elf_Scn *elf_section_by_name(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}
