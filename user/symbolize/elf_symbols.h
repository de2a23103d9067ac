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
#include <sys/stat.h>

#include "user/symbolize/sym_table.h"

/*
 * Fills @t (finished, ready for lookups) with the function symbols of @e.
 * The debug file is looked for from @path (may be NULL) and @debug_root (NULL
 * or "": none), inside /proc/@pid/root when @pid (else in ours), never taking @self; when one was read, *@debug_file is its
 * path (malloc'd), else NULL. Returns 0 or -1 (ENOMEM).
 */
int elf_symbols_read(struct sym_table *t, Elf *e, const char *path, const struct stat *self,
		     const char *debug_root, uint32_t pid, char **debug_file);

#endif
