/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbolizer: turns program counters into function names.
 *
 *  - ELF objects (sym_cache / sym_obj): .symtab and .dynsym of the object, or
 *    of its separate debug file (build-id directory or .gnu_debuglink),
 *    loaded once per object key (build-id, or dev:ino:size:mtime).
 *  - Demangling of C++ and Rust (legacy and v0) names through libiberty.
 *  - The kernel (ksyms): /proc/kallsyms.
 *  - JIT code (perfmap): /tmp/perf-PID.map, reloaded when it changes.
 *
 * Every lookup returns 0 with the name of the symbol that covers the address
 * and the offset into it, or -1 when no symbol covers it: an address past a
 * symbol's end is never attributed to that symbol. Callers then print the
 * object and offset (sym_format_frame).
 *
 * Nothing here is thread-safe: use one cache per thread or hold a lock.
 * Returned names stay valid until their object/table is freed or removed.
 */
#ifndef CFIPROF_SYMBOLIZE_H
#define CFIPROF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* ---- demangling ---- */

enum sym_demangle_mode {
	SYM_DEMANGLE_NONE,	/* raw linkage names */
	SYM_DEMANGLE_FULL,	/* ns::f<int>(int, char const*) */
	SYM_DEMANGLE_NO_PARAMS, /* ns::f<int> */
};

/*
 * Demangles an Itanium C++ (_Z...), Rust legacy (_ZN...17h<hash>E, hash
 * dropped) or Rust v0 (_R...) name. Returns a malloc'd string, or NULL when
 * @mangled is not a mangled name (or @mode is SYM_DEMANGLE_NONE).
 */
char *sym_demangle(const char *mangled, enum sym_demangle_mode mode);

/* ---- ELF objects ---- */

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

/* Which names lookups return (default SYM_DEMANGLE_FULL). */
void sym_cache_set_demangle(struct sym_cache *c, enum sym_demangle_mode mode);

/*
 * Returns the symbols of the object identified by @key (build-id hex, or
 * "dev:ino:size:mtime"; NULL means use @path), loading them on first use
 * from @fd when >= 0 (left open; e.g. /proc/PID/map_files/...) or else from
 * @path. @path also locates .gnu_debuglink files, so pass the object's real
 * path even with an fd. Returns NULL when the object cannot be read; that
 * failure is cached under @key too, so a broken object costs one attempt.
 */
struct sym_obj *sym_cache_get(struct sym_cache *c, const char *key, const char *path, int fd);

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
 * Formats one frame: @name when known, else "obj+0xOFF" when the object is
 * known, else "[unknown]". Returns what snprintf returns.
 */
int sym_format_frame(char *buf, size_t len, const char *obj_basename, const char *name,
		     uint64_t obj_offset);

/* ---- kernel ---- */

struct ksyms;

/*
 * Loads kernel text symbols from @path (NULL: /proc/kallsyms). Module symbols
 * are named "name [module]". Returns NULL with a message in @err (may be
 * NULL) on failure, in particular when every address reads as zero because
 * kptr_restrict (or missing CAP_SYSLOG) hides them (errno EPERM).
 */
struct ksyms *ksyms_load(const char *path, char *err, size_t errlen);

/*
 * A symbol covers up to the next kernel symbol (kallsyms has no sizes); the
 * last one covers one page. Returns 0 or -1 as sym_obj_lookup.
 */
int ksyms_lookup(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *offset);

size_t ksyms_count(const struct ksyms *k);
void ksyms_free(struct ksyms *k);

/* ---- JIT code: perf-PID.map ---- */

struct perfmap;

/* Writes "<dir>/perf-<pid>.map" (@dir NULL: "/tmp"). Returns snprintf's result. */
int perfmap_path(char *buf, size_t len, const char *dir, int pid);

/*
 * Tracks the map file at @path. A file that does not exist yet is not an
 * error: it is read when it appears. Returns NULL only on ENOMEM.
 */
struct perfmap *perfmap_new(const char *path);

/*
 * Re-reads the file when its size or mtime changed. Returns 1 when
 * reloaded, 0 when unchanged, -1 when unreadable (old symbols are kept).
 */
int perfmap_refresh(struct perfmap *pm);

/*
 * Finds the entry covering @addr; a later line wins over an earlier one
 * covering the same address (JIT code reuse). On a miss, refreshes once and
 * retries. Returns 0 or -1 as sym_obj_lookup.
 */
int perfmap_lookup(struct perfmap *pm, uint64_t addr, const char **name, uint64_t *offset);

size_t perfmap_count(const struct perfmap *pm);
/* Lines of the last load skipped as malformed. */
size_t perfmap_malformed(const struct perfmap *pm);
void perfmap_free(struct perfmap *pm);

#endif
