/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output files: profiles name processes and paths, so they are private by default. */
#ifndef CFIPROF_OUTPUT_FILE_H
#define CFIPROF_OUTPUT_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define OUTPUT_DEFAULT_MODE 0600

/*
 * Creates (or truncates) path with exactly mode, whatever the umask (a device
 * or pipe keeps its own); a symlink as the last component is followed only
 * under /dev, in a directory no one but root can write (/dev/stdout, not
 * /dev/shm), else ELOOP.  NULL + errno on failure.
 */
FILE *output_create(const char *path, mode_t mode);
/* Parses an octal mode such as "0644"; -1 if invalid. */
int output_parse_mode(const char *s, mode_t *mode);

/*
 * An output that replaces its path only once it is complete: written under a
 * temporary name in the same directory (so a failed or killed run leaves the
 * previous file as it was) and renamed over path by output_commit.  A device
 * or FIFO (/dev/null...) is written in place, as is an existing file whose
 * directory cfiprof may not write.
 */
struct output_file {
	FILE *f;
	const char *path;
	char *tmp; /* NULL: written in place */
};

/* Who the files belong to: under sudo, the user who ran it (SUDO_UID / SUDO_GID). */
struct output_owner {
	bool set;
	uid_t uid;
	gid_t gid;
};

/*
 * Whether path can be written, checked before the workload runs: its
 * directory exists and may be written, it is not a directory nor a symlink
 * (outside /dev).  0, or -1 with errno.
 */
int output_check(const char *path);
/* Whether a and b name the same file (both may not exist yet). */
bool output_same_path(const char *a, const char *b);
/* The invoking user when root runs under sudo; unset otherwise. */
struct output_owner output_owner_from_env(void);
/* Opens o for path (see struct output_file); -1 + errno on failure. */
int output_open(struct output_file *o, const char *path, mode_t mode,
		const struct output_owner *owner);
/*
 * Flushes o and puts it in place; with keep_old, the file it replaces is
 * renamed PATH.old first (as perf keeps perf.data.old).  -1 + errno if any
 * write failed, the temporary file removed.
 */
int output_commit(struct output_file *o, bool keep_old);
/*
 * Flushes and closes o, its temporary file left for output_commit in the
 * process that opened it (report's, which keeps the rights to the
 * directory).  -1 + errno if a write failed.
 */
int output_finish(struct output_file *o);
/* Closes o and removes its temporary file: the previous output stays. */
void output_abort(struct output_file *o);
/*
 * In a child that wrote @o for its parent (report's output child): closes it
 * and forgets the temporary's name, the parent's to rename or remove.
 */
int output_finish_for_parent(struct output_file *o);

#endif
