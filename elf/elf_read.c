// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading ELF files with pread, every section under a byte budget; see elf_read.h. */
#include "elf/elf_read.h"

#include <elf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t refused_total[ELF_READ_REFUSALS];

void elf_read_refused(enum elf_read_refusal why)
{
	__atomic_fetch_add(&refused_total[why], 1, __ATOMIC_RELAXED);
}

uint64_t elf_read_refused_total(enum elf_read_refusal why)
{
	return __atomic_load_n(&refused_total[why], __ATOMIC_RELAXED);
}

const char *elf_read_refusal_name(enum elf_read_refusal why)
{
	static const char *const names[ELF_READ_REFUSALS] = {
	    [ELF_READ_TRUNCATED] = "truncated",
	    [ELF_READ_OVER_BUDGET] = "over_budget",
	    [ELF_READ_INFLATE_OVER_BUDGET] = "inflate_over_budget",
	};

	return why < ELF_READ_REFUSALS ? names[why] : "?";
}

/*
 * The number of section headers the file declares, as libelf will take it
 * (e_shnum, or the first header's sh_size when that is 0); 0 when it is no
 * ELF header we know.
 */
static uint64_t declared_sections(int fd)
{
	union {
		unsigned char ident[EI_NIDENT];
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} h;
	uint64_t shoff, n;

	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.ident, ELFMAG, SELFMAG) != 0)
		return 0;
	if (h.ident[EI_CLASS] == ELFCLASS64) {
		n = h.e64.e_shnum;
		shoff = h.e64.e_shoff;
	} else {
		n = h.e32.e_shnum;
		shoff = h.e32.e_shoff;
	}
	if (n || !shoff)
		return n;
	if (h.ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Shdr s0;

		return pread(fd, &s0, sizeof(s0), (off_t)shoff) == (ssize_t)sizeof(s0) ? s0.sh_size
										       : 0;
	} else {
		Elf32_Shdr s0;

		return pread(fd, &s0, sizeof(s0), (off_t)shoff) == (ssize_t)sizeof(s0) ? s0.sh_size
										       : 0;
	}
}

Elf *elf_read_begin(int fd)
{
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	/* libelf allocates (and touches) a descriptor per header at elf_begin */
	if (declared_sections(fd) > ELF_READ_MAX_SECTIONS) {
		elf_read_refused(ELF_READ_OVER_BUDGET);
		return NULL;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0 ||
	    !gelf_getshdr(elf_getscn(e, shstrndx), &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_size <= ELF_READ_MAX_SHSTRTAB)
		return e;
	elf_read_refused(ELF_READ_OVER_BUDGET);
	elf_end(e);
	return NULL;
}

Elf *elf_read_open(int fd, uint64_t *size)
{
	struct stat st;
	Elf *e;

	*size = 0;
	if (fstat(fd, &st) < 0)
		return NULL;
	*size = (uint64_t)st.st_size;
	e = elf_read_begin(fd);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

bool elf_read_close(Elf *e, int fd, uint64_t size)
{
	elf_end(e);
	return !elf_read_truncated(fd, size);
}

static const char over_budget[] = "is past the object's byte budget";
static const char inflate_over_budget[] = "inflates past the object's byte budget";

bool elf_read_why_budget(const char *why)
{
	return why == over_budget || why == inflate_over_budget;
}

static Elf_Data *inflate(Elf_Scn *scn, const GElf_Shdr *sh, uint64_t *left, const char **why)
{
	GElf_Chdr ch;
	Elf_Data *d;

	/* the header is in the raw bytes: sh_size of them, already within *left */
	if (!gelf_getchdr(scn, &ch)) {
		*why = "has no readable compression header";
		return NULL;
	}
	if (ch.ch_size > *left - sh->sh_size) {
		elf_read_refused(ELF_READ_INFLATE_OVER_BUDGET);
		*why = inflate_over_budget;
		return NULL;
	}
	*left -= sh->sh_size + ch.ch_size;
	if (elf_compress(scn, 0, 0) < 0) {
		*why = "cannot be inflated";
		return NULL;
	}
	d = elf_getdata(scn, NULL);
	if (!d || d->d_size != ch.ch_size) {
		*why = "does not inflate to its declared size";
		return NULL;
	}
	return d;
}

Elf_Data *elf_read_section(Elf_Scn *scn, uint64_t *left, const char **why)
{
	const char *ignored;
	GElf_Shdr sh;
	Elf_Data *d;

	if (!why)
		why = &ignored;
	*why = NULL;
	if (!gelf_getshdr(scn, &sh)) {
		*why = "has no readable header";
		return NULL;
	}
	if (sh.sh_type == SHT_NOBITS) {
		*why = "has no bytes in the file";
		return NULL;
	}
	/* ELF_C_READ: libelf mallocs sh_size and preads into it */
	if (sh.sh_size > *left) {
		elf_read_refused(ELF_READ_OVER_BUDGET);
		*why = over_budget;
		return NULL;
	}
	if (sh.sh_flags & SHF_COMPRESSED)
		return inflate(scn, &sh, left, why);
	*left -= sh.sh_size;
	d = elf_getdata(scn, NULL);
	if (!d)
		*why = "cannot be read (truncated?)";
	return d;
}

bool elf_read_truncated(int fd, uint64_t size)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size >= size)
		return false;
	elf_read_refused(ELF_READ_TRUNCATED);
	return true;
}
