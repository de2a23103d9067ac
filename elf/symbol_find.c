// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A few named symbols of an ELF file; see symbol_find.h. */
#include <string.h>
#include <unistd.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"

size_t elf_find_symbols(Elf *e, const char *const *names, uint64_t *values, size_t n,
			uint64_t *left, uint32_t *found_mask)
{
	uint32_t mask = 0;
	size_t found = 0;

	memset(values, 0, n * sizeof(*values));
	if (n > 32)
		n = 32;
	for (int type = SHT_DYNSYM; type && found < n; type = type == SHT_DYNSYM ? SHT_SYMTAB : 0) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(e, scn)) && found < n) {
			Elf_Data *d;
			size_t nsyms;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (uint32_t)type ||
			    !sh.sh_entsize)
				continue;
			/* the names too: elf_strptr reads the whole string table */
			d = elf_read_section(scn, left, NULL);
			if (!elf_read_section(elf_getscn(e, sh.sh_link), left, NULL))
				d = NULL;
			nsyms = d ? d->d_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < nsyms && found < n; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    (!sym.st_value && GELF_ST_TYPE(sym.st_info) != STT_TLS))
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				for (size_t k = 0; name && k < n; k++)
					if (!(mask & 1u << k) && !strcmp(name, names[k])) {
						values[k] = sym.st_value;
						mask |= 1u << k;
						found++;
					}
			}
		}
	}
	if (found_mask)
		*found_mask = mask;
	return found;
}

int elf_read_vaddr(Elf *e, int fd, uint64_t vaddr, void *out, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		if (vaddr < sh.sh_addr || vaddr + len > sh.sh_addr + sh.sh_size)
			continue;
		return pread(fd, out, len, (off_t)(sh.sh_offset + (vaddr - sh.sh_addr))) ==
			       (ssize_t)len
			   ? 0
			   : -1;
	}
	return -1;
}

/* the relocation types by number: a host's elf.h may lack the other machine's names */
static bool tls_reloc(uint16_t machine, uint32_t type, bool *desc)
{
	/* R_X86_64_DTPMOD64, R_X86_64_TLSDESC; R_AARCH64_TLS_DTPMOD64, R_AARCH64_TLSDESC */
	if (machine == EM_X86_64 && (type == 16 || type == 36))
		return *desc = type == 36, true;
	if (machine == EM_AARCH64 && (type == 1028 || type == 1031))
		return *desc = type == 1031, true;
	return false;
}

uint64_t elf_tls_slot(Elf *e, const char *name, uint64_t *left, bool *desc)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh, symsh;

	bool is_desc = false;

	*desc = false;
	if (!gelf_getehdr(e, &eh) || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Scn *symscn;
		Elf_Data *rel, *syms;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(e, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		rel = elf_read_section(scn, left, NULL);
		syms = elf_read_section(symscn, left, NULL);
		if (!rel || !syms || !elf_read_section(elf_getscn(e, symsh.sh_link), left, NULL))
			continue;
		n = rel->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *sname;

			if (!gelf_getrela(rel, (int)i, &r) ||
			    !tls_reloc(eh.e_machine, (uint32_t)GELF_R_TYPE(r.r_info), &is_desc) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			sname = elf_strptr(e, symsh.sh_link, sym.st_name);
			if (sname && !strcmp(sname, name)) {
				*desc = is_desc;
				return r.r_offset;
			}
		}
	}
	return 0;
}
