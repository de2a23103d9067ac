/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Brendan Gregg's collapsed stacks: comm;root;...;leaf COUNT, kernel frames suffixed _[k]. */
#ifndef CFIPROF_FOLDED_H
#define CFIPROF_FOLDED_H

#include <stdio.h>

#include "user/profile/aggregate.h"
#include "user/profile/frame_names.h"
#include "user/profile/profile.h"

int folded_write_profile(FILE *f, const struct profile *p);
/* Convenience: builds the profile from the aggregated stacks first. */
int folded_write(FILE *f, struct aggregator *a, struct frame_namer *fn);

#endif
