// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writer of saved recordings; see recording.h for the format. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "user/profile/recording.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/sym_cache.h"

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

static void write_maps(FILE *f, uint32_t pid, const struct map_set *s)
{
	uint32_t m;

	for (m = 0; s && m < s->nr_maps; m++) {
		const struct proc_mapping *pm = &s->maps[m];
		const char *bid = pm->sym ? sym_obj_build_id(pm->sym) : NULL;
		int len;

		/* without symbols: the build-id part of the key (BUILDID@identity, vdso:BUILDID) */
		if (!bid || !bid[0])
			bid = strncmp(pm->key, "vdso:", 5) ? pm->key : pm->key + 5;
		len = (int)strcspn(bid, "@");
		if (!len)
			bid = "-", len = 1;
		fprintf(f, "map %u %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %u %.*s %s\n", pid,
			pm->start, pm->end, pm->offset, pm->bias, pm->flags, len, bid, pm->path);
	}
}

static void put_field(FILE *f, const char *s)
{
	fputc('\t', f);
	for (; s && *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* The user locations of @p, each once, with the pid of a sample that has it. */
static int write_uframes(FILE *f, const struct profile *p)
{
	bool *done = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*done));
	size_t i;
	uint32_t k, j;

	if (!done)
		return -1;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		for (k = 0; k < s->nr_locs; k++) {
			const struct prof_location *l = &p->locs[s->locs[k]];
			uint64_t start = l->mapping && l->mapping <= p->nr_maps
					     ? p->maps[l->mapping - 1].start
					     : 0;

			if (l->kind != PROF_LOC_USER || done[s->locs[k]])
				continue;
			done[s->locs[k]] = true;
			for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
				const struct prof_line *pl = l->nr_lines ? &l->lines[j] : NULL;

				fprintf(f, "uframe %u %" PRIx64 " %" PRIx64 " %u %u %u", s->pid,
					start, l->addr, j, pl ? pl->line : 0,
					pl ? pl->start_line : 0);
				put_field(f, pl ? pl->function : l->function);
				put_field(f, pl ? pl->system_name : l->function);
				put_field(f, pl ? pl->file : NULL);
				fputc('\n', f);
			}
		}
	}
	free(done);
	return 0;
}

/* Each distinct Python frame of the stacks v[0, nr), as record shows it. */
static int write_pyframes(FILE *f, struct agg_stack *const *v, uint64_t nr, struct python_names *pn)
{
	struct saved_python *seen = saved_python_new();
	struct python_frame_shown how;
	uint64_t i;
	uint32_t k;
	int ret = seen ? 0 : -1;

	for (i = 0; !ret && i < nr; i++) {
		const struct agg_stack *s = v[i];
		const struct cfi_python_frame *py =
		    (const struct cfi_python_frame *)(s->pcs + s->nr_kernel + s->nr_user);

		for (k = 0; !ret && k < s->nr_python; k++) {
			if (saved_python_find(seen, s->pid, s->generation, &py[k]))
				continue;
			python_frame_show(pn, s->pid, s->generation, &py[k], &how);
			if (saved_python_add(seen, s->pid, s->generation, &py[k], &how) < 0) {
				ret = -1;
				break;
			}
			fprintf(f, "pyframe %u %u %" PRIx64 " %x %u %u %x %u %u", s->pid,
				s->generation, (uint64_t)py[k].code, py[k].instr, py[k].is_entry,
				py[k].owner, py[k].scope, how.role, how.line);
			put_field(f, how.name);
			put_field(f, how.file);
			fputc('\n', f);
		}
	}
	saved_python_free(seen);
	return ret;
}

/* " py CODE:INSTR:ENTRY:OWNER:SCOPE,..": the stack's Python frames, innermost first. */
static void write_python_list(FILE *f, const struct agg_stack *s)
{
	const struct cfi_python_frame *py =
	    (const struct cfi_python_frame *)(s->pcs + s->nr_kernel + s->nr_user);
	uint32_t k;

	for (k = 0; k < s->nr_python; k++)
		fprintf(f, "%s%" PRIx64 ":%x:%x:%x:%x", k ? "," : " py ", (uint64_t)py[k].code,
			py[k].instr, py[k].is_entry, py[k].owner, py[k].scope);
}

int recording_write(FILE *f, struct aggregator *a, struct proc_tracker *pt,
		    const struct recording_meta *meta, struct cgroup_names *cgroups)
{
	struct kernel_names knames = {0};
	struct agg_stack **v;
	uint64_t nr, i;
	uint32_t b;
	struct proc *p;
	const char *c;

	fprintf(f, "# cfiprof recording v1\n");
	fprintf(f, "meta %u %s %" PRIu64 " %" PRIu64 "\n", meta->freq,
		meta->event[0] ? meta->event : "cpu-clock", meta->start_unix_ns, meta->duration_ns);
	for (i = 0; i < (uint64_t)meta->nr_events; i++)
		fprintf(f, "event %s\n", meta->event_names[i]);
	if (meta->nr_events && a->estimated_events)
		fprintf(f, "estimated %x\n", a->estimated_events);
	for (p = proc_tracker_first(pt, &b); p; p = proc_tracker_next(pt, p, &b)) {
		uint32_t h;

		if (p->ns_pid && p->ns_pid != p->pid)
			fprintf(f, "proc %u %u\n", p->pid, p->ns_pid);
		/* older mapping sets first, each under its generation, the current one last */
		for (h = 0; h < p->nr_history; h++) {
			fprintf(f, "gen %u %u\n", p->pid, p->history[h]->generation);
			write_maps(f, p->pid, p->history[h]);
		}
		if (p->generation)
			fprintf(f, "gen %u %u\n", p->pid, p->generation);
		write_maps(f, p->pid, p->cur);
	}
	v = agg_sorted(a, &nr);
	if (!v)
		return -1;
	/* the cgroups the stacks name, each once (a few: a linear check is enough) */
	for (i = 0; cgroups && i < nr; i++) {
		const char *path = cgroup_names_get(cgroups, v[i]->cgroup_id);
		uint64_t k;

		for (k = 0; k < i && v[k]->cgroup_id != v[i]->cgroup_id; k++)
			;
		if (path && k == i)
			fprintf(f, "cgroup %" PRIx64 " %s\n", v[i]->cgroup_id, path);
	}
	for (i = 0; meta->ks && i < nr; i++) {
		const char *name;
		uint32_t k;

		for (k = 0; k < v[i]->nr_kernel; k++) {
			uint64_t pc = v[i]->pcs[k];

			if (ksyms_lookup(meta->ks, pc, &name, NULL) || !kernel_name_is_transient(name) ||
			    kernel_names_find(&knames, pc))
				continue;
			if (kernel_names_add(&knames, pc, name)) {
				kernel_names_free(&knames);
				free(v);
				return -1;
			}
			fprintf(f, "kname %" PRIx64 " %s\n", pc, name);
		}
	}
	kernel_names_free(&knames);
	if ((meta->prof && write_uframes(f, meta->prof)) ||
	    (meta->python && write_pyframes(f, v, nr, meta->python))) {
		free(v);
		return -1;
	}
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
		if (s->cgroup_id)
			fprintf(f, " c %" PRIx64, s->cgroup_id);
		if (s->generation)
			fprintf(f, " g %u", s->generation);
		if (meta->nr_events)
			fprintf(f, " w %" PRIu64 " e %u", s->weight, s->event);
		if (meta->python)
			write_python_list(f, s);
		fputc('\n', f);
	}
	if (a->overflow && meta->nr_events)
		fprintf(f, "overflow %" PRIu64 " %" PRIu64 "\n", a->overflow, a->overflow_weight);
	else if (a->overflow)
		fprintf(f, "overflow %" PRIu64 "\n", a->overflow);
	free(v);
	return ferror(f) ? -1 : 0;
}

/* Parses "-" or a comma-separated hex list into pcs; returns the count or -1. */
static int parse_pcs(const char *s, uint64_t *pcs, int max)
{
	int n = 0;
	char *end;

	if (!strcmp(s, "-"))
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		errno = 0;
		pcs[n++] = strtoull(s, &end, 16);
		if (errno || end == s)
			return -1;
		if (*end == 0)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* Parses a "py" list ("CODE:INSTR:ENTRY:OWNER:SCOPE,..", up to a blank); the count or -1. */
static int parse_python(const char *s, struct cfi_python_frame *py, int max)
{
	unsigned long long code;
	unsigned int instr, entry, owner, scope;
	int n = 0, at;

	for (;;) {
		at = 0;
		if (n == max ||
		    sscanf(s, "%llx:%x:%x:%x:%x%n", &code, &instr, &entry, &owner, &scope, &at) !=
			5 ||
		    !at || entry > 255 || owner > 255 || scope > 0xffff)
			return -1;
		py[n++] = (struct cfi_python_frame){.code = code,
						    .instr = instr,
						    .is_entry = (__u8)entry,
						    .owner = (__u8)owner,
						    .scope = (__u16)scope};
		s += at;
		if (*s != ',')
			return *s == 0 || *s == ' ' || *s == '\n' ? n : -1;
		s++;
	}
}

/* A pyframe line (after "pyframe "): 0, or -1 when malformed; out of memory in *oom. */
static int read_pyframe(char *line, struct saved_python *sp, bool *oom)
{
	struct python_frame_shown how = {0};
	struct cfi_python_frame f = {0};
	unsigned int pid, gen, entry, owner, scope;
	unsigned long long code;
	char *fields[2], *t;
	int at = 0, nf;

	if (sscanf(line, "%u %u %llx %x %u %u %x %u %u%n", &pid, &gen, &code, &f.instr, &entry,
		   &owner, &scope, &how.role, &how.line, &at) != 9 ||
	    line[at] != '\t' || entry > 255 || owner > 255 || scope > 0xffff ||
	    how.role > (PY_FRAME_SKIP | PY_FRAME_LAST))
		return -1;
	line[strcspn(line, "\n")] = 0;
	t = line + at + 1;
	for (nf = 0; nf < 2 && t; nf++)
		fields[nf] = strsep(&t, "\t");
	if (nf != 2 || !fields[0][0])
		return -1;
	f.code = code;
	f.is_entry = (__u8)entry;
	f.owner = (__u8)owner;
	f.scope = (__u16)scope;
	how.name = fields[0];
	how.file = fields[1];
	if (sp && saved_python_add(sp, pid, gen, &f, &how) < 0)
		*oom = true;
	return 0;
}

static void note_bad(uint64_t *bad, char *err, size_t errlen, unsigned long line, const char *why)
{
	if (!(*bad)++)
		snprintf(err, errlen, "line %lu: %s", line, why);
}

int recording_read(FILE *f, struct aggregator *a, struct proc_tracker *pt,
		   struct recording_meta *meta, struct cgroup_names *cgroups, uint64_t *bad, char *err,
		   size_t errlen)
{
	/* a record buffer big enough for any stack the walker can produce */
	static uint64_t rec_buf[(sizeof(struct cfi_sample_record) / 8) + MAX_KERNEL_FRAMES +
				MAX_USER_FRAMES_LIMIT + PY_RECORD_BYTES / 8 + 1];
	struct cfi_sample_record *r = (struct cfi_sample_record *)rec_buf;
	char *line = NULL, kl[16384], ul[32768], comm[64], path[4096], bid[160];
	unsigned long lineno = 0;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	struct saved_frames *frames = meta->frames;
	struct saved_python *py_frames = meta->py_frames;
	bool oom = false;

	memset(meta, 0, sizeof(*meta));
	meta->frames = frames;
	meta->py_frames = py_frames;
	*bad = 0;
	err[0] = 0;
	len = getline(&line, &cap, f);
	if (len <= 0 || strncmp(line, "# cfiprof recording v1", 22)) {
		snprintf(err, errlen, "not a cfiprof recording (no '# cfiprof recording v1' header)");
		free(line);
		return -1;
	}
	lineno = 1;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if ((size_t)len >= sizeof(ul)) {
			note_bad(bad, err, errlen, lineno, "line too long");
			continue;
		}
		if (!strncmp(line, "meta ", 5)) {
			if (sscanf(line, "meta %u %31s %" SCNu64 " %" SCNu64, &meta->freq, meta->event,
				   &meta->start_unix_ns, &meta->duration_ns) != 4)
				note_bad(bad, err, errlen, lineno, "malformed meta line");
		} else if (!strncmp(line, "event ", 6)) {
			line[strcspn(line, "\n")] = 0;
			if (meta->nr_events < RECORDING_MAX_EVENTS)
				snprintf(meta->event_names[meta->nr_events++], sizeof(meta->event_names[0]),
					 "%s", line + 6);
		} else if (!strncmp(line, "estimated ", 10)) {
			if (sscanf(line, "estimated %x", &a->estimated_events) != 1)
				note_bad(bad, err, errlen, lineno, "malformed estimated line");
		} else if (!strncmp(line, "map ", 4)) {
			struct proc_mapping m;
			unsigned int pid;

			memset(&m, 0, sizeof(m));
			if (sscanf(line,
				   "map %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64
				   " %u %159s %4095[^\n]",
				   &pid, &m.start, &m.end, &m.offset, &m.bias, &m.flags, bid,
				   path) != 8 ||
			    m.end <= m.start) {
				note_bad(bad, err, errlen, lineno, "malformed map line");
				continue;
			}
			snprintf(m.path, sizeof(m.path), "%.255s", path);
			snprintf(m.key, sizeof(m.key), "%s", strcmp(bid, "-") ? bid : "");
			if (proc_tracker_add_saved(pt, pid, &m)) {
				ret = -1;
				break;
			}
		} else if (!strncmp(line, "kname ", 6)) {
			uint64_t pc;
			int at = 0;

			if (sscanf(line, "kname %" SCNx64 " %n", &pc, &at) != 1 || !at ||
			    !line[at] || line[at] == '\n') {
				note_bad(bad, err, errlen, lineno, "malformed kname line");
				continue;
			}
			line[strcspn(line, "\n")] = 0;
			if (kernel_names_add(&meta->knames, pc, line + at)) {
				ret = -1;
				break;
			}
		} else if (!strncmp(line, "uframe ", 7)) {
			struct saved_level lv = {0};
			unsigned int pid, level;
			uint64_t start, addr;
			char *fields[3], *t;
			int at = 0, nf;

			if (sscanf(line, "uframe %u %" SCNx64 " %" SCNx64 " %u %u %u%n", &pid, &start,
				   &addr, &level, &lv.line, &lv.start_line, &at) != 6 ||
			    line[at] != '\t') {
				note_bad(bad, err, errlen, lineno, "malformed uframe line");
				continue;
			}
			line[strcspn(line, "\n")] = 0;
			t = line + at + 1;
			for (nf = 0; nf < 3 && t; nf++)
				fields[nf] = strsep(&t, "\t");
			if (nf != 3 || !fields[0][0]) {
				note_bad(bad, err, errlen, lineno, "malformed uframe line");
				continue;
			}
			lv.function = fields[0];
			lv.system_name = fields[1][0] ? fields[1] : fields[0];
			lv.file = fields[2];
			if (meta->frames &&
			    saved_frames_add(meta->frames, pid, start, addr, level, &lv)) {
				if (errno != EINVAL) {
					ret = -1;
					break;
				}
				note_bad(bad, err, errlen, lineno, "uframe level out of order");
			}
		} else if (!strncmp(line, "pyframe ", 8)) {
			if (read_pyframe(line + 8, meta->py_frames, &oom))
				note_bad(bad, err, errlen, lineno, "malformed pyframe line");
			if (oom) {
				ret = -1;
				break;
			}
		} else if (!strncmp(line, "proc ", 5)) {
			unsigned int pid, ns_pid;

			if (sscanf(line, "proc %u %u", &pid, &ns_pid) != 2) {
				note_bad(bad, err, errlen, lineno, "malformed proc line");
				continue;
			}
			proc_tracker_saved_ns_pid(pt, pid, ns_pid);
		} else if (!strncmp(line, "gen ", 4)) {
			unsigned int pid, gen;

			if (sscanf(line, "gen %u %u", &pid, &gen) != 2 || !gen) {
				note_bad(bad, err, errlen, lineno, "malformed gen line");
				continue;
			}
			proc_tracker_saved_generation(pt, pid, gen);
		} else if (!strncmp(line, "cgroup ", 7)) {
			unsigned long long id;

			if (sscanf(line, "cgroup %llx %4095[^\n]", &id, path) != 2) {
				note_bad(bad, err, errlen, lineno, "malformed cgroup line");
				continue;
			}
			if (cgroups)
				cgroup_names_add(cgroups, id, path);
		} else if (!strncmp(line, "stack ", 6)) {
			unsigned long long count, cgroup_id = 0;
			unsigned int pid, tid, reason, flags;
			int nk, nu, np = 0, used = 0;

			if (sscanf(line, "stack %llu %u %u %u %u %63s k %16383s u %32767s%n", &count,
				   &pid, &tid, &reason, &flags, comm, kl, ul, &used) != 8 ||
			    reason > UINT8_MAX || count == 0) {
				note_bad(bad, err, errlen, lineno, "malformed stack line");
				continue;
			}
			memset(r, 0, sizeof(*r));
			nk = parse_pcs(kl, (uint64_t *)r->pcs, MAX_KERNEL_FRAMES);
			nu = nk < 0 ? -1
				   : parse_pcs(ul, (uint64_t *)r->pcs + nk, MAX_USER_FRAMES_LIMIT);
			if (nk < 0 || nu < 0) {
				note_bad(bad, err, errlen, lineno, "malformed PC list");
				continue;
			}
			{
				const char *c = strstr(line + used, " c "), *g = strstr(line + used, " g ");
				const char *w = strstr(line + used, " w "),
					   *py = strstr(line + used, " py ");
				unsigned long long weight = 0;
				unsigned int gen = 0, event = 0;

				/* without events a stack weighs its count */
				if (!w || sscanf(w, " w %llu e %u", &weight, &event) != 2)
					weight = count, event = 0;
				r->weight = weight;
				r->event = event;
				if (!c || sscanf(c, " c %llx", &cgroup_id) != 1)
					cgroup_id = 0;
				if (g && sscanf(g, " g %u", &gen) == 1)
					r->generation = gen;
				else
					r->generation = 0;
				if (py)
					np = parse_python(
					    py + 4, (struct cfi_python_frame *)(r->pcs + nk + nu),
					    PY_MAX_FRAMES);
			}
			if (np < 0) {
				note_bad(bad, err, errlen, lineno, "malformed Python frame list");
				continue;
			}
			r->type = RECORD_SAMPLE;
			r->cgroup_id = cgroup_id;
			r->pid = pid;
			r->tid = tid;
			r->reason = (uint8_t)reason;
			r->flags = (uint8_t)flags;
			r->nr_kernel = (uint16_t)nk;
			r->nr_user = (uint16_t)nu;
			r->nr_python = (uint16_t)np;
			snprintf(r->comm, sizeof(r->comm), "%.15s", strcmp(comm, "-") ? comm : "");
			agg_add_n(a, r,
				  sizeof(*r) + (size_t)(nk + nu) * sizeof(uint64_t) +
				      (size_t)np * sizeof(struct cfi_python_frame),
				  count);
		} else if (!strncmp(line, "overflow ", 9)) {
			unsigned long long n;

			unsigned long long w = 0;
			int got = sscanf(line, "overflow %llu %llu", &n, &w);

			if (got >= 1) {
				a->overflow += n;
				a->overflow_weight += got == 2 ? w : n;
			}
			else
				note_bad(bad, err, errlen, lineno, "malformed overflow line");
		} else if (line[0] != '#' && line[0] != '\n') {
			note_bad(bad, err, errlen, lineno, "unknown line");
		}
	}
	free(line);
	proc_tracker_sort(pt);
	return ret;
}
