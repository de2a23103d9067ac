// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The frame tables both protobuf outputs share; see proto_frames.h. */
#include <stdlib.h>
#include <string.h>

#include "user/output/proto_frames.h"

#define KERNEL_PATH "[kernel.kallsyms]"

/*
 * Mapping indices for the locations.  Kernel frames without a mapping go to
 * the profile's kernel mapping, or to one made up here (kmap, index nr_maps +
 * 1, spanning the kernel addresses seen) so readers still show them as
 * kernel code.
 */
static void map_locations(struct proto_frames *fr, const struct profile *p)
{
	struct prof_mapping *kmap = &fr->kmap;
	uint64_t kernel_id = 0, *loc_map = fr->loc_map;
	size_t i;

	for (i = 0; i < p->nr_maps && !kernel_id; i++)
		if (p->maps[i].pid == 0)
			kernel_id = i + 1;
	memset(kmap, 0, sizeof(*kmap));
	kmap->start = UINT64_MAX;
	kmap->path = KERNEL_PATH;
	kmap->build_id = "";
	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];

		/* a dangling mapping index would make readers reject the whole file */
		loc_map[i] = l->mapping <= p->nr_maps ? l->mapping : 0;
		if (loc_map[i] || l->kind != PROF_LOC_KERNEL)
			continue;
		if (kernel_id) {
			loc_map[i] = kernel_id;
			continue;
		}
		fr->need_kmap = true;
		loc_map[i] = p->nr_maps + 1;
		if (l->addr < kmap->start)
			kmap->start = l->addr;
		if (l->addr >= kmap->limit)
			kmap->limit = l->addr + 1;
	}
}

/* The has_* flags of each mapping, from what its locations carry. */
static void mapping_flags(struct proto_frames *fr, const struct profile *p)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];
		uint64_t m = fr->loc_map[i];

		if (!m || m > p->nr_maps)
			continue;
		for (j = 0; j < l->nr_lines; j++) {
			if (l->lines[j].file)
				fr->has[m - 1] |= PROTO_MAP_FILENAMES;
			/* a line number comes from DWARF, which also told the inline levels */
			if (l->lines[j].line)
				fr->has[m - 1] |= PROTO_MAP_LINE_NUMBERS | PROTO_MAP_INLINE_FRAMES;
		}
	}
}

int proto_frames_map(struct proto_frames *fr, const struct profile *p)
{
	size_t i;

	memset(fr, 0, sizeof(*fr));
	fr->loc_map = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*fr->loc_map));
	fr->line_first = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*fr->line_first));
	fr->has = calloc(p->nr_maps + 1, sizeof(*fr->has));
	if (!fr->loc_map || !fr->line_first || !fr->has)
		return -1;
	for (i = 0; i < p->nr_locs; i++) {
		fr->line_first[i] = fr->nr_lines;
		fr->nr_lines += proto_loc_nr_lines(&p->locs[i]);
	}
	map_locations(fr, p);
	mapping_flags(fr, p);
	return 0;
}

struct func_key {
	struct proto_func f;
	size_t line; /* index into the flat list of lines */
};

static int by_function(const void *a, const void *b)
{
	const struct func_key *x = a, *y = b;

	if (x->f.name != y->f.name)
		return x->f.name < y->f.name ? -1 : 1;
	if (x->f.system_name != y->f.system_name)
		return x->f.system_name < y->f.system_name ? -1 : 1;
	if (x->f.file != y->f.file)
		return x->f.file < y->f.file ? -1 : 1;
	if (x->f.start_line != y->f.start_line)
		return x->f.start_line < y->f.start_line ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static bool same_function(const struct proto_func *x, const struct proto_func *y)
{
	return x->name == y->name && x->system_name == y->system_name && x->file == y->file &&
	       x->start_line == y->start_line;
}

/*
 * A line with a source file names it; one without (no DWARF: a symbol, the
 * kernel, a JIT) keeps the object's path, as before lines existed.
 * Identical (name, system name, file, start line) share one function.
 * Sorting finds them without a second hash table and numbers functions by
 * name, so the same profile always gives the same file.
 */
int proto_frames_functions(struct proto_frames *fr, const struct profile *p, struct strtab *st)
{
	struct func_key *keys;
	size_t i, at = 0;

	if (!fr->nr_lines)
		return 0;
	keys = calloc(fr->nr_lines, sizeof(*keys));
	fr->line_func = calloc(fr->nr_lines, sizeof(*fr->line_func));
	fr->funcs = calloc(fr->nr_lines, sizeof(*fr->funcs));
	if (!keys || !fr->line_func || !fr->funcs) {
		free(keys);
		return -1;
	}
	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];
		uint64_t m = fr->loc_map[i];
		const char *obj = !m ? "" : m <= p->nr_maps ? p->maps[m - 1].path : fr->kmap.path;
		uint32_t j;

		for (j = 0; j < proto_loc_nr_lines(l); j++, at++) {
			const struct prof_line *pl = l->nr_lines ? &l->lines[j] : NULL;
			const char *name = pl ? pl->function : l->function;

			if (!name)
				name = "[unknown]";
			keys[at].f.name = str_index(st, name);
			keys[at].f.system_name =
			    str_index(st, pl && pl->system_name ? pl->system_name : name);
			keys[at].f.file = str_index(st, pl && pl->file ? pl->file : obj);
			keys[at].f.start_line = pl ? pl->start_line : 0;
			keys[at].line = fr->line_first[i] + j;
		}
	}
	if (st->oom) {
		free(keys);
		return -1;
	}
	qsort(keys, fr->nr_lines, sizeof(*keys), by_function);
	for (i = 0; i < fr->nr_lines; i++) {
		if (!i || !same_function(&keys[i].f, &keys[i - 1].f))
			fr->funcs[fr->nr_funcs++] = keys[i].f;
		fr->line_func[keys[i].line] = fr->nr_funcs;
	}
	free(keys);
	return 0;
}

void proto_frames_free(struct proto_frames *fr)
{
	free(fr->loc_map);
	free(fr->line_first);
	free(fr->has);
	free(fr->line_func);
	free(fr->funcs);
	memset(fr, 0, sizeof(*fr));
}
