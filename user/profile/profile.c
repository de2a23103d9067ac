// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Builds the symbolized profile from the aggregated stacks.  Every PC is
 * named once per distinct (mapping, address): large profiles repeat the same
 * frames in thousands of stacks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/strset.h"
#include "common/vec.h"
#include "user/profile/profile.h"
#include "user/profile/profile_internal.h"
#include "user/profile/profile_store.h"
#include "user/profile/saved_frames.h"
#include "user/symbolize/sym_cache.h"

const char *profile_intern(struct profile *p, const char *s)
{
	return strset_intern(&((struct priv *)p->priv)->strs, s);
}

/* Mapping index + 1 for a process mapping (or the kernel when pm is NULL). */
static uint32_t mapping_id(struct profile *p, uint32_t pid, const struct proc_mapping *pm)
{
	struct priv *pv = p->priv;
	/*
	 * the object too: after dlclose/dlopen another one can sit at the same
	 * range (its path as well as its key: a recording's keys are build ids, "" without)
	 */
	struct prof_key k = {pm ? (uint64_t)pid << 32 ^
				      hash_bytes(hash_str(pm->key), pm->path, strlen(pm->path))
				: 0,
			     pm ? pm->start : 0, pm ? pm->end : 0};
	struct prof_mapping *m;
	uint32_t *slot = profile_index_get(&pv->maps, &k);

	if (!slot)
		return 0;
	if (*slot)
		return *slot;
	if (VEC_RESERVE(p->maps, p->nr_maps, pv->cap_maps, 256))
		return 0;
	m = &p->maps[p->nr_maps];
	memset(m, 0, sizeof(*m));
	m->pid = pm ? pid : 0;
	if (pm) {
		const char *bid = pm->sym ? sym_obj_build_id(pm->sym) : "";

		m->start = pm->start;
		m->limit = pm->end;
		m->offset = pm->offset;
		m->path = profile_intern(p, pm->path);
		m->build_id = profile_intern(p, bid ? bid : "");
	} else {
		m->limit = UINT64_MAX;
		m->path = profile_intern(p, "[kernel.kallsyms]");
		m->build_id = profile_intern(p, "");
	}
	if (!m->path || !m->build_id)
		return 0;
	*slot = (uint32_t)++p->nr_maps;
	pv->maps.nr++;
	return *slot;
}

int64_t profile_add_location_part(struct profile *p, uint32_t kind, uint32_t part, uint32_t pid,
				  uint64_t addr, uint32_t map, uint64_t rel, const char *name,
				  bool *is_new)
{
	struct priv *pv = p->priv;
	/* without a mapping, the same address in two processes is two different frames */
	struct prof_key k = {(uint64_t)(kind | part << 16) << 32 | map, map ? 0 : pid, addr};
	struct prof_location *l;
	uint32_t *slot = profile_index_get(&pv->locs, &k);

	if (!slot)
		return -1;
	if (is_new)
		*is_new = false;
	if (*slot && kind != PROF_LOC_SYNTHETIC)
		return *slot - 1;
	if (*slot && !strcmp(p->locs[*slot - 1].function, name))
		return *slot - 1;
	if (is_new)
		*is_new = true;
	if (VEC_RESERVE(p->locs, p->nr_locs, pv->cap_locs, 256))
		return -1;
	l = &p->locs[p->nr_locs];
	l->addr = addr;
	l->rel_addr = rel;
	l->mapping = map;
	l->kind = kind;
	l->nr_lines = 0;
	l->inlined = 0;
	l->lines = NULL;
	l->whole = 0;
	l->inline_part = false;
	l->function = profile_intern(p, name);
	if (!l->function)
		return -1;
	if (!*slot) {
		*slot = (uint32_t)p->nr_locs + 1;
		pv->locs.nr++;
	}
	return (int64_t)p->nr_locs++;
}

int64_t profile_add_location(struct profile *p, uint32_t kind, uint32_t pid, uint64_t addr,
			     uint32_t map, uint64_t rel, const char *name, bool *is_new)
{
	return profile_add_location_part(p, kind, PROF_PART_WHOLE, pid, addr, map, rel, name,
					 is_new);
}


/* Synthetic locations are keyed by their name's hash, not an address. */
static int64_t synthetic_location(struct profile *p, const char *name)
{
	return profile_add_location(p, PROF_LOC_SYNTHETIC, 0, hash_str(name), 0, 0, name, NULL);
}

/* A service name a process chose for itself, cleaned (see PROF_SERVICE_CHARS). */
static const char *service_name_clean(char *s)
{
	size_t n;

	for (n = 0; s[n]; n++)
		if (!strchr(PROF_SERVICE_CHARS, s[n]))
			s[n] = '_';
	if (n >= PROF_SERVICE_MAX)
		s[PROF_SERVICE_MAX - 1] = 0;
	return *s ? s : "_";
}

/* Labels from the sample's cgroup; grouping by container when asked. */
static int label_sample(struct profile *p, struct prof_sample *ps, uint64_t cgroup_id,
			const struct profile_info *info)
{
	const char *path = info && info->cgroups ? cgroup_names_get(info->cgroups, cgroup_id) : NULL;
	char id[256], root[512];

	if (path) {
		ps->cgroup = profile_intern(p, path);
		if (cgroup_container_id(path, id, sizeof(id)))
			ps->container = profile_intern(p, id);
	}
	if (info && info->service_name) {
		ps->service = profile_intern(p, info->service_name);
	} else if (info && info->service_by_process) {
		/* comm is the process's choice, any thread's, changed at will: the last resort */
		if (!path || !cgroup_service_name(path, id, sizeof(id)))
			snprintf(id, sizeof(id), "%s", ps->comm ? ps->comm : "");
		ps->service = profile_intern(p, service_name_clean(id));
	}
	ps->root = ps->comm;
	if (info && info->group_by_container) {
		ps->group = ps->container ? ps->container : ps->cgroup ? ps->cgroup : "[unknown cgroup]";
		ps->group = profile_intern(p, ps->group);
		snprintf(root, sizeof(root), "%s: %s", ps->group ? ps->group : "", ps->comm);
		ps->root = profile_intern(p, root);
	}
	return ps->root ? 0 : -1;
}

struct prof_line *profile_alloc_lines(struct profile *p, uint32_t n)
{
	return profile_pool_alloc(p->priv, n * sizeof(struct prof_line));
}

struct prof_label *profile_alloc_labels(struct profile *p, uint32_t n)
{
	return profile_pool_alloc(p->priv, n * sizeof(struct prof_label));
}

/* The lines a recording kept for a location (report): names of a host that may lack the file. */
static int saved_lines(struct profile *p, struct prof_location *l, const struct saved_level *sv,
		       uint32_t n)
{
	uint32_t i;

	l->lines = profile_alloc_lines(p, n);
	if (!l->lines)
		return -1;
	for (i = 0; i < n; i++) {
		struct prof_line *pl = &l->lines[i];

		pl->function = profile_intern(p, sv[i].function);
		pl->system_name = profile_intern(p, sv[i].system_name);
		pl->file = sv[i].file[0] ? profile_intern(p, sv[i].file) : NULL;
		pl->line = sv[i].line;
		pl->start_line = sv[i].start_line;
		if (!pl->function || !pl->system_name || (sv[i].file[0] && !pl->file))
			return -1;
	}
	l->nr_lines = n;
	l->function = l->lines[n - 1].function;
	return 0;
}

/* Interned display name of @raw, demangled as @o's names are. */
static const char *shown_name(struct profile *p, const struct sym_obj *o, const char *raw)
{
	char *dem = sym_obj_demangle(o, raw);
	const char *s = profile_intern(p, dem ? dem : raw);

	free(dem);
	return s;
}

/*
 * The lines of a location in object @o at @vaddr: the DWARF inline chain when
 * there is one, else the symbol alone (its mangled name is pprof's
 * system_name).  The outermost level keeps the symbol's name, so --no-inline
 * shows what cfiprof always showed.
 */
static int object_lines(struct profile *p, struct prof_location *l, struct sym_obj *o,
			uint64_t vaddr, bool named)
{
	const struct src_frame *fr = NULL;
	const char *raw = NULL;
	int n = sym_obj_lines(o, vaddr, &fr), i;

	if (named && sym_obj_lookup_raw(o, vaddr, &raw))
		raw = NULL;
	if (n <= 0 && !raw)
		return 0;
	if (n <= 0)
		n = 0;
	l->lines = profile_alloc_lines(p, n ? (uint32_t)n : 1);
	if (!l->lines)
		return -1;
	for (i = 0; i < n; i++) {
		struct prof_line *pl = &l->lines[i];
		bool outer = i == n - 1;
		const char *sys = outer && raw ? raw : fr[i].system_name;

		if (outer && named)
			pl->function = l->function;
		else if (sys)
			pl->function = shown_name(p, o, sys);
		else
			pl->function = l->function;
		pl->system_name = sys ? profile_intern(p, sys) : pl->function;
		pl->file = fr[i].file ? profile_intern(p, fr[i].file) : NULL;
		pl->line = fr[i].line;
		pl->start_line = fr[i].start_line;
		if (!pl->function || !pl->system_name || (fr[i].file && !pl->file))
			return -1;
	}
	if (!n) {
		l->lines[0] = (struct prof_line){.function = l->function,
						 .system_name = profile_intern(p, raw)};
		if (!l->lines[0].system_name)
			return -1;
		n = 1;
	}
	l->nr_lines = (uint32_t)n;
	/* DWARF named what the symbol table did not */
	l->function = l->lines[n - 1].function;
	return 0;
}

/*
 * The user frames of s, named with the mappings of the generation it was
 * taken in; its runtime's interpreter frames above the evaluation loop's native frames
 * that run them (profile_interp.c).
 */
static int add_user_frames(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			   struct frame_namer *fn, uint32_t *n)
{
	const uint64_t *user = s->pcs + s->nr_kernel;
	/* a reference: the table load thread may replace them meanwhile */
	struct map_set *maps = fn->pt ? proc_tracker_get_maps(fn->pt, s->pid, s->generation) : NULL;
	char buf[512];
	int64_t id = 0;
	uint32_t nr_py = interp_nr_frames(s),
		 py_next = (s->runtime < RT_MAX && fn->interp[s->runtime]) || fn->saved_interp
			       ? 0
			       : nr_py;
	bool by_pc = py_next < nr_py && profile_interp_by_pc(fn, s);
	enum profile_leaf_interp leaf =
	    py_next < nr_py && !by_pc ? profile_leaf_interp(fn, s, maps) : PROFILE_LEAF_PLAIN;
	bool leaf_unlinked = leaf == PROFILE_LEAF_EVAL_UNLINKED;
	int k;

	ps->ns_pid = maps && maps->ns_pid ? maps->ns_pid : s->pid;
	/* a call being made: its callee's frames at the leaf, before any native frame */
	if (leaf == PROFILE_LEAF_CALL_LINKED &&
	    profile_interp_frames(p, ps, s, fn, &py_next, false, n))
		id = -1;
	for (k = 0; k < s->nr_user && id >= 0; k++) {
		uint64_t lookup = k == 0 || user[k] == 0 ? user[k] : user[k] - 1;
		struct map_set *other;
		const struct proc_mapping *pm;
		uint32_t map;

		const struct saved_level *sv = NULL;
		uint32_t nr_saved = 0;
		bool is_new, named, splice;

		/* a JIT's frame its runtime names, in its place */
		if (by_pc) {
			int64_t js = profile_interp_at_pc(p, s, fn, &py_next, user[k]);

			if (js != -2) {
				id = js;
				if (js >= 0)
					ps->locs[(*n)++] = (uint32_t)js;
				continue;
			}
		}
		pm = proc_tracker_mapping_for(fn->pt, s->pid, s->generation, maps, lookup, &other);
		map = pm ? mapping_id(p, s->pid, pm) : 0;
		if (fn->saved_user)
			sv = saved_frames_find(fn->saved_user, s->pid, pm ? pm->start : 0,
					       pm ? saved_frames_file(pm->path) : 0, lookup,
					       &nr_saved);
		named = frame_name_mapped(fn, s->pid, pm, user[k], k == 0, buf, sizeof(buf)) &&
			pm && pm->sym && !sym_obj_lookup(pm->sym, lookup - pm->bias, NULL, NULL);
		/* the name the location gets: a recording's own on a host without the file */
		splice = py_next < nr_py && !by_pc && !(k == 0 && leaf_unlinked) &&
			 profile_is_eval_frame(fn, s, sv ? sv[nr_saved - 1].function : buf);
		if (id >= 0)
			id = profile_add_location(p,
						  pm && pm->sym &&
							  sym_obj_is_go(pm->sym, lookup - pm->bias)
						      ? PROF_LOC_GO
						      : PROF_LOC_USER,
						  s->pid, lookup, map, pm ? lookup - pm->bias : 0,
						  sv ? sv[nr_saved - 1].function : buf, &is_new);
		if (id >= 0 && is_new && sv && saved_lines(p, &p->locs[id], sv, nr_saved))
			id = -1;
		else if (id >= 0 && is_new && !sv && pm && pm->sym &&
			 object_lines(p, &p->locs[id], pm->sym, lookup - pm->bias, named))
			id = -1;
		if (id >= 0 && splice)
			id = profile_interp_splice(p, ps, s, fn, &py_next, id, n);
		map_set_put(other);
		if (id >= 0)
			ps->locs[(*n)++] = (uint32_t)id;
	}
	map_set_put(maps);
	/* the native walk stopped below the evaluation loops that ran these: the root side */
	if (id >= 0 && py_next < nr_py && !by_pc &&
	    profile_interp_frames(p, ps, s, fn, &py_next, true, n))
		id = -1;
	return id < 0 ? -1 : 0;
}

static int add_sample(struct profile *p, const struct agg_stack *s, struct frame_namer *fn,
		      const struct profile_info *info)
{
	struct priv *pv = p->priv;
	struct prof_sample *ps;
	char buf[512];
	uint32_t n = 0;
	int64_t id;
	int k;

	if (VEC_RESERVE(p->samples, p->nr_samples, pv->cap_samples, 256))
		return -1;
	ps = &p->samples[p->nr_samples];
	memset(ps, 0, sizeof(*ps));
	ps->locs =
	    malloc(((size_t)s->nr_kernel + 2 * s->nr_user + s->nr_rt + 3) * sizeof(*ps->locs));
	ps->comm = profile_intern(p, s->comm[0] ? s->comm : "[unknown]");
	if (!ps->locs || !ps->comm) {
		free(ps->locs);
		return -1;
	}
	p->nr_samples++;
	ps->count = s->count;
	ps->value = p->nr_events ? s->weight : s->count;
	ps->event = s->event < p->nr_events ? s->event : 0;
	ps->pid = s->pid;
	ps->tid = s->tid;
	ps->reason = s->reason;
	if (label_sample(p, ps, s->cgroup_id, info))
		return -1;
	if (s->runtime < RT_MAX && profile_runtime_labels(p, ps, s, fn->labels[s->runtime]))
		return -1;
	for (k = 0; k < s->nr_kernel; k++) {
		uint32_t map = mapping_id(p, 0, NULL);

		frame_name_kernel(fn, s->pcs[k], buf, sizeof(buf));
		/* a probe's stack starts at the probed code, as perf's and bpftrace's */
		if ((s->flags & SAMPLE_PROBE_STACK) && n == 0 && k + 1 < s->nr_kernel &&
		    frame_is_bpf_glue(buf))
			continue;
		id = profile_add_location(p, PROF_LOC_KERNEL, 0, s->pcs[k], map, s->pcs[k], buf,
					  NULL);
		if (id < 0)
			return -1;
		ps->locs[n++] = (uint32_t)id;
	}
	if (add_user_frames(p, ps, s, fn, &n))
		return -1;
	/* off-CPU time whose stack was not walked: one frame saying why */
	if (s->flags & SAMPLE_UNWALKED_MASK) {
		id = synthetic_location(p, unwalked_frame_name((s->flags & SAMPLE_UNWALKED_MASK) >>
							       SAMPLE_UNWALKED_SHIFT));
		if (id < 0)
			return -1;
		ps->locs[n++] = (uint32_t)id;
	}
	if (s->reason != STOP_COMPLETE && s->reason != STOP_NO_USER) {
		snprintf(buf, sizeof(buf), "[incomplete: %s]", stop_reason_name(s->reason));
		id = synthetic_location(p, buf);
		if (id < 0)
			return -1;
		ps->locs[n++] = (uint32_t)id;
	}
	/*
	 * Several events in one profile: each stack starts with its event,
	 * "[off-cpu]"; an event sampled past its budget says so in every output.
	 */
	if (p->nr_events > 1 || (p->nr_events && p->events[ps->event].estimated)) {
		snprintf(buf, sizeof(buf), "[%s%s]", p->events[ps->event].name,
			 p->events[ps->event].estimated ? ", estimated" : "");
		id = synthetic_location(p, buf);
		if (id < 0)
			return -1;
		ps->locs[n++] = (uint32_t)id;
	}
	ps->nr_locs = n;
	p->total += s->count;
	p->total_value += ps->value;
	return 0;
}

/* The values are nanoseconds when every event is a time, else events (hits, periods). */
static int copy_events(struct profile *p, const struct profile_info *info,
		       const struct aggregator *a)
{
	size_t i, ns = 0;

	for (i = 0; i < info->nr_events && i < PROF_MAX_EVENTS; i++) {
		const struct prof_event *e = &info->events[i];

		p->events[i].name = profile_intern(p, e->name);
		p->events[i].type = profile_intern(p, e->type);
		p->events[i].unit = profile_intern(p, e->unit);
		p->events[i].estimated = e->estimated || (i < 32 && (a->estimated_events >> i & 1));
		if (!p->events[i].name || !p->events[i].type || !p->events[i].unit)
			return -1;
		ns += !strcmp(e->unit, "nanoseconds");
	}
	p->nr_events = i;
	p->unit = !i ? PROF_UNIT_SAMPLES : ns == i ? PROF_UNIT_NANOSECONDS : PROF_UNIT_EVENTS;
	return 0;
}

void prof_format_value(const struct profile *p, uint64_t v, char *buf, size_t len)
{
	prof_format_unit(p->unit, v, buf, len);
}

void prof_format_unit(enum prof_unit unit, uint64_t v, char *buf, size_t len)
{
	if (unit == PROF_UNIT_NANOSECONDS) {
		if (v >= 1000000000ull)
			snprintf(buf, len, "%.2f s", (double)v / 1e9);
		else if (v >= 1000000ull)
			snprintf(buf, len, "%.2f ms", (double)v / 1e6);
		else
			snprintf(buf, len, "%.2f us", (double)v / 1e3);
	} else {
		snprintf(buf, len, "%" PRIu64 " %s", v,
			 unit == PROF_UNIT_SAMPLES ? "samples" : "events");
	}
}

int profile_build(struct profile *p, struct aggregator *a, struct frame_namer *fn,
		  const struct profile_info *info)
{
	struct agg_stack **v;
	struct prof_sample *ps;
	uint64_t nr, i;
	int64_t id;
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->priv = calloc(1, sizeof(struct priv));
	if (!p->priv)
		return -1;
	if (info) {
		p->period_ns = info->period_ns;
		p->start_unix_ns = info->start_unix_ns;
		p->duration_ns = info->duration_ns;
		p->event = info->event;
		p->labels = info->labels;
		p->nr_labels = info->nr_labels;
		p->comments = info->comments;
		p->nr_comments = info->nr_comments;
		p->labels_omitted = info->labels_omitted;
		if (copy_events(p, info, a)) {
			profile_free(p);
			return -1;
		}
	}
	if (!p->event)
		p->event = "cpu-clock";
	v = agg_sorted(a, &nr);
	if (!v) {
		profile_free(p);
		return -1;
	}
	for (i = 0; i < nr && !err; i++)
		err = add_sample(p, v[i], fn, info);
	free(v);
	if (!err && a->overflow) {
		struct priv *pv = p->priv;

		id = synthetic_location(p, "[overflow: stack table full]");
		err = id < 0 ||
		      VEC_RESERVE(p->samples, p->nr_samples, pv->cap_samples, 256);
		if (!err) {
			ps = &p->samples[p->nr_samples];
			memset(ps, 0, sizeof(*ps));
			ps->locs = malloc(sizeof(*ps->locs));
			ps->comm = profile_intern(p, "[overflow]");
			ps->root = ps->comm;
			err = !ps->locs || !ps->comm;
			if (!err) {
				ps->locs[0] = (uint32_t)id;
				ps->nr_locs = 1;
				ps->count = a->overflow;
				ps->value = p->nr_events ? a->overflow_weight : a->overflow;
				p->total_value += ps->value;
				ps->reason = STOP_COMPLETE; /* not a walk failure */
				p->nr_samples++;
				p->overflow = a->overflow;
				p->total += a->overflow;
			} else {
				free(ps->locs);
			}
		}
	}
	if (err) {
		profile_free(p);
		return -1;
	}
	return 0;
}

void profile_free(struct profile *p)
{
	struct priv *pv = p->priv;
	size_t i;

	for (i = 0; i < p->nr_samples; i++)
		free(p->samples[i].locs);
	free(p->samples);
	free(p->locs);
	free(p->maps);
	if (pv) {
		profile_pool_free(pv);
		profile_index_free(&pv->locs);
		profile_index_free(&pv->maps);
		strset_free(&pv->strs);
		free(pv);
	}
	memset(p, 0, sizeof(*p));
}

int profile_check(const struct profile *p)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < p->nr_samples; i++)
		for (k = 0; k < p->samples[i].nr_locs; k++)
			if (p->samples[i].locs[k] >= p->nr_locs) {
				errno = EINVAL;
				return -1;
			}
	return 0;
}

char *prof_loc_label(const struct prof_location *l)
{
	const char *fn = l->function ? l->function : "[unknown]";
	char *s;

	if (l->kind != PROF_LOC_KERNEL)
		return strdup(fn);
	if (asprintf(&s, "%s_[k]", fn) < 0)
		return NULL;
	return s;
}

int profile_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->priv = calloc(1, sizeof(struct priv));
	return p->priv ? 0 : -1;
}

int profile_reserve_loc(struct profile *p)
{
	struct priv *pv = p->priv;

	if (!pv) {
		errno = EINVAL;
		return -1;
	}
	return VEC_RESERVE(p->locs, p->nr_locs, pv->cap_locs, 256) ? -1 : 0;
}
