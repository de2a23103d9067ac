// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* C++ and Rust demangling through libiberty (the demangler c++filt uses). */
#include "user/symbolize/demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "user/symbolize/elf_symbols.h"

/* Rust legacy names end in "::h" + 16 hex digits: a hash, noise in a profile. */
static void strip_rust_hash(char *s)
{
	size_t n = strlen(s), i;

	if (n < 19 || memcmp(s + n - 19, "::h", 3) != 0)
		return;
	for (i = n - 16; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return;
	s[n - 19] = '\0';
}

char *sym_demangle(const char *mangled, enum sym_demangle_mode mode)
{
	int flags = DMGL_ANSI;
	char *out;

	if (mode == SYM_DEMANGLE_NONE || !mangled || mangled[0] != '_')
		return NULL;
	/* Cheap filter: C names (the bulk of libc) never reach libiberty. */
	if (mangled[1] != 'Z' && mangled[1] != 'R')
		return NULL;
	if (mode == SYM_DEMANGLE_FULL)
		flags |= DMGL_PARAMS;
	/*
	 * Auto style: libiberty tells Itanium C++, Rust legacy (which it also
	 * de-hashes unless DMGL_VERBOSE) and Rust v0 apart by itself.
	 */
	out = cplus_demangle(mangled, flags | DMGL_AUTO);
	if (out && mangled[1] == 'Z')
		strip_rust_hash(out);
	/* back-references let a short mangled name expand a thousandfold: cut, as raw names are */
	if (out && strnlen(out, SYM_DEMANGLED_MAX + 1) > SYM_DEMANGLED_MAX) {
		size_t cut = sizeof(ELF_SYMBOL_NAME_CUT) - 1;
		char *p;

		memcpy(out + SYM_DEMANGLED_MAX - cut, ELF_SYMBOL_NAME_CUT, cut + 1);
		p = realloc(out, SYM_DEMANGLED_MAX + 1);
		if (p)
			out = p;
	}
	return out;
}

static char not_mangled[1];

const char *sym_dem_cache_get(struct sym_dem_cache *c, size_t n, size_t i, const char *raw,
			      enum sym_demangle_mode mode)
{
	if (mode == SYM_DEMANGLE_NONE || i >= n)
		return raw;
	if (!c->v) {
		c->v = calloc(n, sizeof(*c->v));
		if (!c->v)
			return raw;
		c->n = n;
	}
	if (!c->v[i]) {
		c->v[i] = sym_demangle(raw, mode);
		if (!c->v[i])
			c->v[i] = not_mangled;
	}
	return c->v[i] == not_mangled ? raw : c->v[i];
}

void sym_dem_cache_free(struct sym_dem_cache *c)
{
	size_t i;

	for (i = 0; c->v && i < c->n; i++)
		if (c->v[i] != not_mangled)
			free(c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
