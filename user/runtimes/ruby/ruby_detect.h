/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run Ruby, of which version: a libruby whose .dynsym has
 * ruby_current_ec (thread-local: the thread's execution context),
 * rb_vm_exec (the VM's loop) and ruby_version (its "3.1.2"), and a DTPMOD64
 * relocation for ruby_current_ec, whose GOT slot the dynamic loader fills
 * with libruby's TLS module id.  A ruby linked statically (its context in
 * the executable's own TLS block) is not found yet.  Found by
 * runtime_detect.c.
 */
#ifndef CFIPROF_RUBY_DETECT_H
#define CFIPROF_RUBY_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/runtime_detect.h"

/* what an object says of Ruby */
struct ruby_object {
	uint64_t tls_slot;   /* ruby_current_ec's GOT slot's address in the file (0: none) */
	uint64_t tls_offset; /* ruby_current_ec's offset in the module's TLS block */
	bool tls_desc;	     /* the slot is a TLSDESC pair (elf_tls_slot) */
	uint64_t symbols;    /* global_symbols' address in the file (0: not found) */
	uint16_t version;    /* major << 8 | minor, 0: unknown */
};

extern const struct detect_ops ruby_detect_ops;

/* What the ELF file fd says of Ruby: 0 when it is a libruby, -1 when not.  For tests too. */
int ruby_elf_info(int fd, struct ruby_object *out);

#endif
