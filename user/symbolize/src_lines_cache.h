/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Debug files whose DWARF is compressed (Debian's -dbg and -dbgsym packages:
 * SHF_COMPRESSED sections), kept inflated in the cache directory
 * (common/cache_dir.h) for the next open: libdw inflates every compressed
 * debug section as the file is opened, the whole of libc6-dbg's at each
 * start that names a libc frame's inline callers, where the inflated copy is
 * mapped as it is.
 */
#ifndef CFIPROF_SYMBOLIZE_SRC_LINES_CACHE_H
#define CFIPROF_SYMBOLIZE_SRC_LINES_CACHE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

/* The files kept, oldest first removed past it. */
#define SRC_LINES_CACHE_MAX_BYTES (256ull << 20)
#define SRC_LINES_CACHE_NAME_LEN  192

/*
 * The cache's name for the debug file open as fd and e, whose lines sections
 * are compressed: its build ID and the file's identity (device, inode, size,
 * times), so that only that very file finds it, never another claiming its
 * build ID.  false when nothing of it needs inflating, or it is no 64-bit
 * native-endian executable or shared object.
 */
bool src_lines_cache_name(Elf *e, int fd, char *name, size_t len);
/* The inflated copy called name, read-only, or -1 (none, or not a private regular file). */
int src_lines_cache_open(const char *name);
/*
 * Writes e, opened from the file name was made for and given to libdw (its
 * debug sections inflated in memory), as name: its debug sections with
 * contents and its section names, every other section without contents.  0 or
 * -errno.
 */
int src_lines_cache_write(Elf *e, const char *name);

#endif
