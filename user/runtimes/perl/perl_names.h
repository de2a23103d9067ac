/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of Perl frames: each CV a sample's frames point at, read from the
 * process once (code_names.c): "Package::sub" as caller() names it
 * ("main::__ANON__" for an anonymous sub), the file it was compiled from;
 * the program's main code is "<main>".  The line is the one BPF read.
 */
#ifndef CFIPROF_PERL_NAMES_H
#define CFIPROF_PERL_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"

struct perl_offsets;

/*
 * How Perl's frames are named (code_names.h): the reader's ctx is the
 * runtime's struct runtime_parts, whose detector says each process's version.
 */
extern const struct code_names_ops perl_name_ops;

/* What the profile names the frames with (names NULL: "[perl]", placed by their entry marks). */
void perl_names_namer(struct code_names *names, struct interp_namer *out);

/*
 * The CV at addr of process pid (offsets o) into cv: its name
 * ("Package::sub"), file ("" when unknown).  cv->name: free.  For tests too.
 */
void perl_cv_read(uint32_t pid, const struct perl_offsets *o, uint64_t addr, struct code_name *cv);

#endif
