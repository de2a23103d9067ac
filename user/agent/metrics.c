// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Prometheus self-metrics and the HTTP thread serving them; see agent_metrics.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/version.h"
#include "elf/debug_file.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "tables/cfi_table.h"
#include "user/agent/http_server.h"
#include "user/agent/log.h"
#include "user/agent/metrics.h"
#include "user/agent/self_stats.h"
#include "user/output/prom_text.h"
#include "user/profile/frame_names.h"
#include "elf/minidebuginfo.h"
#include "user/symbolize/perfmap.h"
#include "user/symbolize/sym_refusals.h"
#include "user/track/cgroups.h"
#include "user/symbolize/sym_cache.h"

struct agent_metrics {
	struct http_server *http;
	struct agent_metrics_src src;
};

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/*
 * The standard process_* metrics every Prometheus client library exports
 * (dashboards and alerts for any process use them), and the build.
 */
static void render_process(const struct agent_metrics_src *src, FILE *f)
{
	struct rlimit rl;

	prom_metric(f, "process_cpu_seconds_total", "counter",
		    "Total user and system CPU time spent in seconds.", agent_cpu_seconds());
	prom_metric(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
		    (double)agent_rss_bytes());
	prom_metric(f, "cfiprof_heap_bytes", "gauge",
		    "Bytes malloc has given out and not got back (in use, not what it keeps free).",
		    (double)agent_heap_bytes());
	prom_metric(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
		    (double)agent_virtual_bytes());
	prom_metric(f, "process_start_time_seconds", "gauge",
		    "Start time of the process since unix epoch in seconds.", src->start_unix);
	prom_metric(f, "process_open_fds", "gauge", "Number of open file descriptors.",
		    (double)agent_open_fds());
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		prom_metric(f, "process_max_fds", "gauge",
			    "Maximum number of open file descriptors.", (double)rl.rlim_cur);
	prom_header(f, "cfiprof_build_info", "gauge", "The running cfiprof's version; always 1.");
	fprintf(f, "cfiprof_build_info{version=\"%s\"} 1\n", cfiprof_version);
}

/* The BPF side's counters, each as CFI_COUNTERS (bpf/cfiprof_abi.h) names it. */
static void render_counters(const uint64_t *c, FILE *f)
{
	static const struct {
		const char *metric, *label, *help;
	} list[] = {
#define CFI_COUNTER_METRIC(e, metric, label, help) [e] = {metric, label, help},
	    CFI_COUNTERS(CFI_COUNTER_METRIC)
#undef CFI_COUNTER_METRIC
	};
	const char *family = "";
	size_t i;

	for (i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
		/* "": rendered in a family of user space's (render_deferred) */
		if (!list[i].metric[0])
			continue;
		if (strcmp(list[i].metric, family)) {
			prom_header(f, list[i].metric, "counter", list[i].help);
			family = list[i].metric;
		}
		fprintf(f, "%s%s%s%s %" PRIu64 "\n", list[i].metric, list[i].label[0] ? "{" : "",
			list[i].label, list[i].label[0] ? "}" : "", c[i]);
	}
}

/* Off-CPU time in the profile without its stack (user/session/offcpu_unwalked.h). */
static void render_unwalked(struct session *s, FILE *f)
{
	static const char *const causes[UNWALKED_MAX] = {
	    [UNWALKED_BUDGET] = "event_budget",
	    [UNWALKED_FULL] = "too_many_blocked",
	    [UNWALKED_LOST] = "ring_buffer_full",
	};
	uint64_t ns[UNWALKED_MAX], blocks[UNWALKED_MAX];
	int i;

	offcpu_unwalked_totals(&s->unwalked, ns, blocks);
	prom_header(
	    f, "cfiprof_offcpu_unwalked_seconds_total", "counter",
	    "Off-CPU time in the profile under a [not walked: ...] frame instead of its stack, "
	    "by why.");
	for (i = UNWALKED_NONE + 1; i < UNWALKED_MAX; i++)
		fprintf(f, "cfiprof_offcpu_unwalked_seconds_total{cause=\"%s\"} %.9f\n", causes[i],
			(double)ns[i] / 1e9);
	prom_header(f, "cfiprof_offcpu_unwalked_blocks_total", "counter",
		    "Off-CPU blocks in the profile under a [not walked: ...] frame, by why.");
	for (i = UNWALKED_NONE + 1; i < UNWALKED_MAX; i++)
		prom_labelled(f, "cfiprof_offcpu_unwalked_blocks_total", "cause", causes[i],
			      blocks[i]);
}

/* Samples taken before their tables were loaded, by what became of them. */
static void render_deferred(struct session *s, const uint64_t *c, FILE *f)
{
	/* plain counters of the consumer thread: a torn read is off by one sample at worst */
	struct deferred_stats d = s->deferred.stats;

	prom_header(f, "cfiprof_deferred_samples_total", "counter",
		    "Tables-pending samples: finished in user space from a stack copy, or kept "
		    "tables-pending and why.");
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "finished", d.finished);
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "process_gone",
		      d.gave_up_gone);
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "timeout", d.gave_up_timeout);
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "queue_full", d.gave_up_full);
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "over_budget",
		      c[CNT_DEFER_BUDGET]);
	prom_labelled(f, "cfiprof_deferred_samples_total", "outcome", "no_ring_room",
		      c[CNT_DEFER_LOST]);
	prom_metric(f, "cfiprof_deferred_waiting", "gauge",
		    "Deferred samples waiting for their tables.", (double)d.waiting);
	prom_metric(f, "cfiprof_deferred_waiting_bytes", "gauge",
		    "Bytes held by deferred samples waiting for their tables.", (double)d.bytes);
}

/* Processes' mappings read early, for loads that find the process gone. */
static void render_snapshots(const struct tracker_stats *tr, FILE *f)
{
	const char *const outcome[] = {"taken", "used", "refused", "late", "at_exit"};
	const uint64_t n[] = {tr->snapshots_taken, tr->snapshots_used, tr->snapshots_refused,
			      tr->snapshots_late, tr->snapshots_at_exit};
	size_t i;

	prom_header(
	    f, "cfiprof_process_snapshots_total", "counter",
	    "Executable mappings of processes with waiting samples read early by the consumer: "
	    "taken, loaded from (the process gone before its load), refused by their budget, "
	    "too late (the process gone already), from the kernel's list as it exited.");
	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		prom_labelled(f, "cfiprof_process_snapshots_total", "outcome", outcome[i], n[i]);
}

/* Names of stripped objects: refusals, debuginfod, and what grouping by FDE costs. */
static void render_symbols(struct session *s, FILE *f)
{
	struct sym_refusal r[SYM_REFUSAL_CAUSES];
	struct sym_fetch_stats fs = {0};
	struct sym_cache_stats cs;
	int i;

	sym_refusals(s->syms, s->fetch, r);
	prom_header(
	    f, "cfiprof_symbols_refused_total", "counter",
	    "Symbol sources refused, by cause (MiniDebugInfo corrupt or too big, FDEs over the "
	    "bound, names cut, an object's symbols or a perf map's lines over their bound, "
	    "debuginfod fetches over a bound or invalid).");
	for (i = 0; i < SYM_REFUSAL_CAUSES; i++)
		prom_labelled(f, "cfiprof_symbols_refused_total", "cause", r[i].cause, r[i].n);
	prom_metric(f, "cfiprof_minidebuginfo_read_total", "counter",
		    "Objects named from their MiniDebugInfo (.gnu_debugdata).",
		    (double)minidebuginfo_read_total());
	sym_cache_get_stats(s->syms, &cs);
	prom_metric(
	    f, "cfiprof_symbols_function_starts_total", "counter",
	    "Function starts read from FDEs where no symbol covers the code (stripped objects).",
	    (double)cs.fde_ranges);
	prom_metric(f, "cfiprof_symbols_function_starts_seconds_total", "counter",
		    "Load-thread time spent reading those function starts.",
		    (double)cs.fde_ns / 1e9);
	if (s->fetch)
		sym_fetch_get_stats(s->fetch, &fs);
	prom_header(f, "cfiprof_debuginfod_fetches_total", "counter",
		    "Debug files asked from debuginfod (--debuginfod), by outcome.");
	for (i = 0; i < DBGD_OUTCOME_MAX; i++)
		prom_labelled(f, "cfiprof_debuginfod_fetches_total", "outcome",
			      dbgd_outcome_name(i), fs.dbgd.outcomes[i]);
	prom_metric(f, "cfiprof_debuginfod_fetch_seconds_total", "counter",
		    "Time the fetch threads spent fetching (never the consumer's).",
		    (double)fs.dbgd.busy_ns / 1e9);
	prom_metric(f, "cfiprof_debuginfod_table_bytes", "gauge",
		    "Bytes of symbol tables from fetched debug files held.",
		    (double)fs.table_bytes);
}

/* Source lines and inline frames: the symbolizer's DWARF lookups, their cache and refusals. */
static void render_source_lines(struct sym_cache *syms, FILE *f)
{
	/* plain counters of the interval's thread: a torn read is off by one lookup at worst */
	struct src_lines_stats st = sym_cache_lines_ctx(syms)->st;

	prom_metric(f, "cfiprof_source_line_lookups_total", "counter",
		    "Frames looked up for source lines and inline frames (DWARF).",
		    (double)st.lookups);
	prom_metric(f, "cfiprof_source_line_cache_hits_total", "counter",
		    "Of those, answered from the per-object cache of earlier answers.",
		    (double)st.hits);
	prom_header(
	    f, "cfiprof_source_lines_refused_total", "counter",
	    "Lookups refused by a budget: the interval's time (--source-lines-time), an object's "
	    "size, a compile unit's size; objects not given their DWARF file: too many open.");
	prom_labelled(f, "cfiprof_source_lines_refused_total", "cause", "time",
		      st.refused[SRC_REFUSED_TIME]);
	prom_labelled(f, "cfiprof_source_lines_refused_total", "cause", "object_size",
		      st.refused[SRC_REFUSED_OBJECT]);
	prom_labelled(f, "cfiprof_source_lines_refused_total", "cause", "unit_size",
		      st.refused[SRC_REFUSED_CU]);
	prom_labelled(f, "cfiprof_source_lines_refused_total", "cause", "files",
		      st.refused[SRC_REFUSED_FILES]);
	prom_labelled(f, "cfiprof_source_lines_refused_total", "cause", "opening",
		      st.refused[SRC_REFUSED_OPENING]);
	prom_metric(f, "cfiprof_source_lines_seconds_total", "counter",
		    "Time spent opening DWARF and looking up lines.", (double)st.ns / 1e9);
	prom_metric(f, "cfiprof_source_lines_open_bytes", "gauge",
		    "Estimated bytes behind open DWARF handles (inflated sections, units walked).",
		    (double)st.open_bytes);
	prom_metric(f, "cfiprof_source_lines_cached", "gauge",
		    "Answers kept in the per-object caches.", (double)st.cache_entries);
	prom_header(f, "cfiprof_source_lines_inflated_total", "counter",
		    "Compressed debug files found inflated in the cache directory, or written "
		    "there.");
	prom_labelled(f, "cfiprof_source_lines_inflated_total", "way", "found", st.inflated_found);
	prom_labelled(f, "cfiprof_source_lines_inflated_total", "way", "written",
		      st.inflated_written);
}

static void render_table_cache(struct cfi_table_cache *tc, FILE *f)
{
	struct cfi_table_cache_stats cs;

	cfi_table_cache_stats(tc, &cs);
	prom_metric(f, "cfiprof_table_cache_hits_total", "counter",
		    "Objects whose tables were read from the table cache.", (double)cs.hits);
	prom_metric(f, "cfiprof_table_cache_misses_total", "counter",
		    "Objects not in the table cache: built, then kept unless cheap.",
		    (double)cs.misses);
	prom_metric(f, "cfiprof_table_cache_cheap_total", "counter",
		    "Tables not kept: under 64 KiB, rebuilt about as fast as an entry is read.",
		    (double)cs.cheap);
	prom_metric(f, "cfiprof_table_cache_refused_total", "counter",
		    "Table cache entries that failed a check (damaged, other version): removed.",
		    (double)cs.refused);
	prom_metric(f, "cfiprof_table_cache_evicted_total", "counter",
		    "Table cache entries removed to stay within --table-cache-size.",
		    (double)cs.evicted);
	prom_metric(f, "cfiprof_table_cache_bytes", "gauge", "Bytes in the table cache.",
		    (double)cs.bytes);
	prom_metric(f, "cfiprof_table_cache_entries", "gauge",
		    "Entries (files) in the table cache.", (double)cs.entries);
}

/* Walks by why they stopped, and the rules the walker could not evaluate by why. */
static void render_walks(const uint64_t *c, FILE *f)
{
	int i;

	prom_header(f, "cfiprof_walks_total", "counter", "Stack walks by the reason they stopped.");
	for (i = 0; i < STOP_REASON_MAX; i++)
		prom_labelled(f, "cfiprof_walks_total", "reason", stop_reason_name(i),
			      c[CNT_STOP_BASE + i]);
	prom_header(f, "cfiprof_unsupported_walks_total", "counter",
		    "Walks that stopped at a rule the walker cannot evaluate, by why.");
	for (i = 1; i < CFI_UNSUP_MAX; i++)
		prom_labelled(f, "cfiprof_unsupported_walks_total", "reason",
			      cfi_unsupported_name(i), c[CNT_UNSUP_BASE + i]);
}

/* The unwind tables in the maps: objects, bytes, refusals, the dictionary, pages and rows. */
static void render_tables(struct session *s, FILE *f)
{
	/* plain counters of the loader thread: a torn read is off by one event at worst */
	struct table_store_stats ts = s->ts.stats;
	int i;

	prom_metric(f, "cfiprof_tables_loaded", "gauge",
		    "Objects whose unwind tables are in the maps.",
		    (double)(ts.objects_loaded - ts.objects_unloaded));
	prom_metric(
	    f, "cfiprof_tables_idle", "gauge",
	    "Objects no process maps, kept loaded for --table-idle-ttl (counted in tables_loaded).",
	    (double)ts.idle_now);
	prom_metric(f, "cfiprof_tables_idle_reused_total", "counter",
		    "Idle objects mapped again by a new process: tables ready, nothing rebuilt.",
		    (double)ts.idle_reused);
	prom_metric(f, "cfiprof_tables_unloaded_total", "counter",
		    "Objects whose tables were removed (last process gone).",
		    (double)ts.objects_unloaded);
	prom_metric(f, "cfiprof_tables_failed_total", "counter",
		    "Objects whose tables could not be built or loaded (frame pointers used).",
		    (double)ts.objects_failed);
	prom_metric(f, "cfiprof_tables_over_budget_total", "counter",
		    "Objects refused by the table build budget: time, FDEs, rows or section bytes "
		    "(frame pointers used).",
		    (double)ts.objects_over_budget);
	prom_metric(f, "cfiprof_tables_rows_full_total", "counter",
		    "Objects that did not fit the rows map (--table-rows).",
		    (double)ts.refused[REFUSED_ROWS_FULL]);
	prom_metric(f, "cfiprof_table_bytes", "gauge",
		    "Bytes of unwind tables in the maps (rows, rules and page index).",
		    (double)table_store_bytes(&s->ts));
	prom_metric(
	    f, "cfiprof_tables_bytes_full_total", "counter",
	    "Objects that did not fit --max-table-bytes after evictions (frame pointers used).",
	    (double)ts.refused[REFUSED_BYTES_FULL]);
	prom_header(f, "cfiprof_tables_refused_total", "counter",
		    "Objects whose tables were refused, by cause: a per-object quota (rules_quota, "
		    "pages_quota, rows_quota), a per-process quota (process_*_quota: counted per "
		    "mapping refused to that process), or a full map (frame pointers used).");
	for (i = 0; i < REFUSED_MAX; i++)
		prom_labelled(f, "cfiprof_tables_refused_total", "cause", table_refusal_name(i),
			      ts.refused[i]);
	prom_metric(f, "cfiprof_table_rules", "gauge",
		    "Rule dictionary ids used by loaded tables (id 0 included).",
		    (double)ts.rules_used);
	prom_metric(f, "cfiprof_table_rules_capacity", "gauge", "Capacity of the rule dictionary.",
		    (double)ts.rules_total);
	prom_metric(f, "cfiprof_table_rules_reused_total", "counter",
		    "Dictionary ids given to another rule after the last table using them unloaded "
		    "and their quarantine passed.",
		    (double)ts.rules_reused);
	prom_metric(f, "cfiprof_table_pages", "gauge", "Entries in the page index.",
		    (double)ts.pages_used);
	prom_metric(f, "cfiprof_table_pages_capacity", "gauge", "Capacity of the page index.",
		    (double)ts.pages_total);
	prom_metric(f, "cfiprof_table_rows_quarantined", "gauge",
		    "Rows freed less than the quarantine (100 ms) ago: not reused yet.",
		    (double)ts.rows_quarantined);
	prom_metric(f, "cfiprof_table_rows", "gauge", "Rows in use in the rows map.",
		    (double)ts.rows_used);
	prom_metric(f, "cfiprof_table_rows_capacity", "gauge", "Capacity of the rows map.",
		    (double)ts.rows_total);
}

/* The process tracker: mapping keys, processes, loads and what they refused. */
static void render_tracker(struct session *s, FILE *f)
{
	struct tracker_stats tr;
	uint32_t tracked, retained;

	proc_tracker_stats(s->pt, &tr);
	proc_tracker_counts(s->pt, &tracked, &retained);
	prom_header(
	    f, "cfiprof_mapping_keys_refused_total", "counter",
	    "LPM keys of executable mappings not added (the mapping walks with frame pointers "
	    "or not at all): the process's share of the trie, or the trie full.");
	prom_labelled(f, "cfiprof_mapping_keys_refused_total", "cause", "process_quota",
		      tr.keys_refused_quota);
	prom_labelled(f, "cfiprof_mapping_keys_refused_total", "cause", "trie_full",
		      tr.keys_refused_full);
	prom_metric(f, "cfiprof_mapping_keys", "gauge", "LPM keys in the mappings trie.",
		    (double)tr.keys_in_map);
	prom_metric(f, "cfiprof_mapping_keys_capacity", "gauge", "Capacity of the mappings trie.",
		    (double)tr.keys_capacity);
	prom_metric(
	    f, "cfiprof_processes_over_quota_total", "counter",
	    "Processes refused an object or mapping keys by a per-process quota (logged once "
	    "each).",
	    (double)tr.procs_over_quota);
	prom_header(f, "cfiprof_evictions_total", "counter",
		    "Least recently sampled processes unloaded to respect a cap (loaded again when "
		    "sampled again).");
	prom_labelled(f, "cfiprof_evictions_total", "cap", "max_processes", tr.evicted_procs);
	prom_labelled(f, "cfiprof_evictions_total", "cap", "table_bytes", tr.evicted_tables);
	prom_metric(
	    f, "cfiprof_mapped_files_refused_total", "counter",
	    "Mapped paths that name a FIFO, a device, a symlink or another file than the one "
	    "mapped (planted by the process): refused, walked with frame pointers.",
	    (double)tr.files_refused);
	prom_metric(
	    f, "cfiprof_mapped_files_no_fd_total", "counter",
	    "Mapped files not opened for lack of file descriptors (EMFILE): walked with frame "
	    "pointers, unnamed.",
	    (double)tr.no_fds);
	prom_metric(
	    f, "cfiprof_perfmaps_refused_total", "counter",
	    "perf-PID.map files refused: owned by another user than the process's, a symlink, "
	    "not a regular file, or over 64 MiB.",
	    (double)perfmap_refused_total());
	prom_metric(
	    f, "cfiprof_cgroup_walks_cut_total", "counter",
	    "Walks of the cgroup hierarchy for cgroup names stopped at their bound (100,000 "
	    "entries, cgroups and their files): cgroups past it go without a cgroup label.",
	    (double)cgroup_names_cut_total());
	prom_header(f, "cfiprof_outside_files_refused_total", "counter",
		    "Files named by processes (mapped paths, perf maps, debug files) refused on a "
		    "path handle before any open for reading, by what they were.");
	for (int i = 0; i < SAFE_OPEN_REFUSAL_CAUSES; i++)
		prom_labelled(f, "cfiprof_outside_files_refused_total", "cause",
			      safe_open_refusal_name(i), safe_open_refused(i));
	prom_metric(
	    f, "cfiprof_mappings_over_load_time_total", "counter",
	    "Mappings left unresolved (frame pointers, no names): their process's load took "
	    "over its time budget (1.5 s).",
	    (double)tr.over_load_time);
	prom_metric(f, "cfiprof_loads_resumed_total", "counter",
		    "Loads queued again for the mappings a load left unresolved past its time.",
		    (double)tr.loads_resumed);
	prom_metric(
	    f, "cfiprof_big_loads_yielded_total", "counter",
	    "Loads of processes with over 1024 executable mappings sent behind the queued ones.",
	    (double)tr.big_loads_yielded);
	prom_metric(
	    f, "cfiprof_tables_prebuilt_total", "counter",
	    "Tables a load built before swapping its mappings in (--build-workers at once).",
	    (double)tr.tables_prebuilt);
	prom_metric(f, "cfiprof_tables_built_parallel_total", "counter",
		    "Of those, tables built while other build workers of the same load ran.",
		    (double)tr.tables_built_parallel);
	prom_metric(
	    f, "cfiprof_loads_hurried_total", "counter",
	    "Queued loads moved to the front because deferred samples of the process waited.",
	    (double)tr.loads_hurried);
	render_snapshots(&tr, f);
	render_symbols(s, f);
	prom_metric(f, "cfiprof_process_forgets_deferred_total", "counter",
		    "Passes over exited processes put off to the next interval while a load ran.",
		    (double)tr.forgets_deferred);
	prom_metric(
	    f, "cfiprof_debug_files_refused_total", "counter",
	    "Separate debug file candidates refused: another build-id or CRC, a symlink next to "
	    "the object, not a regular file, or a .gnu_debuglink that is a path.",
	    (double)debug_file_refused_total());
	prom_header(
	    f, "cfiprof_elf_reads_refused_total", "counter",
	    "Reads of the ELF files of processes refused, by cause: truncated (the file shrank "
	    "while read), over_budget (a section or the section headers past the object's "
	    "byte budget), inflate_over_budget (a compressed section declaring more).");
	for (int i = 0; i < ELF_READ_REFUSALS; i++)
		prom_labelled(f, "cfiprof_elf_reads_refused_total", "cause",
			      elf_read_refusal_name(i), elf_read_refused_total(i));
	prom_header(
	    f, "cfiprof_metrics_connections_dropped_total", "counter",
	    "Connections to this endpoint closed unserved: past their deadline (slow or idle "
	    "clients), or the oldest replaced when every slot was taken.");
	prom_labelled(f, "cfiprof_metrics_connections_dropped_total", "reason", "deadline",
		      http_conns_timed_out_total());
	prom_labelled(f, "cfiprof_metrics_connections_dropped_total", "reason", "displaced",
		      http_conns_displaced_total());
	prom_metric(f, "cfiprof_processes_tracked", "gauge", "Live processes the tracker follows.",
		    (double)tracked);
	prom_metric(f, "cfiprof_processes_retained", "gauge",
		    "Process entries held, exited ones included (kept for symbolization).",
		    (double)retained);
	prom_metric(f, "cfiprof_process_loads_total", "counter",
		    "Processes whose mappings were loaded.", (double)tr.loads);
	prom_metric(f, "cfiprof_process_reloads_total", "counter",
		    "Mapping reloads of known processes (dlopen, mmap of executable memory).",
		    (double)tr.reloads);
	prom_metric(f, "cfiprof_process_exits_total", "counter", "Process exits handled.",
		    (double)tr.exits);
	prom_metric(
	    f, "cfiprof_process_exits_swept_total", "counter",
	    "Processes found gone at an interval's sweep before their exit event was handled.",
	    (double)tr.exits_swept);
	prom_metric(f, "cfiprof_process_loads_dying_total", "counter",
		    "Loads skipped because the process was already exiting.", (double)tr.dying);
	prom_metric(f, "cfiprof_tracker_queue_dropped_total", "counter",
		    "Load requests dropped because the tracker's queue was full.",
		    (double)tr.queue_dropped);
	prom_metric(f, "cfiprof_mapping_sets_dropped_total", "counter",
		    "Mapping sets dropped with samples waiting for names (a process kept 32 sets, "
		    "or 4096 mappings in its older ones, while remapping code): those samples' "
		    "frames are named only where the sets "
		    "kept agree, else [unknown].",
		    (double)tr.map_sets_dropped);
	prom_metric(f, "cfiprof_samples_mapping_set_gone_total", "counter",
		    "Samples whose process's mapping set was already dropped when they arrived: "
		    "named only where the sets kept agree, else [unknown].",
		    (double)tr.samples_set_gone);
}

/*
 * A pusher's delivery: cfiprof_PREFIXpush_* and cfiprof_PREFIXspool_*
 * ("" for --push, "otlp_" for --otlp); nothing when it is off.
 */
static void render_push(FILE *f, struct agent_push *ap, const char *prefix, const char *sent)
{
	struct agent_push_stats ps;
	char name[64];

	if (!ap)
		return;
	agent_push_get_stats(ap, &ps);
	snprintf(name, sizeof(name), "cfiprof_%spush_successes_total", prefix);
	prom_metric(f, name, "counter", sent, (double)ps.successes);
	snprintf(name, sizeof(name), "cfiprof_%spush_failures_total", prefix);
	prom_metric(f, name, "counter", "Push attempts that failed (retried or dropped).",
		    (double)ps.failures);
	snprintf(name, sizeof(name), "cfiprof_%spush_dropped_total", prefix);
	prom_metric(f, name, "counter",
		    "Profiles dropped: spool bound, write error or rejected by the backend.",
		    (double)ps.dropped);
	snprintf(name, sizeof(name), "cfiprof_%sspool_bytes", prefix);
	prom_metric(f, name, "gauge", "Bytes of profiles waiting in the spool.",
		    (double)ps.spool_bytes);
	snprintf(name, sizeof(name), "cfiprof_%sspool_files", prefix);
	prom_metric(f, name, "gauge", "Profiles waiting in the spool.", (double)ps.spool_files);
}

/* The agent's own work: intervals written and pushed. */
static void render_intervals(const struct agent_metrics_src *src, FILE *f)
{
	struct session *s = src->s;
	uint64_t agg_stacks;

	pthread_mutex_lock(&s->agg_lock);
	agg_stacks = s->agg.nr_stacks;
	pthread_mutex_unlock(&s->agg_lock);
	prom_metric(f, "cfiprof_intervals_total", "counter", "Interval profiles written.",
		    (double)rd(&src->ctr->intervals));
	prom_metric(f, "cfiprof_profile_samples_total", "counter",
		    "Samples in the interval profiles written.",
		    (double)rd(&src->ctr->profile_samples));
	prom_metric(f, "cfiprof_profile_overflow_samples_total", "counter",
		    "Samples of new stacks beyond --max-stacks (kept as [overflow]).",
		    (double)rd(&src->ctr->profile_overflow));
	prom_metric(f, "cfiprof_samples_late_total", "counter",
		    "Samples that arrived after the interval they were taken in was written "
		    "(finished later than the interval's end waits); they are in the next one.",
		    (double)rd(&src->ctr->profile_late));
	prom_metric(f, "cfiprof_interval_stacks", "gauge",
		    "Distinct stacks in the current interval.", (double)agg_stacks);
	prom_metric(f, "cfiprof_output_errors_total", "counter",
		    "Interval profiles that could not be built or written.",
		    (double)rd(&src->ctr->write_errors));
	prom_metric(f, "cfiprof_output_removed_total", "counter",
		    "Interval files removed by retention (age or size).",
		    (double)rd(&src->ctr->files_removed));
	prom_metric(
	    f, "cfiprof_metrics_bind_failures_total", "counter",
	    "Attempts to listen on --metrics-addr that failed (the address taken): profiling "
	    "went on, the agent retried each interval.",
	    (double)rd(&src->ctr->metrics_bind_failures));
	prom_metric(
	    f, "cfiprof_services_folded_total", "counter",
	    "Services of an interval past --max-services (the fewest samples), their samples "
	    "pushed and labelled as service \"other\".",
	    (double)rd(&src->ctr->services_folded));
	prom_metric(f, "cfiprof_services_folded_samples_total", "counter",
		    "Samples of the services folded into \"other\".",
		    (double)rd(&src->ctr->services_folded_samples));
	render_push(f, src->push, "", "Profiles pushed.");
	render_push(f, src->otlp, "otlp_", "Profiles sent to the OTLP receiver (--otlp).");
	prom_metric(f, "cfiprof_kernel_map_bytes", "gauge",
		    "Kernel memory of the agent's BPF maps.", (double)agent_kernel_map_bytes());
}

int agent_metrics_render(const struct agent_metrics_src *src, FILE *f)
{
	struct session *s = src->s;
	uint64_t c[CNT_MAX] = {0}, run_ns = 0, run_cnt = 0;

	session_read_counters(s, c);
	render_counters(c, f);
	render_unwalked(s, f);
	render_walks(c, f);
	render_deferred(s, c, f);
	session_runtimes_metrics(&s->runtimes, c, f);
	if (s->table_cache)
		render_table_cache(s->table_cache, f);
	if (s->syms)
		render_source_lines(s->syms, f);
	render_tables(s, f);
	render_tracker(s, f);
	if (!loader_prog_stats(&s->ld, &run_ns, &run_cnt)) {
		prom_metric(
		    f, "cfiprof_bpf_run_seconds_total", "counter",
		    "Run time of the sampling BPF programs (needs kernel.bpf_stats_enabled=1).",
		    (double)run_ns / 1e9);
		prom_metric(f, "cfiprof_bpf_runs_total", "counter",
			    "Runs of the sampling BPF program.", (double)run_cnt);
	}
	render_intervals(src, f);
	render_process(src, f);
	return ferror(f) ? -1 : 0;
}

static int render(void *ctx, FILE *f)
{
	return agent_metrics_render(ctx, f);
}

struct agent_metrics *agent_metrics_start(const char *addr, const struct agent_metrics_src *src,
					  char *bound, size_t bound_len, char *err, size_t errlen)
{
	struct agent_metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->src = *src;
	m->http = http_server_start(addr, "/metrics", "text/plain; version=0.0.4; charset=utf-8",
				    render, &m->src, bound, bound_len, err, errlen);
	if (!m->http) {
		free(m);
		return NULL;
	}
	return m;
}

void agent_metrics_stop(struct agent_metrics *m)
{
	if (!m)
		return;
	http_server_stop(m->http);
	free(m);
}
