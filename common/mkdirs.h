/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The one `mkdir -p`: the agent's output and spool directories, the table cache. */
#ifndef CFIPROF_MKDIRS_H
#define CFIPROF_MKDIRS_H

#include <sys/types.h>

/*
 * Creates dir and its missing parents (parents with parent_mode, dir itself
 * with mode); existing ones are left as they are.  0 or -errno.
 */
int mkdirs(const char *dir, mode_t parent_mode, mode_t mode);

#endif
