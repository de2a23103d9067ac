// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interpreter frames in a profile's samples (profile_internal.h): each
 * group of a sample's frames goes above the native frame of the evaluation
 * loop call that runs it, named by its runtime from the process's memory
 * (record) or as a recording kept them (report).
 */
#include <stdio.h>
#include <string.h>

#include "common/hash.h"

#include "user/profile/profile.h"
#include "user/profile/profile_internal.h"
#include "user/profile/saved_frames.h"
#include "user/profile/saved_interp.h"
#include "user/symbolize/runtime_units.h"

/*
 * The line of level (or, level NULL, the frame itself) of a frame shown
 * as how: pprof's Function the interpreted function in its own source
 * file.  Not the name as the system name: pprof "demangles" a function
 * whose system name is its name, and strips <...> from one that looks like
 * C++, so that <module>, <lambda>, <listcomp> became <unknown>.  A system
 * name of its own (its file and qualified name, unique as a linker name
 * is) keeps the name as it is.
 */
static int interp_line(struct profile *p, const struct agg_stack *s,
		       const struct interp_frame_shown *how, const struct interp_inlined *level,
		       struct prof_line *out)
{
	const char *name = level ? how->strs + level->name : how->name;
	const char *file = level ? how->strs + level->file : how->file;
	char buf[1024];

	*out = (struct prof_line){.function = profile_intern(p, name),
				  .line = level ? level->line : how->line};
	snprintf(buf, sizeof(buf), "%s:%s", *file ? file : runtime_name(s->runtime), name);
	out->system_name = profile_intern(p, buf);
	out->file = *file ? profile_intern(p, file) : NULL;
	return !out->function || !out->system_name || (*file && !out->file) ? -1 : 0;
}

/*
 * The key of a frame shown as how: its code and line, and what was inlined
 * into it there (one pc of a compiled method has other levels than the
 * next, at the same line of the method).  A runtime may keep what tells two
 * codes at one address apart in the code's top 16 bits (HotSpot: the compile
 * id, the Method's digest): mixed back in, or every code once at that
 * address would be the first one's location.
 */
static uint64_t interp_key(const struct cfi_interp_frame *f, const struct interp_frame_shown *how)
{
	uint64_t h = HASH_FNV_OFFSET;

	if (!how->nr_inlined)
		return (f->code << 16 | (how->line & 0xffff)) ^
		       (f->code >> 48) * 0x9e3779b97f4a7c15ull;
	h = hash_bytes(h, &f->code, sizeof(f->code));
	h = hash_bytes(h, &how->line, sizeof(how->line));
	for (uint32_t i = 0; i < how->nr_inlined; i++) {
		const char *name = how->strs + how->inlined[i].name;

		h = hash_bytes(h, name, strlen(name) + 1);
		h = hash_bytes(h, &how->inlined[i].line, sizeof(how->inlined[i].line));
	}
	return h;
}

/*
 * One interpreter frame as shown: keyed by process, code and its
 * instruction's line (and inline levels); the levels inlined into it as
 * the location's lines before its own, as DWARF's inline levels are.
 */
static int64_t interp_location(struct profile *p, const struct agg_stack *s,
			       const struct cfi_interp_frame *f,
			       const struct interp_frame_shown *how)
{
	struct prof_location *l;
	char buf[1024];
	int64_t id;
	uint32_t n = how->nr_inlined + 1, i;
	bool is_new;

	if (*how->file)
		snprintf(buf, sizeof(buf), "%s (%s:%u)", how->name, how->file, how->line);
	else
		snprintf(buf, sizeof(buf), "%s", how->name);
	id = profile_add_location(p, PROF_LOC_INTERP + s->runtime, s->pid, interp_key(f, how), 0, 0,
				  buf, &is_new);
	if (id < 0 || !is_new)
		return id;
	l = &p->locs[id];
	l->lines = profile_alloc_lines(p, n);
	if (!l->lines)
		return -1;
	for (i = 0; i + 1 < n; i++)
		if (interp_line(p, s, how, &how->inlined[i], &l->lines[i]))
			return -1;
	if (interp_line(p, s, how, NULL, &l->lines[n - 1]))
		return -1;
	l->nr_lines = n;
	return id;
}

/*
 * How interpreter frame f of s is shown: as the recording kept it (report),
 * else named by its runtime (else "[NAME]", placed by its raw is_entry).
 */
static void interp_shown(struct frame_namer *fn, const struct agg_stack *s,
			 const struct cfi_interp_frame *f, struct interp_frame_shown *how)
{
	const struct interp_frame_shown *saved =
	    saved_interp_find(fn->saved_interp, s->runtime, s->pid, s->generation, f);
	const struct interp_namer *in = s->runtime < RT_MAX ? fn->interp[s->runtime] : NULL;

	/* a namer sets what it knows: no inline levels unless it says so */
	*how = (struct interp_frame_shown){.file = ""};
	if (saved)
		*how = *saved;
	else if (in)
		in->show(in->ctx, s->pid, s->generation, f, how);
	else
		*how = (struct interp_frame_shown){.role = f->is_entry ? INTERP_FRAME_LAST
								       : INTERP_FRAME_SHOW,
						   .name = "[interpreter]",
						   .file = ""};
}

/*
 * The interpreter frames one call of the evaluation loop runs, innermost
 * first, from *next on: up to the one it was entered with (all that are
 * left when rest).  Frames not running yet (incomplete, shims) are not shown.
 */
int profile_interp_frames(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			  struct frame_namer *fn, uint32_t *next, bool rest, uint32_t *n)
{
	const struct cfi_interp_frame *fr =
	    (const struct cfi_interp_frame *)(s->pcs + s->nr_kernel + s->nr_user);
	struct interp_frame_shown how;
	int64_t id;

	while (*next < interp_nr_frames(s)) {
		const struct cfi_interp_frame *f = &fr[(*next)++];

		interp_shown(fn, s, f, &how);
		if (!(how.role & INTERP_FRAME_SKIP)) {
			id = interp_location(p, s, f, &how);
			if (id < 0)
				return -1;
			ps->locs[(*n)++] = (uint32_t)id;
		}
		if ((how.role & INTERP_FRAME_LAST) && !rest)
			break;
	}
	return 0;
}

bool profile_interp_by_pc(struct frame_namer *fn, const struct agg_stack *s)
{
	const struct interp_namer *in = s->runtime < RT_MAX ? fn->interp[s->runtime] : NULL;

	return in && in->by_pc;
}

int64_t profile_interp_at_pc(struct profile *p, const struct agg_stack *s, struct frame_namer *fn,
			     uint32_t *next, uint64_t pc)
{
	const struct cfi_interp_frame *fr =
	    (const struct cfi_interp_frame *)(s->pcs + s->nr_kernel + s->nr_user);
	struct interp_frame_shown how;
	uint32_t i;

	/* frames in the same order as the native ones: one not met names none of them */
	for (i = *next; i < interp_nr_frames(s); i++) {
		if (!interp_frame_at_pc(&fr[i], pc))
			continue;
		*next = i + 1;
		interp_shown(fn, s, &fr[i], &how);
		if (how.role & INTERP_FRAME_SKIP)
			return -2;
		return interp_location(p, s, &fr[i], &how);
	}
	return -2;
}

/*
 * Location @id's function alone (PROF_PART_OUTER) or its inlined levels
 * alone (PROF_PART_INNER); @id has at least two lines.  The parts share its
 * lines.
 */
static int64_t location_part(struct profile *p, uint32_t pid, int64_t id, uint32_t part)
{
	const struct prof_location w = p->locs[id];
	const struct prof_line *outer = &w.lines[w.nr_lines - 1];
	bool is_new;
	int64_t part_id = profile_add_location_part(
	    p, w.kind, part, pid, w.addr, w.mapping, w.rel_addr,
	    part == PROF_PART_OUTER ? outer->function : outer[-1].function, &is_new);
	struct prof_location *l;

	if (part_id < 0 || !is_new)
		return part_id;
	l = &p->locs[part_id];
	l->whole = (uint32_t)id + 1;
	l->inline_part = part == PROF_PART_INNER;
	l->lines = part == PROF_PART_OUTER ? w.lines + w.nr_lines - 1 : w.lines;
	l->nr_lines = part == PROF_PART_OUTER ? 1 : w.nr_lines - 1;
	return part_id;
}

int64_t profile_interp_splice(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			      struct frame_namer *fn, uint32_t *next, int64_t id, uint32_t *n)
{
	if (p->locs[id].nr_lines > 1) {
		int64_t inner = location_part(p, s->pid, id, PROF_PART_INNER);

		id = inner < 0 ? -1 : location_part(p, s->pid, id, PROF_PART_OUTER);
		if (id < 0)
			return -1;
		ps->locs[(*n)++] = (uint32_t)inner;
	}
	return profile_interp_frames(p, ps, s, fn, next, false, n) ? -1 : id;
}

bool profile_is_eval_frame(struct frame_namer *fn, const struct agg_stack *s, const char *name)
{
	const struct interp_namer *in = s->runtime < RT_MAX ? fn->interp[s->runtime] : NULL;

	return in && interp_is_eval_frame(in, name);
}

/* Whether user frame k of s is its runtime's evaluation loop (named as add_user_frames names it).
 */
static bool frame_is_eval(struct frame_namer *fn, const struct agg_stack *s, struct map_set *maps,
			  int k)
{
	uint64_t pc = s->pcs[s->nr_kernel + k], lookup = k == 0 || pc == 0 ? pc : pc - 1;
	struct map_set *other;
	const struct proc_mapping *pm =
	    proc_tracker_mapping_for(fn->pt, s->pid, s->generation, maps, lookup, &other);
	const struct saved_level *sv = NULL;
	uint32_t nr_saved = 0;
	char buf[512];
	bool eval;

	if (fn->saved_user)
		sv = saved_frames_find(fn->saved_user, s->pid, pm ? pm->start : 0,
				       pm ? saved_frames_file(pm->path) : 0, lookup, &nr_saved);
	frame_name_mapped(fn, s->pid, pm, pc, k == 0, buf, sizeof(buf));
	eval = profile_is_eval_frame(fn, s, sv ? sv[nr_saved - 1].function : buf);
	map_set_put(other);
	return eval;
}

/*
 * Where s's innermost interpreter frames go when its native stack and its
 * interpreter chain (groups ending in INTERP_FRAME_LAST: one call of the
 * evaluation loop each) disagree by one loop:
 *  - PROFILE_LEAF_EVAL_UNLINKED: taken in the evaluation loop before it
 *    linked the frame it runs (its prologue) or after it unlinked it (its
 *    epilogue): the leaf is the loop, and the native stack has one loop more
 *    than the chain has groups.  The innermost group is its caller's.
 *  - PROFILE_LEAF_CALL_LINKED: taken while a call was being made, the
 *    callee's frame linked, the loop that will run it not entered yet (PHP's
 *    zend_call_function in zend_init_func_execute_data, an internal function
 *    calling a closure): the leaf is no loop, the walk is whole (a walk cut
 *    short lacks loops of its own) and the chain has one group more than the
 *    native stack has loops.  The innermost group goes at the leaf, above
 *    the native frames making the call.
 * Not for a chain cut at the runtime's most frames, which lacks its
 * outermost groups.  The groups are counted first: most samples have one,
 * and a call being made needs two, so the native frames' names are looked
 * at only for the few that may disagree.
 */
enum profile_leaf_interp profile_leaf_interp(struct frame_namer *fn, const struct agg_stack *s,
					     struct map_set *maps)
{
	const struct cfi_interp_frame *fr =
	    (const struct cfi_interp_frame *)(s->pcs + s->nr_kernel + s->nr_user);
	struct interp_frame_shown how;
	uint32_t evals = 0, groups = 0, want, i;
	bool leaf_eval;
	int k;

	if (!s->nr_user || !interp_nr_frames(s) ||
	    interp_nr_frames(s) >= runtime_max_frames(s->runtime))
		return PROFILE_LEAF_PLAIN;
	for (i = 0; i < interp_nr_frames(s); i++) {
		interp_shown(fn, s, &fr[i], &how);
		groups += !!(how.role & INTERP_FRAME_LAST);
	}
	leaf_eval = frame_is_eval(fn, s, maps, 0);
	if (leaf_eval)
		want = groups + 1;
	else if (s->reason == STOP_COMPLETE && groups >= 2)
		want = groups - 1;
	else
		return PROFILE_LEAF_PLAIN;
	for (k = 0; k < s->nr_user && evals <= want; k++)
		evals += k == 0 ? leaf_eval : frame_is_eval(fn, s, maps, k);
	if (evals != want)
		return PROFILE_LEAF_PLAIN;
	return leaf_eval ? PROFILE_LEAF_EVAL_UNLINKED : PROFILE_LEAF_CALL_LINKED;
}
