/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run HotSpot: a libjvm.so exporting its layout
 * (gHotSpotVMStructs and the tables beside it, hotspot_vmstructs.h), whose
 * layout the process's own memory then gives.  A JVM whose tables lack
 * what the code cache reader needs is counted unsupported and keeps frame
 * pointers.  Found by runtime_detect.c.
 */
#ifndef CFIPROF_HOTSPOT_DETECT_H
#define CFIPROF_HOTSPOT_DETECT_H

#include "user/runtimes/runtime_detect.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"

_Static_assert(sizeof(struct hotspot_symbols) <= DETECT_INFO_BYTES, "detect info too small");

extern const struct detect_ops hotspot_detect_ops;

#endif
