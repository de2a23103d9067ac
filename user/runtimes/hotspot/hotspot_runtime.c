// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HotSpot as a runtime (user/runtimes/runtime.h): the JVMs found
 * (hotspot_detect, through runtime_detect), their code caches' unwind rows
 * (hotspot_jit, through the tracker's JIT hooks) and the names of their
 * compiled Java frames (hotspot_names), with what the summary and
 * /metrics say of them.
 */
#include <inttypes.h>

#include "user/output/prom_text.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/hotspot/hotspot_deferred.h"
#include "user/runtimes/hotspot/hotspot_detect.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/hotspot/hotspot_runtime.h"
#include "user/runtimes/hotspot/hotspot_scopes.h"

static void namer(void *rt, struct interp_namer *out)
{
	hotspot_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* Java frames in the summary (only when a JVM was seen) and /metrics. */
static const struct runtime_frames_desc desc = {
    .rt = RT_HOTSPOT,
    .name = "hotspot",
    .what = "Java",
    .ok_text = "with their Java frames",
    .none_text = "without a Java frame",
    .status = {"", "ok", "no_java", "truncated", "unreadable"},
    .units = "methods",
    .procs_help = "Processes found running a HotSpot JVM whose VMStructs cfiprof reads: its code "
		  "cache unwound by its own rows, Java frames named.",
    .samples_help = "Samples of JVM processes by how their Java frames were read.",
    .reads_help = "Java methods (Method*) read from their process to name frames: read, "
		  "unreadable, refused (over the reads per second or the cache's bounds, or the "
		  "process's memory blocked a read).",
};
_Static_assert(HOTSPOT_STATUS_OK == 1 && HOTSPOT_STATUS_NO_JAVA == 2 &&
		   HOTSPOT_STATUS_TRUNCATED == 3 && HOTSPOT_STATUS_UNREADABLE == 4 &&
		   HOTSPOT_STATUS_MAX == 5,
	       "the statuses runtime_frames_desc says");

static void *create(int procs_fd)
{
	return runtime_parts_new(&hotspot_detect_ops, &hotspot_name_ops, &desc, procs_fd);
}

/* the detector's hooks, and the code cache's rows for the tracker */
static void hooks(void *rt, struct runtime_hooks *out)
{
	runtime_parts_hooks(rt, out);
	hotspot_jit_hooks(out);
}

/* the frames' line, then the rows': how often the code cache was rebuilt */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	struct hotspot_scopes_stats d;
	struct hotspot_jit_stats s;

	runtime_parts_summary(rt, c, f);
	hotspot_jit_stats(&s);
	if (!s.jvms)
		return;
	fprintf(f,
		"cfiprof: hotspot: code cache rows: %" PRIu64 " JVMs, %" PRIu64
		" tables built (%" PRIu64 " blobs with rows in the last; %" PRIu64
		" nmethods' code read, %" PRIu64 " kept from the build before), %" PRIu64
		" reloads for new code, %" PRIu64 " held back by the rate bound, %" PRIu64
		" walks cut by their budget; %" PRIu64
		" frames stale (their code another compile, their Method another's, when named)\n",
		s.jvms, s.builds, s.rows_blobs, s.nmethods_read, s.nmethods_kept, s.reloads,
		s.held_back, s.walks_cut, hotspot_names_stale());
	hotspot_scopes_stats(&d);
	fprintf(f,
		"cfiprof: hotspot: debug info of %" PRIu64
		" nmethods read (inline frames, lines), %" PRIu64
		" not (the JDK's layout lacks it), %" PRIu64 " unreadable; %" PRIu64
		" scope chains not decoded, %" PRIu64
		" frames shown past their nmethod's last PcDesc (their method alone)\n",
		d.nmethods, d.no_layout, d.unreadable, d.bad_chains, d.no_pc);
}

/* the frames' families, then the rows': tables built, reloads asked and held back, walks cut */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	struct hotspot_jit_stats s;

	runtime_parts_metrics(rt, c, f);
	hotspot_jit_stats(&s);
	prom_metric(f, "cfiprof_hotspot_row_tables_total", "counter",
		    "Unwind row tables built for JVMs' code caches (one per change of their code "
		    "seen by a load).",
		    (double)s.builds);
	prom_header(f, "cfiprof_hotspot_code_reloads_total", "counter",
		    "Loads asked for because a JVM's code changed: asked, or held back by the "
		    "rate bound (at most one per 100 ms per JVM).");
	prom_labelled(f, "cfiprof_hotspot_code_reloads_total", "outcome", "asked", s.reloads);
	prom_labelled(f, "cfiprof_hotspot_code_reloads_total", "outcome", "held_back", s.held_back);
	prom_metric(f, "cfiprof_hotspot_code_walks_cut_total", "counter",
		    "Walks of a JVM's code cache cut by their budget (blocks, reads, time).",
		    (double)s.walks_cut);
	prom_metric(f, "cfiprof_hotspot_frames_stale_total", "counter",
		    "Java frames not named: their nmethod was another compile, or their Method "
		    "another method, when read.",
		    (double)hotspot_names_stale());
}

/* the parts' ops, and the interpreted frames of deferred samples (hotspot_deferred.h) */
const struct runtime_ops hotspot_runtime = {
    .id = RT_HOTSPOT,
    .create = create,
    .destroy = runtime_parts_free,
    .hooks = hooks,
    .namer = namer,
    .note = runtime_parts_note,
    .carry = runtime_parts_carry,
    .deferred_units = hotspot_deferred_units,
    .wait = runtime_parts_wait,
    .sweep = runtime_parts_sweep,
    .summary = summary,
    .metrics = metrics,
};
