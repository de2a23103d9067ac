/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What otlp_read.c (the message, its resources and samples) and
 * otlp_read_dict.c (the dictionary's tables) share while reading one OTLP
 * message: the reader's state and the lookups into the tables.
 */
#ifndef CFIPROF_OUTPUT_OTLP_READ_DICT_H
#define CFIPROF_OUTPUT_OTLP_READ_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/output/protobuf.h"
#include "user/profile/profile.h"

#define NAME_MAX_BYTES	4096 /* longer names are cut, as the symbolizer cuts them */
#define LINES_MAX	256  /* inline levels of one location kept */
#define ATTRS_MAX	32   /* attribute indices of one entry looked at */
#define STACK_DEPTH_MAX 4096

struct rattr {
	const char *key, *str; /* str NULL: num */
	int64_t num;
};

struct rfunc {
	const char *name, *system_name, *file;
	uint32_t start_line;
};

struct rstack {
	uint32_t *locs; /* profile location indices, leaf first */
	uint32_t n;
};

struct rd {
	struct profile *p;
	const char **strs;
	size_t nr_strs;
	struct rattr *attrs;
	size_t nr_attrs;
	struct rfunc *funcs;
	size_t nr_funcs;
	struct rstack *stacks;
	size_t nr_stacks, cap_samples;
	uint32_t tmp[STACK_DEPTH_MAX];	       /* the stack being read */
	const char *types[PROF_MAX_EVENTS][2]; /* distinct sample types: type, unit */
	size_t nr_types;
	bool oom;
};

/* A collector of repeated indices. */
struct idx_list {
	uint64_t v[ATTRS_MAX > LINES_MAX ? ATTRS_MAX : LINES_MAX];
	size_t n, max;
};

void rd_idx_add(void *ctx, uint64_t v);
/* String i of the table; "" for one outside it. */
const char *rd_str_at(const struct rd *r, uint64_t i);
/* A length-delimited field as an interned string, cut at NAME_MAX_BYTES and at a NUL. */
const char *rd_read_str(struct rd *r, struct pb_reader *in);
/* AnyValue: a string (inline or from the table) or an integer into a. */
void rd_read_any(struct rd *r, struct pb_reader v, struct rattr *a);
/* The string value of attribute key among the indices of l, or NULL. */
const char *rd_attr_str(const struct rd *r, const struct idx_list *l, const char *key);
/* The integer value of attribute key among the indices of l into *v; false if none. */
bool rd_attr_num(const struct rd *r, const struct idx_list *l, const char *key, int64_t *v);
/*
 * The tables of dict into r (the profile's maps and locations among them),
 * strings first: every other entry names its strings by index.  0 or -1.
 */
int rd_read_dictionary(struct rd *r, struct pb_reader dict);

#endif
