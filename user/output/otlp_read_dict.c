// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dictionary of an OTLP message read back: strings, attributes,
 * functions, mappings, locations and stacks, indexed as the message indexes
 * them (otlp_read_dict.h); the profile's maps and locations are filled here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/output/otlp_read_dict.h"
#include "user/output/otlp_fields.h"

void rd_idx_add(void *ctx, uint64_t v)
{
	struct idx_list *l = ctx;

	if (l->n < l->max)
		l->v[l->n++] = v;
}

const char *rd_str_at(const struct rd *r, uint64_t i)
{
	return i < r->nr_strs ? r->strs[i] : "";
}

static const struct rattr *attr_at(const struct rd *r, uint64_t i)
{
	return i && i < r->nr_attrs ? &r->attrs[i] : NULL;
}

/* An interned copy of the bytes of s, cut at NAME_MAX_BYTES and at a NUL. */
static const char *intern_span(struct rd *r, struct pb_reader s)
{
	char buf[NAME_MAX_BYTES + 1];
	size_t n = s.bad || !s.p ? 0 : (size_t)(s.end - s.p);
	const char *out;

	if (n > NAME_MAX_BYTES)
		n = NAME_MAX_BYTES;
	if (n)
		memcpy(buf, s.p, n);
	buf[n] = 0;
	out = profile_intern(r->p, buf);
	if (!out)
		r->oom = true;
	return out ? out : "";
}

/* A length-delimited field read as a string (intern_span). */
const char *rd_read_str(struct rd *r, struct pb_reader *in)
{
	return intern_span(r, pb_read_len(in));
}

/* The fields number field of msg, counted. */
static size_t count_fields(struct pb_reader msg, int field)
{
	int f, w;
	size_t n = 0;

	while (pb_next(&msg, &f, &w)) {
		n += f == field;
		pb_skip(&msg, w);
	}
	return n;
}

/* AnyValue: a string (inline or from the table) or an integer into a. */
void rd_read_any(struct rd *r, struct pb_reader v, struct rattr *a)
{
	int f, w;

	a->str = "";
	while (pb_next(&v, &f, &w)) {
		if (f == ANY_STRING && w == PB_WIRE_LEN)
			a->str = rd_read_str(r, &v);
		else if (f == ANY_INT && w == PB_WIRE_VARINT)
			a->num = (int64_t)pb_read_varint(&v), a->str = NULL;
		else if (f == ANY_STRING_STRINDEX && w == PB_WIRE_VARINT)
			a->str = rd_str_at(r, pb_read_varint(&v));
		else
			pb_skip(&v, w);
	}
}

static void read_attr(struct rd *r, struct pb_reader m, struct rattr *a)
{
	int f, w;

	a->key = "";
	a->str = "";
	while (pb_next(&m, &f, &w)) {
		if (f == KVU_KEY && w == PB_WIRE_VARINT)
			a->key = rd_str_at(r, pb_read_varint(&m));
		else if (f == KVU_VALUE && w == PB_WIRE_LEN)
			rd_read_any(r, pb_read_len(&m), a);
		else
			pb_skip(&m, w);
	}
}

/* The string value of attribute key among the indices of l, or NULL. */
const char *rd_attr_str(const struct rd *r, const struct idx_list *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct rattr *a = attr_at(r, l->v[i]);

		if (a && a->str && !strcmp(a->key, key))
			return a->str;
	}
	return NULL;
}

bool rd_attr_num(const struct rd *r, const struct idx_list *l, const char *key, int64_t *v)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct rattr *a = attr_at(r, l->v[i]);

		if (a && !a->str && !strcmp(a->key, key)) {
			*v = a->num;
			return true;
		}
	}
	return false;
}

static void read_mapping(struct rd *r, struct pb_reader m, struct prof_mapping *pm)
{
	struct idx_list attrs = {.max = ATTRS_MAX};
	int f, w;

	pm->path = "";
	while (pb_next(&m, &f, &w)) {
		if (f >= MAPPING_MEMORY_START && f <= MAPPING_FILENAME && w == PB_WIRE_VARINT) {
			uint64_t v = pb_read_varint(&m);

			if (f == MAPPING_MEMORY_START)
				pm->start = v;
			else if (f == MAPPING_MEMORY_LIMIT)
				pm->limit = v;
			else if (f == MAPPING_FILE_OFFSET)
				pm->offset = v;
			else
				pm->path = rd_str_at(r, v);
		} else if (f == MAPPING_ATTRIBUTES) {
			pb_read_ints(&m, w, rd_idx_add, &attrs);
		} else {
			pb_skip(&m, w);
		}
	}
	pm->build_id = rd_attr_str(r, &attrs, "process.executable.build_id.gnu");
	if (!pm->build_id)
		pm->build_id = "";
}

static void read_function(struct rd *r, struct pb_reader m, struct rfunc *fn)
{
	int f, w;

	fn->name = fn->system_name = fn->file = "";
	while (pb_next(&m, &f, &w)) {
		uint64_t v;

		if (w != PB_WIRE_VARINT) {
			pb_skip(&m, w);
			continue;
		}
		v = pb_read_varint(&m);
		if (f == FUNCTION_NAME)
			fn->name = rd_str_at(r, v);
		else if (f == FUNCTION_SYSTEM_NAME)
			fn->system_name = rd_str_at(r, v);
		else if (f == FUNCTION_FILENAME)
			fn->file = rd_str_at(r, v);
		else if (f == FUNCTION_START_LINE)
			fn->start_line = (uint32_t)v;
	}
}

/* One Line: its function (index + 1 into funcs, 0 none) and line number. */
static void read_line(struct pb_reader m, uint64_t *func, uint64_t *line)
{
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if ((f == LINE_FUNCTION || f == LINE_LINE) && w == PB_WIRE_VARINT)
			*(f == LINE_FUNCTION ? func : line) = pb_read_varint(&m);
		else
			pb_skip(&m, w);
	}
}

/*
 * A location's frame type and lines into l.  One line without a number (no
 * DWARF: what otlp.c writes for a symbol alone) is the function alone, as
 * the profile had it; a Python frame's function is "name (file:line)".
 */
static void read_location(struct rd *r, struct pb_reader m, struct prof_location *l)
{
	struct idx_list attrs = {.max = ATTRS_MAX}, fn = {.max = LINES_MAX},
			no = {.max = LINES_MAX};
	const char *type;
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if (f == LOCATION_MAPPING && w == PB_WIRE_VARINT) {
			uint64_t v = pb_read_varint(&m);

			l->mapping = v <= r->p->nr_maps ? (uint32_t)v : 0;
		} else if (f == LOCATION_ADDRESS && w == PB_WIRE_VARINT) {
			l->addr = pb_read_varint(&m);
		} else if (f == LOCATION_LINE && w == PB_WIRE_LEN && fn.n < LINES_MAX) {
			uint64_t func = 0, line = 0;

			read_line(pb_read_len(&m), &func, &line);
			rd_idx_add(&fn, func);
			rd_idx_add(&no, line);
		} else if (f == LOCATION_ATTRIBUTES) {
			pb_read_ints(&m, w, rd_idx_add, &attrs);
		} else {
			pb_skip(&m, w);
		}
	}
	type = rd_attr_str(r, &attrs, "profile.frame.type");
	l->kind = type ? prof_loc_kind_of(type) : PROF_LOC_SYNTHETIC;
	l->function = "[unknown]";
	if (!fn.n)
		return;
	if (fn.n > 1 || no.v[0]) {
		l->lines = profile_alloc_lines(r->p, (uint32_t)fn.n);
		if (!l->lines) {
			r->oom = true;
			return;
		}
		l->nr_lines = (uint32_t)fn.n;
	}
	for (size_t i = 0; i < fn.n; i++) {
		const struct rfunc *fu =
		    fn.v[i] && fn.v[i] < r->nr_funcs ? &r->funcs[fn.v[i]] : NULL;
		const char *name = fu && fu->name[0] ? fu->name : "[unknown]";

		if (l->lines)
			l->lines[i] = (struct prof_line){
			    name, fu && fu->system_name[0] ? fu->system_name : name,
			    fu && fu->file[0] ? fu->file : NULL, (uint32_t)no.v[i],
			    fu ? fu->start_line : 0};
		l->function = name;
	}
	/* as profile_interp.c names it: its own line the last, after what was inlined into it */
	if (prof_loc_is_interp(l->kind) && l->nr_lines && l->lines[l->nr_lines - 1].file) {
		char buf[NAME_MAX_BYTES + 64];

		snprintf(buf, sizeof(buf), "%s (%s:%u)", l->function,
			 l->lines[l->nr_lines - 1].file, l->lines[l->nr_lines - 1].line);
		l->function = profile_intern(r->p, buf);
		if (!l->function)
			r->oom = true, l->function = "";
	}
}

static void stack_add(void *ctx, uint64_t v)
{
	struct rd *r = ((void **)ctx)[0];
	struct rstack *s = ((void **)ctx)[1];

	/* location_table[i] is the profile's location i - 1; 0 and others are none */
	if (v && v <= r->p->nr_locs && s->n < STACK_DEPTH_MAX)
		r->tmp[s->n++] = (uint32_t)(v - 1);
}

static void read_stack(struct rd *r, struct pb_reader m, struct rstack *s)
{
	int f, w;

	while (pb_next(&m, &f, &w)) {
		if (f == STACK_LOCATIONS)
			pb_read_ints(&m, w, stack_add, (void *[]){r, s});
		else
			pb_skip(&m, w);
	}
	s->locs = malloc((s->n ? s->n : 1) * sizeof(*s->locs));
	if (!s->locs) {
		r->oom = true;
		s->n = 0;
		return;
	}
	memcpy(s->locs, r->tmp, s->n * sizeof(*s->locs));
}

/* Each entry of table field of the dictionary, in order, to fn with its index. */
static void each_entry(struct rd *r, struct pb_reader dict, int field,
		       void (*fn)(struct rd *r, struct pb_reader m, size_t i))
{
	size_t i = 0;
	int f, w;

	while (pb_next(&dict, &f, &w) && !r->oom) {
		struct pb_reader m;

		if (f != field || w != PB_WIRE_LEN) {
			pb_skip(&dict, w);
			continue;
		}
		m = pb_read_len(&dict);
		if (!m.bad)
			fn(r, m, i++);
	}
}

static void entry_string(struct rd *r, struct pb_reader m, size_t i)
{
	r->strs[i] = intern_span(r, m);
}

static void entry_attr(struct rd *r, struct pb_reader m, size_t i)
{
	read_attr(r, m, &r->attrs[i]);
}

static void entry_func(struct rd *r, struct pb_reader m, size_t i)
{
	read_function(r, m, &r->funcs[i]);
}

static void entry_mapping(struct rd *r, struct pb_reader m, size_t i)
{
	/* mapping_table[0] is "none": the profile's maps start at table index 1 */
	if (i)
		read_mapping(r, m, &r->p->maps[i - 1]);
}

static void entry_location(struct rd *r, struct pb_reader m, size_t i)
{
	if (!i)
		return;
	if (profile_reserve_loc(r->p)) {
		r->oom = true;
		return;
	}
	memset(&r->p->locs[r->p->nr_locs], 0, sizeof(r->p->locs[0]));
	read_location(r, m, &r->p->locs[r->p->nr_locs++]);
}

static void entry_stack(struct rd *r, struct pb_reader m, size_t i)
{
	read_stack(r, m, &r->stacks[i]);
}

/* The tables, strings first: every other entry names its strings by index. */
int rd_read_dictionary(struct rd *r, struct pb_reader dict)
{
	size_t nr_maps = count_fields(dict, DICT_MAPPING);

	r->nr_strs = count_fields(dict, DICT_STRING);
	r->nr_attrs = count_fields(dict, DICT_ATTRIBUTE);
	r->nr_funcs = count_fields(dict, DICT_FUNCTION);
	r->nr_stacks = count_fields(dict, DICT_STACK);
	r->strs = calloc(r->nr_strs + 1, sizeof(*r->strs));
	r->attrs = calloc(r->nr_attrs + 1, sizeof(*r->attrs));
	r->funcs = calloc(r->nr_funcs + 1, sizeof(*r->funcs));
	r->stacks = calloc(r->nr_stacks + 1, sizeof(*r->stacks));
	r->p->maps = calloc(nr_maps + 1, sizeof(*r->p->maps));
	if (!r->strs || !r->attrs || !r->funcs || !r->stacks || !r->p->maps)
		return -1;
	r->p->nr_maps = nr_maps ? nr_maps - 1 : 0;
	/* an entry counted and then found malformed stays its zero value */
	for (size_t i = 0; i <= r->nr_strs; i++)
		r->strs[i] = "";
	for (size_t i = 0; i <= r->nr_attrs; i++)
		r->attrs[i] = (struct rattr){"", "", 0};
	for (size_t i = 0; i <= r->nr_funcs; i++)
		r->funcs[i] = (struct rfunc){"", "", "", 0};
	for (size_t i = 0; i <= nr_maps; i++)
		r->p->maps[i] = (struct prof_mapping){.path = "", .build_id = ""};
	each_entry(r, dict, DICT_STRING, entry_string);
	each_entry(r, dict, DICT_ATTRIBUTE, entry_attr);
	each_entry(r, dict, DICT_FUNCTION, entry_func);
	each_entry(r, dict, DICT_MAPPING, entry_mapping);
	each_entry(r, dict, DICT_LOCATION, entry_location);
	each_entry(r, dict, DICT_STACK, entry_stack);
	return r->oom ? -1 : 0;
}
