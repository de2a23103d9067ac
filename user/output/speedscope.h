/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * speedscope's JSON file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per (pid, comm), most samples first, with samples as
 * root-first frame indices into shared.frames and weights in samples.
 * Kernel frames are suffixed _[k] as in folded.
 */
#ifndef CFIPROF_SPEEDSCOPE_H
#define CFIPROF_SPEEDSCOPE_H

#include <stdio.h>

#include "user/profile/profile.h"

/*
 * name (the file's name) may be NULL.  Returns 0, or -1 on allocation or write
 * failure or a malformed profile.
 */
int speedscope_write(FILE *f, const struct profile *p, const char *name);

#endif
