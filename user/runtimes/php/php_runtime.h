/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* PHP's frames (bpf/php.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_PHP_RUNTIME_H
#define CFIPROF_PHP_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops php_runtime;

#endif
