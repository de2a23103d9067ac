/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What profile.c shares with the files that build parts of a profile: profile_interp.c. */
#ifndef CFIPROF_PROFILE_INTERNAL_H
#define CFIPROF_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "user/profile/aggregate.h"
#include "user/profile/profile.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/runtime_units.h"

/*
 * The location of (kind, mapping index + 1 or 0, pid when unmapped, addr),
 * added named name when new (*is_new, if not NULL, says so): its index, or -1.
 */
int64_t profile_add_location(struct profile *p, uint32_t kind, uint32_t pid, uint64_t addr,
			     uint32_t map, uint64_t rel, const char *name, bool *is_new);

/* Parts of one location (struct prof_location's whole), apart by their key. */
enum prof_part { PROF_PART_WHOLE, PROF_PART_OUTER, PROF_PART_INNER };
/* profile_add_location of one part of a location (profile_interp_splice's). */
int64_t profile_add_location_part(struct profile *p, uint32_t kind, uint32_t part, uint32_t pid,
				  uint64_t addr, uint32_t map, uint64_t rel, const char *name,
				  bool *is_new);

/* n labels from the profile's pool, freed with it; NULL when out of memory. */
struct prof_label *profile_alloc_labels(struct profile *p, uint32_t n);

/*
 * The labels s's runtime read with it (Go's goroutine labels), decoded by
 * decode (NULL: none), onto ps, interned: 0, or -1 when out of memory
 * (profile_labels.c).
 */
int profile_runtime_labels(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			   runtime_labels_fn decode);

/* How many interpreter frames s carries: its runtime's units when they are frames. */
static inline uint32_t interp_nr_frames(const struct agg_stack *s)
{
	return runtime_max_frames(s->runtime) ? s->nr_rt : 0;
}

/* Whether a native frame of s named name is its runtime's evaluation loop. */
bool profile_is_eval_frame(struct frame_namer *fn, const struct agg_stack *s, const char *name);
/* Whether s's runtime frames each name a native frame (struct interp_namer's by_pc). */
bool profile_interp_by_pc(struct frame_namer *fn, const struct agg_stack *s);
/*
 * The location of the runtime frame of s, from *next on, that names the
 * native frame at pc (*next moved past it); -2 when none does, -1 when out
 * of memory.
 */
int64_t profile_interp_at_pc(struct profile *p, const struct agg_stack *s, struct frame_namer *fn,
			     uint32_t *next, uint64_t pc);

/*
 * At the evaluation loop's location @id (user frame of s): the interpreter
 * frames its call runs, appended to ps->locs[*n..] (profile_interp_frames),
 * between what is inlined into the loop at that address and the loop itself
 * when DWARF gave it inline levels.  The location to append after them, or
 * -1 when out of memory.
 */
int64_t profile_interp_splice(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			      struct frame_namer *fn, uint32_t *next, int64_t id, uint32_t *n);

/*
 * The interpreter frames one call of the evaluation loop runs, innermost
 * first, from *next on, appended to ps->locs[*n..]: up to the one it was
 * entered with (all that are left when rest).  0, or -1 when out of memory.
 */
int profile_interp_frames(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			  struct frame_namer *fn, uint32_t *next, bool rest, uint32_t *n);
/* How s's innermost interpreter frames are placed (profile_interp.c says when). */
enum profile_leaf_interp {
	PROFILE_LEAF_PLAIN,	    /* each group above the evaluation loop that runs it */
	PROFILE_LEAF_EVAL_UNLINKED, /* the leaf loop runs none: its group is its caller's */
	PROFILE_LEAF_CALL_LINKED,   /* the innermost group's loop not entered: at the leaf */
};

/* maps: s's mapping set. */
enum profile_leaf_interp profile_leaf_interp(struct frame_namer *fn, const struct agg_stack *s,
					     struct map_set *maps);

#endif
