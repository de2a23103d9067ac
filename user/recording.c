// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writer of saved recordings; see recording.h for the format. */
#include <inttypes.h>
#include <stdlib.h>

#include "recording.h"

static void write_pcs(FILE *f, const uint64_t *pcs, unsigned int n)
{
	unsigned int i;

	if (!n) {
		fputs(" -", f);
		return;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%c%" PRIx64, i ? ',' : ' ', pcs[i]);
}

int recording_write(FILE *f, struct aggregator *a, struct proc_tracker *pt)
{
	struct agg_stack **v;
	uint64_t nr, i;
	uint32_t b, m;
	struct proc *p;
	const char *c;

	fprintf(f, "# cfiprof recording v1\n");
	for (p = proc_tracker_first(pt, &b); p; p = proc_tracker_next(pt, p, &b)) {
		for (m = 0; m < p->nr_maps; m++) {
			const struct proc_mapping *pm = &p->maps[m];
			const char *bid = pm->sym ? sym_obj_build_id(pm->sym) : "";

			fprintf(f, "map %u %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %u %s %s\n",
				p->pid, pm->start, pm->end, pm->offset, pm->bias, pm->flags,
				bid && bid[0] ? bid : "-", pm->path);
		}
	}
	v = agg_sorted(a, &nr);
	if (!v)
		return -1;
	for (i = 0; i < nr; i++) {
		const struct agg_stack *s = v[i];

		fprintf(f, "stack %" PRIu64 " %u %u %u %u ", s->count, s->pid, s->tid, s->reason,
			s->flags);
		for (c = s->comm; *c; c++)
			fputc(*c == ' ' || *c == '\n' ? '_' : *c, f);
		if (!s->comm[0])
			fputc('-', f);
		fputs(" k", f);
		write_pcs(f, s->pcs, s->nr_kernel);
		fputs(" u", f);
		write_pcs(f, s->pcs + s->nr_kernel, s->nr_user);
		fputc('\n', f);
	}
	if (a->overflow)
		fprintf(f, "overflow %" PRIu64 "\n", a->overflow);
	free(v);
	return ferror(f) ? -1 : 0;
}
