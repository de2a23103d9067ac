// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The dictionary of an OTLP message; see otlp_dict.h. */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/vec.h"
#include "user/output/otlp_dict.h"
#include "user/output/otlp_fields.h"

/* Field numbers from profiles.proto (v1development) and common.proto. */

/* The semantic conventions' names (profile.frame.type: the registry's values). */
#define ATTR_FRAME_TYPE "profile.frame.type"
#define ATTR_BUILD_ID	"process.executable.build_id.gnu"

typedef bool (*index_eq)(const struct otlp_dict *d, uint32_t idx, const void *key);

/* The slot of key (hash h): its entry's, or the free one it would take. */
static size_t index_slot(const struct otlp_index *ix, uint64_t h, index_eq eq,
			 const struct otlp_dict *d, const void *key)
{
	size_t mask = ix->nr_slots - 1, i;

	for (i = h & mask; ix->slots[i]; i = (i + 1) & mask)
		if (ix->hashes[i] == h && eq(d, ix->slots[i] - 1, key))
			break;
	return i;
}

/* Room for one more entry; -1 when out of memory. */
static int index_reserve(struct otlp_index *ix)
{
	size_t nr_slots = ix->nr_slots ? ix->nr_slots * 2 : 256, i, j;
	uint32_t *slots;
	uint64_t *hashes;

	if ((ix->nr + 1) * 2 <= ix->nr_slots)
		return 0;
	slots = calloc(nr_slots, sizeof(*slots));
	hashes = calloc(nr_slots, sizeof(*hashes));
	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return -1;
	}
	for (i = 0; i < ix->nr_slots; i++) {
		if (!ix->slots[i])
			continue;
		for (j = ix->hashes[i] & (nr_slots - 1); slots[j]; j = (j + 1) & (nr_slots - 1))
			;
		slots[j] = ix->slots[i];
		hashes[j] = ix->hashes[i];
	}
	free(ix->slots);
	free(ix->hashes);
	ix->slots = slots;
	ix->hashes = hashes;
	ix->nr_slots = nr_slots;
	return 0;
}

/*
 * The table index of key (hash h), or -1 with *slot the one index_put
 * fills; -2 once out of memory.
 */
static long index_find(struct otlp_dict *d, struct otlp_index *ix, uint64_t h, index_eq eq,
		       const void *key, size_t *slot)
{
	if (d->oom || d->st.oom || index_reserve(ix)) {
		d->oom = true;
		return -2;
	}
	*slot = index_slot(ix, h, eq, d, key);
	return ix->slots[*slot] ? (long)ix->slots[*slot] - 1 : -1;
}

static void index_put(struct otlp_index *ix, size_t slot, uint64_t h, size_t idx)
{
	ix->slots[slot] = (uint32_t)idx + 1;
	ix->hashes[slot] = h;
	ix->nr++;
}

static void index_free(struct otlp_index *ix)
{
	free(ix->slots);
	free(ix->hashes);
	memset(ix, 0, sizeof(*ix));
}

static bool attr_eq(const struct otlp_dict *d, uint32_t idx, const void *key)
{
	const struct otlp_attr *a = &d->attrs[idx], *b = key;

	return a->key == b->key && !a->str == !b->str &&
	       (a->str ? !strcmp(a->str, b->str) : a->num == b->num);
}

static uint32_t attr_add(struct otlp_dict *d, const struct otlp_attr *a)
{
	uint64_t h = hash_bytes(HASH_FNV_OFFSET, &a->key, sizeof(a->key));
	size_t slot;
	long i;

	h = a->str ? hash_bytes(h, a->str, strlen(a->str)) : hash_bytes(h, &a->num, sizeof(a->num));
	i = index_find(d, &d->attr_index, h, attr_eq, a, &slot);
	if (i != -1)
		return i < 0 ? 0 : (uint32_t)i;
	if (VEC_RESERVE(d->attrs, d->nr_attrs, d->cap_attrs, 64)) {
		d->oom = true;
		return 0;
	}
	d->attrs[d->nr_attrs] = *a;
	index_put(&d->attr_index, slot, h, d->nr_attrs);
	return (uint32_t)d->nr_attrs++;
}

uint32_t otlp_attr_str(struct otlp_dict *d, const char *key, const char *str)
{
	struct otlp_attr a = {.key = str_index(&d->st, key), .str = str ? str : ""};

	return attr_add(d, &a);
}

uint32_t otlp_attr_num(struct otlp_dict *d, const char *key, int64_t num)
{
	struct otlp_attr a = {.key = str_index(&d->st, key), .num = num};

	return attr_add(d, &a);
}

static bool stack_eq(const struct otlp_dict *d, uint32_t idx, const void *key)
{
	const struct prof_sample *a = d->stacks[idx], *b = key;

	return a->nr_locs == b->nr_locs && !memcmp(a->locs, b->locs, b->nr_locs * sizeof(*b->locs));
}

uint32_t otlp_stack(struct otlp_dict *d, const struct prof_sample *s)
{
	uint64_t h = hash_bytes(HASH_FNV_OFFSET, s->locs, s->nr_locs * sizeof(*s->locs));
	size_t slot;
	long i;

	if (!s->nr_locs)
		return 0;
	i = index_find(d, &d->stack_index, h, stack_eq, s, &slot);
	if (i != -1)
		return i < 0 ? 0 : (uint32_t)i;
	if (VEC_RESERVE(d->stacks, d->nr_stacks, d->cap_stacks, 64)) {
		d->oom = true;
		return 0;
	}
	d->stacks[d->nr_stacks] = s;
	index_put(&d->stack_index, slot, h, d->nr_stacks);
	return (uint32_t)d->nr_stacks++;
}

/* The interpreter or compiler of a location's frames, as the conventions name it. */
static const char *frame_type(const struct prof_location *l)
{
	return prof_loc_frame_type(l->kind);
}

int otlp_dict_init(struct otlp_dict *d, const struct profile *p)
{
	static const struct prof_sample none;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->p = p;
	/* the zero entries: index 0 of every table is "none" */
	str_index(&d->st, "");
	d->attrs = calloc(64, sizeof(*d->attrs));
	d->stacks = calloc(64, sizeof(*d->stacks));
	d->loc_attr = calloc(p->nr_locs + 1, sizeof(*d->loc_attr));
	d->map_attr = calloc(p->nr_maps + 2, sizeof(*d->map_attr));
	if (!d->attrs || !d->stacks || !d->loc_attr || !d->map_attr)
		return -1;
	d->cap_attrs = d->cap_stacks = 64;
	d->nr_attrs = d->nr_stacks = 1;
	d->stacks[0] = &none;
	if (proto_frames_map(&d->fr, p) || proto_frames_functions(&d->fr, p, &d->st))
		return -1;
	for (i = 0; i < p->nr_locs; i++) {
		const char *t = frame_type(&p->locs[i]);

		if (t)
			d->loc_attr[i] = otlp_attr_str(d, ATTR_FRAME_TYPE, t);
	}
	/* unresolved frames keep mapping + address + build id: a backend can symbolize them */
	for (i = 0; i < p->nr_maps; i++)
		if (p->maps[i].build_id && p->maps[i].build_id[0])
			d->map_attr[i] = otlp_attr_str(d, ATTR_BUILD_ID, p->maps[i].build_id);
	return d->oom || d->st.oom ? -1 : 0;
}

static void packed_index(struct pbuf *out, int field, struct pbuf *tmp, uint32_t idx)
{
	if (!idx)
		return;
	pb_varint(tmp, idx);
	pb_msg(out, field, tmp);
}

static void encode_mapping(struct otlp_dict *d, struct pbuf *dict, struct pbuf *msg,
			   struct pbuf *sub, const struct prof_mapping *m, uint32_t attr)
{
	pb_uint(msg, MAPPING_MEMORY_START, m->start);
	pb_uint(msg, MAPPING_MEMORY_LIMIT, m->limit);
	pb_uint(msg, MAPPING_FILE_OFFSET, m->offset);
	pb_uint(msg, MAPPING_FILENAME, str_index(&d->st, m->path));
	packed_index(msg, MAPPING_ATTRIBUTES, sub, attr);
	pb_msg(dict, DICT_MAPPING, msg);
}

/* Lines innermost first, the function they were inlined into last, as Location.lines wants. */
static void encode_locations(struct otlp_dict *d, struct pbuf *dict, struct pbuf *msg,
			     struct pbuf *sub)
{
	const struct profile *p = d->p;

	pb_msg(dict, DICT_LOCATION, msg);
	for (size_t i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];

		pb_uint(msg, LOCATION_MAPPING, d->fr.loc_map[i]);
		pb_uint(msg, LOCATION_ADDRESS, l->addr);
		for (uint32_t j = 0; j < proto_loc_nr_lines(l); j++) {
			pb_uint(sub, LINE_FUNCTION, d->fr.line_func[d->fr.line_first[i] + j]);
			if (l->nr_lines)
				pb_uint(sub, LINE_LINE, l->lines[j].line);
			pb_msg(msg, LOCATION_LINE, sub);
		}
		packed_index(msg, LOCATION_ATTRIBUTES, sub, d->loc_attr[i]);
		pb_msg(dict, DICT_LOCATION, msg);
	}
}

static void encode_attributes(struct otlp_dict *d, struct pbuf *dict, struct pbuf *msg,
			      struct pbuf *sub)
{
	for (size_t i = 0; i < d->nr_attrs; i++) {
		const struct otlp_attr *a = &d->attrs[i];

		if (i) {
			pb_uint(msg, KVU_KEY, a->key);
			if (a->str)
				pb_str(sub, ANY_STRING, a->str);
			else
				pb_uint(sub, ANY_INT, (uint64_t)a->num);
			pb_msg(msg, KVU_VALUE, sub);
		}
		pb_msg(dict, DICT_ATTRIBUTE, msg);
	}
}

void otlp_dict_encode(struct otlp_dict *d, struct pbuf *out, int field)
{
	static const uint8_t zero_ids[16];
	const struct profile *p = d->p;
	struct pbuf dict = {0}, msg = {0}, sub = {0};
	size_t i;

	/* mappings, the made-up kernel one after the profile's */
	pb_msg(&dict, DICT_MAPPING, &msg);
	for (i = 0; i < p->nr_maps; i++)
		encode_mapping(d, &dict, &msg, &sub, &p->maps[i], d->map_attr[i]);
	if (d->fr.need_kmap)
		encode_mapping(d, &dict, &msg, &sub, &d->fr.kmap, 0);
	encode_locations(d, &dict, &msg, &sub);
	pb_msg(&dict, DICT_FUNCTION, &msg);
	for (i = 0; i < d->fr.nr_funcs; i++) {
		pb_uint(&msg, FUNCTION_NAME, d->fr.funcs[i].name);
		pb_uint(&msg, FUNCTION_SYSTEM_NAME, d->fr.funcs[i].system_name);
		pb_uint(&msg, FUNCTION_FILENAME, d->fr.funcs[i].file);
		pb_uint(&msg, FUNCTION_START_LINE, d->fr.funcs[i].start_line);
		pb_msg(&dict, DICT_FUNCTION, &msg);
	}
	/* no links; the zero one with ids of their length, as the proto recommends */
	pb_bytes(&msg, LINK_TRACE_ID, zero_ids, 16);
	pb_bytes(&msg, LINK_SPAN_ID, zero_ids, 8);
	pb_msg(&dict, DICT_LINK, &msg);
	encode_attributes(d, &dict, &msg, &sub);
	for (i = 0; i < d->nr_stacks; i++) {
		const struct prof_sample *s = d->stacks[i];

		for (uint32_t j = 0; j < s->nr_locs; j++)
			pb_varint(&sub, (uint64_t)s->locs[j] + 1);
		if (s->nr_locs)
			pb_msg(&msg, STACK_LOCATIONS, &sub);
		pb_msg(&dict, DICT_STACK, &msg);
	}
	/* last: every string is interned by now */
	for (i = 0; i < d->st.nr; i++)
		pb_str(&dict, DICT_STRING, d->st.strs[i]);
	if (msg.oom || sub.oom || d->st.oom)
		dict.oom = true;
	pb_msg(out, field, &dict);
	pb_free(&dict);
	pb_free(&msg);
	pb_free(&sub);
}

void otlp_dict_free(struct otlp_dict *d)
{
	strtab_free(&d->st);
	proto_frames_free(&d->fr);
	free(d->attrs);
	free(d->stacks);
	free(d->loc_attr);
	free(d->map_attr);
	index_free(&d->attr_index);
	index_free(&d->stack_index);
	memset(d, 0, sizeof(*d));
}
