/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kept only while user/track/proc_tracker.h includes it: the symbolizer's
 * declarations live in one header per module (sym_cache.h, demangle.h,
 * kallsyms.h, perfmap.h, frame_names.h). Remove once proc_tracker.h
 * includes "user/symbolize/sym_cache.h".
 */
#ifndef CFIPROF_SYMBOLIZE_H
#define CFIPROF_SYMBOLIZE_H

#include "user/symbolize/sym_cache.h"

#endif
