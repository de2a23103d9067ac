/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Perl's frames (bpf/perl.bpf.h): the runtime user/session/runtimes.c lists. */
#ifndef CFIPROF_PERL_RUNTIME_H
#define CFIPROF_PERL_RUNTIME_H

#include "user/runtimes/runtime.h"

extern const struct runtime_ops perl_runtime;

#endif
