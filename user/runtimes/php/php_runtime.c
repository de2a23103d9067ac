// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PHP as a runtime (user/runtimes/runtime.h): the builds found in processes
 * (php_detect, through runtime_detect) and the names of their functions
 * (php_names), with what the summary and /metrics say of them.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/php/php_detect.h"
#include "user/runtimes/php/php_names.h"
#include "user/runtimes/php/php_runtime.h"

static void *create(int procs_fd)
{
	return runtime_parts_new(&php_detect_ops, &php_name_ops, procs_fd);
}

static void namer(void *rt, struct interp_namer *out)
{
	php_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* PHP frames: only when a PHP process was seen. */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	struct runtime_parts *r = rt;
	struct code_names_stats n;
	uint64_t samples = 0;

	for (int i = 1; i < PHP_STATUS_MAX; i++)
		samples += c[CNT_RT_STATUS(RT_PHP, i)];
	if (!runtime_parts_summary_head(rt, "php", "PHP", "native stacks only", samples, f))
		return;
	code_names_stats(r->names, &n);
	fprintf(f,
		"%" PRIu64 " with their frame chain, %" PRIu64 " running no PHP code, %" PRIu64
		" truncated, %" PRIu64 " unreadable; %" PRIu64 " PHP frames; functions %" PRIu64
		" read (%" PRIu64 " unreadable), %" PRIu64 " refused, %" PRIu64 " stalled\n",
		c[CNT_RT_STATUS(RT_PHP, PHP_STATUS_OK)], c[CNT_RT_STATUS(RT_PHP, PHP_STATUS_IDLE)],
		c[CNT_RT_STATUS(RT_PHP, PHP_STATUS_TRUNCATED)],
		c[CNT_RT_STATUS(RT_PHP, PHP_STATUS_UNREADABLE)], c[CNT_RT_UNITS(RT_PHP)], n.read,
		n.unreadable, n.refused, n.stalled);
}

/* Processes found, samples by what their frame chain gave, functions named. */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	const char *const status[PHP_STATUS_MAX] = {"", "ok", "idle", "truncated", "unreadable"};

	runtime_parts_metrics_procs(rt, "php",
				    "Processes found running PHP: with a supported version (PHP "
				    "frames), or unsupported (native stacks only).",
				    f);
	runtime_parts_metrics_samples(
	    "php", "Samples of supported PHP processes by how the executor's frame chain was read.",
	    RT_PHP, status, PHP_STATUS_MAX, c, f);
	prom_metric(f, "cfiprof_php_frames_total", "counter", "PHP frames recorded.",
		    (double)c[CNT_RT_UNITS(RT_PHP)]);
	runtime_parts_metrics_reads(
	    rt, "php", "functions",
	    "PHP functions read from their process to name frames: read, unreadable, refused "
	    "(over the reads per second or the cache's bounds, or the process's memory blocked "
	    "a read).",
	    f);
}

const struct runtime_ops php_runtime = {
    .id = RT_PHP,
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
