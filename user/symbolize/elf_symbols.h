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

/*
 * What one object's symbols may cost, applied before the memory is spent: the
 * files are any process's, and a 424 KB ELF of 1,000 symbols sharing one
 * 400 KB name cost 382 MB as names copied per address.
 *
 * A name is kept whole up to ELF_SYMBOL_NAME_MAX bytes (mangled; the longest
 * in libLLVM is 613, a demangled C++ name a few KB), longer ones cut to that
 * and ending in ELF_SYMBOL_NAME_CUT.  An object keeps at most
 * ELF_SYMBOLS_MAX symbols (3 times rustc driver's 165k) holding at most
 * ELF_SYMBOLS_BYTES_MAX bytes of ranges and names (libLLVM's: 2 MB, libjvm's
 * 3 MB); past either, the rest of its symbols are dropped.  Both are counted
 * (elf_symbols_refused).  A crafted object then costs the agent (MemoryMax
 * 256M, ~150 MB of its own on a busy host) at most ~70 MB while it is read:
 * 40 bytes per symbol read, the table, and its file's pages.
 */
#define ELF_SYMBOL_NAME_MAX   4096
#define ELF_SYMBOL_NAME_CUT   "[...]"
#define ELF_SYMBOLS_MAX	      (512u << 10)
#define ELF_SYMBOLS_BYTES_MAX (32ull << 20)

enum elf_symbols_refusal {
	ELF_SYMBOLS_NAME_CUT, /* names cut to ELF_SYMBOL_NAME_MAX */
	ELF_SYMBOLS_BUDGET,   /* objects past ELF_SYMBOLS_MAX or their byte bound */
	ELF_SYMBOLS_REFUSAL_MAX,
};
/* Refusals so far, process-wide. */
uint64_t elf_symbols_refused(enum elf_symbols_refusal r);

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

/*
 * Fills @t with the function symbols of @e's .symtab only (a fetched debug
 * file), holding at most @max_bytes (0: ELF_SYMBOLS_BYTES_MAX). Returns 0,
 * 1 when symbols were dropped at that bound (counted), or -1.
 */
int elf_symbols_read_symtab(struct sym_table *t, Elf *e, uint64_t max_bytes);

bool elf_has_symtab(Elf *e);

#endif
