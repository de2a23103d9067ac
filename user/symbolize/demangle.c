// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* C++ and Rust demangling through libiberty (the demangler c++filt uses). */
#include "user/symbolize/demangle.h"

#include <ctype.h>
#include <setjmp.h>
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

/*
 * The demangled name as libiberty prints it, a piece at a time, kept up to
 * SYM_DEMANGLED_MAX: past it the print is abandoned (longjmp out of the
 * callback; its demanglers allocate nothing on that path).  Back-references
 * make the output exponential in the input: a 193-byte name prints 1.7 MB,
 * and a few more levels would print gigabytes, in time as in memory.
 */
struct dem_out {
	jmp_buf stop;
	size_t len;
	char buf[SYM_DEMANGLED_MAX + 1];
};

static void dem_put(const char *s, size_t n, void *opaque)
{
	struct dem_out *o = opaque;

	if (n > SYM_DEMANGLED_MAX - o->len) {
		memcpy(o->buf + o->len, s, SYM_DEMANGLED_MAX - o->len);
		o->len = SYM_DEMANGLED_MAX;
		longjmp(o->stop, 1);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* As cplus_demangle(DMGL_AUTO) tries them: Rust (legacy names look like C++) first. */
static bool dem_print(struct dem_out *o, const char *mangled, int flags)
{
	size_t cut = sizeof(ELF_SYMBOL_NAME_CUT) - 1;

	o->len = 0;
	if (setjmp(o->stop)) {
		memcpy(o->buf + SYM_DEMANGLED_MAX - cut, ELF_SYMBOL_NAME_CUT, cut);
		return true;
	}
	if (rust_demangle_callback(mangled, flags, dem_put, o))
		return true;
	o->len = 0;
	return cplus_demangle_v3_callback(mangled, flags, dem_put, o) != 0;
}

char *sym_demangle(const char *mangled, enum sym_demangle_mode mode)
{
	int flags = DMGL_ANSI;
	struct dem_out *o;
	char *out = NULL;

	if (mode == SYM_DEMANGLE_NONE || !mangled || mangled[0] != '_')
		return NULL;
	/* Cheap filter: C names (the bulk of libc) never reach libiberty. */
	if (mangled[1] != 'Z' && mangled[1] != 'R')
		return NULL;
	if (mode == SYM_DEMANGLE_FULL)
		flags |= DMGL_PARAMS;
	/*
	 * libiberty tells Itanium C++, Rust legacy (which it also de-hashes
	 * unless DMGL_VERBOSE) and Rust v0 apart by itself.
	 */
	o = malloc(sizeof(*o));
	if (o && dem_print(o, mangled, flags) && o->len)
		out = strndup(o->buf, o->len);
	free(o);
	if (out && mangled[1] == 'Z')
		strip_rust_hash(out);
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
