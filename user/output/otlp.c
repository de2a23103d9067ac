// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * OTLP profiles output; see otlp.h.  The message is built in memory: its
 * dictionary is one length-delimited field whose tables fill as the
 * profiles are encoded, so it can only be written after them (field order
 * does not matter to a decoder).  The wire format is protobuf.c's, the
 * frame tables proto_frames.c's, as pprof's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/vec.h"
#include "common/version.h"
#include "user/output/otlp.h"
#include "user/output/otlp_dict.h"
#include "user/output/otlp_fields.h"
#include "user/track/cgroups.h"

/* Field numbers from profiles.proto (v1development), resource.proto and common.proto. */

#define POD_UID_LEN 40 /* 36 characters and the NUL, rounded */

/* Nesting levels of the message being built, outermost first. */
enum { LV_RES, LV_MSG, LV_SUB, LV_VAL, LV_PACKED, NR_LV };

struct enc {
	const struct profile *p;
	struct otlp_dict d;
	struct pbuf lv[NR_LV];
	uint32_t *order;	   /* sample indices by resource, then sample type */
	uint32_t *pod;		   /* per sample: index + 1 into pods, 0 = none */
	char (*pods)[POD_UID_LEN]; /* distinct pod UIDs */
	size_t nr_pods, cap_pods;
	const char *hostname;
	char host[256];
	bool keep_pid, keep_container;
};

/* The sample type of s: its event's, or 0 in the default CPU profile. */
static uint32_t sample_type_of(const struct profile *p, const struct prof_sample *s)
{
	return p->nr_events ? s->event : 0;
}

static int strcmp_null(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/* Which resource a sample is in: its process, or (pid left out) its service and container. */
static int by_resource(const struct enc *e, uint32_t x, uint32_t y)
{
	const struct prof_sample *a = &e->p->samples[x], *b = &e->p->samples[y];
	int c;

	if (e->keep_pid && a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	c = strcmp_null(a->service, b->service);
	if (c || !e->keep_container)
		return c;
	c = strcmp_null(a->container, b->container);
	if (c)
		return c;
	return e->pod[x] < e->pod[y] ? -1 : e->pod[x] > e->pod[y];
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/*
 * What makes a Sample of a Profile itself (its stack and the attributes
 * encode_sample gives it): samples alike in these are written as one, their
 * values added, as the proto asks.
 */
static int by_identity(const struct enc *e, uint32_t x, uint32_t y)
{
	const struct prof_sample *a = &e->p->samples[x], *b = &e->p->samples[y];
	uint32_t omit = e->p->labels_omitted;
	int c;

	if ((c = cmp_u32(a->nr_locs, b->nr_locs)) ||
	    (c = memcmp(a->locs, b->locs, a->nr_locs * sizeof(*a->locs))))
		return c;
	if (!(omit & PROF_LABEL_TID) && (c = cmp_u32(a->tid, b->tid)))
		return c;
	if (!(omit & PROF_LABEL_COMM) && (c = strcmp_null(a->comm, b->comm)))
		return c;
	if (!(omit & PROF_LABEL_NS_PID) && (c = cmp_u32(a->ns_pid, b->ns_pid)))
		return c;
	if (!(omit & PROF_LABEL_CGROUP) && (c = strcmp_null(a->cgroup, b->cgroup)))
		return c;
	if (!(omit & PROF_LABEL_STOP_REASON) && (c = cmp_u32(a->reason, b->reason)))
		return c;
	if ((c = cmp_u32(a->nr_rt_labels, b->nr_rt_labels)))
		return c;
	for (uint32_t i = 0; i < a->nr_rt_labels; i++)
		if ((c = strcmp(a->rt_labels[i].key, b->rt_labels[i].key)) ||
		    (c = strcmp(a->rt_labels[i].value, b->rt_labels[i].value)))
			return c;
	return 0;
}

static int by_resource_type(const void *x, const void *y, void *ctx)
{
	const struct enc *e = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint32_t ta = sample_type_of(e->p, &e->p->samples[a]);
	uint32_t tb = sample_type_of(e->p, &e->p->samples[b]);
	int c = by_resource(e, a, b);

	if (c)
		return c;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	c = by_identity(e, a, b);
	return c ? c : cmp_u32(a, b);
}

/* Each sample's pod (from its cgroup path), the distinct ones kept once. */
static int find_pods(struct enc *e)
{
	const struct profile *p = e->p;
	const char *last = NULL;
	uint32_t last_pod = 0;
	char uid[POD_UID_LEN];

	for (size_t i = 0; i < p->nr_samples; i++) {
		const char *cg = p->samples[i].cgroup;
		size_t j;

		/* samples of one process come together, their cgroup one string */
		if (!cg || cg == last) {
			e->pod[i] = cg ? last_pod : 0;
			continue;
		}
		last = cg;
		last_pod = 0;
		if (!cgroup_pod_uid(cg, uid, sizeof(uid))) {
			e->pod[i] = 0;
			continue;
		}
		for (j = 0; j < e->nr_pods && strcmp(e->pods[j], uid); j++)
			;
		if (j == e->nr_pods) {
			if (VEC_RESERVE(e->pods, e->nr_pods, e->cap_pods, 8))
				return -1;
			memcpy(e->pods[e->nr_pods++], uid, sizeof(uid));
		}
		e->pod[i] = last_pod = (uint32_t)j + 1;
	}
	return 0;
}

static void kv_str(struct enc *e, const char *key, const char *val)
{
	pb_str(&e->lv[LV_SUB], KV_KEY, key);
	pb_str(&e->lv[LV_VAL], ANY_STRING, val);
	pb_msg(&e->lv[LV_SUB], KV_VALUE, &e->lv[LV_VAL]);
	pb_msg(&e->lv[LV_MSG], RESOURCE_ATTRIBUTES, &e->lv[LV_SUB]);
}

static void kv_int(struct enc *e, const char *key, int64_t val)
{
	pb_str(&e->lv[LV_SUB], KV_KEY, key);
	pb_uint(&e->lv[LV_VAL], ANY_INT, (uint64_t)val);
	pb_msg(&e->lv[LV_SUB], KV_VALUE, &e->lv[LV_VAL]);
	pb_msg(&e->lv[LV_MSG], RESOURCE_ATTRIBUTES, &e->lv[LV_SUB]);
}

/* The keys written by resource_attributes, which the caller's labels may not take. */
static bool resource_key(const char *key)
{
	static const char *const keys[] = {"service.name", "host.name",
					   "process.pid",  "process.executable.name",
					   "container.id", "k8s.pod.uid"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* Whether a label before label i has its key: a resource's attribute keys are unique. */
static bool label_before(const struct profile *p, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(p->labels[j].key, p->labels[i].key))
			return true;
	return false;
}

/*
 * The Resource of the samples order[first..end): the semantic conventions'
 * attributes, then the caller's labels (the agent's --labels).  A service
 * nobody named is "unknown_service:EXECUTABLE", as OpenTelemetry's SDKs say.
 */
static void resource_attributes(struct enc *e, size_t first, size_t end)
{
	const struct profile *p = e->p;
	const struct prof_sample *s = &p->samples[e->order[first]];
	const char *exe = s->comm;
	char unknown[300];

	/* the process's own name is its main thread's, which any thread may rename */
	for (size_t i = first; i < end; i++) {
		const struct prof_sample *t = &p->samples[e->order[i]];

		if (t->tid == t->pid && t->comm) {
			exe = t->comm;
			break;
		}
	}
	if (s->service && s->service[0]) {
		kv_str(e, "service.name", s->service);
	} else {
		snprintf(unknown, sizeof(unknown), "unknown_service%s%s",
			 e->keep_pid && exe ? ":" : "", e->keep_pid && exe ? exe : "");
		kv_str(e, "service.name", unknown);
	}
	kv_str(e, "host.name", e->hostname);
	if (e->keep_pid && s->pid) {
		kv_int(e, "process.pid", s->pid);
		if (exe)
			kv_str(e, "process.executable.name", exe);
	}
	if (e->keep_container && s->container)
		kv_str(e, "container.id", s->container);
	if (e->keep_container && e->pod[e->order[first]])
		kv_str(e, "k8s.pod.uid", e->pods[e->pod[e->order[first]] - 1]);
	for (size_t i = 0; i < p->nr_labels; i++)
		if (strcmp(p->labels[i].key, "hostname") && !resource_key(p->labels[i].key) &&
		    !label_before(p, i))
			kv_str(e, p->labels[i].key, p->labels[i].value);
	pb_msg(&e->lv[LV_RES], RP_RESOURCE, &e->lv[LV_MSG]);
}

static void packed_attr(struct enc *e, uint32_t idx)
{
	if (idx)
		pb_varint(&e->lv[LV_PACKED], idx);
}

/* A Sample: its stack, its thread and why its stack ended, its value. */
static void encode_sample(struct enc *e, const struct prof_sample *s, uint64_t value)
{
	const struct profile *p = e->p;
	struct pbuf *smp = &e->lv[LV_VAL], *packed = &e->lv[LV_PACKED];
	uint32_t omit = p->labels_omitted;

	pb_uint(smp, SAMPLE_STACK, otlp_stack(&e->d, s));
	if (!(omit & PROF_LABEL_TID))
		packed_attr(e, otlp_attr_num(&e->d, "thread.id", s->tid));
	if (s->comm && s->comm[0] && !(omit & PROF_LABEL_COMM))
		packed_attr(e, otlp_attr_str(&e->d, "thread.name", s->comm));
	if (s->ns_pid && s->ns_pid != s->pid && !(omit & PROF_LABEL_NS_PID))
		packed_attr(e, otlp_attr_num(&e->d, "cfiprof.ns_pid", s->ns_pid));
	if (s->cgroup && !(omit & PROF_LABEL_CGROUP))
		packed_attr(e, otlp_attr_str(&e->d, "cfiprof.cgroup", s->cgroup));
	/* the same test profile.c uses to add the [incomplete: ...] frame */
	if (s->reason != STOP_COMPLETE && s->reason != STOP_NO_USER &&
	    !(omit & PROF_LABEL_STOP_REASON))
		packed_attr(e, otlp_attr_str(&e->d, "cfiprof.stop_reason",
					     stop_reason_name((int)s->reason)));
	for (uint32_t i = 0; i < s->nr_rt_labels; i++)
		packed_attr(e, otlp_attr_str(&e->d, s->rt_labels[i].key, s->rt_labels[i].value));
	if (packed->len)
		pb_msg(smp, SAMPLE_ATTRIBUTES, packed);
	pb_varint(packed, value);
	pb_msg(smp, SAMPLE_VALUES, packed);
	pb_msg(&e->lv[LV_SUB], PROFILE_SAMPLES, smp);
}

static void value_type(struct enc *e, int field, const char *type, const char *unit)
{
	pb_uint(&e->lv[LV_VAL], VALUE_TYPE_TYPE, str_index(&e->d.st, type));
	pb_uint(&e->lv[LV_VAL], VALUE_TYPE_UNIT, str_index(&e->d.st, unit));
	pb_msg(&e->lv[LV_SUB], field, &e->lv[LV_VAL]);
}

/*
 * The Profile of sample type t: CPU samples counted, period cpu/nanoseconds
 * (the sampling period); an event's values in its own type and unit, CPU
 * time with the same period, a probe's hits one by one unless estimated;
 * off-CPU time has no period (every block past --min-block is there).
 */
static void encode_profile(struct enc *e, uint32_t t, size_t first, size_t end)
{
	const struct profile *p = e->p;
	const struct prof_event *ev = p->nr_events ? &p->events[t] : NULL;

	value_type(e, PROFILE_SAMPLE_TYPE, ev ? ev->type : "samples", ev ? ev->unit : "count");
	for (size_t i = first, j; i < end; i = j) {
		uint64_t value = 0;

		for (j = i; j < end && !by_identity(e, e->order[i], e->order[j]); j++)
			value += prof_value(p, &p->samples[e->order[j]]);
		encode_sample(e, &p->samples[e->order[i]], value);
	}
	pb_fixed64(&e->lv[LV_SUB], PROFILE_TIME, p->start_unix_ns);
	pb_uint(&e->lv[LV_SUB], PROFILE_DURATION, p->duration_ns);
	if (!ev || !strcmp(ev->type, "cpu")) {
		value_type(e, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_uint(&e->lv[LV_SUB], PROFILE_PERIOD, p->period_ns);
	} else if (strcmp(ev->type, "off_cpu") && !strcmp(ev->unit, "count") && !ev->estimated) {
		value_type(e, PROFILE_PERIOD_TYPE, ev->type, ev->unit);
		pb_uint(&e->lv[LV_SUB], PROFILE_PERIOD, 1);
	}
	pb_msg(&e->lv[LV_MSG], SP_PROFILES, &e->lv[LV_SUB]);
}

/* One ResourceProfiles: the samples order[first..end), one scope, a Profile per type. */
static void encode_resource(struct enc *e, size_t first, size_t end)
{
	const struct profile *p = e->p;
	size_t i = first, run;

	resource_attributes(e, first, end);
	pb_str(&e->lv[LV_SUB], SCOPE_NAME, "cfiprof");
	pb_str(&e->lv[LV_SUB], SCOPE_VERSION, cfiprof_version);
	pb_msg(&e->lv[LV_MSG], SP_SCOPE, &e->lv[LV_SUB]);
	while (i < end) {
		uint32_t t = sample_type_of(p, &p->samples[e->order[i]]);

		for (run = i; run < end && sample_type_of(p, &p->samples[e->order[run]]) == t;
		     run++)
			;
		encode_profile(e, t, i, run);
		i = run;
	}
	pb_msg(&e->lv[LV_RES], RP_SCOPE_PROFILES, &e->lv[LV_MSG]);
}

static const char *host_name(struct enc *e)
{
	for (size_t i = 0; i < e->p->nr_labels; i++)
		if (!strcmp(e->p->labels[i].key, "hostname"))
			return e->p->labels[i].value;
	if (gethostname(e->host, sizeof(e->host) - 1))
		snprintf(e->host, sizeof(e->host), "localhost");
	return e->host;
}

static int encode(struct enc *e, struct pbuf *out)
{
	const struct profile *p = e->p;
	size_t n = 0, first, i;

	e->keep_pid = !(p->labels_omitted & PROF_LABEL_PID);
	e->keep_container = !(p->labels_omitted & PROF_LABEL_CONTAINER);
	e->hostname = host_name(e);
	e->order = calloc(p->nr_samples + 1, sizeof(*e->order));
	e->pod = calloc(p->nr_samples + 1, sizeof(*e->pod));
	if (!e->order || !e->pod || otlp_dict_init(&e->d, p) || find_pods(e))
		return -1;
	/* a sample of an event the profile does not have belongs to no Profile */
	for (i = 0; i < p->nr_samples; i++)
		if (!p->nr_events || p->samples[i].event < p->nr_events)
			e->order[n++] = (uint32_t)i;
	qsort_r(e->order, n, sizeof(*e->order), by_resource_type, e);
	for (first = 0; first < n; first = i) {
		for (i = first + 1; i < n && !by_resource(e, e->order[first], e->order[i]); i++)
			;
		encode_resource(e, first, i);
		pb_msg(out, DATA_RESOURCE_PROFILES, &e->lv[LV_RES]);
	}
	otlp_dict_encode(&e->d, out, DATA_DICTIONARY);
	for (i = 0; i < NR_LV; i++)
		if (e->lv[i].oom)
			out->oom = true;
	return out->oom || e->d.oom || e->d.st.oom ? -1 : 0;
}

int otlp_encode(const struct profile *p, struct pbuf *out)
{
	struct enc *e;
	int err;

	if (profile_check(p))
		return -1;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	e->p = p;
	err = encode(e, out);
	otlp_dict_free(&e->d);
	for (size_t i = 0; i < NR_LV; i++)
		pb_free(&e->lv[i]);
	free(e->order);
	free(e->pod);
	free(e->pods);
	free(e);
	return err;
}

int otlp_write(FILE *f, const struct profile *p)
{
	struct pbuf out = {0};
	int err = otlp_encode(p, &out);

	if (!err && out.len && fwrite(out.data, 1, out.len, f) != out.len)
		err = -1;
	if (!err)
		err = fflush(f) || ferror(f) ? -1 : 0;
	pb_free(&out);
	return err;
}
