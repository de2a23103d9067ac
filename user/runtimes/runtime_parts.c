// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared parts of runtimes with interpreter frames; see runtime_parts.h. */
#include <inttypes.h>
#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/runtime_parts.h"

static struct runtime_parts *parts(void *rt)
{
	return rt;
}

void *runtime_parts_new(const struct detect_ops *detect_ops, const struct code_names_ops *names_ops,
			const struct runtime_frames_desc *desc, int procs_fd)
{
	struct runtime_parts *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->desc = desc;
	r->detect = runtime_detect_new(detect_ops, procs_fd);
	if (r->detect && names_ops)
		r->names = code_names_new(names_ops, r);
	if (!r->detect || (names_ops && !r->names)) {
		runtime_parts_free(r);
		return NULL;
	}
	return r;
}

void runtime_parts_free(void *rt)
{
	struct runtime_parts *r = rt;

	if (!r)
		return;
	/* the reader's threads ask the detector: they go first */
	code_names_free(r->names);
	runtime_detect_free(r->detect);
	free(r);
}

void runtime_parts_hooks(void *rt, struct runtime_hooks *out)
{
	runtime_detect_hooks(parts(rt)->detect, out);
}

void runtime_parts_note(void *rt, const struct cfi_sample_record *r, size_t size)
{
	code_names_note(parts(rt)->names, r, size);
}

void runtime_parts_carry(void *rt, const struct cfi_sample_record *r, size_t size,
			  uint32_t taken_gen)
{
	code_names_carry(parts(rt)->names, r, size, taken_gen);
}

bool runtime_parts_wait(void *rt, double timeout)
{
	return code_names_wait(parts(rt)->names, timeout);
}

void runtime_parts_sweep(void *rt)
{
	code_names_sweep(parts(rt)->names);
}

bool runtime_parts_summary_head(void *rt, const char *name, const char *what, const char *missing,
				uint64_t samples, FILE *f)
{
	struct runtime_detect_stats d;
	char unsup[160];

	runtime_detect_stats(parts(rt)->detect, &d);
	runtime_detect_describe_unsupported(&d, what, unsup, sizeof(unsup));
	if (d.unsupported)
		fprintf(f, "cfiprof: %s: %s: %s\n", name, unsup, missing);
	if (!d.procs)
		return false;
	fprintf(f, "cfiprof: %s: %" PRIu64 " process%s, %" PRIu64 " samples: ", name, d.procs,
		d.procs == 1 ? "" : "es", samples);
	return true;
}

void runtime_parts_metrics_procs(void *rt, const char *name, const char *help, FILE *f)
{
	struct runtime_detect_stats d;
	char metric[96];

	runtime_detect_stats(parts(rt)->detect, &d);
	snprintf(metric, sizeof(metric), "cfiprof_%s_processes_total", name);
	prom_header(f, metric, "counter", help);
	prom_labelled(f, metric, "version", "supported", d.procs);
	prom_labelled(f, metric, "version", "unsupported", d.unsupported);
}

void runtime_parts_metrics_samples(const char *name, const char *help, uint8_t rt_id,
				   const char *const *status, int nr, const uint64_t *counters,
				   FILE *f)
{
	char metric[96];

	snprintf(metric, sizeof(metric), "cfiprof_%s_samples_total", name);
	prom_header(f, metric, "counter", help);
	for (int i = 1; i < nr; i++)
		prom_labelled(f, metric, "status", status[i], counters[CNT_RT_STATUS(rt_id, i)]);
}

void runtime_parts_metrics_reads(void *rt, const char *name, const char *what, const char *help,
				 FILE *f)
{
	struct code_names_stats n;
	char metric[96];

	code_names_stats(parts(rt)->names, &n);
	snprintf(metric, sizeof(metric), "cfiprof_%s_%s_total", name, what);
	prom_header(f, metric, "counter", help);
	prom_labelled(f, metric, "outcome", "read", n.read);
	prom_labelled(f, metric, "outcome", "unreadable", n.unreadable);
	prom_labelled(f, metric, "outcome", "refused", n.refused);
}

void runtime_parts_summary(void *rt, const uint64_t *c, FILE *f)
{
	const struct runtime_frames_desc *d = parts(rt)->desc;
	struct code_names_stats n;
	uint64_t samples = 0;

	for (int i = 1; i <= 4; i++)
		samples += c[CNT_RT_STATUS(d->rt, i)];
	if (!runtime_parts_summary_head(rt, d->name, d->what, "native stacks only", samples, f))
		return;
	code_names_stats(parts(rt)->names, &n);
	fprintf(f,
		"%" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64 " truncated, %" PRIu64
		" unreadable; %" PRIu64 " %s frames; %s %" PRIu64 " read (%" PRIu64
		" unreadable), %" PRIu64 " refused, %" PRIu64 " stalled\n",
		c[CNT_RT_STATUS(d->rt, 1)], d->ok_text, c[CNT_RT_STATUS(d->rt, 2)], d->none_text,
		c[CNT_RT_STATUS(d->rt, 3)], c[CNT_RT_STATUS(d->rt, 4)], c[CNT_RT_UNITS(d->rt)],
		d->what, d->units, n.read, n.unreadable, n.refused, n.stalled);
}

void runtime_parts_metrics(void *rt, const uint64_t *c, FILE *f)
{
	const struct runtime_frames_desc *d = parts(rt)->desc;
	char metric[96], help[96];

	runtime_parts_metrics_procs(rt, d->name, d->procs_help, f);
	runtime_parts_metrics_samples(d->name, d->samples_help, d->rt, d->status, 5, c, f);
	snprintf(metric, sizeof(metric), "cfiprof_%s_frames_total", d->name);
	snprintf(help, sizeof(help), "%s frames recorded.", d->what);
	prom_metric(f, metric, "counter", help, (double)c[CNT_RT_UNITS(d->rt)]);
	runtime_parts_metrics_reads(rt, d->name, d->units, d->reads_help, f);
}
