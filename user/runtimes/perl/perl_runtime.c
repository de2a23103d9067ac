// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perl as a runtime (user/runtimes/runtime.h): the perls found in processes
 * (perl_detect, through runtime_detect) and the names of their subs
 * (perl_names), with what the summary and /metrics say of them.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/perl/perl_detect.h"
#include "user/runtimes/perl/perl_names.h"
#include "user/runtimes/perl/perl_runtime.h"
#include "user/runtimes/runtime_parts.h"

static void *create(int procs_fd)
{
	return runtime_parts_new(&perl_detect_ops, &perl_name_ops, procs_fd);
}

static void namer(void *rt, struct interp_namer *out)
{
	perl_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* Perl frames: only when a Perl process was seen. */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	struct runtime_parts *r = rt;
	struct code_names_stats n;
	uint64_t samples = 0;

	for (int i = 1; i < PERL_STATUS_MAX; i++)
		samples += c[CNT_RT_STATUS(RT_PERL, i)];
	if (!runtime_parts_summary_head(rt, "perl", "Perl", "native stacks only", samples, f))
		return;
	code_names_stats(r->names, &n);
	fprintf(f,
		"%" PRIu64 " with their frames, %" PRIu64
		" of threads without an interpreter, %" PRIu64 " truncated, %" PRIu64
		" unreadable; %" PRIu64 " Perl frames; subs %" PRIu64 " read (%" PRIu64
		" unreadable), %" PRIu64 " refused, %" PRIu64 " stalled\n",
		c[CNT_RT_STATUS(RT_PERL, PERL_STATUS_OK)],
		c[CNT_RT_STATUS(RT_PERL, PERL_STATUS_NO_THREAD)],
		c[CNT_RT_STATUS(RT_PERL, PERL_STATUS_TRUNCATED)],
		c[CNT_RT_STATUS(RT_PERL, PERL_STATUS_UNREADABLE)], c[CNT_RT_UNITS(RT_PERL)], n.read,
		n.unreadable, n.refused, n.stalled);
}

/* Processes found, samples by what their context stacks gave, subs named. */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	const char *const status[PERL_STATUS_MAX] = {"", "ok", "no_thread", "truncated",
						     "unreadable"};

	runtime_parts_metrics_procs(rt, "perl",
				    "Processes found running perl: with a supported version (Perl "
				    "frames), or unsupported (native stacks only).",
				    f);
	runtime_parts_metrics_samples(
	    "perl", "Samples of supported Perl processes by how the context stacks were read.",
	    RT_PERL, status, PERL_STATUS_MAX, c, f);
	prom_metric(f, "cfiprof_perl_frames_total", "counter", "Perl frames recorded.",
		    (double)c[CNT_RT_UNITS(RT_PERL)]);
	runtime_parts_metrics_reads(
	    rt, "perl", "subs",
	    "Perl subs (CVs) read from their process to name frames: read, unreadable, refused "
	    "(over the reads per second or the cache's bounds, or the process's memory blocked "
	    "a read).",
	    f);
}

const struct runtime_ops perl_runtime = {
    .id = RT_PERL,
    .create = create,
    .destroy = runtime_parts_free,
    .hooks = runtime_parts_hooks,
    .namer = namer,
    .note = runtime_parts_note,
    .carry = runtime_parts_carry,
    .wait = runtime_parts_wait,
    .sweep = runtime_parts_sweep,
    .summary = summary,
    .metrics = metrics,
};
