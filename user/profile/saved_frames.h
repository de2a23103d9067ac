/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User frames as a recording keeps them (recording.h, "uframe" lines): the
 * lines of each location (struct prof_line), keyed by (pid, mapping start,
 * the mapped file's saved_frames_file, address looked up): two files mapped
 * at one address in turn (dlopen/dlclose) keep their own names.  `report`
 * names a location from here when the recording has it, so it renders what
 * `record` rendered on a host that lacks the binaries, their debug files or
 * the JIT's perf map.
 */
#ifndef CFIPROF_SAVED_FRAMES_H
#define CFIPROF_SAVED_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct saved_level {
	char *function, *system_name, *file; /* file "" when unknown */
	uint32_t line, start_line;
};

struct saved_frames;

struct saved_frames *saved_frames_new(void);
void saved_frames_free(struct saved_frames *sf);

/*
 * Sets level @level (0: innermost) of the location; levels come in order,
 * 0 first. Returns 0, or -1 when out of memory or out of order (EINVAL).
 */
int saved_frames_add(struct saved_frames *sf, uint32_t pid, uint64_t map_start, uint64_t file,
		     uint64_t addr, uint32_t level, const struct saved_level *lv);

/*
 * The levels of a location, innermost first, and their number; NULL when not
 * kept.  A location saved without its file (file 0: older recordings) is
 * found by any file.
 */
const struct saved_level *saved_frames_find(const struct saved_frames *sf, uint32_t pid,
					    uint64_t map_start, uint64_t file, uint64_t addr,
					    uint32_t *n);

/* What tells a mapping's file apart in the key: a hash of its path, never 0. */
uint64_t saved_frames_file(const char *path);

/* Locations kept. */
size_t saved_frames_count(const struct saved_frames *sf);

#endif
