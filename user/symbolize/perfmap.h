/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JIT code symbols from perf-PID.map files, reloaded when they change. */
#ifndef CFIPROF_PERFMAP_H
#define CFIPROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfmap;

/*
 * What perf maps may hold, applied as they are read (a 6-byte line is a
 * 32-byte range plus its name: a 63 MiB map of short lines took 430 MB): per
 * map, PERFMAP_MAX_ENTRIES lines and PERFMAP_MAX_TABLE_BYTES of ranges and
 * names (a big Java service's map, ~200k methods, is ~20 MB); across every
 * map held, pooled ones included, PERFMAP_TOTAL_BYTES (a load also holds
 * the table it replaces: PERFMAP_MAX_TABLE_BYTES more at most).  Lines past
 * a bound are refused and counted (perfmap_lines_refused_total).  Maps of
 * processes are kept, PERFMAP_POOL_MAX at most, after their namer frees
 * them: a map unchanged (dev, inode, size, mtime) is not read again.
 */
#define PERFMAP_MAX_ENTRIES	(1u << 20)
#define PERFMAP_MAX_TABLE_BYTES (32ull << 20)
#define PERFMAP_TOTAL_BYTES	(96ull << 20)
#define PERFMAP_POOL_MAX	64

/* Writes "<dir>/perf-<pid>.map" (@dir NULL: "/tmp"). Returns snprintf's result. */
int perfmap_path(char *buf, size_t len, const char *dir, int pid);

/*
 * Tracks the map file at @path. A file that does not exist yet is not an
 * error: it is read when it appears. Returns NULL only on ENOMEM.
 */
struct perfmap *perfmap_new(const char *path);
/* Whose map it is: a process, its user, and whether its /tmp is ours. */
struct perfmap_owner {
	uint32_t pid, uid;
	bool same_tmp;
};

/*
 * The map a JIT in process @o->pid writes at @path (its own
 * "/tmp/perf-NSPID.map"), read as that process sees it: through
 * /proc/PID/root, no symlink, a regular file of at most 64 MiB owned by the
 * process's user, re-read at most once a second.  Once the process is gone
 * (maps dumped at exit), only if its /tmp was ours (@o->same_tmp), owned by
 * @o->uid.  Anything else is refused and counted (perfmap_refused_total).
 */
struct perfmap *perfmap_new_proc(const char *path, const struct perfmap_owner *o);
/* Maps refused so far: planted by another user, a symlink, a FIFO, too large. */
uint64_t perfmap_refused_total(void);
/* Lines refused so far past a map's bounds or the bound across maps. */
uint64_t perfmap_lines_refused_total(void);
/* Bytes the maps' tables hold now, pooled ones included. */
uint64_t perfmap_held_bytes(void);
/* Frees the maps kept for reuse. */
void perfmap_pool_clear(void);

/*
 * Re-reads the file when its size or mtime changed. Returns 1 when
 * reloaded, 0 when unchanged, -1 when unreadable (old symbols are kept).
 */
int perfmap_refresh(struct perfmap *pm);

/*
 * Finds the entry covering @addr; a later line wins over an earlier one
 * covering the same address (JIT code reuse). On a miss, refreshes once and
 * retries. Returns 0 with the name and the offset into it (either pointer
 * may be NULL), or -1 when no entry covers @addr.
 */
int perfmap_lookup(struct perfmap *pm, uint64_t addr, const char **name, uint64_t *offset);

size_t perfmap_count(const struct perfmap *pm);
/* Lines of the last load skipped as malformed. */
size_t perfmap_malformed(const struct perfmap *pm);
/* Frees @pm; a process's map already read is kept in the pool instead. */
void perfmap_free(struct perfmap *pm);

#endif
