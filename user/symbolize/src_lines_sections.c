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

void src_lines_hide_unread(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || !is_debug_section(name) || !never_read(name))
			continue;
		sh.sh_type = SHT_NOBITS;
		gelf_update_shdr(scn, &sh);
	}
}

uint64_t src_lines_section_bytes(Elf *e, bool *has_info)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t total = 0;

	*has_info = false;
	if (elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || !is_debug_section(name) || never_read(name))
			continue;
		size = sh.sh_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;
			/* the header alone: its raw bytes (sh_size) are not measured yet */
			Elf_Data *d = sh.sh_size >= sizeof(ch)
					  ? elf_getdata_rawchunk(e, (int64_t)sh.sh_offset,
								 sizeof(ch), ELF_T_BYTE)
					  : NULL;

			/* the header says what it inflates to: what libdw will allocate */
			if (d && d->d_size >= sizeof(ch)) {
				memcpy(&ch, d->d_buf, sizeof(ch));
				size = ch.ch_size;
			}
		}
		total += size;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			*has_info = size > 0;
	}
	return total;
}
