/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython's frames (bpf/python.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_PYTHON_RUNTIME_H
#define CFIPROF_PYTHON_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops python_runtime;

#endif
