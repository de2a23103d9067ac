/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Ruby's frames (bpf/ruby.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_RUBY_RUNTIME_H
#define CFIPROF_RUBY_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops ruby_runtime;

#endif
