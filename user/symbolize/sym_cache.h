/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The symbolizer's ELF objects: function symbols of .symtab, .dynsym and PLT
 * stubs, or of the object's separate debug file (elf/debug_file.h), and for
 * an object without .symtab Go's own .gopclntab (go_names.h: names, and with
 * lines on file:line and inline frames), loaded once per object key
 * (build-id, or dev:ino:size:mtime) and cached.
 *
 * A lookup returns 0 with the name of the symbol that covers the address and
 * the offset into it, or -1 when no symbol covers it: an address past a
 * symbol's end is never attributed to that symbol (callers then print the
 * object and offset, sym_format_frame in frame_names.h).
 *
 * Nothing here is thread-safe: use one cache per thread or hold a lock.
 * Returned names stay valid until their object is freed or removed.
 */
#ifndef CFIPROF_SYM_CACHE_H
#define CFIPROF_SYM_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/symbolize/demangle.h"
#include "user/symbolize/src_lines.h"

struct sym_cache;
struct sym_obj;

struct sym_cache *sym_cache_new(void);
void sym_cache_free(struct sym_cache *c);

/*
 * Root of the separate debug file tree (default "/usr/lib/debug"); NULL or ""
 * disables both <root>/.build-id/xx/rest.debug and <root>/<dir>/<debuglink>.
 * Affects objects loaded afterwards. Returns 0 or -1 (ENOMEM).
 */
int sym_cache_set_debug_root(struct sym_cache *c, const char *root);

struct sym_fetch;
/*
 * Stripped objects loaded afterwards whose .symtab is nowhere local (no debug
 * file, no MiniDebugInfo) ask @f for theirs by build-id (user/symbolize/
 * sym_fetch.h); their lookups use it once it arrived. NULL: none. @f must
 * outlive the cache's objects.
 */
void sym_cache_set_fetch(struct sym_cache *c, struct sym_fetch *f);

/*
 * Function starts from FDEs (sym_obj_function_start) are read for objects
 * without a .symtab, at most SYM_FDE_MAX FDEs in SYM_FDE_MAX_NS each.
 */
#define SYM_FDE_MAX    (1u << 20)
#define SYM_FDE_MAX_NS (500ull * 1000 * 1000)

struct sym_cache_stats {
	uint64_t fde_ns;      /* spent reading function starts */
	uint64_t fde_ranges;  /* function starts kept (no symbol covers them) */
	uint64_t fde_refused; /* objects over the FDE bound: their starts not kept */
};
void sym_cache_get_stats(const struct sym_cache *c, struct sym_cache_stats *out);

/* Which names lookups return (default SYM_DEMANGLE_FULL). */
void sym_cache_set_demangle(struct sym_cache *c, enum sym_demangle_mode mode);

/*
 * Returns the symbols of the object identified by @key (build-id hex, or
 * "dev:ino:size:mtime"; NULL means use @path), loading them on first use
 * from @fd when >= 0 (left open; e.g. /proc/PID/map_files/...) or else from
 * @path. @path also locates .gnu_debuglink files, so pass the object's real
 * path even with an fd. With @pid, @path and the debug file search are inside
 * /proc/@pid/root (the process's mount namespace and chroot), never in ours;
 * 0: our own root. Returns NULL when the object cannot be read; that
 * failure is cached under @key too, so a broken object costs one attempt.
 */
struct sym_obj *sym_cache_get(struct sym_cache *c, const char *key, const char *path, int fd,
			      uint32_t pid);

/* Drops the object cached under @key (its names die with it). Returns 0 or -1. */
int sym_cache_remove(struct sym_cache *c, const char *key);

/* Number of keys cached, failures included. */
size_t sym_cache_count(const struct sym_cache *c);

/*
 * Finds the function covering @elf_vaddr (an address in the ELF's own
 * virtual address space, i.e. runtime address minus load bias). On success
 * sets *@name (demangled per the cache's mode; cached) and *@offset (either
 * may be NULL) and returns 0; returns -1 when no symbol covers the address.
 */
int sym_obj_lookup(struct sym_obj *o, uint64_t elf_vaddr, const char **name, uint64_t *offset);

/*
 * Where no symbol covers @elf_vaddr: the start of the function containing it,
 * from the FDE that covers it (objects without a .symtab only). 0, or -1.
 */
int sym_obj_function_start(const struct sym_obj *o, uint64_t elf_vaddr, uint64_t *start);

/* Number of distinct function addresses known for the object. */
size_t sym_obj_count(const struct sym_obj *o);

/* Build-id hex of the object, or "" when it has none. */
const char *sym_obj_build_id(const struct sym_obj *o);

/* Path of the separate debug file the symbols came from, or NULL. */
const char *sym_obj_debug_file(const struct sym_obj *o);

/*
 * Translates a file offset (as in /proc/PID/maps) into the ELF virtual
 * address through the PT_LOAD segments. Returns 0, or -1 when no segment
 * maps that offset.
 */
int sym_obj_offset_to_vaddr(const struct sym_obj *o, uint64_t file_offset, uint64_t *vaddr);

/*
 * Source lines and inline frames (src_lines.h): with @on, objects loaded
 * afterwards keep a handle on their DWARF (their own, or their debug file's),
 * looked up by sym_obj_lines. Default off.
 */
void sym_cache_set_lines(struct sym_cache *c, bool on);
bool sym_cache_lines_on(const struct sym_cache *c);
/*
 * With lines on: each object's DWARF is opened on a thread of its own as the
 * object is loaded, not at its first lookup (which stops the thread).  For
 * record, whose lookups all come after the command.
 */
void sym_cache_warm_lines(struct sym_cache *c);
/* Objects whose DWARF the thread opened. */
uint64_t sym_cache_lines_warmed(struct sym_cache *c);
/* Whether the thread is opening an object's DWARF now. */
bool sym_cache_lines_warming(struct sym_cache *c);
/* The limits, the interval's time allowance (ns_left) and the counters of every lookup. */
struct src_lines_ctx *sym_cache_lines_ctx(struct sym_cache *c);

/*
 * The inline chain at @elf_vaddr, innermost first, the last level being the
 * function the others were inlined into; *@frames stays valid until the next
 * lookup in @o. Returns the number of levels, 0 when unknown (no DWARF, or
 * lines off), -1 when a budget refused the lookup.
 */
int sym_obj_lines(struct sym_obj *o, uint64_t elf_vaddr, const struct src_frame **frames);
/* Whether @o has DWARF lines to look up. */
bool sym_obj_has_lines(const struct sym_obj *o);
/* Whether @elf_vaddr is in a Go function (its frame is typed "go", not "native"). */
bool sym_obj_is_go(const struct sym_obj *o, uint64_t elf_vaddr);
/* The raw (mangled) name of the symbol covering @elf_vaddr, as sym_obj_lookup; -1 if none. */
int sym_obj_lookup_raw(struct sym_obj *o, uint64_t elf_vaddr, const char **raw);
/* @raw demangled per @o's cache's mode (malloc'd), or NULL when it stays as it is. */
char *sym_obj_demangle(const struct sym_obj *o, const char *raw);

#endif
