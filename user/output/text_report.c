// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Text report.  Locations are first folded into functions (name, object):
 * many PCs of one function must read as one row, as in perf report.
 *
 * The call tree is not built as nodes: with the samples sorted by their
 * root-first (comm, function...) paths every node is a run of consecutive
 * samples, and a node's children are the runs within it that share one
 * more path element, so printing is a recursive walk over index ranges.
 *
 * Chains of single children are printed at the same indentation (perf's
 * style): a 300-deep recursion then stays readable instead of marching off
 * the right edge; only real branches indent.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/text_report.h"

#define PRUNE_PERMILLE 5 /* call tree branches below 0.5% are not printed */

struct func {
	const char *name, *object; /* object NULL when unknown */
	uint64_t self, total;
	size_t last; /* sample index + 1 last added to total: recursion counts once */
};

struct report {
	FILE *f;
	const struct profile *p;
	uint32_t *loc_func; /* per location, index into funcs */
	struct func *funcs;
	size_t nr_funcs;
	uint64_t total;
	char *prefix; /* call tree guides, 3 characters per branch level */
	int event;    /* the section's event (-1: the whole profile) */
	enum prof_unit unit;
};

struct group {
	size_t lo, hi;
	uint64_t count, self;
};

/* A sample's value in the section: events of other units are never added together. */
static uint64_t val(const struct report *r, const struct prof_sample *s)
{
	return r->event < 0 || s->event == (uint32_t)r->event ? prof_value(r->p, s) : 0;
}

static double pct(const struct report *r, uint64_t n)
{
	return r->total ? 100.0 * n / r->total : 0.0;
}

static const char *comm_name(const struct prof_sample *s)
{
	/* root: the comm, or "GROUP: comm" with --group-by container */
	const char *c = s->root ? s->root : s->comm;

	return c && c[0] ? c : "[unknown]";
}

static const char *loc_function(const struct prof_location *l)
{
	return l->function ? l->function : "[unknown]";
}

/* The basename: full paths of deep install trees would push the function column out of view. */
static const char *loc_object(const struct profile *p, const struct prof_location *l)
{
	const char *path, *slash;

	if (!l->mapping || l->mapping > p->nr_maps || !p->maps[l->mapping - 1].path)
		return NULL;
	path = p->maps[l->mapping - 1].path;
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static int strcmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return a ? 1 : b ? -1 : 0;
	return strcmp(a, b);
}

static int by_function(const void *x, const void *y, void *arg)
{
	const struct profile *p = arg;
	const struct prof_location *a = &p->locs[*(const uint32_t *)x];
	const struct prof_location *b = &p->locs[*(const uint32_t *)y];
	int c = strcmp(loc_function(a), loc_function(b));

	return c ? c : strcmp_null(loc_object(p, a), loc_object(p, b));
}

static int make_functions(struct report *r)
{
	const struct profile *p = r->p;
	uint32_t *idx, i;
	int err = -1;

	idx = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*idx));
	r->loc_func = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*r->loc_func));
	r->funcs = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*r->funcs));
	if (!idx || !r->loc_func || !r->funcs)
		goto out;
	for (i = 0; i < p->nr_locs; i++)
		idx[i] = i;
	qsort_r(idx, p->nr_locs, sizeof(*idx), by_function, (void *)p);
	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[idx[i]];

		if (!i || by_function(&idx[i - 1], &idx[i], (void *)p)) {
			r->funcs[r->nr_funcs].name = loc_function(l);
			r->funcs[r->nr_funcs].object = loc_object(p, l);
			r->nr_funcs++;
		}
		r->loc_func[idx[i]] = r->nr_funcs - 1;
	}
	err = 0;
out:
	free(idx);
	return err;
}

static void count_functions(struct report *r)
{
	const struct profile *p = r->p;
	size_t i;
	uint32_t k;

	for (i = 0; i < r->nr_funcs; i++)
		r->funcs[i].self = r->funcs[i].total = r->funcs[i].last = 0;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!val(r, s) || !s->nr_locs)
			continue;
		r->funcs[r->loc_func[s->locs[0]]].self += val(r, s);
		for (k = 0; k < s->nr_locs; k++) {
			struct func *fn = &r->funcs[r->loc_func[s->locs[k]]];

			if (fn->last == i + 1)
				continue;
			fn->last = i + 1;
			fn->total += val(r, s);
		}
	}
}

static int by_self(const void *x, const void *y, void *arg)
{
	const struct func *a = (const struct func *)arg + *(const uint32_t *)x;
	const struct func *b = (const struct func *)arg + *(const uint32_t *)y;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int by_total(const void *x, const void *y, void *arg)
{
	const struct func *a = (const struct func *)arg + *(const uint32_t *)x;
	const struct func *b = (const struct func *)arg + *(const uint32_t *)y;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return by_self(x, y, arg);
}

/* Control characters become '?': a symbol or comm must not drive the terminal it is read on. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void put_function(FILE *f, const char *name, const char *object)
{
	put_text(f, name);
	if (object) {
		fputs(" [", f);
		put_text(f, object);
		fputc(']', f);
	}
	fputc('\n', f);
}

static int put_table(struct report *r, bool self, int max_rows)
{
	uint32_t *idx, i;
	FILE *f = r->f;

	idx = calloc(r->nr_funcs ? r->nr_funcs : 1, sizeof(*idx));
	if (!idx)
		return -1;
	for (i = 0; i < r->nr_funcs; i++)
		idx[i] = i;
	qsort_r(idx, r->nr_funcs, sizeof(*idx), self ? by_self : by_total, r->funcs);
	fprintf(f, "Top functions by %s samples:\n", self ? "self" : "total (inclusive)");
	fprintf(f, "%8s %8s %10s  %s\n", "Self%", "Total%",
		r->unit == PROF_UNIT_NANOSECONDS ? "Time(ms)"
		: r->unit == PROF_UNIT_EVENTS	 ? "Events"
						 : "Samples",
		"Function [object]");
	for (i = 0; i < r->nr_funcs && (max_rows <= 0 || i < (uint32_t)max_rows); i++) {
		const struct func *fn = &r->funcs[idx[i]];
		uint64_t n = self ? fn->self : fn->total;

		if (!n)
			break;
		if (r->unit == PROF_UNIT_NANOSECONDS)
			fprintf(f, "%7.2f%% %7.2f%% %10.2f  ", pct(r, fn->self), pct(r, fn->total),
				(double)n / 1e6);
		else
			fprintf(f, "%7.2f%% %7.2f%% %10" PRIu64 "  ", pct(r, fn->self),
				pct(r, fn->total), n);
		put_function(f, fn->name, fn->object);
	}
	fputc('\n', f);
	free(idx);
	return 0;
}

static uint32_t path_len(const struct prof_sample *s)
{
	return s->nr_locs + 1;
}

/* Function index of path element j >= 1 (element 0 is the comm). */
static uint32_t path_func(const struct report *r, const struct prof_sample *s, uint32_t j)
{
	return r->loc_func[s->locs[s->nr_locs - j]];
}

static int by_path(const void *x, const void *y, void *arg)
{
	const struct report *r = arg;
	const struct prof_sample *a = &r->p->samples[*(const size_t *)x];
	const struct prof_sample *b = &r->p->samples[*(const size_t *)y];
	uint32_t j, fa, fb;
	int c = strcmp(comm_name(a), comm_name(b));

	if (c)
		return c;
	for (j = 1; j < path_len(a) && j < path_len(b); j++) {
		fa = path_func(r, a, j);
		fb = path_func(r, b, j);
		if (fa != fb)
			return fa < fb ? -1 : 1;
	}
	return path_len(a) < path_len(b) ? -1 : path_len(a) > path_len(b);
}

static bool same_element(const struct report *r, const struct prof_sample *a,
			 const struct prof_sample *b, uint32_t j)
{
	if (!j)
		return !strcmp(comm_name(a), comm_name(b));
	return path_func(r, a, j) == path_func(r, b, j);
}

/* End of the run of samples from order[i] on that share path element j. */
static size_t run_end(const struct report *r, const size_t *order, size_t i, size_t hi, uint32_t j)
{
	const struct prof_sample *first = &r->p->samples[order[i]];
	size_t k = i + 1;

	while (k < hi && same_element(r, first, &r->p->samples[order[k]], j))
		k++;
	return k;
}

static int by_count(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->lo < b->lo ? -1 : 1;
}

/*
 * Prints the children of the node whose samples are order[lo, hi): the runs
 * that share path element j.  Their lines start with the first plen
 * characters of r->prefix.
 */
static int put_children(struct report *r, const size_t *order, size_t lo, size_t hi, uint32_t j,
			size_t plen)
{
	const struct prof_sample *s;
	struct group *groups;
	size_t i, k, ng = 0, kept;
	bool branch;

	/* samples ending at the parent sort first and belong to no child */
	while (lo < hi && path_len(&r->p->samples[order[lo]]) == j)
		lo++;
	for (i = lo; i < hi; i = run_end(r, order, i, hi, j))
		ng++;
	if (!ng)
		return 0;
	groups = calloc(ng, sizeof(*groups));
	if (!groups)
		return -1;
	for (i = lo, ng = 0; i < hi; i = groups[ng++].hi) {
		groups[ng].lo = i;
		groups[ng].hi = run_end(r, order, i, hi, j);
		for (k = i; k < groups[ng].hi; k++) {
			s = &r->p->samples[order[k]];
			groups[ng].count += val(r, s);
			if (path_len(s) == j + 1)
				groups[ng].self += val(r, s);
		}
	}
	qsort(groups, ng, sizeof(*groups), by_count);
	for (kept = 0; kept < ng && groups[kept].count * 1000 >= r->total * PRUNE_PERMILLE; kept++)
		;
	branch = j && kept > 1;
	for (i = 0; i < kept; i++) {
		const struct group *g = &groups[i];
		bool last = i + 1 == kept;
		size_t child_plen = plen;

		s = &r->p->samples[order[g->lo]];
		fprintf(r->f, "%7.2f%% %7.2f%%  %.*s%s", pct(r, g->count), pct(r, g->self),
			(int)plen, r->prefix, branch ? (last ? "`- " : "|- ") : "");
		if (j) {
			const struct func *fn = &r->funcs[path_func(r, s, j)];

			put_function(r->f, fn->name, fn->object);
		} else {
			put_text(r->f, comm_name(s));
			fputc('\n', r->f);
		}
		if (branch) {
			memcpy(r->prefix + plen, last ? "   " : "|  ", 3);
			child_plen += 3;
		} else if (!j) {
			memcpy(r->prefix, "  ", 2);
			child_plen = 2;
		}
		if (put_children(r, order, g->lo, g->hi, j + 1, child_plen)) {
			free(groups);
			return -1;
		}
		if (!j && !last)
			fputc('\n', r->f);
	}
	free(groups);
	return 0;
}

static int put_tree(struct report *r)
{
	const struct profile *p = r->p;
	uint32_t max_locs = 0;
	size_t *order, i, n = 0;
	int err = -1;

	order = calloc(p->nr_samples ? p->nr_samples : 1, sizeof(*order));
	if (!order)
		return -1;
	for (i = 0; i < p->nr_samples; i++) {
		if (!val(r, &p->samples[i]))
			continue;
		order[n++] = i;
		if (p->samples[i].nr_locs > max_locs)
			max_locs = p->samples[i].nr_locs;
	}
	r->prefix = malloc(2 + 3 * (size_t)(max_locs + 1));
	if (!r->prefix)
		goto out;
	qsort_r(order, n, sizeof(*order), by_path, r);
	fprintf(r->f, "Call tree (top down, branches below %.1f%% pruned):\n",
		PRUNE_PERMILLE / 10.0);
	fprintf(r->f, "%8s %8s  %s\n", "Total%", "Self%", "Comm / function [object]");
	if (!n)
		fprintf(r->f, "(no samples)\n");
	err = put_children(r, order, 0, n, 0, 0);
out:
	free(r->prefix);
	r->prefix = NULL;
	free(order);
	return err;
}

static enum prof_unit event_unit(const struct profile *p, size_t i)
{
	return !strcmp(p->events[i].unit, "nanoseconds") ? PROF_UNIT_NANOSECONDS : PROF_UNIT_EVENTS;
}

/* The events, each with its total in its own unit: "~" and a note on estimates. */
static void put_event_totals(struct report *r)
{
	const struct profile *p = r->p;
	char total[64];
	size_t i, k;
	FILE *f = r->f;

	for (i = 0; i < p->nr_events; i++) {
		uint64_t sum = 0;

		for (k = 0; k < p->nr_samples; k++)
			if (p->samples[k].event == i)
				sum += prof_value(p, &p->samples[k]);
		prof_format_unit(event_unit(p, i), sum, total, sizeof(total));
		fprintf(f, "# Total: %s%s (", p->events[i].estimated ? "~" : "", total);
		put_text(f, p->events[i].name);
		fputs(p->events[i].estimated
			  ? "; estimated: sampled past --event-budget, each sample "
			    "weighted by the hits it stands for)\n"
			  : ")\n",
		      f);
	}
}

static void put_header(struct report *r)
{
	const struct profile *p = r->p;
	size_t i;
	FILE *f = r->f;

	fprintf(f, "# cfiprof report\n");
	fputs(p->nr_events > 1 ? "# Events: " : "# Event: ", f);
	for (i = 0; i < p->nr_events; i++) {
		fputs(i ? ", " : "", f);
		put_text(f, p->events[i].name);
	}
	if (!p->nr_events)
		put_text(f, p->event ? p->event : "unknown");
	/* the sampling rate of the default CPU profile; -e events are counted, or several */
	if (p->period_ns && !p->nr_events)
		fprintf(f, ", %.0f Hz (period %" PRIu64 " ns)", 1e9 / p->period_ns, p->period_ns);
	fprintf(f, "\n# Samples: %" PRIu64 "\n", p->total);
	put_event_totals(r);
	fprintf(f, "# Duration: %.3f s\n", p->duration_ns / 1e9);
	fprintf(f, "# Stack table overflow: %" PRIu64 " samples\n", p->overflow);
}

/* The tables and the tree of the section's event (r->event, -1: all of them). */
static int put_section(struct report *r, int max_rows)
{
	const struct profile *p = r->p;
	uint64_t incomplete = 0;
	char total[64];
	size_t i;

	r->total = 0;
	for (i = 0; i < p->nr_samples; i++) {
		r->total += val(r, &p->samples[i]);
		/* the same test folded uses to add an [incomplete] frame */
		if (p->samples[i].reason != STOP_COMPLETE && p->samples[i].reason != STOP_NO_USER)
			incomplete += val(r, &p->samples[i]);
	}
	r->unit = r->event < 0 ? p->unit : event_unit(p, (size_t)r->event);
	count_functions(r);
	if (r->event >= 0) {
		prof_format_unit(r->unit, r->total, total, sizeof(total));
		fputs("\n## ", r->f);
		put_text(r->f, p->events[r->event].name);
		fprintf(r->f, ": %s%s\n", p->events[r->event].estimated ? "~" : "", total);
	}
	prof_format_unit(r->unit, incomplete, total, sizeof(total));
	fprintf(r->f, "# Incomplete stacks: %s (%.2f%%)\n\n", total, pct(r, incomplete));
	if (put_table(r, true, max_rows) || put_table(r, false, max_rows) || put_tree(r))
		return -1;
	return 0;
}

/*
 * A profile of several events: a section each, in the event's own unit
 * (nanoseconds of cpu-clock are not added to page faults).
 */
int text_report_write(FILE *f, const struct profile *p, int max_rows)
{
	struct report r = {.f = f, .p = p, .event = -1};
	size_t i;
	int err = -1;

	if (profile_check(p))
		return -1;
	if (make_functions(&r))
		goto out;
	put_header(&r);
	if (p->nr_events <= 1 && put_section(&r, max_rows))
		goto out;
	for (i = 0; p->nr_events > 1 && i < p->nr_events; i++) {
		r.event = (int)i;
		if (put_section(&r, max_rows))
			goto out;
	}
	err = ferror(f) ? -1 : 0;
out:
	free(r.loc_func);
	free(r.funcs);
	return err;
}
