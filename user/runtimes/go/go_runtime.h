/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Go's goroutine labels (bpf/go.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_GO_RUNTIME_H
#define CFIPROF_GO_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops go_runtime;

#endif
