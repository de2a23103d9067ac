// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perf script output; see perf_script.h.  A profile holds counts per stack,
 * not each sample's time, so a stack counted N times is printed as N blocks
 * (the readers count blocks, not periods) and the times are spread evenly
 * over the recording in the profile's stack order: a timeline of them shows
 * how much, not when.
 */
#include <inttypes.h>
#include <string.h>

#include "user/output/perf_script.h"

/*
 * The readers split a frame line at the last " (" and the header at the
 * first " PID/TID": a newline anywhere, or whitespace in a dso, would cut
 * them elsewhere.
 */
static void put_clean(FILE *f, const char *s, bool no_space)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			fputc(' ', f);
		else if (no_space && (*s == ' ' || *s == '\t'))
			fputc('_', f);
		else
			fputc(*s, f);
	}
}

static const char *loc_dso(const struct profile *p, const struct prof_location *l)
{
	if (l->kind == PROF_LOC_KERNEL)
		return "[kernel.kallsyms]";
	if (l->mapping && l->mapping <= p->nr_maps && p->maps[l->mapping - 1].path[0])
		return p->maps[l->mapping - 1].path;
	return "[unknown]";
}

static void put_header(FILE *f, const struct profile *p, const struct prof_sample *ps,
		       uint64_t t_ns)
{
	/* perf names a task without a comm ":PID" */
	if (ps->comm && ps->comm[0])
		put_clean(f, ps->comm, false);
	else
		fprintf(f, ":%u", ps->pid);
	fprintf(f, " %u/%u %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n", ps->pid, ps->tid,
		t_ns / 1000000000u, t_ns % 1000000000u / 1000u, p->period_ns,
		p->event ? p->event : "cpu-clock");
}

static void put_frames(FILE *f, const struct profile *p, const struct prof_sample *ps)
{
	uint32_t k;

	for (k = 0; k < ps->nr_locs; k++) {
		const struct prof_location *l = &p->locs[ps->locs[k]];

		fprintf(f, "\t%16" PRIx64 " ", l->addr);
		put_clean(f, l->function, false);
		fputs(" (", f);
		put_clean(f, loc_dso(p, l), true);
		fputs(")\n", f);
	}
	fputc('\n', f);
}

int perf_script_write(FILE *f, const struct profile *p)
{
	uint64_t total = 0, at = 0, c;
	size_t i;

	if (profile_check(p))
		return -1;
	for (i = 0; i < p->nr_samples; i++)
		total += p->samples[i].count;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *ps = &p->samples[i];

		for (c = 0; c < ps->count; c++, at++) {
			uint64_t t = p->start_unix_ns + (uint64_t)((double)p->duration_ns *
								   (double)at / (double)total);

			put_header(f, p, ps, t);
			put_frames(f, p, ps);
		}
	}
	return ferror(f) ? -1 : 0;
}
