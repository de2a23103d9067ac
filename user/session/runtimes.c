// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The runtimes a session runs; see runtimes.h.  Each one of
 * bpf/runtime_table.h's list, whose folder user/runtimes/NAME/ defines
 * NAME_runtime.
 */
#include <string.h>

#include "common/clock.h"
#include "user/profile/frame_names.h"
#include "user/session/runtimes.h"
#include "user/track/runtime_procs.h"
#include "user/track/runtime_hooks.h"

/* each runtime's folder defines its NAME_runtime */
#define RUNTIME_OPS_DECLARE(id, value, name, tag, frames, type)                                    \
	extern const struct runtime_ops name##_runtime;
CFI_RUNTIMES(RUNTIME_OPS_DECLARE)
#undef RUNTIME_OPS_DECLARE

static const struct runtime_ops *const listed[] = {
#define RUNTIME_OPS_LIST(id, value, name, tag, frames, type) &name##_runtime,
    CFI_RUNTIMES(RUNTIME_OPS_LIST)
#undef RUNTIME_OPS_LIST
};

#define NR_LISTED (sizeof(listed) / sizeof(listed[0]))

const char *const session_runtime_names =
#define RUNTIME_NAME(id, value, name, tag, frames, type) "," #name
    &CFI_RUNTIMES(RUNTIME_NAME)[1];
#undef RUNTIME_NAME

int session_runtimes_parse(const char *list, uint32_t *off, char *err, size_t errlen)
{
	uint32_t on = 0;

	if (!list || !*list) {
		snprintf(err, errlen, "no runtimes listed (%s, all, none)", session_runtime_names);
		return -1;
	}
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		bool known = false;

		if (n == 3 && !strncmp(p, "all", 3)) {
			on = ~0u;
			known = true;
		} else if (n == 4 && !strncmp(p, "none", 4)) {
			known = true;
		}
#define RUNTIME_BIT(id, value, name, tag, frames, type)                                            \
	if (n == strlen(#name) && !strncmp(p, #name, n)) {                                         \
		on |= 1u << id;                                                                    \
		known = true;                                                                      \
	}
		CFI_RUNTIMES(RUNTIME_BIT)
#undef RUNTIME_BIT
		if (!known) {
			snprintf(err, errlen, "unknown runtime '%.*s' (%s, all, none)", (int)n, p,
				 session_runtime_names);
			return -1;
		}
		p += n + (p[n] == ',');
	}
	*off = ~on;
	return 0;
}

int session_runtimes_start(struct session_runtimes *sr, int procs_fd, uint32_t off)
{
	memset(sr, 0, sizeof(*sr));
	sr->procs_fd = procs_fd;
	for (size_t i = 0; i < NR_LISTED; i++) {
		const struct runtime_ops *ops = listed[i];
		struct session_runtime *r = &sr->by_id[ops->id];

		if (off & (1u << ops->id))
			continue;

		r->ops = ops;
		r->rt = ops->create(procs_fd);
		if (!r->rt)
			return -1;
		if (ops->namer)
			ops->namer(r->rt, &r->namer);
		ops->hooks(r->rt, &r->hooks);
		sr->hooks[sr->nr_hooks++] = r->hooks;
	}
	return 0;
}

static void first_check(struct session_runtimes *sr, uint32_t pid)
{
	if (session_runtimes_first_seen(sr) || !runtime_procs_has(sr->procs_fd, pid))
		return;
	if (!__atomic_exchange_n(&sr->first_seen, true, __ATOMIC_ACQ_REL))
		sr->first_proc(sr->first_ctx);
}

/* a process of a runtime whose objects earlier loads saw is claimed early */
static void first_early(void *ctx, uint32_t pid, const struct proc_mapping *maps,
			const struct maps_entry *ents, const int *fds, uint32_t nr,
			uint64_t read_ns)
{
	(void)maps, (void)ents, (void)fds, (void)nr, (void)read_ns;
	first_check(ctx, pid);
}

/* the first of a runtime is claimed at its load's end, once its objects are read */
static void first_at_end(void *ctx, uint32_t pid, const struct proc_mapping *maps, uint32_t nr,
			 uint64_t read_ns)
{
	(void)maps, (void)nr, (void)read_ns;
	first_check(ctx, pid);
}

void session_runtimes_on_first_proc(struct session_runtimes *sr, void (*fn)(void *ctx), void *ctx)
{
	sr->first_proc = fn;
	sr->first_ctx = ctx;
	sr->hooks[sr->nr_hooks++] =
	    (struct runtime_hooks){.ctx = sr, .early = first_early, .proc = first_at_end};
}

bool session_runtimes_first_seen(const struct session_runtimes *sr)
{
	return __atomic_load_n(&sr->first_seen, __ATOMIC_ACQUIRE);
}

void session_runtimes_free(struct session_runtimes *sr)
{
	for (size_t i = 0; i < RT_MAX; i++)
		if (sr->by_id[i].ops && sr->by_id[i].rt)
			sr->by_id[i].ops->destroy(sr->by_id[i].rt);
	memset(sr, 0, sizeof(*sr));
}

/* r's runtime when the session runs it, else NULL */
static const struct session_runtime *runtime_of(struct session_runtimes *sr,
						const struct cfi_sample_record *r)
{
	const struct session_runtime *rt = r->runtime < RT_MAX ? &sr->by_id[r->runtime] : NULL;

	return rt && rt->ops ? rt : NULL;
}

void session_runtimes_note(struct session_runtimes *sr, const struct cfi_sample_record *r,
			   size_t size)
{
	const struct session_runtime *rt = runtime_of(sr, r);

	if (rt && rt->ops->note)
		rt->ops->note(rt->rt, r, size);
}

void session_runtimes_carry(struct session_runtimes *sr, const struct cfi_sample_record *r,
			    size_t size, uint32_t taken_gen)
{
	const struct session_runtime *rt = runtime_of(sr, r);

	if (rt && rt->ops->carry)
		rt->ops->carry(rt->rt, r, size, taken_gen);
}

size_t session_runtimes_deferred_units(void *ctx, struct cfi_sample_record *out, size_t size,
				       const struct deferred_view *v, const __u64 *bps)
{
	struct session_runtimes *sr = ctx;
	const struct session_runtime *rt = runtime_of(sr, out);

	/* a sample taken before its process's runtime was known has none: each may claim it */
	for (size_t i = 0; !rt && out->runtime == RT_NONE && i < RT_MAX; i++)
		if (sr->by_id[i].ops && sr->by_id[i].ops->deferred_units)
			size = sr->by_id[i].ops->deferred_units(sr->by_id[i].rt, out, size, v, bps);
	if (rt && rt->ops->deferred_units)
		size = rt->ops->deferred_units(rt->rt, out, size, v, bps);
	return size;
}

void session_runtimes_wait(struct session_runtimes *sr, double timeout)
{
	double deadline = mono_sec() + timeout;

	for (size_t i = 0; i < RT_MAX; i++) {
		const struct session_runtime *rt = &sr->by_id[i];
		double left = deadline - mono_sec();

		if (rt->ops && rt->ops->wait)
			rt->ops->wait(rt->rt, left > 0 ? left : 0);
	}
}

void session_runtimes_sweep(struct session_runtimes *sr)
{
	for (size_t i = 0; i < RT_MAX; i++)
		if (sr->by_id[i].ops && sr->by_id[i].ops->sweep)
			sr->by_id[i].ops->sweep(sr->by_id[i].rt);
}

void session_runtimes_summary(struct session_runtimes *sr, const uint64_t *counters, FILE *f)
{
	for (size_t i = 0; i < RT_MAX; i++)
		if (sr->by_id[i].ops && sr->by_id[i].ops->summary)
			sr->by_id[i].ops->summary(sr->by_id[i].rt, counters, f);
}

void session_runtimes_metrics(struct session_runtimes *sr, const uint64_t *counters, FILE *f)
{
	for (size_t i = 0; i < RT_MAX; i++)
		if (sr->by_id[i].ops && sr->by_id[i].ops->metrics)
			sr->by_id[i].ops->metrics(sr->by_id[i].rt, counters, f);
}

void session_runtimes_namers(struct session_runtimes *sr, struct frame_namer *fn,
			     const struct interp_namer **names)
{
	/* a recording's: one reader (report) at a time */
	static struct interp_namer recorded[RT_MAX];

	for (size_t i = 0; i < NR_LISTED; i++) {
		const struct runtime_ops *ops = listed[i];
		const struct interp_namer *in = NULL;

		if (sr) {
			/* a runtime the session does not read has no frames to name */
			in =
			    ops->namer && sr->by_id[ops->id].ops ? &sr->by_id[ops->id].namer : NULL;
		} else if (ops->namer) {
			ops->namer(NULL, &recorded[ops->id]);
			in = &recorded[ops->id];
		}
		if (fn) {
			fn->interp[ops->id] = in;
			fn->labels[ops->id] = ops->labels;
		}
		if (names)
			names[ops->id] = in;
	}
}
