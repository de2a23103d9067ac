/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one rule dictionary every loaded table's rows point into (the BPF rules
 * array), with a reference count per id: the number of loaded tables using
 * it.  An id no table uses any more stays findable (a table loaded again
 * takes it back) and is reused for another rule only after grace_ns, since a
 * walk on another CPU may still read it.  Id 0 ("no information") is never
 * freed.
 */
#ifndef CFIPROF_GLOBAL_RULES_H
#define CFIPROF_GLOBAL_RULES_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

#define GLOBAL_RULE_NONE UINT32_MAX

struct global_rules {
	struct cfi_rule *rules; /* the rules map (mmap): rules[id] */
	uint32_t max;		/* its capacity */
	uint32_t nr;		/* ids ever handed out: 0 .. nr - 1 */
	uint32_t live;		/* ids some loaded table uses (id 0 included) */
	uint64_t grace_ns;
	uint64_t reused; /* ids given to another rule after their quarantine */
	uint32_t *slots; /* open addressing (linear probing) over rules[]: id + 1 */
	uint32_t nr_slots;
	uint32_t *refs;
	uint64_t *freed_ns; /* when refs dropped to 0 */
	/* unused ids (refs 0), oldest first: a list threaded through prev/next */
	uint32_t *prev, *next;
	uint32_t unused_head, unused_tail, nr_unused;
};

int global_rules_init(struct global_rules *gr, struct cfi_rule *rules, uint32_t max);
void global_rules_destroy(struct global_rules *gr);
/* The id of r, GLOBAL_RULE_NONE when the dictionary does not hold it. */
uint32_t global_rules_find(const struct global_rules *gr, const struct cfi_rule *r);
/* Ids a new rule could take: never used ones, and unused ones (perhaps still quarantined). */
uint32_t global_rules_room(const struct global_rules *gr);
/* One more table uses id (found, or added). */
void global_rules_ref(struct global_rules *gr, uint32_t id);
/* One table less uses id (now_ns: CLOCK_MONOTONIC). */
void global_rules_unref(struct global_rules *gr, uint32_t id, uint64_t now_ns);
/*
 * Adds r (not held yet) with one reference; its id, or GLOBAL_RULE_NONE when
 * no id is free: *wait_until_ns is then when the oldest quarantined one is
 * (0: none is, the dictionary is full).
 */
uint32_t global_rules_add(struct global_rules *gr, const struct cfi_rule *r, uint64_t now_ns,
			  uint64_t *wait_until_ns);

#endif
