/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An ELF object's function symbols as named ranges: .symtab and .dynsym
 * (aliases merged by one rule), "func@plt" for PLT stubs, and for an object
 * without .symtab, the .symtab of its separate debug file. Private to the
 * symbolizer (sym_cache.c).
 */
#ifndef CFIPROF_ELF_SYMBOLS_H
#define CFIPROF_ELF_SYMBOLS_H

#include <libelf.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "user/symbolize/sym_table.h"

/* Where an object's symbols came from, beyond its own .dynsym and PLT. */
struct elf_symbols_info {
	char *debug_file;   /* the separate debug file read (malloc'd), or NULL */
	bool symtab;	    /* a .symtab was read: the object's, its debug file's or MiniDebugInfo's */
	bool minidebuginfo; /* from .gnu_debugdata (elf/minidebuginfo.h) */
};

/*
 * Fills @t (finished, ready for lookups) with the function symbols of @e:
 * its .symtab, .dynsym and PLT stubs, and when it has no .symtab, the .symtab
 * of its separate debug file, else of its MiniDebugInfo. The debug file is
 * looked for from @path (may be NULL) and @debug_root (NULL or "": none),
 * inside /proc/@pid/root when @pid (else in ours), never taking @self.
 * Returns 0 or -1 (ENOMEM); @info says what was read (free its debug_file).
 */
int elf_symbols_read(struct sym_table *t, Elf *e, const char *path, const struct stat *self,
		     const char *debug_root, uint32_t pid, struct elf_symbols_info *info);

/* Fills @t with the function symbols of @e's .symtab only (a fetched debug file). 0 or -1. */
int elf_symbols_read_symtab(struct sym_table *t, Elf *e);

bool elf_has_symtab(Elf *e);

#endif
