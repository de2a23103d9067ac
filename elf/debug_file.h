/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Finding the separate debug file of a stripped object, in gdb's order:
 *   ROOT/.build-id/xx/rest.debug                      (the object's build-id)
 *   DIR/LINK, DIR/.debug/LINK, ROOT/DIR/LINK          (.gnu_debuglink LINK, DIR the object's)
 * The table compiler (.debug_frame) and the symbolizer (.symtab) both use it,
 * so they take the same file or none.  A candidate is opened as an untrusted
 * path (regular files only) and must be the object's: the same build-id when
 * both have one, else the debuglink CRC; a build-id candidate without a
 * build-id is refused.
 *
 * The object of a process in a container has its debug files in the
 * container: with a pid, every candidate resolves inside /proc/PID/root
 * (openat2 RESOLVE_IN_ROOT), never in ours, so a container neither gets the
 * host's debug file for its object nor points the search at host paths.
 * Refused candidates (and debuglinks that are paths) are counted,
 * debug_file_refused_total.
 */
#ifndef CFIPROF_ELF_DEBUG_FILE_H
#define CFIPROF_ELF_DEBUG_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <libelf.h>
#include <sys/stat.h>

#define DEBUG_ROOT_DEFAULT "/usr/lib/debug"
/*
 * A debuglink candidate is CRC-checked (read whole, with pread) only up to
 * this size, and within the search's deadline: only objects without a
 * build-id are matched by CRC, and those are small (a 4 GiB sparse file
 * planted as a candidate would be seconds of reads per new inode).
 */
#define DEBUG_FILE_CRC_MAX (256ll << 20)
/* The CRC's time when the search has no deadline of its own. */
#define DEBUG_FILE_CRC_NS_DEFAULT (2ull * 1000 * 1000 * 1000)

struct debug_file_search {
	const char *root;	 /* debug root; NULL or "": neither build-id nor ROOT/DIR */
	const char *obj_path;	 /* the object's path, for its debuglink; NULL: no debuglink */
	uint32_t pid;		 /* root and obj_path are inside /proc/PID/root; 0: ours */
	const struct stat *self; /* the object itself, never its own debug file; may be NULL */
	/*
	 * What the caller needs from the file: NULL when @e will do, else why not
	 * (e.g. "has no .symtab"). NULL: any ELF will do.
	 */
	const char *(*unusable)(Elf *e, void *ctx);
	/*
	 * Why a candidate that exists was refused; @via names what led to it
	 * (".note.gnu.build-id" or ".gnu_debuglink"). May be NULL.
	 */
	void (*refused)(void *ctx, const char *via, const char *path, const char *why);
	void *ctx;
	/* CLOCK_MONOTONIC time a CRC must be done by (0: DEBUG_FILE_CRC_NS_DEFAULT from now) */
	uint64_t deadline_ns;
	const int *cancel; /* non-zero (read atomically): stop reading a CRC; may be NULL */
};

struct debug_file {
	int fd;	       /* -1 when not found */
	Elf *elf;      /* ELF_C_READ over fd (elf/elf_read.h): never mapped */
	uint64_t size; /* the file's size when opened: elf_read_truncated */
	char path[PATH_MAX];
};

/*
 * Looks for the debug file of @e as @s says. Returns 0 with @out open (close
 * it with debug_file_close), or -1 with out->fd -1 and out->elf NULL.
 */
int debug_file_find(Elf *e, const struct debug_file_search *s, struct debug_file *out);
/*
 * The same checks for a file fetched by build-id (debuginfod, elf/debuginfod.h):
 * @fd (taken over: closed when refused) is an ELF regular file carrying
 * @build_id (hex) and usable as @s->unusable says; s->root, obj_path and pid
 * are not used. Returns 0 with @out open, or -1 (counted when refused).
 */
int debug_file_take(int fd, const char *path, const char *build_id,
		    const struct debug_file_search *s, struct debug_file *out);
void debug_file_close(struct debug_file *f);

/* Candidates refused so far (process-wide): another build, a symlink, a FIFO, a path as a link. */
uint64_t debug_file_refused_total(void);

#endif
