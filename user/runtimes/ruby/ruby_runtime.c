// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby as a runtime (user/runtimes/runtime.h): the libruby found in
 * processes (ruby_detect, through runtime_detect) and the names and lines
 * of their iseqs (ruby_names), with what the summary and /metrics say.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/ruby/ruby_detect.h"
#include "user/runtimes/ruby/ruby_names.h"
#include "user/runtimes/ruby/ruby_runtime.h"
#include "user/runtimes/runtime_parts.h"

static void *create(int procs_fd)
{
	return runtime_parts_new(&ruby_detect_ops, &ruby_name_ops, procs_fd);
}

static void namer(void *rt, struct interp_namer *out)
{
	ruby_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* Ruby frames: only when a Ruby process was seen. */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	struct runtime_parts *r = rt;
	struct code_names_stats n;
	uint64_t samples = 0;

	for (int i = 1; i < RUBY_STATUS_MAX; i++)
		samples += c[CNT_RT_STATUS(RT_RUBY, i)];
	if (!runtime_parts_summary_head(rt, "ruby", "Ruby", "native stacks only", samples, f))
		return;
	code_names_stats(r->names, &n);
	fprintf(f,
		"%" PRIu64 " with their frames, %" PRIu64
		" of threads without an execution context, %" PRIu64 " truncated, %" PRIu64
		" unreadable; %" PRIu64 " Ruby frames; iseqs %" PRIu64 " read (%" PRIu64
		" unreadable), %" PRIu64 " refused, %" PRIu64 " stalled\n",
		c[CNT_RT_STATUS(RT_RUBY, RUBY_STATUS_OK)],
		c[CNT_RT_STATUS(RT_RUBY, RUBY_STATUS_NO_THREAD)],
		c[CNT_RT_STATUS(RT_RUBY, RUBY_STATUS_TRUNCATED)],
		c[CNT_RT_STATUS(RT_RUBY, RUBY_STATUS_UNREADABLE)], c[CNT_RT_UNITS(RT_RUBY)], n.read,
		n.unreadable, n.refused, n.stalled);
}

/* Processes found, samples by what their control frames gave, iseqs named. */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	const char *const status[RUBY_STATUS_MAX] = {"", "ok", "no_thread", "truncated",
						     "unreadable"};

	runtime_parts_metrics_procs(rt, "ruby",
				    "Processes found running libruby: with a supported version "
				    "(Ruby frames), or unsupported (native stacks only).",
				    f);
	runtime_parts_metrics_samples(
	    "ruby", "Samples of supported Ruby processes by how the control frames were read.",
	    RT_RUBY, status, RUBY_STATUS_MAX, c, f);
	prom_metric(f, "cfiprof_ruby_frames_total", "counter", "Ruby frames recorded.",
		    (double)c[CNT_RT_UNITS(RT_RUBY)]);
	runtime_parts_metrics_reads(
	    rt, "ruby", "iseqs",
	    "Ruby iseqs read from their process to name frames: read, unreadable, refused (over "
	    "the reads per second or the cache's bounds, or the process's memory blocked a read).",
	    f);
}

const struct runtime_ops ruby_runtime = {
    .id = RT_RUBY,
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
