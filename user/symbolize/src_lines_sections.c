// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An object's debug sections as lines and inline frames use them; see src_lines_sections.h. */
#include "user/symbolize/src_lines_sections.h"

#include <string.h>

static bool is_debug_section(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8);
}

/*
 * Debug sections that lines and inline frames never read: location lists,
 * macros, name indexes and CFI.  libdw inflates every compressed section it
 * knows as the file is opened, and keeps it (libc6-dbg's location lists are
 * the second largest thing it would hold), so they are hidden from it first.
 */
static bool never_read(const char *name)
{
	static const char *const unread[] = {"loc",	 "loclists", "macro", "macinfo",
					     "pubnames", "pubtypes", "frame"};
	const char *base = name[1] == 'z' ? name + 8 : name + 7;

	for (size_t i = 0; i < sizeof(unread) / sizeof(unread[0]); i++)
		if (!strcmp(base, unread[i]))
			return true;
	return false;
}

/* The next section after scn that is a debug section with contents: its header and name. */
static Elf_Scn *next_debug_section(Elf *e, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh,
				   const char **name)
{
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		*name = elf_strptr(e, shstrndx, sh->sh_name);
		if (*name && is_debug_section(*name))
			return scn;
	}
	return NULL;
}

/* What a section inflates to: its compression header's size (what libdw will allocate). */
static uint64_t inflated_size(Elf *e, const GElf_Shdr *sh)
{
	Elf64_Chdr ch;
	Elf_Data *d;

	if (!(sh->sh_flags & SHF_COMPRESSED) || sh->sh_size < sizeof(ch))
		return sh->sh_size;
	/* the header alone: its raw bytes (sh_size) are not measured yet */
	d = elf_getdata_rawchunk(e, (int64_t)sh->sh_offset, sizeof(ch), ELF_T_BYTE);
	if (!d || d->d_size < sizeof(ch))
		return sh->sh_size;
	memcpy(&ch, d->d_buf, sizeof(ch));
	return ch.ch_size;
}

void src_lines_hide_unread(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	while ((scn = next_debug_section(e, shstrndx, scn, &sh, &name))) {
		if (!never_read(name))
			continue;
		sh.sh_type = SHT_NOBITS;
		gelf_update_shdr(scn, &sh);
	}
}

uint64_t src_lines_section_bytes(Elf *e, bool *has_info)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t total = 0, size;
	GElf_Shdr sh;
	const char *name;

	*has_info = false;
	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = next_debug_section(e, shstrndx, scn, &sh, &name))) {
		if (never_read(name))
			continue;
		size = inflated_size(e, &sh);
		total += size;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			*has_info = size > 0;
	}
	return total;
}

bool src_lines_compressed(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	bool compressed = false;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = next_debug_section(e, shstrndx, scn, &sh, &name))) {
		if (never_read(name))
			continue;
		/* GNU's old .zdebug_ sections: inflated under their name, read as compressed */
		if (name[1] == 'z')
			return false;
		compressed |= (sh.sh_flags & SHF_COMPRESSED) != 0;
	}
	return compressed;
}
