// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writer of saved recordings; see recording.h for the format. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "user/profile/recording.h"
#include "user/profile/saved_frames.h"
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
		/* a runtime's JIT rows ("jit:..."): no file, nothing to find symbols by */
		if (!strncmp(bid, "jit:", 4))
			bid = "-";
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

/* A uframe line's key: what read_uframe() tells frames apart by. */
struct uframe_key {
	uint64_t start, file, addr;
	uint32_t pid, used;
};

/*
 * Whether key is in set (cap slots, a power of two), added when not: two
 * locations can share one (a mapping's generations both at start), and a
 * reader takes a key's levels once.
 */
static bool uframe_seen(struct uframe_key *set, size_t cap, const struct uframe_key *key)
{
	uint64_t h = hash_bytes(hash_bytes(hash_bytes(HASH_FNV_OFFSET, &key->pid, sizeof(key->pid)),
					   &key->start, sizeof(key->start)),
				&key->addr, sizeof(key->addr)) ^
		     key->file;

	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct uframe_key *k = &set[i];

		if (!k->used) {
			*k = *key;
			k->used = 1;
			return false;
		}
		if (k->pid == key->pid && k->start == key->start && k->file == key->file &&
		    k->addr == key->addr)
			return true;
	}
}

/* The user locations of @p, each once, with the pid of a sample that has it. */
static int write_uframes(FILE *f, const struct profile *p)
{
	size_t cap = 16, i;
	bool *done;
	struct uframe_key *keys;
	uint32_t k, j;

	while (cap < 2 * (size_t)p->nr_locs)
		cap *= 2;
	done = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*done));
	keys = calloc(cap, sizeof(*keys));
	if (!done || !keys) {
		free(done);
		free(keys);
		return -1;
	}
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		for (k = 0; k < s->nr_locs; k++) {
			/* a part split off a location (profile.h): the whole's levels are kept */
			uint32_t id =
			    p->locs[s->locs[k]].whole ? p->locs[s->locs[k]].whole - 1 : s->locs[k];
			const struct prof_location *l = &p->locs[id];
			const struct prof_mapping *m = l->mapping && l->mapping <= p->nr_maps
							   ? &p->maps[l->mapping - 1]
							   : NULL;
			struct uframe_key key = {.start = m ? m->start : 0,
						 .file = m ? saved_frames_file(m->path) : 0,
						 .addr = l->addr,
						 .pid = s->pid};

			if (!prof_loc_is_user(l->kind) || done[id])
				continue;
			done[id] = true;
			if (uframe_seen(keys, cap, &key))
				continue;
			for (j = 0; j < (l->nr_lines ? l->nr_lines : 1); j++) {
				const struct prof_line *pl = l->nr_lines ? &l->lines[j] : NULL;

				fprintf(f, "uframe %u %" PRIx64 " %" PRIx64 " %u %u %u", s->pid,
					key.start, l->addr, j, pl ? pl->line : 0,
					pl ? pl->start_line : 0);
				put_field(f, pl ? pl->function : l->function);
				put_field(f, pl ? pl->system_name : l->function);
				put_field(f, pl ? pl->file : NULL);
				fprintf(f, "\t%" PRIx64 "\n", key.file);
			}
		}
	}
	free(done);
	free(keys);
	return 0;
}

/*
 * Each distinct interpreter frame of the stacks v[0, nr), as record shows it:
 * a TAG "frame" line each (recording.h), for the runtimes meta names.
 */
static int write_interp_frames(FILE *f, struct agg_stack *const *v, uint64_t nr,
			       const struct recording_meta *meta)
{
	struct saved_interp *seen = saved_interp_new();
	struct interp_frame_shown how;
	uint64_t i;
	uint32_t k;
	int ret = seen ? 0 : -1;

	for (i = 0; !ret && i < nr; i++) {
		const struct agg_stack *s = v[i];
		const struct cfi_interp_frame *fr =
		    (const struct cfi_interp_frame *)(s->pcs + s->nr_kernel + s->nr_user);
		const struct interp_namer *in =
		    s->runtime < RT_MAX ? meta->interp[s->runtime] : NULL;

		for (k = 0; !ret && in && runtime_max_frames(s->runtime) && k < s->nr_rt; k++) {
			if (saved_interp_find(seen, s->runtime, s->pid, s->generation, &fr[k]))
				continue;
			/* a namer sets what it knows: no inline levels unless it says so */
			how = (struct interp_frame_shown){.file = ""};
			in->show(in->ctx, s->pid, s->generation, &fr[k], &how);
			if (saved_interp_add(seen, s->runtime, s->pid, s->generation, &fr[k],
					     &how) < 0) {
				ret = -1;
				break;
			}
			fprintf(f, "%sframe %u %u %" PRIx64 " %x %u %u %x %u %u",
				runtime_tag(s->runtime), s->pid, s->generation,
				(uint64_t)fr[k].code, fr[k].instr, fr[k].is_entry, fr[k].owner,
				fr[k].scope, how.role, how.line);
			put_field(f, how.name);
			put_field(f, how.file);
			/* what a JIT inlined into it there, innermost first */
			for (uint32_t i = 0; i < how.nr_inlined && i < SAVED_INLINED_MAX; i++) {
				put_field(f, how.strs + how.inlined[i].name);
				put_field(f, how.strs + how.inlined[i].file);
				fprintf(f, "\t%u", how.inlined[i].line);
			}
			fputc('\n', f);
		}
	}
	saved_interp_free(seen);
	return ret;
}

/* " rt RUNTIME:STATUS:HEX": another runtime's units as they came (Go's labels). */
static void write_rt_units(FILE *f, const struct agg_stack *s)
{
	const uint8_t *b = (const uint8_t *)(s->pcs + s->nr_kernel + s->nr_user);

	if (s->runtime == RT_NONE || !s->nr_rt)
		return;
	fprintf(f, " rt %u:%u:", s->runtime, s->rt_status);
	for (size_t i = 0; i < (size_t)s->nr_rt * RT_UNIT_BYTES; i++)
		fprintf(f, "%02x", b[i]);
}

/* " TAG CODE:INSTR:ENTRY:OWNER:SCOPE,..": the stack's interpreter frames, innermost first. */
static void write_interp_list(FILE *f, const struct agg_stack *s)
{
	const struct cfi_interp_frame *fr =
	    (const struct cfi_interp_frame *)(s->pcs + s->nr_kernel + s->nr_user);
	uint32_t k;

	for (k = 0; k < s->nr_rt; k++) {
		if (k)
			fputc(',', f);
		else
			fprintf(f, " %s ", runtime_tag(s->runtime));
		fprintf(f, "%" PRIx64 ":%x:%x:%x:%x", (uint64_t)fr[k].code, fr[k].instr,
			fr[k].is_entry, fr[k].owner, fr[k].scope);
	}
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
			fprintf(f, "gen %u %u %u\n", p->pid, p->history[h]->generation,
				p->history[h]->first_generation);
			write_maps(f, p->pid, p->history[h]);
		}
		if (p->generation && p->cur)
			fprintf(f, "gen %u %u %u\n", p->pid, p->generation,
				p->cur->first_generation);
		else if (p->generation)
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
	if ((meta->prof && write_uframes(f, meta->prof)) || write_interp_frames(f, v, nr, meta)) {
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
		/* a runtime's frames as a list when they were named, else as its units */
		if (runtime_max_frames(s->runtime) && s->runtime < RT_MAX &&
		    meta->interp[s->runtime])
			write_interp_list(f, s);
		else if (!runtime_max_frames(s->runtime))
			write_rt_units(f, s);
		fputc('\n', f);
	}
	if (a->overflow && meta->nr_events)
		fprintf(f, "overflow %" PRIu64 " %" PRIu64 "\n", a->overflow, a->overflow_weight);
	else if (a->overflow)
		fprintf(f, "overflow %" PRIu64 "\n", a->overflow);
	free(v);
	return ferror(f) ? -1 : 0;
}
