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

/* ';' separates frames and the last ' ' separates the count: neither may appear in a name. */
static void put_frame(FILE *f, const char *name, const char *suffix)
{
	const char *p;

	fputc(';', f);
	for (p = name; *p; p++)
		fputc(*p == ';' ? ':' : *p == '\n' ? ' ' : *p, f);
	fputs(suffix, f);
}

int folded_write(FILE *f, struct aggregator *a, struct frame_namer *fn)
{
	struct agg_stack **v;
	uint64_t nr, i;
	char buf[512];
	int k;

	v = agg_sorted(a, &nr);
	if (!v)
		return -1;
	for (i = 0; i < nr; i++) {
		const struct agg_stack *s = v[i];
		const uint64_t *user = s->pcs + s->nr_kernel;
		const char *c;

		for (c = s->comm; *c; c++)
			fputc(*c == ';' || *c == ' ' ? '_' : *c, f);
		if (!s->comm[0])
			fputs("[unknown]", f);
		if (s->reason != STOP_COMPLETE && s->reason != STOP_NO_USER) {
			snprintf(buf, sizeof(buf), "[incomplete: %s]", stop_reason_name(s->reason));
			put_frame(f, buf, "");
		}
		for (k = (int)s->nr_user - 1; k >= 0; k--)
			put_frame(f, frame_name_user(fn, s->pid, user[k], k == 0, buf, sizeof(buf)),
				  "");
		for (k = (int)s->nr_kernel - 1; k >= 0; k--)
			put_frame(f, frame_name_kernel(fn, s->pcs[k], buf, sizeof(buf)), "_[k]");
		fprintf(f, " %" PRIu64 "\n", s->count);
	}
	if (a->overflow)
		fprintf(f, "[overflow: stack table full] %" PRIu64 "\n", a->overflow);
	free(v);
	return ferror(f) ? -1 : 0;
}
