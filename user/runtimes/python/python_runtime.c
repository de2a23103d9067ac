// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython as a runtime (user/runtimes/runtime.h): the interpreters found in
 * processes (python_detect) and the names of their code objects
 * (python_names), with what the summary and /metrics say of them.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/python/python_detect.h"
#include "user/runtimes/python/python_names.h"
#include "user/runtimes/python/python_runtime.h"

struct python_runtime {
	struct runtime_parts parts; /* first: runtime_parts.c's calls reach it */
	struct python_detect *detect;
	struct python_names *names;
};

static void *create(int procs_fd)
{
	struct python_runtime *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->detect = python_detect_new(procs_fd);
	r->names = r->detect ? python_names_new(python_detect_offsets, r->detect) : NULL;
	if (!r->names) {
		python_detect_free(r->detect);
		free(r);
		return NULL;
	}
	r->parts.detect = python_detect_engine(r->detect);
	r->parts.names = python_names_reader(r->names);
	return r;
}

static void destroy(void *rt)
{
	struct python_runtime *r = rt;

	if (!r)
		return;
	/* the names' reader threads ask the detector: they go first */
	python_names_free(r->names);
	python_detect_free(r->detect);
	free(r);
}

static void namer(void *rt, struct interp_namer *out)
{
	python_names_namer(rt ? ((struct python_runtime *)rt)->names : NULL, out);
}

/* Python frames: only when a Python process was seen. */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	struct python_runtime *r = rt;
	struct code_names_stats n;
	uint64_t samples = 0;

	for (int i = 1; i < PY_STATUS_MAX; i++)
		samples += c[CNT_RT_STATUS(RT_PYTHON, i)];
	if (!runtime_parts_summary_head(rt, "python", "Python", "native stacks only", samples, f))
		return;
	python_names_stats(r->names, &n);
	fprintf(f,
		"%" PRIu64 " with their frame chain, %" PRIu64 " of threads without one, %" PRIu64
		" truncated, %" PRIu64 " unreadable; %" PRIu64
		" Python frames; code objects %" PRIu64 " read (%" PRIu64 " unreadable), %" PRIu64
		" refused, %" PRIu64 " stalled\n",
		c[CNT_RT_STATUS(RT_PYTHON, PY_STATUS_OK)],
		c[CNT_RT_STATUS(RT_PYTHON, PY_STATUS_NO_THREAD)],
		c[CNT_RT_STATUS(RT_PYTHON, PY_STATUS_TRUNCATED)],
		c[CNT_RT_STATUS(RT_PYTHON, PY_STATUS_UNREADABLE)], c[CNT_RT_UNITS(RT_PYTHON)],
		n.read, n.unreadable, n.refused, n.stalled);
}

/* Processes found, samples by what their frame chain gave, code objects named. */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	const char *const status[PY_STATUS_MAX] = {"", "ok", "no_thread", "truncated",
						   "unreadable"};
	struct code_names_stats n;

	code_names_stats(((struct runtime_parts *)rt)->names, &n);
	runtime_parts_metrics_procs(rt, "python",
				    "Processes found running CPython: with a supported version "
				    "(Python frames), or unsupported (native stacks only).",
				    f);
	runtime_parts_metrics_samples(
	    "python",
	    "Samples of supported Python processes by how their thread's frame chain was read.",
	    RT_PYTHON, status, PY_STATUS_MAX, c, f);
	runtime_parts_metrics_reads(
	    rt, "python", "code_objects",
	    "Python code objects read from their process to name frames: read, unreadable (not "
	    "a code object, or the process gone first), refused (over the reads per second or the "
	    "cache's bounds, or the process's memory blocked a read).",
	    f);
	prom_metric(
	    f, "cfiprof_python_reads_stalled_total", "counter",
	    "Reads of a code object blocked over 200 ms by the process's memory (a FUSE file, a "
	    "userfaultfd region): left to their reader thread, the process read no more.",
	    (double)n.stalled);
}

const struct runtime_ops python_runtime = {
    .id = RT_PYTHON,
    .create = create,
    .destroy = destroy,
    .hooks = runtime_parts_hooks,
    .namer = namer,
    .note = runtime_parts_note,
    .carry = runtime_parts_carry,
    .wait = runtime_parts_wait,
    .sweep = runtime_parts_sweep,
    .summary = summary,
    .metrics = metrics,
};
