/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the two protobuf outputs (pprof, OTLP) make of a profile's frames
 * alike: the mapping of each location (kernel frames without one get the
 * profile's kernel mapping, or one made up for them), what each mapping's
 * locations carry (file names, line numbers, inline frames), and the
 * distinct functions of the locations' lines, numbered from 1.  Each writer
 * encodes them in its own messages.
 */
#ifndef CFIPROF_OUTPUT_PROTO_FRAMES_H
#define CFIPROF_OUTPUT_PROTO_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/output/protobuf.h"
#include "user/profile/profile.h"

/* What a mapping's locations carry (struct proto_frames' has). */
enum { PROTO_MAP_FILENAMES = 1, PROTO_MAP_LINE_NUMBERS = 2, PROTO_MAP_INLINE_FRAMES = 4 };

/* A Function: string indices, and the line it starts at. */
struct proto_func {
	uint64_t name, system_name, file, start_line;
};

struct proto_frames {
	uint64_t *loc_map;	  /* per location: mapping index + 1, 0 = none */
	struct prof_mapping kmap; /* the made-up kernel mapping, index nr_maps + 1 */
	bool need_kmap;		  /* whether any location uses it */
	unsigned int *has;	  /* per mapping: PROTO_MAP_* */
	size_t *line_first;	  /* per location: where its lines start in line_func */
	size_t nr_lines;	  /* lines of all locations */
	uint64_t *line_func;	  /* per line: its function, index + 1 into funcs */
	struct proto_func *funcs;
	size_t nr_funcs;
};

/* Lines of a location: its own, or the one its function makes. */
static inline uint32_t proto_loc_nr_lines(const struct prof_location *l)
{
	return l->nr_lines ? l->nr_lines : 1;
}

/* loc_map, kmap, has and line_first of p; 0 or -1 (out of memory). */
int proto_frames_map(struct proto_frames *fr, const struct profile *p);
/*
 * The functions of every line, their strings interned in st (after
 * proto_frames_map); 0 or -1 (out of memory).
 */
int proto_frames_functions(struct proto_frames *fr, const struct profile *p, struct strtab *st);
void proto_frames_free(struct proto_frames *fr);

#endif
