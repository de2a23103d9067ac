// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Folded output.  Incomplete stacks get a "[incomplete: REASON]" frame under
 * the comm so a flame graph shows how much is missing instead of hiding it;
 * samples the stack table had no room for appear as "[overflow]".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"

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

static char *stack_text(const struct agg_stack *s, struct frame_namer *fn)
{
	const uint64_t *user = s->pcs + s->nr_kernel;
	char buf[512], *text = NULL;
	size_t len = 0;
	const char *c;
	FILE *f;
	int k;

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	for (c = s->comm; *c; c++)
		fputc(*c == ';' || *c == ' ' ? '_' : *c, f);
	if (!s->comm[0])
		fputs("[unknown]", f);
	if (s->reason != STOP_COMPLETE && s->reason != STOP_NO_USER) {
		snprintf(buf, sizeof(buf), "[incomplete: %s]", stop_reason_name(s->reason));
		put_frame(f, buf, "");
	}
	for (k = (int)s->nr_user - 1; k >= 0; k--)
		put_frame(f, frame_name_user(fn, s->pid, user[k], k == 0, buf, sizeof(buf)), "");
	for (k = (int)s->nr_kernel - 1; k >= 0; k--)
		put_frame(f, frame_name_kernel(fn, s->pcs[k], buf, sizeof(buf)), "_[k]");
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

int folded_write(FILE *f, struct aggregator *a, struct frame_namer *fn)
{
	struct agg_stack **v;
	struct line *lines;
	uint64_t nr, i, n = 0;
	int err = 0;

	v = agg_sorted(a, &nr);
	lines = calloc(nr ? nr : 1, sizeof(*lines));
	if (!v || !lines) {
		free(v);
		free(lines);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		lines[i].text = stack_text(v[i], fn);
		lines[i].count = v[i]->count;
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
	qsort(lines, n, sizeof(*lines), by_count);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 "\n", lines[i].text, lines[i].count);
	if (a->overflow)
		fprintf(f, "[overflow: stack table full] %" PRIu64 "\n", a->overflow);
	err = ferror(f) ? -1 : 0;
out:
	for (i = 0; i < nr; i++)
		free(lines[i].text);
	free(lines);
	free(v);
	return err;
}
