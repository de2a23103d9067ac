/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dictionary of an OTLP ProfilesData message (profiles.proto's
 * ProfilesDictionary): the mappings, locations, functions, strings,
 * attributes and stacks every profile of the message refers to by index.
 * Index 0 of each table is its zero value, so an index of 0 means "none".
 * Locations and mappings are the profile's own, shifted by one; attributes
 * and stacks are added as the profiles are encoded, each distinct one once.
 */
#ifndef CFIPROF_OUTPUT_OTLP_DICT_H
#define CFIPROF_OUTPUT_OTLP_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/output/proto_frames.h"
#include "user/output/protobuf.h"
#include "user/profile/profile.h"

/* A set of table indices by value: open addressing, 0 = free. */
struct otlp_index {
	uint32_t *slots;  /* table index + 1 */
	uint64_t *hashes; /* each slot's entry's, for growing without the entries */
	size_t nr_slots;  /* a power of two, kept at least twice nr */
	size_t nr;
};

struct otlp_attr {
	uint64_t key;	 /* string index */
	const char *str; /* a string value, borrowed; NULL: num */
	int64_t num;
};

struct otlp_dict {
	const struct profile *p;
	struct strtab st;
	struct proto_frames fr;
	struct otlp_attr *attrs; /* attrs[0] is the zero entry */
	size_t nr_attrs, cap_attrs;
	struct otlp_index attr_index;
	const struct prof_sample **stacks; /* a sample with each stack; stacks[0]: none */
	size_t nr_stacks, cap_stacks;
	struct otlp_index stack_index;
	uint32_t *loc_attr; /* per location: its profile.frame.type attribute, 0 = none */
	uint32_t *map_attr; /* per mapping (the made-up kernel one last): its build id's */
	bool oom;	    /* sticky: the encoders check once at the end */
};

/* The frame tables of p and their attributes; 0 or -1 (out of memory). */
int otlp_dict_init(struct otlp_dict *d, const struct profile *p);
/* The index of attribute key = str (a string borrowed for the write) or = num. */
uint32_t otlp_attr_str(struct otlp_dict *d, const char *key, const char *str);
uint32_t otlp_attr_num(struct otlp_dict *d, const char *key, int64_t num);
/* The index of s's stack (its locations, leaf first); 0 for none. */
uint32_t otlp_stack(struct otlp_dict *d, const struct prof_sample *s);
/* Appends the dictionary as field @field of out; every index must be taken by then. */
void otlp_dict_encode(struct otlp_dict *d, struct pbuf *out, int field);
void otlp_dict_free(struct otlp_dict *d);

#endif
