// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The session's summary on stderr: samples, stop reasons, tables, deferral, refusals. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/vec.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "user/session/session.h"
#include "user/profile/frame_names.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

struct cause_count {
	const char *name;
	uint64_t n;
};

/* "cfiprof: WHAT: name n, name n" of the causes that counted any; nothing when none did. */
static void print_causes(FILE *f, const char *what, const struct cause_count *c, int nr)
{
	const char *sep = "";
	int i;

	for (i = 0; i < nr; i++) {
		if (!c[i].n)
			continue;
		if (!*sep)
			fprintf(f, "cfiprof: %s:", what);
		fprintf(f, "%s %s %" PRIu64, sep, c[i].name, c[i].n);
		sep = ",";
	}
	if (*sep)
		fprintf(f, "\n");
}

/* Reads of processes' ELF files refused (elf/elf_read.h): the object fell back to less. */
static void print_elf_refusals(FILE *f)
{
	struct cause_count c[ELF_READ_REFUSALS];
	int i;

	for (i = 0; i < ELF_READ_REFUSALS; i++)
		c[i] = (struct cause_count){elf_read_refusal_name(i), elf_read_refused_total(i)};
	print_causes(f, "ELF reads refused", c, ELF_READ_REFUSALS);
}

/* Tables refused by a quota or a full map, by cause, and mapping keys refused: when any were. */
static void print_refusals(FILE *f, const struct table_store_stats *ts,
			   const struct tracker_stats *tr)
{
	bool any = tr->keys_refused_quota || tr->keys_refused_full;
	int i;

	for (i = 0; i < REFUSED_MAX; i++)
		any |= ts->refused[i] != 0;
	if (!any)
		return;
	fprintf(f, "cfiprof: refused (frame pointers used):");
	for (i = 0; i < REFUSED_MAX; i++) {
		if (ts->refused[i])
			fprintf(f, " %s %" PRIu64, table_refusal_name(i), ts->refused[i]);
	}
	if (tr->keys_refused_quota || tr->keys_refused_full)
		fprintf(f, "; mapping keys: process_quota %" PRIu64 ", trie_full %" PRIu64,
			tr->keys_refused_quota, tr->keys_refused_full);
	fprintf(f, "\n");
}

/* Files named by processes refused on their path handle, by cause: only when any were. */
static void print_outside_refusals(FILE *f)
{
	struct cause_count c[SAFE_OPEN_REFUSAL_CAUSES];
	int i;

	for (i = 0; i < SAFE_OPEN_REFUSAL_CAUSES; i++)
		c[i] = (struct cause_count){safe_open_refusal_name(i), safe_open_refused(i)};
	print_causes(f, "files refused unopened", c, SAFE_OPEN_REFUSAL_CAUSES);
}

static void session_print_deferred(struct session *s, const uint64_t *c, FILE *f)
{
	const struct deferred_stats *d = &s->deferred.stats;
	struct tracker_stats tr;

	proc_tracker_stats(s->pt, &tr);
	fprintf(
	    f,
	    "cfiprof: deferred: %" PRIu64
	    " samples waited for their tables with a stack copy (%.1f "
	    "KiB each on average, %" PRIu64 " pages unreadable), %" PRIu64
	    " finished in user space (slowest after %.0f ms, %" PRIu64
	    " walks repeated after a later load mapped their pc, %" PRIu64
	    " loads asked for them); "
	    "kept tables-pending: %" PRIu64 " process gone, %" PRIu64 " tables not ready in time, "
	    "%" PRIu64 " queue full, %" PRIu64 " over the copy budget, %" PRIu64
	    " no ring-buffer room\n",
	    c[CNT_DEFERRED],
	    c[CNT_DEFERRED] ? (double)c[CNT_DEFER_BYTES] / 1024.0 / (double)c[CNT_DEFERRED] : 0.0,
	    c[CNT_DEFER_HOLES], d->finished, (double)d->latency_ns_max / 1e6, d->rewalked,
	    tr.reloads_for_walks, d->gave_up_gone, d->gave_up_timeout, d->gave_up_full,
	    c[CNT_DEFER_BUDGET], c[CNT_DEFER_LOST]);
	fprintf(f,
		"cfiprof: deferred: process snapshots: %" PRIu64 " taken, %" PRIu64
		" loaded from (the process gone before its load), %" PRIu64 " refused, %" PRIu64
		" too late (gone before its first deferred sample was read), %" PRIu64
		" from the kernel at exit (%" PRIu64 " not sent: %" PRIu64
		" no ring-buffer room, %" PRIu64 " address space gone; %" PRIu64
		" of their mappings of files no load had opened)\n",
		tr.snapshots_taken, tr.snapshots_used, tr.snapshots_refused, tr.snapshots_late,
		tr.snapshots_at_exit, c[CNT_EXIT_MAPS_LOST] + c[CNT_EXIT_MAPS_NO_MM],
		c[CNT_EXIT_MAPS_LOST], c[CNT_EXIT_MAPS_NO_MM], tr.exit_files_unknown);
	/* a consumer late by hundreds of ms fills the ring: which of its parts was it? */
	fprintf(
	    f,
	    "cfiprof: deferred: the consumer's longest pass parts: %.1f ms handling records "
	    "(%.1f ms one process's mappings read), %.1f ms finishing deferred samples, %.1f ms "
	    "off-CPU blocks\n",
	    (double)s->consumer_longest.records_ns / 1e6,
	    (double)s->consumer_longest.snapshot_ns / 1e6,
	    (double)s->consumer_longest.deferred_ns / 1e6,
	    (double)s->consumer_longest.unwalked_ns / 1e6);
}

struct first_complete {
	uint64_t ns;
	uint32_t pid;
};

static int by_latency_desc(const void *a, const void *b)
{
	const struct first_complete *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/*
 * Exec -> first complete stack of every process seen exec'ing, as a
 * distribution and the slowest few: one line each would be hundreds under -a.
 */
static void print_first_complete(struct session *s, FILE *f)
{
	struct first_complete *v = NULL;
	uint64_t n = 0, cap = 0, i;
	uint32_t b;
	struct proc *p;

	for (p = proc_tracker_first(s->pt, &b); p; p = proc_tracker_next(s->pt, p, &b)) {
		if (!p->exec_ns || !p->first_complete_ns)
			continue;
		if (s->opts.verbose)
			fprintf(f,
				"cfiprof: pid %u: first complete stack %.1f ms after exec, tables "
				"loaded %.1f ms after it\n",
				p->pid, (double)(p->first_complete_ns - p->exec_ns) / 1e6,
				p->tables_loaded_ns > p->exec_ns
				    ? (double)(p->tables_loaded_ns - p->exec_ns) / 1e6
				    : 0.0);
		if (VEC_RESERVE(v, n, cap, 64))
			break;
		v[n].ns = p->first_complete_ns - p->exec_ns;
		v[n++].pid = p->pid;
	}
	if (n) {
		qsort(v, n, sizeof(*v), by_latency_desc);
		fprintf(f,
			"cfiprof: exec -> first complete stack: %" PRIu64
			" process%s, median %.1f ms, "
			"p90 %.1f ms, max %.1f ms; slowest:",
			n, n == 1 ? "" : "es", (double)v[n / 2].ns / 1e6,
			(double)v[n / 10].ns / 1e6, (double)v[0].ns / 1e6);
		for (i = 0; i < n && i < 3; i++)
			fprintf(f, " pid %u %.1f ms%s", v[i].pid, (double)v[i].ns / 1e6,
				i + 1 < n && i < 2 ? "," : "");
		fprintf(f, "\n");
	}
	free(v);
}

/* Off-CPU time in the profile without its stack, by why. */
static void print_unwalked(struct session *s, const uint64_t *c, FILE *f)
{
	uint64_t ns[UNWALKED_MAX], blocks[UNWALKED_MAX];

	offcpu_unwalked_totals(&s->unwalked, ns, blocks);
	if (!blocks[UNWALKED_BUDGET] && !blocks[UNWALKED_FULL] && !blocks[UNWALKED_LOST] &&
	    !c[CNT_OFFCPU_UNTRACKED])
		return;
	fprintf(f,
		"cfiprof: off-CPU time without its stack: %.1f ms in %" PRIu64
		" blocks over the budget, %.1f ms in %" PRIu64
		" (too many threads blocked), %.1f ms in %" PRIu64 " (ring buffer full); %" PRIu64
		" blocks not in the profile at all (maps full)\n",
		(double)ns[UNWALKED_BUDGET] / 1e6, blocks[UNWALKED_BUDGET],
		(double)ns[UNWALKED_FULL] / 1e6, blocks[UNWALKED_FULL],
		(double)ns[UNWALKED_LOST] / 1e6, blocks[UNWALKED_LOST], c[CNT_OFFCPU_UNTRACKED]);
}

static void print_full(struct session *s, FILE *f);

/* After sampling began, at mono_ns() at (ms). */
static double after_start_ms(const struct session *s, uint64_t at)
{
	return at / 1e9 > s->start ? ((double)at / 1e9 - s->start) * 1e3 : 0.0;
}

/* The walks verified while sampling ran (user/session/walk_loads.h): when. */
static void print_walk_loads(struct session *s, const uint64_t *c, FILE *f)
{
	uint64_t load_ns,
	    at = walk_loads_in_place(loader_walk_loads(&s->ld), WALK_NATIVE, &load_ns);

	if (s->ld.walk_later) {
		if (at)
			fprintf(f,
				"cfiprof: walk: verified beside sampling, in %.1f ms, in place %.1f "
				"ms after sampling began; ",
				(double)load_ns / 1e6, after_start_ms(s, at));
		else
			fprintf(f, "cfiprof: walk: not in place at the end; ");
		fprintf(f,
			"%" PRIu64 " samples taken before, sent unwalked with a copy of their stack\n",
			c[CNT_UNWALKED]);
	}
	at = walk_loads_in_place(loader_walk_loads(&s->ld), WALK_RUNTIMES, &load_ns);
	if (!s->ld.runtime_walks_later)
		return;
	if (!at && !session_runtimes_first_seen(&s->runtimes))
		fprintf(f, "cfiprof: runtimes' walks: not loaded, no runtime's process seen; ");
	else if (at)
		fprintf(f,
			"cfiprof: runtimes' walks: verified beside sampling, in %.1f ms, in place "
			"%.1f ms after sampling began; ",
			(double)load_ns / 1e6, after_start_ms(s, at));
	else
		fprintf(f, "cfiprof: runtimes' walks: not in place at the end; ");
	fprintf(f,
		"%" PRIu64 " samples of a runtime's process taken before (no runtime frames), "
		"%" PRIu64 " perf events with no sampling program\n",
		c[CNT_RT_WALK_PENDING], c[CNT_NO_SAMPLE_PROG]);
}

/*
 * What a user acts on, in two or three lines: how many samples and how complete
 * their stacks are, then whatever lost or thinned some of them and the
 * setting that would not have.  -v prints the rest (print_full).
 */
static void print_short(struct session *s, const uint64_t *c, FILE *f)
{
	uint64_t stops = 0, unwalkable = 0, lost = c[CNT_LOST_RINGBUF];
	uint64_t refused = c[CNT_EVENT_PROC_LIMITED] + c[CNT_EVENT_THROTTLED];
	double secs = mono_sec() - s->start;
	int i;

	for (i = 0; i < STOP_REASON_MAX; i++) {
		stops += c[CNT_STOP_BASE + i];
		if (!stop_reason_walkable(i))
			unwalkable += c[CNT_STOP_BASE + i];
	}
	if (!stops) {
		fprintf(f,
			"cfiprof: %.1f s, no samples: the target ran no code on a CPU, or exited "
			"before sampling began\n",
			secs);
	} else {
		fprintf(f,
			"cfiprof: %.1f s, %" PRIu64 " samples, %.2f%% of the user stacks complete",
			secs, s->agg.samples,
			pct(c[CNT_STOP_BASE + STOP_COMPLETE],
			    stops > unwalkable ? stops - unwalkable : 0));
		if (unwalkable)
			fprintf(f, " (%" PRIu64 " had none to walk)", unwalkable);
		fprintf(f, "\n");
	}
	if (lost || c[CNT_EVENTS_LOST] || s->agg.overflow)
		fprintf(f,
			"cfiprof: lost: %" PRIu64 " samples and %" PRIu64
			" events with the ring buffer full (--ring-buffer), %" PRIu64
			" samples of stacks past --max-stacks in [overflow]\n",
			lost, c[CNT_EVENTS_LOST], s->agg.overflow);
	if (refused)
		fprintf(
		    f, "cfiprof: %" PRIu64 " event hits counted but not sampled (--event-budget)\n",
		    refused);
	if (c[CNT_RT_WALK_PENDING])
		fprintf(f,
			"cfiprof: %" PRIu64
			" samples of a language runtime's process taken while its "
			"walk was being verified carry no runtime frames (--runtimes-at-start)\n",
			c[CNT_RT_WALK_PENDING]);
	if (stops)
		fprintf(f, "cfiprof: -v for why stacks stopped, the tables, deferred samples and "
			   "refusals\n");
}

void session_print_summary(struct session *s, FILE *f, enum summary_level level)
{
	uint64_t cs[CNT_MAX] = {0};

	if (level == SUMMARY_QUIET)
		return;
	if (level == SUMMARY_SHORT) {
		session_read_counters(s, cs);
		print_short(s, cs, f);
		return;
	}
	print_full(s, f);
}

/* Everything the run counted: record -v. */
static void print_full(struct session *s, FILE *f)
{
	uint64_t c[CNT_MAX] = {0};
	struct table_store_stats ts = s->ts.stats;
	struct tracker_stats tr;
	char line[PATH_MAX + 128];
	uint64_t hits, misses, stops = 0, lost, run_ns = 0, run_cnt = 0, unwalkable;
	double secs = mono_sec() - s->start;
	int i;

	session_read_counters(s, c);
	proc_tracker_stats(s->pt, &tr);
	hits = c[CNT_CACHE_HIT];
	misses = c[CNT_CACHE_MISS];
	lost = c[CNT_LOST_RINGBUF];
	for (i = 0; i < STOP_REASON_MAX; i++)
		stops += c[CNT_STOP_BASE + i];
	fprintf(f,
		"cfiprof: %.1f s, %" PRIu64 " samples (%" PRIu64 " written, %" PRIu64
		" lost: ring buffer full), %" PRIu64 " received\n",
		secs, c[CNT_SAMPLES], c[CNT_WRITTEN], lost, s->agg.samples);
	/* no walk at all: no empty list, but what to look at */
	if (!stops)
		fprintf(f, "cfiprof: no samples: the target ran no code on a CPU, or exited before "
			   "sampling began\n");
	else
		fprintf(f, "cfiprof: stop reasons:");
	for (i = 0; stops && i < STOP_REASON_MAX; i++) {
		if (c[CNT_STOP_BASE + i])
			fprintf(f, " %s %" PRIu64 " (%.2f%%)", stop_reason_name(i),
				c[CNT_STOP_BASE + i], pct(c[CNT_STOP_BASE + i], stops));
	}
	/* which rules the walker could not evaluate (deferred walks not included) */
	for (i = 1; stops && i < CFI_UNSUP_MAX; i++) {
		if (c[CNT_UNSUP_BASE + i])
			fprintf(f, " [unsupported %s %" PRIu64 "]", cfi_unsupported_name(i),
				c[CNT_UNSUP_BASE + i]);
	}
	if (stops)
		fprintf(f, "\n");
	/* samples no profiler can walk: say how the others fared */
	unwalkable = 0;
	for (i = 0; i < STOP_REASON_MAX; i++)
		if (!stop_reason_walkable(i))
			unwalkable += c[CNT_STOP_BASE + i];
	if (unwalkable && stops > unwalkable)
		fprintf(f,
			"cfiprof: user stacks: %.2f%% complete of the %" PRIu64
			" samples that had one to walk (%" PRIu64
			" had none: kernel threads, processes exiting, inside execve)\n",
			pct(c[CNT_STOP_BASE + STOP_COMPLETE], stops - unwalkable),
			stops - unwalkable, unwalkable);
	fprintf(f,
		"cfiprof: rule cache hit rate %.1f%% (%" PRIu64 " hits, %" PRIu64
		" misses), %.1f user frames per sample, %" PRIu64
		" frame-pointer frames (%.2f per sample)\n",
		pct(hits, hits + misses), hits, misses,
		s->agg.user_samples ? (double)s->agg.user_frames / (double)s->agg.user_samples
				    : 0.0,
		c[CNT_FP_FRAMES], stops ? (double)c[CNT_FP_FRAMES] / (double)stops : 0.0);
	fprintf(f,
		"cfiprof: tables: %" PRIu64 " objects loaded (%" PRIu64 " without CFI, %" PRIu64
		" failed, %" PRIu64 " over the build budget, %" PRIu64
		" reused after their last process), at most %" PRIu64 " of %" PRIu64
		" rows and %" PRIu64 " pages in use, %" PRIu64 " rules; processes: %" PRIu64
		" loaded, %" PRIu64 " reloaded, %" PRIu64 " exited, %" PRIu64 " vanished, %" PRIu64
		" reloads finding nothing changed\n",
		ts.objects_loaded, ts.objects_no_cfi, ts.objects_failed, ts.objects_over_budget,
		ts.idle_reused, ts.rows_peak, ts.rows_total, ts.pages_peak, ts.rules_used, tr.loads,
		tr.reloads, tr.exits, tr.vanished, tr.reloads_unchanged);
	/* a process its loads found exiting or without mappings keeps its samples waiting */
	print_causes(f, "loads that found nothing to load",
		     (const struct cause_count[]){{"process exiting", tr.dying},
						  {"no user mappings", tr.no_user}},
		     2);
	/* a process remapping code faster than its samples are named (dlopen/dlclose churn) */
	print_causes(
	    f, "mapping sets of samples lost (frames named where the sets kept agree)",
	    (const struct cause_count[]){{"sets dropped past what is kept", tr.map_sets_dropped},
					 {"samples of a set already gone", tr.samples_set_gone}},
	    2);
	if (c[CNT_DEFERRED] || c[CNT_DEFER_BUDGET] || c[CNT_DEFER_LOST])
		session_print_deferred(s, c, f);
	if (s->table_cache) {
		struct cfi_table_cache_stats cs;

		cfi_table_cache_stats(s->table_cache, &cs);
		fprintf(f,
			"cfiprof: table cache %s: %" PRIu64 " hits, %" PRIu64 " misses (%" PRIu64
			" tables kept, %" PRIu64 " too small to keep), %" PRIu64
			" entries refused, %" PRIu64 " evicted, %.1f MiB on disk\n",
			s->opts.table_cache, cs.hits, cs.misses, cs.stores, cs.cheap, cs.refused,
			cs.evicted, (double)cs.bytes / (1 << 20));
	}
	print_refusals(f, &ts, &tr);
	print_elf_refusals(f);
	print_outside_refusals(f);
	session_runtimes_summary(&s->runtimes, c, f);
	print_walk_loads(s, c, f);
	core_btf_describe(&s->ld.core, s->ld.core_used,
			  __atomic_load_n(&s->ld.core_written, __ATOMIC_ACQUIRE), line,
			  sizeof(line));
	fprintf(f, "cfiprof: kernel types for CO-RE: %s\n", line);
	fprintf(f,
		"cfiprof: table requests: %" PRIu64 " sent, %" PRIu64
		" held back by the per-process limit, %" PRIu64 " over the global budget\n",
		c[CNT_REQUESTS], c[CNT_REQUESTS_LIMITED], c[CNT_REQUESTS_THROTTLED]);
	if (c[CNT_EVENTS_LOST] || tr.queue_dropped || s->agg.overflow || s->agg.malformed)
		fprintf(f,
			"cfiprof: losses: %" PRIu64 " events (ring buffer), %" PRIu64
			" load requests (queue full), %" PRIu64 " samples in [overflow], %" PRIu64
			" malformed records\n",
			c[CNT_EVENTS_LOST], tr.queue_dropped, s->agg.overflow, s->agg.malformed);
	if (c[CNT_EVENT_HITS] || c[CNT_EVENT_PROC_LIMITED] || c[CNT_EVENT_THROTTLED])
		fprintf(
		    f,
		    "cfiprof: event hits: %" PRIu64 " sampled, not sampled: %" PRIu64
		    " past their process's share (--event-budget), %" PRIu64
		    " past all processes' budget (probe hits: the sampled weigh for them, counts "
		    "estimated; off-CPU blocks: their time summed); off-CPU: %" PRIu64
		    " blocks under --min-block, %" PRIu64
		    " not sampled (too many threads blocked at once), %" PRIu64
		    " whose switch-in no program saw (their time: wall less CPU time until the "
		    "thread's next block or exit)\n",
		    c[CNT_EVENT_HITS], c[CNT_EVENT_PROC_LIMITED], c[CNT_EVENT_THROTTLED],
		    c[CNT_OFFCPU_SHORT], c[CNT_OFFCPU_FULL], c[CNT_OFFCPU_END_UNSEEN]);
	print_unwalked(s, c, f);
	if (!loader_prog_stats(&s->ld, &run_ns, &run_cnt) && run_ns && c[CNT_SAMPLES]) {
		double per_sample = (double)run_ns / (double)c[CNT_SAMPLES];
		double frames = (double)c[CNT_FRAMES] / (double)c[CNT_SAMPLES];

		fprintf(f,
			"cfiprof: BPF run time %.0f ns per sample, %.1f ns per user frame (%" PRIu64
			" runs, %" PRIu64 " sampled, kernel.bpf_stats_enabled)\n",
			per_sample, frames > 0 ? per_sample / frames : 0.0, run_cnt,
			c[CNT_SAMPLES]);
	}
	print_first_complete(s, f);
}
