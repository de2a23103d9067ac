/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MiniDebugInfo (GDB's name; Fedora and others ship it): a stripped object's
 * .gnu_debugdata section holds an xz-compressed ELF whose .symtab names the
 * functions .dynsym lacks (static ones).  The section comes from the object,
 * so from whoever made it: its decompressed size is bounded, and the result is
 * read like any untrusted ELF.
 */
#ifndef CFIPROF_ELF_MINIDEBUGINFO_H
#define CFIPROF_ELF_MINIDEBUGINFO_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* Decompressed bytes one object's MiniDebugInfo may take (Fedora's largest are a few MB). */
#define MINIDEBUGINFO_MAX_DEFAULT (64ull << 20)

struct minidebuginfo {
	Elf *elf; /* over buf; NULL when none */
	void *buf;
	size_t len;
};

/*
 * Opens @e's MiniDebugInfo into @out, decompressing at most @max bytes (0:
 * the default). Returns 0, -1 when @e has none, -2 when it has one that is
 * refused (corrupt, not an ELF, over @max; counted) or out of memory.
 */
int minidebuginfo_open(Elf *e, uint64_t max, struct minidebuginfo *out);
void minidebuginfo_close(struct minidebuginfo *m);

/* MiniDebugInfo sections refused so far (process-wide), and those read. */
uint64_t minidebuginfo_refused_total(void);
uint64_t minidebuginfo_read_total(void);

#endif
