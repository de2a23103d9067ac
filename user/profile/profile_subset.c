// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One service's share of a profile.  Pyroscope files a push under the
 * service its name gives and lets that override the samples' own
 * service_name labels, so the agent pushes each service's samples apart.
 */
#include <stdlib.h>
#include <string.h>

#include "user/profile/profile.h"

static bool same_service(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

const char **profile_services(const struct profile *p, size_t *nr)
{
	const char **v = calloc(p->nr_samples + 1, sizeof(*v));
	size_t i, k;

	*nr = 0;
	if (!v)
		return NULL;
	/* a handful of services an interval: a linear search is enough */
	for (i = 0; i < p->nr_samples; i++) {
		for (k = 0; k < *nr && !same_service(v[k], p->samples[i].service); k++)
			;
		if (k == *nr)
			v[(*nr)++] = p->samples[i].service;
	}
	return v;
}

/* Location idx of p in sub (added with its mapping on first use); its new index. */
static uint32_t sub_location(const struct profile *p, struct profile *sub, uint32_t idx,
			     uint32_t *loc_new, uint32_t *map_new)
{
	struct prof_location l;

	if (loc_new[idx])
		return loc_new[idx] - 1;
	l = p->locs[idx];
	if (l.mapping && l.mapping <= p->nr_maps) {
		if (!map_new[l.mapping - 1]) {
			sub->maps[sub->nr_maps++] = p->maps[l.mapping - 1];
			map_new[l.mapping - 1] = (uint32_t)sub->nr_maps;
		}
		l.mapping = map_new[l.mapping - 1];
	}
	sub->locs[sub->nr_locs++] = l;
	loc_new[idx] = (uint32_t)sub->nr_locs;
	return loc_new[idx] - 1;
}

int profile_subset(const struct profile *p, const char *service, struct profile *sub)
{
	uint32_t *loc_new, *map_new;
	size_t i, k;
	int err = -1;

	if (profile_check(p))
		return -1;
	*sub = *p;
	sub->priv = NULL;
	sub->nr_samples = sub->nr_locs = sub->nr_maps = 0;
	sub->total = sub->overflow = 0;
	loc_new = calloc(p->nr_locs + 1, sizeof(*loc_new));
	map_new = calloc(p->nr_maps + 1, sizeof(*map_new));
	sub->samples = calloc(p->nr_samples + 1, sizeof(*sub->samples));
	sub->locs = calloc(p->nr_locs + 1, sizeof(*sub->locs));
	sub->maps = calloc(p->nr_maps + 1, sizeof(*sub->maps));
	if (!loc_new || !map_new || !sub->samples || !sub->locs || !sub->maps)
		goto out;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];
		struct prof_sample *ns;

		if (!same_service(s->service, service))
			continue;
		ns = &sub->samples[sub->nr_samples];
		*ns = *s;
		ns->locs = malloc((s->nr_locs + 1) * sizeof(*ns->locs));
		if (!ns->locs)
			goto out;
		sub->nr_samples++;
		for (k = 0; k < s->nr_locs; k++)
			ns->locs[k] = sub_location(p, sub, s->locs[k], loc_new, map_new);
		sub->total += s->count;
	}
	/* the [overflow] sample has no service: it goes with the samples that have none */
	sub->overflow = service ? 0 : p->overflow;
	err = 0;
out:
	free(loc_new);
	free(map_new);
	if (err)
		profile_free(sub);
	return err;
}
