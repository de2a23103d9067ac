/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading the ELF files of other processes without mapping them: a process
 * can truncate a file it owns while we read it, and a read past the end of a
 * mapping is SIGBUS (the whole profiler).  libelf's ELF_C_READ reads with
 * pread into its own buffers instead: a truncated file is a short read, an
 * error.  Those buffers are the sections' declared sizes (inflated sizes for
 * SHF_COMPRESSED), so every section is charged to the object's byte budget
 * before it is read.  Refusals are counted process-wide, by cause.
 */
#ifndef CFIPROF_ELF_READ_H
#define CFIPROF_ELF_READ_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

enum elf_read_refusal {
	ELF_READ_TRUNCATED,   /* the file shrank while it was read (or a short read) */
	ELF_READ_OVER_BUDGET, /* a section, or the section headers, past the object's bytes */
	ELF_READ_INFLATE_OVER_BUDGET, /* a compressed section inflating past them */
	ELF_READ_REFUSALS,
};

/*
 * Sections one object may hold at once: libelf allocates a descriptor per
 * section header at elf_begin, and an extended count is the file's to choose
 * (a linked object has tens; 2^18 covers -ffunction-sections objects).
 */
#define ELF_READ_MAX_SECTIONS (1u << 18)
/* .shstrtab is read whole by every lookup of a section by name */
#define ELF_READ_MAX_SHSTRTAB (4u << 20)

/*
 * elf_begin(@fd, ELF_C_READ) after checking the section count (refusals
 * counted over budget) and .shstrtab's size; NULL when refused or not an ELF.
 */
Elf *elf_read_begin(int fd);

/*
 * The bytes of @scn (inflated when SHF_COMPRESSED, and then exactly the
 * declared ch_size), charged to *@left (what the object may still read)
 * before libelf allocates them.  NULL for SHT_NOBITS, refused (counted) or
 * unreadable sections; *@why (may be NULL) says which.
 */
Elf_Data *elf_read_section(Elf_Scn *scn, uint64_t *left, const char **why);

/*
 * Whether @fd is now shorter than @size, its size when it was opened: the
 * reads since may have come short.  Counts ELF_READ_TRUNCATED when so.
 */
bool elf_read_truncated(int fd, uint64_t size);

/*
 * An ELF object read through @fd as a whole, never mapped (a file truncated
 * under a mapping is SIGBUS): elf_read_begin, with @fd's size now in *@size
 * for elf_read_close; NULL when it is no ELF object (an archive, a refusal,
 * an unreadable file).
 */
Elf *elf_read_open(int fd, uint64_t *size);

/*
 * Ends @e (may be NULL); false when @fd was cut since elf_read_open: what
 * was read of it may be anything (elf_read_truncated counts it).
 */
bool elf_read_close(Elf *e, int fd, uint64_t size);

/* Whether elf_read_section's @why was a refusal by the byte budget. */
bool elf_read_why_budget(const char *why);

void elf_read_refused(enum elf_read_refusal why);
uint64_t elf_read_refused_total(enum elf_read_refusal why);
/* "truncated", "over_budget", "inflate_over_budget" */
const char *elf_read_refusal_name(enum elf_read_refusal why);

#endif
