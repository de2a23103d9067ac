// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reads the NT_GNU_BUILD_ID note of an ELF object. */
#include "elf/build_id.h"

#include <elf.h>
#include <gelf.h>
#include <string.h>

#include "elf/elf_read.h"

/*
 * Note bytes read per object: a build-id note is 36 bytes, and the other
 * notes of a linked object (ABI tag, properties, SystemTap probes) are a few
 * KiB; a file declaring more must not make libelf allocate it.
 */
#define NOTES_MAX (1u << 20)

static int note_build_id(Elf_Data *data, unsigned char *out, size_t cap)
{
	GElf_Nhdr nhdr;
	size_t off = 0, name_off, desc_off, next;

	while (data && off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		off = next;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) != 0)
			continue;
		if (nhdr.n_descsz == 0 || nhdr.n_descsz > cap)
			return -1;
		memcpy(out, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
		return (int)nhdr.n_descsz;
	}
	return -1;
}

int elf_build_id(Elf *e, unsigned char *out, size_t cap)
{
	uint64_t left = NOTES_MAX;
	Elf_Scn *scn = NULL;
	size_t nphdr, i;
	int n;

	if (!e || elf_kind(e) != ELF_K_ELF)
		return -1;
	/*
	 * Sections first: separate debug files keep .note.gnu.build-id as a
	 * real SHT_NOTE section, while their PT_NOTE segments may point at
	 * bytes objcopy did not keep.
	 */
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		n = note_build_id(elf_read_section(scn, &left, NULL), out, cap);
		if (n > 0)
			return n;
	}
	/* Section headers can be stripped entirely (sstrip); the segments stay. */
	if (elf_getphdrnum(e, &nphdr) != 0)
		return -1;
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(e, (int)i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		if (phdr.p_filesz > left) {
			elf_read_refused(ELF_READ_OVER_BUDGET);
			return -1;
		}
		left -= phdr.p_filesz;
		n = note_build_id(
		    elf_getdata_rawchunk(e, (int64_t)phdr.p_offset, phdr.p_filesz, ELF_T_NHDR), out,
		    cap);
		if (n > 0)
			return n;
	}
	return -1;
}

int elf_build_id_hex(Elf *e, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char id[ELF_BUILD_ID_MAX];
	int n, i;

	n = elf_build_id(e, id, sizeof(id));
	if (n <= 0 || len < 2 * (size_t)n + 1)
		return -1;
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 0xf];
	}
	out[2 * n] = '\0';
	return 0;
}

int elf_build_id_hex_fd(int fd, char *out, size_t len)
{
	Elf *e;
	int ret;

	e = elf_read_begin(fd);
	if (!e)
		return -1;
	ret = elf_build_id_hex(e, out, len);
	elf_end(e);
	return ret;
}
