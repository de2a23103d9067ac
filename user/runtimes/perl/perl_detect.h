/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run perl, of which version: an executable whose .dynsym
 * has Perl_runops_standard, PL_current_context (thread-local: the thread's
 * interpreter) and PL_revision / PL_version (the version's bytes), with
 * its own TLS block (PT_TLS), where PL_current_context lies at a fixed
 * offset from the thread pointer.  A perl whose interpreter is in a
 * libperl.so (its TLS block placed at run time) is counted unsupported.
 * Found by runtime_detect.c.
 */
#ifndef CFIPROF_PERL_DETECT_H
#define CFIPROF_PERL_DETECT_H

#include <stdint.h>

#include "user/runtimes/runtime_detect.h"

/* what an object says of perl */
struct perl_object {
	uint16_t version;    /* major << 8 | minor, 0: unknown */
	int32_t tls_context; /* PL_current_context from the thread pointer (0: not found) */
};

extern const struct detect_ops perl_detect_ops;

/* What the ELF file fd says of perl: 0 when it is a perl, -1 when not.  For tests too. */
int perl_elf_info(int fd, struct perl_object *out);

#endif
