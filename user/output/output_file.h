/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Output files: profiles name processes and paths, so they are private by default. */
#ifndef CFIPROF_OUTPUT_FILE_H
#define CFIPROF_OUTPUT_FILE_H

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

#endif
