/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CFIPROF_TESTS_TMPDIR_H
#define CFIPROF_TESTS_TMPDIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The test's scratch directory: main fills it in (mkdtemp) before any tpath. */
static char tmpdir[64];

/*
 * tmpdir/name, in one of 8 buffers used in turn: for arguments, not to keep.
 * A path that does not fit aborts: a truncated one would name another file.
 */
static inline const char *tpath(const char *name)
{
	static char buf[8][PATH_MAX];
	static int i;

	i = (i + 1) % 8;
	if (snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name) >= (int)sizeof(buf[i]))
		abort();
	return buf[i];
}

#endif
