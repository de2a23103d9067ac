// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Folded output.  Incomplete stacks keep a "[incomplete: REASON]" frame under
 * the comm so a flame graph shows how much is missing instead of hiding it;
 * samples the stack table had no room for appear under "[overflow]".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/folded.h"

struct line {
	char *text;
	uint64_t count;
};

/* ';' separates frames and the last ' ' separates the count: neither may appear in a name. */
static void put_frame(FILE *f, const char *name, const char *suffix)
{
	const char *p;

	fputc(';', f);
	for (p = name; *p; p++)
		fputc(*p == ';' ? ':' : *p == '\n' ? ' ' : *p, f);
	fputs(suffix, f);
}

static char *sample_text(const struct profile *p, const struct prof_sample *ps)
{
	char *text = NULL;
	size_t len = 0;
	const char *c;
	FILE *f;
	int k;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	/* --group-by container: the container is the first frame, before the comm */
	if (ps->group) {
		for (c = ps->group; *c; c++)
			fputc(*c == ';' || *c == ' ' || *c == '\n' ? '_' : *c, f);
		fputc(';', f);
	}
	for (c = ps->comm; *c; c++)
		fputc(*c == ';' || *c == ' ' || *c == '\n' ? '_' : *c, f);
	/* locations are leaf first; folded stacks are root first */
	for (k = (int)ps->nr_locs - 1; k >= 0; k--) {
		const struct prof_location *l = &p->locs[ps->locs[k]];

		put_frame(f, l->function, l->kind == PROF_LOC_KERNEL ? "_[k]" : "");
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static int by_count(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

int folded_write_profile(FILE *f, const struct profile *p)
{
	struct line *lines;
	size_t nr = p->nr_samples, i, n = 0;
	int err = 0;

	lines = calloc(nr ? nr : 1, sizeof(*lines));
	if (!lines)
		return -1;
	for (i = 0; i < nr; i++) {
		lines[i].count = prof_value(p, &p->samples[i]);
		lines[i].text = sample_text(p, &p->samples[i]);
		if (!lines[i].text)
			err = -1;
	}
	if (err)
		goto out;
	/* different PCs in the same functions fold into one line */
	qsort(lines, nr, sizeof(*lines), by_text);
	for (i = 0; i < nr; i++) {
		struct line cur = lines[i];

		lines[i].text = NULL;
		if (n && !strcmp(lines[n - 1].text, cur.text)) {
			lines[n - 1].count += cur.count;
			free(cur.text);
			continue;
		}
		lines[n++] = cur;
	}
	/* times are written in microseconds (rounded): flame graph tools take integers */
	if (p->unit == PROF_UNIT_NANOSECONDS)
		for (i = 0; i < n; i++)
			lines[i].count = (lines[i].count + 500) / 1000;
	qsort(lines, n, sizeof(*lines), by_count);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 "\n", lines[i].text, lines[i].count);
	err = ferror(f) ? -1 : 0;
out:
	for (i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	return err;
}

int folded_write(FILE *f, struct aggregator *a, struct frame_namer *fn)
{
	struct profile p;
	int err;

	if (profile_build(&p, a, fn, NULL))
		return -1;
	err = folded_write_profile(f, &p);
	profile_free(&p);
	return err;
}
