// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An OTLP profiles message back into a profile; see otlp_read.h.  The
 * dictionary is read first (wherever it sits in the message), its tables
 * into arrays indexed as the message indexes them (otlp_read_dict.c); then
 * each resource's profiles become samples, their sample types the
 * profile's events (one type samples/count: the default CPU profile).
 * Field numbers are otlp.c's and otlp_dict.c's, as profiles.proto
 * (v1development) has them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/output/otlp_read.h"
#include "user/output/otlp_read_dict.h"
#include "user/output/otlp_fields.h"
#include "user/output/protobuf.h"

/* What a resource says of its samples' process. */
struct rres {
	int64_t pid;
	const char *exe, *service, *container;
};

static void read_resource(struct rd *r, struct pb_reader m, struct rres *res)
{
	int f, w;

	while (pb_next(&m, &f, &w)) {
		struct pb_reader kv;
		struct rattr a = {0};
		int kf, kw;

		if (f != RESOURCE_ATTRIBUTES || w != PB_WIRE_LEN) {
			pb_skip(&m, w);
			continue;
		}
		kv = pb_read_len(&m);
		a.key = "";
		while (pb_next(&kv, &kf, &kw)) {
			if (kf == KV_KEY && kw == PB_WIRE_LEN)
				a.key = rd_read_str(r, &kv);
			else if (kf == KV_VALUE && kw == PB_WIRE_LEN)
				rd_read_any(r, pb_read_len(&kv), &a);
			else if (kf == KV_KEY_STRINDEX && kw == PB_WIRE_VARINT)
				a.key = rd_str_at(r, pb_read_varint(&kv));
			else
				pb_skip(&kv, kw);
		}
		if (!a.str && !strcmp(a.key, "process.pid"))
			res->pid = a.num;
		else if (a.str && !strcmp(a.key, "process.executable.name"))
			res->exe = a.str;
		else if (a.str && !strcmp(a.key, "service.name") &&
			 strncmp(a.str, "unknown_service", 15))
			res->service = a.str;
		else if (a.str && !strcmp(a.key, "container.id"))
			res->container = a.str;
	}
}

/* The index of sample type (type, unit) among the profile's; -1 past PROF_MAX_EVENTS. */
static int type_index(struct rd *r, const char *type, const char *unit)
{
	size_t i;

	for (i = 0; i < r->nr_types; i++)
		if (!strcmp(r->types[i][0], type) && !strcmp(r->types[i][1], unit))
			return (int)i;
	if (i == PROF_MAX_EVENTS)
		return -1;
	r->types[i][0] = type;
	r->types[i][1] = unit;
	return (int)r->nr_types++;
}

struct rvalues {
	uint64_t sum, n;
};

static void value_add(void *ctx, uint64_t v)
{
	struct rvalues *s = ctx;

	s->sum += v;
	s->n++;
}

static void read_sample(struct rd *r, struct pb_reader m, const struct rres *res, int type)
{
	struct idx_list attrs = {.max = ATTRS_MAX};
	struct rvalues values = {0}, stamps = {0};
	const struct rstack *st = NULL;
	struct prof_sample *s;
	int64_t tid = res->pid, ns_pid = 0;
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if (f == SAMPLE_STACK && w == PB_WIRE_VARINT) {
			uint64_t v = pb_read_varint(&m);

			st = v && v < r->nr_stacks ? &r->stacks[v] : NULL;
		} else if (f == SAMPLE_ATTRIBUTES) {
			pb_read_ints(&m, w, rd_idx_add, &attrs);
		} else if (f == SAMPLE_VALUES) {
			pb_read_ints(&m, w, value_add, &values);
		} else if (f == SAMPLE_TIMESTAMPS && w == PB_WIRE_LEN) {
			/* packed fixed64: 8 bytes each */
			struct pb_reader t = pb_read_len(&m);

			stamps.n += (uint64_t)(t.end - t.p) / 8;
		} else if (f == SAMPLE_TIMESTAMPS && w == PB_WIRE_I64) {
			pb_read_fixed64(&m);
			stamps.n++;
		} else {
			pb_skip(&m, w);
		}
	}
	if (m.bad || VEC_RESERVE(r->p->samples, r->p->nr_samples, r->cap_samples, 256)) {
		r->oom = r->oom || !m.bad;
		return;
	}
	s = &r->p->samples[r->p->nr_samples];
	memset(s, 0, sizeof(*s));
	s->locs = malloc((st && st->n ? st->n : 1) * sizeof(*s->locs));
	if (!s->locs) {
		r->oom = true;
		return;
	}
	r->p->nr_samples++;
	if (st && st->n) {
		memcpy(s->locs, st->locs, st->n * sizeof(*s->locs));
		s->nr_locs = st->n;
	}
	/* a sample of timestamps alone counts one per timestamp, as the proto says */
	s->value = values.n ? values.sum : stamps.n;
	s->count = s->value;
	s->event = (uint32_t)type;
	rd_attr_num(r, &attrs, "thread.id", &tid);
	rd_attr_num(r, &attrs, "cfiprof.ns_pid", &ns_pid);
	s->pid = (uint32_t)res->pid;
	s->tid = (uint32_t)tid;
	s->ns_pid = ns_pid ? (uint32_t)ns_pid : s->pid;
	s->comm = rd_attr_str(r, &attrs, "thread.name");
	if (!s->comm)
		s->comm = res->exe ? res->exe : "[unknown]";
	s->root = s->comm;
	s->cgroup = rd_attr_str(r, &attrs, "cfiprof.cgroup");
	s->container = res->container;
	s->service = res->service;
	r->p->total += s->count;
}

/* A ValueType: its type and unit strings. */
static void read_value_type(struct rd *r, struct pb_reader m, const char **type, const char **unit)
{
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if ((f == VALUE_TYPE_TYPE || f == VALUE_TYPE_UNIT) && w == PB_WIRE_VARINT)
			*(f == VALUE_TYPE_TYPE ? type : unit) = rd_str_at(r, pb_read_varint(&m));
		else
			pb_skip(&m, w);
	}
}

static void read_profile(struct rd *r, struct pb_reader m, const struct rres *res)
{
	const char *type = "", *unit = "", *ptype = "";
	struct pb_reader samples = m;
	int f, w, t;

	while (pb_next(&m, &f, &w)) {
		if (f == PROFILE_SAMPLE_TYPE && w == PB_WIRE_LEN)
			read_value_type(r, pb_read_len(&m), &type, &unit);
		else if (f == PROFILE_TIME && w == PB_WIRE_I64 && !r->p->start_unix_ns)
			r->p->start_unix_ns = pb_read_fixed64(&m);
		else if (f == PROFILE_DURATION && w == PB_WIRE_VARINT && !r->p->duration_ns)
			r->p->duration_ns = pb_read_varint(&m);
		else if (f == PROFILE_PERIOD_TYPE && w == PB_WIRE_LEN)
			read_value_type(r, pb_read_len(&m), &ptype, &(const char *){""});
		else if (f == PROFILE_PERIOD && w == PB_WIRE_VARINT && !strcmp(ptype, "cpu"))
			r->p->period_ns = pb_read_varint(&m);
		else
			pb_skip(&m, w);
	}
	/* the samples once the type is known, wherever the field sat */
	t = type_index(r, type, unit);
	while (t >= 0 && pb_next(&samples, &f, &w) && !r->oom) {
		if (f == PROFILE_SAMPLES && w == PB_WIRE_LEN)
			read_sample(r, pb_read_len(&samples), res, t);
		else
			pb_skip(&samples, w);
	}
}

static void read_resource_profiles(struct rd *r, struct pb_reader m)
{
	struct rres res = {0};
	struct pb_reader scopes = m;
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if (f == RP_RESOURCE && w == PB_WIRE_LEN)
			read_resource(r, pb_read_len(&m), &res);
		else
			pb_skip(&m, w);
	}
	while (pb_next(&scopes, &f, &w) && !r->oom) {
		struct pb_reader sp;
		int sf, sw;

		if (f != RP_SCOPE_PROFILES || w != PB_WIRE_LEN) {
			pb_skip(&scopes, w);
			continue;
		}
		sp = pb_read_len(&scopes);
		while (pb_next(&sp, &sf, &sw) && !r->oom) {
			if (sf == SP_PROFILES && sw == PB_WIRE_LEN)
				read_profile(r, pb_read_len(&sp), &res);
			else
				pb_skip(&sp, sw);
		}
	}
}

/*
 * The sample types as the profile's events; one, samples/count, is the
 * default CPU profile (values are counts), as otlp.c writes it.
 */
static void set_events(struct rd *r)
{
	struct profile *p = r->p;
	bool ns = true;

	if (r->nr_types == 1 && !strcmp(r->types[0][0], "samples") &&
	    !strcmp(r->types[0][1], "count")) {
		p->unit = PROF_UNIT_SAMPLES;
		p->total_value = p->total;
		return;
	}
	p->nr_events = r->nr_types;
	p->total = p->total_value = 0;
	for (size_t i = 0; i < r->nr_types; i++) {
		p->events[i] =
		    (struct prof_event){r->types[i][0], r->types[i][0], r->types[i][1], false};
		ns = ns && !strcmp(r->types[i][1], "nanoseconds");
	}
	p->unit = ns ? PROF_UNIT_NANOSECONDS : PROF_UNIT_EVENTS;
	/* a value (time, hits) per sample: each sample counts once */
	for (size_t i = 0; i < p->nr_samples; i++) {
		p->samples[i].count = 1;
		p->total++;
		p->total_value += p->samples[i].value;
	}
}

int otlp_read(const uint8_t *data, size_t len, struct profile *p, char *err, size_t errlen)
{
	struct pb_reader msg = {data, data + len, false}, top = msg, dict = {data, data, false};
	struct rd *r = calloc(1, sizeof(*r));
	int f, w, ret = -1;

	if (!r || profile_init(p)) {
		snprintf(err, errlen, "out of memory");
		free(r);
		return -1;
	}
	r->p = p;
	/* the dictionary first: the profiles name everything through it */
	while (pb_next(&top, &f, &w)) {
		if (f == DATA_DICTIONARY && w == PB_WIRE_LEN)
			dict = pb_read_len(&top);
		else
			pb_skip(&top, w);
	}
	if (top.bad || top.p != top.end) {
		snprintf(err, errlen, "not an OTLP profiles message (malformed protobuf)");
		goto out;
	}
	if (rd_read_dictionary(r, dict)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while (pb_next(&msg, &f, &w) && !r->oom) {
		if (f == DATA_RESOURCE_PROFILES && w == PB_WIRE_LEN)
			read_resource_profiles(r, pb_read_len(&msg));
		else
			pb_skip(&msg, w);
	}
	if (r->oom) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	set_events(r);
	ret = 0;
out:
	for (size_t i = 0; i < r->nr_stacks; i++)
		free(r->stacks[i].locs);
	free(r->stacks);
	free(r->strs);
	free(r->attrs);
	free(r->funcs);
	free(r);
	if (ret)
		profile_free(p);
	return ret;
}

int otlp_read_file(FILE *f, struct profile *p, char *err, size_t errlen)
{
	size_t len = 0, cap = 0, got = 1;
	uint8_t *data = NULL;
	int ret;

	/* one byte past the bound tells a file at it from one over it */
	while (got && len <= OTLP_READ_MAX) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1u << 20;
			uint8_t *n =
			    realloc(data, ncap < OTLP_READ_MAX + 1 ? ncap : OTLP_READ_MAX + 1);

			if (!n) {
				free(data);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			data = n;
			cap = ncap < OTLP_READ_MAX + 1 ? ncap : OTLP_READ_MAX + 1;
		}
		got = fread(data + len, 1, cap - len, f);
		len += got;
	}
	if (ferror(f) || len > OTLP_READ_MAX) {
		snprintf(err, errlen, "%s",
			 ferror(f) ? strerror(errno)
				   : "larger than 64 MiB, the most an OTLP file read");
		free(data);
		return -1;
	}
	ret = otlp_read(data, len, p, err, errlen);
	free(data);
	return ret;
}
