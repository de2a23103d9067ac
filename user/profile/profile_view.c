// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The view of a profile the frame-per-name writers (folded, SVG, speedscope,
 * text, perf-script) draw: each line of a location a frame of its own
 * (inline levels), or the function alone (--no-inline), names with their
 * source FILE:LINE (--lines).  pprof writes the lines as they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/profile/profile.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Level @j of @l as the view names it; interned. */
static const char *view_name(struct profile *p, const struct prof_location *l, uint32_t j,
			     const struct prof_view *v)
{
	const struct prof_line *pl = &l->lines[j];
	char *s;
	const char *r;

	/*
	 * An interpreter's frame is named with its file and line (profile_interp.c):
	 * its inline levels (a JIT's) as well, so each level reads as the frame would
	 */
	if (!v->lines && prof_loc_is_interp(l->kind) && pl->file && pl->line) {
		if (asprintf(&s, "%s (%s:%u)", pl->function, pl->file, pl->line) < 0)
			return NULL;
		r = profile_intern(p, s);
		free(s);
		return r;
	}
	if (!v->lines || !pl->file || !pl->line)
		return pl->function;
	if (asprintf(&s, "%s %s:%u", pl->function, base_name(pl->file), pl->line) < 0)
		return NULL;
	r = profile_intern(p, s);
	free(s);
	return r;
}

int profile_apply_view(struct profile *p, const struct prof_view *v)
{
	size_t nr_orig = p->nr_locs, i;
	uint32_t *first, *count;
	int err = -1;

	/* profiles without lines (or made by hand, without a pool) show as they are */
	for (i = 0; i < nr_orig && !p->locs[i].nr_lines; i++)
		;
	if (i == nr_orig)
		return 0;
	if (!p->priv) {
		errno = EINVAL;
		return -1;
	}
	first = calloc(nr_orig ? nr_orig : 1, sizeof(*first));
	count = calloc(nr_orig ? nr_orig : 1, sizeof(*count));
	if (!first || !count)
		goto out;
	for (i = 0; i < nr_orig; i++) {
		uint32_t n = p->locs[i].nr_lines, lo = v->no_inline && n ? n - 1 : 0, j;

		first[i] = (uint32_t)i;
		count[i] = 1;
		/* inlined levels split from their function (an interpreter's frames between) */
		if (p->locs[i].inline_part && v->no_inline) {
			count[i] = 0;
			continue;
		}
		if (!n || (n == 1 && !(v->lines && p->locs[i].lines[0].line)) ||
		    (lo == n - 1 && !v->lines))
			continue;
		/* one new location per level shown, innermost first */
		first[i] = (uint32_t)p->nr_locs;
		count[i] = n - lo;
		for (j = lo; j < n; j++) {
			struct prof_location *l;
			const char *name;

			if (profile_reserve_loc(p))
				goto out;
			name = view_name(p, &p->locs[i], j, v);
			if (!name)
				goto out;
			l = &p->locs[p->nr_locs++];
			*l = p->locs[i];
			l->function = name;
			l->nr_lines = 0;
			l->lines = NULL;
			l->inlined = j < n - 1;
		}
	}
	for (i = 0; i < p->nr_samples; i++) {
		struct prof_sample *s = &p->samples[i];
		uint32_t k, total = 0, at = 0, *locs;
		bool one_each = true;

		for (k = 0; k < s->nr_locs; k++) {
			total += count[s->locs[k]];
			one_each &= count[s->locs[k]] == 1;
		}
		if (one_each) {
			for (k = 0; k < s->nr_locs; k++)
				s->locs[k] = first[s->locs[k]];
			continue;
		}
		locs = malloc((total ? total : 1) * sizeof(*locs));
		if (!locs)
			goto out;
		for (k = 0; k < s->nr_locs; k++) {
			uint32_t j, o = s->locs[k];

			for (j = 0; j < count[o]; j++)
				locs[at++] = first[o] + j;
		}
		free(s->locs);
		s->locs = locs;
		s->nr_locs = total;
	}
	err = 0;
out:
	free(first);
	free(count);
	return err;
}
