// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kinds of a profile's locations by the names OpenTelemetry's semantic
 * conventions give them (profile.frame.type): the one list the OTLP writer
 * and reader use, with each runtime's from CFI_RUNTIMES.
 */
#include <string.h>

#include "user/profile/profile.h"
#include "user/symbolize/runtime_units.h"

static const char *const frame_types[PROF_LOC_INTERP] = {
    [PROF_LOC_USER] = "native",
    [PROF_LOC_KERNEL] = "kernel",
    [PROF_LOC_GO] = "go",
};

const char *prof_loc_frame_type(uint32_t kind)
{
	if (prof_loc_is_interp(kind))
		return runtime_frame_type(kind - PROF_LOC_INTERP);
	return kind < PROF_LOC_INTERP ? frame_types[kind] : NULL;
}

uint32_t prof_loc_kind_of(const char *frame_type)
{
	for (uint32_t k = 0; k < PROF_LOC_KINDS; k++)
		if (prof_loc_frame_type(k) && !strcmp(prof_loc_frame_type(k), frame_type))
			return k;
	return PROF_LOC_USER;
}
