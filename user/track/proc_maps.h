/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* /proc/PID/maps parsing. */
#ifndef CFIPROF_PROC_MAPS_H
#define CFIPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps_entry {
	uint64_t start, end, offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool read, write, exec, priv;
	bool deleted; /* path ends in " (deleted)" (suffix removed) */
	/*
	 * NUL-terminated, "" for anonymous memory, shorter than PATH_MAX.  It
	 * points into the text the entry was parsed from, never into a buffer of
	 * its own: a process with 60k mappings costs the bytes of its maps file.
	 */
	const char *path;
};

/*
 * Parses one line in place: the path is cut at the newline (and before a
 * " (deleted)" suffix) inside @line, which e->path then points into.
 * Returns 0 on success, -1 if malformed.
 */
int proc_maps_parse_line(char *line, struct maps_entry *e);

/*
 * Reads the executable mappings of pid (all mappings when exec_only is false).
 * Returns the number of entries (>= 0; 0 for kernel threads) with *out one
 * malloc'd block holding the entries and their paths (may be NULL when 0), or
 * -errno (-ENOENT when the process is gone).
 */
int proc_maps_read(int pid, bool exec_only, struct maps_entry **out);

#endif
