// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * speedscope output.  One profile per (pid, comm) rather than one for all:
 * speedscope's views (time order, left heavy, sandwich) are per profile, and
 * a sandwich of main() mixing unrelated programs would mean nothing.  The
 * busiest group comes first, so it is the one that opens.
 *
 * Frames are (name, file) pairs shared by all profiles; locations that only
 * differ by address collapse into one frame, as in folded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/speedscope.h"
#include "user/output/utf8.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

struct scope {
	const struct profile *p;
	char **names;	     /* per location, kernel ones suffixed _[k] */
	uint32_t *loc_frame; /* per location, index into shared.frames */
	uint32_t *frame_loc; /* per frame, a location it was made from */
	size_t nr_frames;
};

struct group {
	size_t lo, hi; /* range of the sorted sample order */
	uint64_t weight;
};

/* The inside of a JSON string: valid UTF-8 passes through as is. */
static void put_json_chars(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	for (; *u; u += n) {
		n = utf8_next(u, &cp);
		if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp < 0x20)
			fprintf(f, "\\u%04x", cp);
		else if (cp == 0xfffd)
			fputs("\\ufffd", f);
		else
			fwrite(u, 1, n, f);
	}
}

static void put_json(FILE *f, const char *s)
{
	fputc('"', f);
	put_json_chars(f, s);
	fputc('"', f);
}

static const char *comm_name(const struct prof_sample *s)
{
	/* root: the comm, or "GROUP: comm" with --group-by container */
	const char *c = s->root ? s->root : s->comm;

	return c && c[0] ? c : "[unknown]";
}

static const char *loc_file(const struct profile *p, const struct prof_location *l)
{
	if (!l->mapping || l->mapping > p->nr_maps)
		return NULL;
	return p->maps[l->mapping - 1].path;
}

static int by_frame(const void *x, const void *y, void *arg)
{
	const struct scope *sc = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const char *fa, *fb;
	int c = strcmp(sc->names[a], sc->names[b]);

	if (c)
		return c;
	fa = loc_file(sc->p, &sc->p->locs[a]);
	fb = loc_file(sc->p, &sc->p->locs[b]);
	if (!fa || !fb)
		return fa ? 1 : fb ? -1 : 0;
	return strcmp(fa, fb);
}

static int make_frames(struct scope *sc)
{
	const struct profile *p = sc->p;
	size_t n = p->nr_locs ? p->nr_locs : 1;
	uint32_t *idx, i;
	int err = -1;

	sc->names = calloc(n, sizeof(*sc->names));
	sc->loc_frame = calloc(n, sizeof(*sc->loc_frame));
	sc->frame_loc = calloc(n, sizeof(*sc->frame_loc));
	idx = calloc(n, sizeof(*idx));
	if (!sc->names || !sc->loc_frame || !sc->frame_loc || !idx)
		goto out;
	for (i = 0; i < p->nr_locs; i++) {
		idx[i] = i;
		if (!(sc->names[i] = prof_loc_label(&p->locs[i])))
			goto out;
	}
	qsort_r(idx, p->nr_locs, sizeof(*idx), by_frame, sc);
	for (i = 0; i < p->nr_locs; i++) {
		if (!i || by_frame(&idx[i - 1], &idx[i], sc))
			sc->frame_loc[sc->nr_frames++] = idx[i];
		sc->loc_frame[idx[i]] = sc->nr_frames - 1;
	}
	err = 0;
out:
	free(idx);
	return err;
}

static int by_process(const void *x, const void *y, void *arg)
{
	const struct profile *p = arg;
	const struct prof_sample *a = &p->samples[*(const size_t *)x];
	const struct prof_sample *b = &p->samples[*(const size_t *)y];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(comm_name(a), comm_name(b));
}

static int by_weight(const void *x, const void *y)
{
	const struct group *a = x, *b = y;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->lo < b->lo ? -1 : 1;
}

static void put_frames(FILE *f, const struct scope *sc)
{
	const char *file;
	size_t i;

	fputs("\"shared\":{\"frames\":[", f);
	for (i = 0; i < sc->nr_frames; i++) {
		uint32_t loc = sc->frame_loc[i];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		put_json(f, sc->names[loc]);
		file = loc_file(sc->p, &sc->p->locs[loc]);
		if (file) {
			fputs(",\"file\":", f);
			put_json(f, file);
		}
		fputc('}', f);
	}
	fputs("]},\n", f);
}

static void put_profile(FILE *f, const struct scope *sc, const size_t *order, const struct group *g)
{
	const struct prof_sample *s = &sc->p->samples[order[g->lo]];
	size_t i;
	uint32_t k;

	fputs("{\"type\":\"sampled\",\"name\":\"", f);
	put_json_chars(f, comm_name(s));
	fprintf(f,
		" (pid %" PRIu32 ")\",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
		",\n\"samples\":[",
		s->pid, sc->p->unit == PROF_UNIT_NANOSECONDS ? "nanoseconds" : "none", g->weight);
	for (i = g->lo; i < g->hi; i++) {
		s = &sc->p->samples[order[i]];
		fputs(i > g->lo ? ",\n[" : "\n[", f);
		for (k = s->nr_locs; k-- > 0;)
			fprintf(f, k + 1 < s->nr_locs ? ",%" PRIu32 : "%" PRIu32,
				sc->loc_frame[s->locs[k]]);
		fputc(']', f);
	}
	fputs("],\n\"weights\":[", f);
	for (i = g->lo; i < g->hi; i++)
		fprintf(f, i > g->lo ? ",%" PRIu64 : "%" PRIu64, prof_value(sc->p, &sc->p->samples[order[i]]));
	fputs("]}", f);
}

int speedscope_write(FILE *f, const struct profile *p, const char *name)
{
	struct scope sc = {.p = p};
	struct group *groups = NULL;
	size_t *order = NULL, n = 0, ng = 0, i;
	int err = -1;

	if (profile_check(p))
		return -1;
	if (!name)
		name = "cfiprof";
	order = calloc(p->nr_samples ? p->nr_samples : 1, sizeof(*order));
	groups = calloc(p->nr_samples ? p->nr_samples : 1, sizeof(*groups));
	if (!order || !groups || make_frames(&sc))
		goto out;
	for (i = 0; i < p->nr_samples; i++)
		if (prof_value(p, &p->samples[i]))
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_process, (void *)p);
	for (i = 0; i < n; i++) {
		if (!i || by_process(&order[i - 1], &order[i], (void *)p)) {
			groups[ng].lo = i;
			ng++;
		}
		groups[ng - 1].hi = i + 1;
		groups[ng - 1].weight += prof_value(p, &p->samples[order[i]]);
	}
	qsort(groups, ng, sizeof(*groups), by_weight);

	fputs("{\"$schema\":\"" SCHEMA_URL "\",\n", f);
	put_frames(f, &sc);
	fputs("\"profiles\":[", f);
	for (i = 0; i < ng; i++) {
		fputs(i ? ",\n" : "\n", f);
		put_profile(f, &sc, order, &groups[i]);
	}
	if (!ng) {
		/* speedscope refuses a file without profiles; an empty one still opens */
		fputs("\n{\"type\":\"sampled\",\"name\":", f);
		put_json(f, name);
		fputs(",\"unit\":\"none\",\"startValue\":0,\"endValue\":0,\"samples\":[],"
		      "\"weights\":[]}",
		      f);
	}
	fputs("],\n\"name\":", f);
	put_json(f, name);
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"cfiprof\"}\n", f);
	err = ferror(f) ? -1 : 0;
out:
	for (i = 0; sc.names && i < p->nr_locs; i++)
		free(sc.names[i]);
	free(sc.names);
	free(sc.loc_frame);
	free(sc.frame_loc);
	free(groups);
	free(order);
	return err;
}
