/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Compiled tables kept on disk, so that the next process of a program finds
 * them ready in milliseconds instead of rebuilding them (libLLVM: ~120 ms).
 * An entry is keyed by the object's key (build-id plus the identity of the
 * file opened), tagged with the table format version, and checked in full
 * when read: a corrupt, truncated, stale or planted file is refused (counted),
 * removed and rebuilt, never trusted.  The directory is the profiler's own:
 * owned by it, writable by nobody else, never reached through a symlink.
 * Entries beyond the byte bound (or CFI_TABLE_CACHE_MAX_ENTRIES) go, least
 * recently used first.  Tables small enough to build about as fast as an
 * entry is read are not kept.
 */
#ifndef CFIPROF_TABLE_CACHE_H
#define CFIPROF_TABLE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tables/cfi_table.h"

/* Bumped whenever what the compiler produces for the same input changes. */
#define CFI_TABLE_FORMAT_VERSION 6

/*
 * A smaller table is not stored: it builds in about a millisecond or less
 * (libc's 117 KiB in ~6 ms here), not much more than reading an entry back.
 * Its size, not its build time, decides: the same file is kept or not
 * whatever the host's load.
 */
#define CFI_TABLE_CACHE_MIN_BYTES (64 * 1024ull)
/* Entries at most, whatever their bytes: every eviction scan reads them all. */
#define CFI_TABLE_CACHE_MAX_ENTRIES 16384

/*
 * A file's key: its build-id (hex, may be ""), '@', then what identifies the
 * file opened: dev:inode:size:mtime, which an owner can repeat (utimes sets
 * mtime, and a tmpfs or overlay mounted again numbers its inodes from the
 * start), then what the owner cannot set and a new mount changes: the inode's
 * change time in nanoseconds and the mount's id (unique for the boot where the
 * kernel has STATX_MNT_ID_UNIQUE, else the reusable one, else 0).  Entries are
 * matched by the whole key they hold, so one of an older key format misses.
 */
#define CFI_FILE_KEY_LEN 272
/* The key of the file open at fd into buf (CFI_FILE_KEY_LEN bytes); 0 or -errno. */
int cfi_file_key(int fd, const char *build_id, char *buf, size_t len);

struct cfi_table_cache_stats {
	uint64_t hits, misses; /* misses: built, then stored (cheap ones are not misses) */
	uint64_t refused; /* entries that failed a check: removed */
	uint64_t stores, store_errors;
	uint64_t evicted; /* removed to stay within the byte or entry bound */
	uint64_t cheap;	  /* not found, then not stored: smaller than the minimum */
	uint64_t bytes;	  /* on disk now (as far as this process knows) */
	uint64_t entries; /* ... in that many files */
};

struct cfi_table_cache;

/*
 * Opens (creating it 0700 if missing, parents too) the cache directory.  NULL
 * with a message on stderr when it cannot be used safely.
 */
struct cfi_table_cache *cfi_table_cache_open(const char *dir, uint64_t max_bytes);
void cfi_table_cache_close(struct cfi_table_cache *c);
/* 0 and *out on a hit; -1 on a miss or a refused entry. */
int cfi_table_cache_load(struct cfi_table_cache *c, const char *key, struct cfi_table **out);
/* Keeps t under key (atomically: readers see the old entry or the new one). */
void cfi_table_cache_store(struct cfi_table_cache *c, const char *key, const struct cfi_table *t);
void cfi_table_cache_stats(struct cfi_table_cache *c, struct cfi_table_cache_stats *out);
/* Defaults CFI_TABLE_CACHE_MIN_BYTES and CFI_TABLE_CACHE_MAX_ENTRIES; for tests. */
void cfi_table_cache_set_limits(struct cfi_table_cache *c, uint64_t min_bytes,
				uint64_t max_entries);

#endif
