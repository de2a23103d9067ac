/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* HotSpot's compiled Java frames (bpf/hotspot.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_HOTSPOT_RUNTIME_H
#define CFIPROF_HOTSPOT_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops hotspot_runtime;

#endif
