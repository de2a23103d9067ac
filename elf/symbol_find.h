/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A few named symbols of an ELF file, for telling what a runtime's object holds. */
#ifndef CFIPROF_SYMBOL_FIND_H
#define CFIPROF_SYMBOL_FIND_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The values of the defined symbols names[0, n) into values[] (0: not
 * found; a thread-local one's value, its offset in the TLS block, may be 0:
 * bit k of *found, when not NULL, says symbol k was found), from .dynsym
 * (what a stripped binary keeps), then .symtab for those still missing; the
 * tables are charged to *left (elf_read.h).  n at most 32.  How many were
 * found.
 */
size_t elf_find_symbols(Elf *e, const char *const *names, uint64_t *values, size_t n,
			uint64_t *left, uint32_t *found);

/*
 * The bytes of the PROGBITS section holding [vaddr, vaddr + len) into out
 * (read from fd): 0, or -1 when no section holds them or the read fails.
 */
int elf_read_vaddr(Elf *e, int fd, uint64_t vaddr, void *out, size_t len);

/*
 * Where a shared object's global-dynamic accesses to its thread-local
 * symbol name go, which the dynamic loader fills: the GOT slot of its
 * DTPMOD64 relocation (the module id; *desc false) or of its TLSDESC one
 * (a descriptor pair: arm64's default, x86-64's -mtls-dialect=gnu2; *desc
 * true), on x86-64 and arm64; 0 when it has none.  The relocation and
 * symbol tables are charged to *left.
 */
uint64_t elf_tls_slot(Elf *e, const char *name, uint64_t *left, bool *desc);

#endif
