// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One service's share of a profile.  Pyroscope files a push under the
 * service its name gives and lets that override the samples' own
 * service_name labels, so the agent pushes each service's samples apart.
 */
#include <stdint.h>
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

struct svc_count {
	const char *name;
	uint64_t samples;
	size_t first; /* index of its first sample: ties keep the first seen */
};

static int cmp_name(const char *a, const char *b)
{
	return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

static int by_service(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const size_t *x = a, *y = b;
	int c = cmp_name(p->samples[*x].service, p->samples[*y].service);

	return c ? c : *x < *y ? -1 : *x > *y;
}

static int by_samples(const void *a, const void *b)
{
	const struct svc_count *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int by_svc_name(const void *a, const void *b)
{
	return cmp_name(((const struct svc_count *)a)->name, ((const struct svc_count *)b)->name);
}

/* The distinct services of p (NULL left out) with their samples; NULL if out of memory. */
static struct svc_count *service_counts(const struct profile *p, size_t *nr)
{
	size_t *idx = malloc((p->nr_samples + 1) * sizeof(*idx)), i;
	struct svc_count *v = calloc(p->nr_samples + 1, sizeof(*v));

	*nr = 0;
	if (!idx || !v) {
		free(idx);
		free(v);
		return NULL;
	}
	for (i = 0; i < p->nr_samples; i++)
		idx[i] = i;
	/* sorted, not searched: an attacker's thousands of names cost n log n */
	qsort_r(idx, p->nr_samples, sizeof(*idx), by_service, (void *)p);
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		if (!s->service)
			continue;
		if (!*nr || cmp_name(v[*nr - 1].name, s->service))
			v[(*nr)++] = (struct svc_count){s->service, 0, idx[i]};
		v[*nr - 1].samples += s->count;
	}
	free(idx);
	return v;
}

int profile_fold_services(struct profile *p, size_t max, const char *other, struct prof_fold *out)
{
	struct svc_count *v, key;
	size_t nr, keep, i;

	memset(out, 0, sizeof(*out));
	v = service_counts(p, &nr);
	if (!v)
		return -1;
	out->services = nr;
	if (nr <= max || max < 2) {
		free(v);
		return 0;
	}
	/* the busiest max - 1 keep their names, the others are one: other */
	keep = max - 1;
	qsort(v, nr, sizeof(*v), by_samples);
	out->folded = nr - keep;
	qsort(v, keep, sizeof(*v), by_svc_name);
	for (i = 0; i < p->nr_samples; i++) {
		struct prof_sample *s = &p->samples[i];

		key.name = s->service;
		if (!s->service || bsearch(&key, v, keep, sizeof(*v), by_svc_name))
			continue;
		out->samples += s->count;
		s->service = other;
	}
	free(v);
	return 0;
}
