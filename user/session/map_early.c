// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The largest maps, created while libbpf parses (map_early.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <string.h>
#include <unistd.h>

#include "user/session/map_early.h"

static void *create_maps(void *arg)
{
	struct map_early *me = arg;

	for (int i = 0; i < me->n; i++) {
		const struct map_early_spec *s = &me->spec[i];
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = s->flags);

		me->fd[i] = bpf_map_create(s->type, s->name, s->key_size, s->value_size,
					   s->max_entries, &opts);
	}
	return NULL;
}

void map_early_start(struct map_early *me, const struct map_early_spec *spec, int n)
{
	memset(me, 0, sizeof(*me));
	me->n = n < MAP_EARLY_MAX ? n : MAP_EARLY_MAX;
	for (int i = 0; i < MAP_EARLY_MAX; i++)
		me->fd[i] = -1;
	memcpy(me->spec, spec, (size_t)me->n * sizeof(*spec));
	me->started = !pthread_create(&me->thread, NULL, create_maps, me);
	if (me->started)
		pthread_setname_np(me->thread, "cfiprof-maps");
}

static bool matches(const struct map_early_spec *s, const struct bpf_map *m)
{
	return bpf_map__type(m) == s->type && bpf_map__key_size(m) == s->key_size &&
	       bpf_map__value_size(m) == s->value_size &&
	       bpf_map__max_entries(m) == s->max_entries && bpf_map__map_flags(m) == s->flags;
}

static void join(struct map_early *me)
{
	if (me->started)
		pthread_join(me->thread, NULL);
	me->started = false;
}

void map_early_hand_over(struct map_early *me, struct bpf_object *obj)
{
	join(me);
	for (int i = 0; i < me->n; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, me->spec[i].name);

		if (me->fd[i] >= 0 && m && matches(&me->spec[i], m) &&
		    !bpf_map__reuse_fd(m, me->fd[i])) {
			me->taken++;
			continue;
		}
		if (me->fd[i] < 0)
			continue;
		/* not this object's: nobody else may take it for the object's own */
		close(me->fd[i]);
		me->fd[i] = -1;
	}
}

void map_early_free(struct map_early *me)
{
	join(me);
	for (int i = 0; i < me->n; i++) {
		if (me->fd[i] >= 0)
			close(me->fd[i]);
		me->fd[i] = -1;
	}
}
