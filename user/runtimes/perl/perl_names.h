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
#include "user/runtimes/runtime_detect.h"
#include "user/symbolize/runtime_units.h"

struct perl_names;
struct perl_offsets;

/* rd: the detector whose processes' versions say what to read. */
struct perl_names *perl_names_new(struct runtime_detect *rd);
void perl_names_free(struct perl_names *pn);
struct code_names *perl_names_reader(struct perl_names *pn);
/* What the profile names pn's frames with (pn NULL: "[perl]", placed by their entry marks). */
void perl_names_namer(struct perl_names *pn, struct interp_namer *out);
/* Whether a native frame's name is perl's runops loop, where Perl frames go. */
bool perl_is_eval_frame(const char *native_name);

/* One CV as read: for tests too. */
struct perl_cv {
	bool ok;    /* it was a CV whose name could be read */
	char *name; /* "Package::sub"; one allocation with file */
	char *file; /* "" when unknown */
	size_t bytes;
};

/* The CV at addr of process pid (offsets o) into cv (cv->name: free). */
void perl_cv_read(uint32_t pid, const struct perl_offsets *o, uint64_t addr, struct perl_cv *cv);

#endif
