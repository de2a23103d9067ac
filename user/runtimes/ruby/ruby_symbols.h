/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libruby's symbol table (symbol.c's global_symbols: every ID's String), for
 * naming C methods, whose frames hold only their method entry's ID.  libruby
 * does not export it and Debian strips its .symtab: it is found in the code
 * of rb_id2str, which it exports, as the address that code compares an ID's
 * serial with (global_symbols.last_id) on x86-64 and arm64.
 */
#ifndef CFIPROF_RUBY_SYMBOLS_H
#define CFIPROF_RUBY_SYMBOLS_H

#include <gelf.h>
#include <stdint.h>

#include "elf/symbol_find.h"
#include "user/runtimes/ruby/ruby_offsets.h"

/*
 * global_symbols' address in the object (fd, e; rb_id2str at id2str), read
 * from its code; 0 when the code is not as expected or the address is not
 * in its writable data.
 */
uint64_t ruby_symbols_find(Elf *e, int fd, uint64_t id2str);

/* Element i of the Array at v (embedded or not) in process pid; 0 when unreadable. */
uint64_t ruby_array_at(uint32_t pid, const struct ruby_offsets *o, uint64_t v, uint64_t i);

/*
 * The String VALUE naming ID id in process pid, whose global_symbols is at
 * symbols; 0 when any read fails.  The process may be hostile: every read
 * is checked, nothing is followed past the table's own bounds.
 */
uint64_t ruby_id_string(uint32_t pid, const struct ruby_offsets *o, uint64_t symbols,
			uint64_t id);

#endif
