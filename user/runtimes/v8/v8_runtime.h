/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* V8's JavaScript frames (bpf/v8.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_V8_RUNTIME_H
#define CFIPROF_V8_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops v8_runtime;

#endif
