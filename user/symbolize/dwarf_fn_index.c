// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The functions of a compile unit by address; see dwarf_fn_index.h. */
#include "user/symbolize/dwarf_fn_index.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/vec.h"

#define NO_PARENT UINT32_MAX
/* Nesting followed at most: deeper DIEs are left out (their ancestors still answer). */
#define MAX_DEPTH 256

struct fn_die {
	Dwarf_Off off;
	uint32_t parent; /* the function-like DIE containing it, or NO_PARENT */
};

struct fn_range {
	uint64_t lo, hi;
	uint64_t max_hi; /* largest hi of this and every earlier range: stops the backward scan */
	uint32_t die;	 /* into dies */
	uint32_t depth;
};

struct fn_index {
	struct fn_die *dies;
	uint64_t nr_dies, cap_dies;
	struct fn_range *r;
	uint64_t nr, cap;
};

static bool is_function(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* What may hold concrete functions below it. */
static bool may_hold(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
		return true;
	default:
		return false;
	}
}

/* Adds @die's ranges as function @id; -1 when out of memory or over @max. */
static int add_ranges(struct fn_index *x, Dwarf_Die *die, uint32_t id, uint32_t depth, uint64_t max)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		struct fn_range *v;

		if (!start || end <= start)
			continue;
		if (x->nr >= max)
			return -1;
		v = vec_grow(x->r, sizeof(*v), x->nr, &x->cap, 256);
		if (!v)
			return -1;
		x->r = v;
		x->r[x->nr++] = (struct fn_range){start, end, 0, id, depth};
	}
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* the containing one first: scanning back meets the innermost first */
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	/* aliases over one range (gas names both): the first in DIE order wins, as in libdw */
	return x->die > y->die ? -1 : x->die < y->die;
}

struct frame {
	Dwarf_Die die;
	uint32_t fn; /* innermost function-like DIE at or above it, or NO_PARENT */
};

struct fn_index *fn_index_build(Dwarf_Die *cudie, uint64_t max_ranges)
{
	struct fn_index *x = calloc(1, sizeof(*x));
	struct frame *st = calloc(MAX_DEPTH, sizeof(*st));
	int depth = 0;
	uint64_t i, visits = 0;

	if (!x || !st)
		goto err;
	/* depth-first: st[d] is the DIE being visited at depth d */
	st[0].fn = NO_PARENT;
	if (dwarf_child(cudie, &st[0].die))
		goto done;
	for (;;) {
		Dwarf_Die *d = &st[depth].die;
		int tag = dwarf_tag(d);
		uint32_t fn = st[depth].fn;
		bool descend = may_hold(tag);

		/*
		 * A DIE takes a byte at least: more visits than that means a
		 * DW_AT_sibling pointing back (a hostile file), a walk without end.
		 */
		if (++visits > max_ranges)
			goto err;
		if (is_function(tag)) {
			struct fn_die *v;
			uint64_t before = x->nr;

			v = vec_grow(x->dies, sizeof(*v), x->nr_dies, &x->cap_dies, 256);
			if (!v || x->nr_dies >= UINT32_MAX)
				goto err;
			x->dies = v;
			x->dies[x->nr_dies] = (struct fn_die){dwarf_dieoffset(d), fn};
			if (add_ranges(x, d, (uint32_t)x->nr_dies, (uint32_t)depth, max_ranges))
				goto err;
			/* an abstract instance (no code) holds nothing concrete */
			descend = x->nr > before;
			fn = (uint32_t)x->nr_dies++;
		} else if (tag == DW_TAG_lexical_block) {
			descend = dwarf_hasattr(d, DW_AT_low_pc) || dwarf_hasattr(d, DW_AT_ranges);
		}
		if (descend && depth + 1 < MAX_DEPTH && dwarf_haschildren(d) > 0 &&
		    !dwarf_child(d, &st[depth + 1].die)) {
			st[++depth].fn = fn;
			continue;
		}
		/* next sibling here, or of the nearest ancestor that has one */
		while (dwarf_siblingof(&st[depth].die, &st[depth].die)) {
			if (depth == 0)
				goto done;
			depth--;
		}
	}
done:
	free(st);
	qsort(x->r, x->nr, sizeof(*x->r), by_lo);
	for (i = 0; i < x->nr; i++)
		x->r[i].max_hi =
		    i && x->r[i - 1].max_hi > x->r[i].hi ? x->r[i - 1].max_hi : x->r[i].hi;
	return x;
err:
	free(st);
	fn_index_free(x);
	return NULL;
}

int fn_index_chain(const struct fn_index *x, uint64_t addr, Dwarf_Off *offs, int max)
{
	uint64_t lo = 0, hi = x->nr;
	uint32_t die = NO_PARENT;
	int n = 0;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (x->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the latest start below addr that still covers it is the innermost */
	while (lo && x->r[lo - 1].max_hi > addr) {
		lo--;
		if (addr < x->r[lo].hi) {
			die = x->r[lo].die;
			break;
		}
	}
	for (; die != NO_PARENT && n < max; die = x->dies[die].parent)
		offs[n++] = x->dies[die].off;
	return n;
}

size_t fn_index_bytes(const struct fn_index *x)
{
	return sizeof(*x) + x->cap_dies * sizeof(*x->dies) + x->cap * sizeof(*x->r);
}

void fn_index_free(struct fn_index *x)
{
	if (!x)
		return;
	free(x->dies);
	free(x->r);
	free(x);
}
