/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* C++ and Rust (legacy and v0) demangling through libiberty. */
#ifndef CFIPROF_DEMANGLE_H
#define CFIPROF_DEMANGLE_H

enum sym_demangle_mode {
	SYM_DEMANGLE_NONE,	/* raw linkage names */
	SYM_DEMANGLE_FULL,	/* ns::f<int>(int, char const*) */
	SYM_DEMANGLE_NO_PARAMS, /* ns::f<int> */
};

/* A demangled name longer than this is cut to it, ending in ELF_SYMBOL_NAME_CUT. */
#define SYM_DEMANGLED_MAX (16u << 10)

/*
 * Demangles an Itanium C++ (_Z...), Rust legacy (_ZN...17h<hash>E, hash
 * dropped) or Rust v0 (_R...) name. Returns a malloc'd string, or NULL when
 * @mangled is not a mangled name (or @mode is SYM_DEMANGLE_NONE).
 */
char *sym_demangle(const char *mangled, enum sym_demangle_mode mode);

#include <stddef.h>

/* The demangled names of one symbol table, filled lazily: most symbols are never sampled. */
struct sym_dem_cache {
	char **v; /* per symbol: NULL not yet asked, a name, or a mark for "kept raw" */
	size_t n;
};

/* @raw (symbol @i of @n) as @mode shows it; cached. Falls back to @raw without memory. */
const char *sym_dem_cache_get(struct sym_dem_cache *c, size_t n, size_t i, const char *raw,
			      enum sym_demangle_mode mode);
void sym_dem_cache_free(struct sym_dem_cache *c);

#endif
