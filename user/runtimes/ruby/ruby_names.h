/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of Ruby frames: each iseq a sample's frames point at, read from the
 * process once (code_names.c): its label as caller_locations names it
 * ("fib", "block in main", "<main>"), its file, and its line table, from
 * which a frame's pc gives its line as Ruby's own backtraces do (the
 * instruction before pc: the succinct index Ruby keeps once it encoded the
 * positions, or the positions while it has not).
 */
#ifndef CFIPROF_RUBY_NAMES_H
#define CFIPROF_RUBY_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

struct ruby_offsets;

/* An iseq as read: one allocation (blob) holds its name, file and line table. */
struct ruby_iseq {
	uint64_t encoded;    /* the address of its instructions (pc 0) */
	uint32_t iseq_size;  /* its instructions, in VALUEs */
	uint32_t first_line; /* where it begins: the line of a pc not found */
	uint32_t nentries;   /* line-table entries */
	uint32_t file_off;   /* into blob: the file; the name is at 0 */
	uint32_t lines_off;  /* each entry's line (int32) */
	uint32_t pos_off;    /* each entry's position (uint32), 0 when encoded */
	uint32_t succ_off;   /* the succinct index, 0 when none */
	uint32_t succ_len;
	size_t bytes; /* of blob */
	char *blob;
};

/*
 * How Ruby's frames are named (code_names.h): the reader's ctx is the
 * runtime's struct runtime_parts, whose detector says each process's version.
 */
extern const struct code_names_ops ruby_name_ops;

/* What the profile names the frames with (names NULL: "[ruby]", placed by their entry marks). */
void ruby_names_namer(struct code_names *names, struct interp_namer *out);

/* The iseq at addr of process pid (offsets o) into a new *out: true when one.  For tests too. */
bool ruby_iseq_read(uint32_t pid, const struct ruby_offsets *o, uint64_t addr,
		    struct ruby_iseq **out);
/* The line of the instruction before pc (its low 32 bits) in iseq; first_line if not found. */
uint32_t ruby_iseq_line(const struct ruby_iseq *iseq, uint32_t pc);
void ruby_iseq_free(void *iseq);

#endif
