// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof output: profile.proto, gzip-compressed as go tool pprof expects.
 *
 * The encoder is written by hand: profile.proto needs only varints and
 * length-delimited fields, which is not worth a protobuf runtime as a build
 * dependency.  A length prefix precedes its body, so a nested message is
 * encoded into a scratch buffer first; finished top-level fields go through
 * deflate as they accumulate, so a large profile never sits in memory
 * uncompressed as a whole.  Strings are interned into the string table as the
 * fields that name them are encoded and the table itself goes last: field
 * order does not matter to a decoder, and this way one pass suffices.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/hash.h"
#include "user/output/pprof.h"

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum {
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* What a mapping's locations carry, for its has_* flags. */
enum { MAP_FILENAMES = 1, MAP_LINE_NUMBERS = 2, MAP_INLINE_FRAMES = 4 };

#define FLUSH_AT    (64 * 1024)
#define KERNEL_PATH "[kernel.kallsyms]"

struct pbuf {
	uint8_t *data;
	size_t len, cap;
	bool oom; /* sticky, so encoders check once at the end rather than per field */
};

static void pb_put(struct pbuf *b, const void *src, size_t n)
{
	if (b->oom || !n)
		return;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *d;

		while (cap - b->len < n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->oom = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	pb_put(b, tmp, n);
}

static void pb_key(struct pbuf *b, int field, int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* proto3 scalars default to zero, and decoders expect zero to be left out. */
static void pb_uint(struct pbuf *b, int field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, int field, const void *data, size_t n)
{
	pb_key(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_put(b, data, n);
}

/*
 * Appends sub as a length-delimited field of b (a nested message or a packed
 * repeated field) and empties sub for the next one.
 */
static void pb_msg(struct pbuf *b, int field, struct pbuf *sub)
{
	if (sub->oom)
		b->oom = true;
	else
		pb_bytes(b, field, sub->data, sub->len);
	sub->len = 0;
	sub->oom = false;
}

/* The string table: index 0 must be "", and each string appears once. */
struct strtab {
	const char **strs; /* borrowed: the profile outlives the write */
	size_t nr, cap;
	uint32_t *slots; /* open addressing; index + 1 into strs, 0 = free */
	size_t nr_slots; /* a power of two, kept at least twice nr */
	bool oom;
};

static uint32_t *strtab_slot(struct strtab *t, const char *s)
{
	size_t mask = t->nr_slots - 1, i;

	for (i = hash_str(s) & mask; t->slots[i]; i = (i + 1) & mask)
		if (!strcmp(t->strs[t->slots[i] - 1], s))
			break;
	return &t->slots[i];
}

static int strtab_grow(struct strtab *t)
{
	size_t nr_slots = t->nr_slots ? t->nr_slots * 2 : 1024, i;
	uint32_t *old = t->slots;
	const char **strs;

	strs = realloc(t->strs, nr_slots / 2 * sizeof(*strs));
	if (!strs)
		return -1;
	t->strs = strs;
	t->cap = nr_slots / 2;
	t->slots = calloc(nr_slots, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -1;
	}
	t->nr_slots = nr_slots;
	for (i = 0; i < t->nr; i++)
		*strtab_slot(t, t->strs[i]) = i + 1;
	free(old);
	return 0;
}

static uint64_t str_index(struct strtab *t, const char *s)
{
	uint32_t *slot;

	if (!s)
		s = "";
	if (t->oom)
		return 0;
	if (t->nr >= t->cap && strtab_grow(t)) {
		t->oom = true;
		return 0;
	}
	slot = strtab_slot(t, s);
	if (!*slot) {
		t->strs[t->nr++] = s;
		*slot = t->nr;
	}
	return *slot - 1;
}

struct writer {
	FILE *f;
	z_stream zs;
	struct pbuf out; /* finished top-level fields not yet compressed */
	struct pbuf msg; /* the message being built */
	struct pbuf sub; /* a message or packed field nested in msg */
	struct strtab st;
	uint8_t zbuf[FLUSH_AT];
	char notes[PROF_MAX_EVENTS][600]; /* comments on estimated events: st keeps pointers */
};

static int gz_feed(struct writer *w, int flush)
{
	size_t have;
	int ret;

	w->zs.next_in = w->out.data;
	w->zs.avail_in = w->out.len;
	do {
		w->zs.next_out = w->zbuf;
		w->zs.avail_out = sizeof(w->zbuf);
		ret = deflate(&w->zs, flush);
		if (ret == Z_STREAM_ERROR)
			return -1;
		have = sizeof(w->zbuf) - w->zs.avail_out;
		if (have && fwrite(w->zbuf, 1, have, w->f) != have)
			return -1;
	} while (w->zs.avail_out == 0);
	w->out.len = 0;
	return flush == Z_FINISH && ret != Z_STREAM_END ? -1 : 0;
}

/* Called after each top-level field; out never exceeds FLUSH_AT by more than one field. */
static int flush_out(struct writer *w)
{
	if (w->out.oom || w->st.oom)
		return -1;
	return w->out.len >= FLUSH_AT ? gz_feed(w, Z_NO_FLUSH) : 0;
}

static void value_type(struct writer *w, int field, const char *type, const char *unit)
{
	pb_uint(&w->sub, VALUE_TYPE_TYPE, str_index(&w->st, type));
	pb_uint(&w->sub, VALUE_TYPE_UNIT, str_index(&w->st, unit));
	pb_msg(&w->out, field, &w->sub);
}

static void num_label(struct writer *w, const char *key, uint64_t num)
{
	pb_uint(&w->sub, LABEL_KEY, str_index(&w->st, key));
	pb_uint(&w->sub, LABEL_NUM, num);
	pb_msg(&w->msg, SAMPLE_LABEL, &w->sub);
}

static void str_label(struct writer *w, const char *key, const char *str)
{
	pb_uint(&w->sub, LABEL_KEY, str_index(&w->st, key));
	pb_uint(&w->sub, LABEL_STR, str_index(&w->st, str));
	pb_msg(&w->msg, SAMPLE_LABEL, &w->sub);
}

static int write_sample(struct writer *w, const struct profile *p, const struct prof_sample *s)
{
	size_t i;

	for (i = 0; i < s->nr_locs; i++)
		pb_varint(&w->sub, (uint64_t)s->locs[i] + 1);
	if (s->nr_locs)
		pb_msg(&w->msg, SAMPLE_LOCATION_ID, &w->sub);
	/* packed, so zeros stay: the values are positional */
	pb_varint(&w->sub, s->count);
	if (!p->nr_events)
		pb_varint(&w->sub, s->count * p->period_ns);
	/* one value per event: this sample's in its event's, zeros in the others */
	for (i = 0; i < p->nr_events; i++)
		pb_varint(&w->sub, i == s->event ? s->value : 0);
	pb_msg(&w->msg, SAMPLE_VALUE, &w->sub);
	if (!(p->labels_omitted & PROF_LABEL_PID))
		num_label(w, "pid", s->pid);
	if (!(p->labels_omitted & PROF_LABEL_TID))
		num_label(w, "tid", s->tid);
	if (s->comm && s->comm[0] && !(p->labels_omitted & PROF_LABEL_COMM))
		str_label(w, "comm", s->comm);
	/* containers: the pid inside its namespace, the cgroup and the container id */
	if (s->ns_pid && s->ns_pid != s->pid && !(p->labels_omitted & PROF_LABEL_NS_PID))
		num_label(w, "ns_pid", s->ns_pid);
	if (s->cgroup && !(p->labels_omitted & PROF_LABEL_CGROUP))
		str_label(w, "cgroup", s->cgroup);
	if (s->container && !(p->labels_omitted & PROF_LABEL_CONTAINER))
		str_label(w, "container", s->container);
	/* the same test profile.c uses to add the [incomplete: ...] frame */
	if (s->reason != STOP_COMPLETE && s->reason != STOP_NO_USER &&
	    !(p->labels_omitted & PROF_LABEL_STOP_REASON))
		str_label(w, "stop_reason", stop_reason_name(s->reason));
	if (s->service && s->service[0])
		str_label(w, "service_name", s->service);
	for (i = 0; i < p->nr_labels; i++)
		str_label(w, p->labels[i].key, p->labels[i].value);
	pb_msg(&w->out, PROFILE_SAMPLE, &w->msg);
	return flush_out(w);
}

static int write_mapping(struct writer *w, uint64_t id, const struct prof_mapping *m,
			 unsigned int has)
{
	pb_uint(&w->msg, MAPPING_ID, id);
	pb_uint(&w->msg, MAPPING_MEMORY_START, m->start);
	pb_uint(&w->msg, MAPPING_MEMORY_LIMIT, m->limit);
	pb_uint(&w->msg, MAPPING_FILE_OFFSET, m->offset);
	pb_uint(&w->msg, MAPPING_FILENAME, str_index(&w->st, m->path));
	pb_uint(&w->msg, MAPPING_BUILD_ID, str_index(&w->st, m->build_id));
	/* names come from us: keeps pprof from trying to symbolize against local files */
	pb_uint(&w->msg, MAPPING_HAS_FUNCTIONS, 1);
	pb_uint(&w->msg, MAPPING_HAS_FILENAMES, !!(has & MAP_FILENAMES));
	pb_uint(&w->msg, MAPPING_HAS_LINE_NUMBERS, !!(has & MAP_LINE_NUMBERS));
	pb_uint(&w->msg, MAPPING_HAS_INLINE_FRAMES, !!(has & MAP_INLINE_FRAMES));
	pb_msg(&w->out, PROFILE_MAPPING, &w->msg);
	return flush_out(w);
}

struct func_key {
	uint64_t name, system_name, file, start_line; /* string indices; start_line a number */
	size_t line;				      /* index into the flat list of lines */
};

static int by_function(const void *a, const void *b)
{
	const struct func_key *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->system_name != y->system_name)
		return x->system_name < y->system_name ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->start_line != y->start_line)
		return x->start_line < y->start_line ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static bool same_function(const struct func_key *x, const struct func_key *y)
{
	return x->name == y->name && x->system_name == y->system_name && x->file == y->file &&
	       x->start_line == y->start_line;
}

/* Lines of location @i: its own, or the one its function makes. */
static uint32_t loc_nr_lines(const struct prof_location *l)
{
	return l->nr_lines ? l->nr_lines : 1;
}

/*
 * The Function of each Line.  A line with a source file names it; one without
 * (no DWARF: a symbol, the kernel, a JIT) keeps the object's path, as before
 * lines existed.  Identical (name, system name, file, start line) share one
 * Function.  Sorting finds them without a second hash table and numbers
 * functions by name, so the same profile always gives the same file.
 * @line_first[i] is where location i's lines start in @line_func.
 */
static int write_functions(struct writer *w, const struct profile *p, const uint64_t *loc_map,
			   const struct prof_mapping *kmap, const size_t *line_first,
			   size_t nr_lines, uint64_t *line_func)
{
	struct func_key *keys;
	uint64_t id = 0;
	size_t i, at = 0;
	int err = 0;

	if (!nr_lines)
		return 0;
	keys = calloc(nr_lines, sizeof(*keys));
	if (!keys)
		return -1;
	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];
		const char *obj = "";
		uint32_t j;

		if (loc_map[i] && loc_map[i] <= p->nr_maps)
			obj = p->maps[loc_map[i] - 1].path;
		else if (loc_map[i])
			obj = kmap->path;
		for (j = 0; j < loc_nr_lines(l); j++, at++) {
			const struct prof_line *pl = l->nr_lines ? &l->lines[j] : NULL;
			const char *name = pl ? pl->function : l->function;

			if (!name)
				name = "[unknown]";
			keys[at].name = str_index(&w->st, name);
			keys[at].system_name =
			    str_index(&w->st, pl && pl->system_name ? pl->system_name : name);
			keys[at].file = str_index(&w->st, pl && pl->file ? pl->file : obj);
			keys[at].start_line = pl ? pl->start_line : 0;
			keys[at].line = line_first[i] + j;
		}
	}
	if (w->st.oom) {
		err = -1;
		goto out;
	}
	qsort(keys, nr_lines, sizeof(*keys), by_function);
	for (i = 0; i < nr_lines && !err; i++) {
		if (i && same_function(&keys[i], &keys[i - 1])) {
			line_func[keys[i].line] = id;
			continue;
		}
		line_func[keys[i].line] = ++id;
		pb_uint(&w->msg, FUNCTION_ID, id);
		pb_uint(&w->msg, FUNCTION_NAME, keys[i].name);
		pb_uint(&w->msg, FUNCTION_SYSTEM_NAME, keys[i].system_name);
		pb_uint(&w->msg, FUNCTION_FILENAME, keys[i].file);
		pb_uint(&w->msg, FUNCTION_START_LINE, keys[i].start_line);
		pb_msg(&w->out, PROFILE_FUNCTION, &w->msg);
		err = flush_out(w);
	}
out:
	free(keys);
	return err;
}

/* One Line per level, innermost first, as profile.proto orders them. */
static int write_locations(struct writer *w, const struct profile *p, const uint64_t *loc_map,
			   const size_t *line_first, const uint64_t *line_func)
{
	size_t i;
	int err = 0;

	for (i = 0; i < p->nr_locs && !err; i++) {
		const struct prof_location *l = &p->locs[i];
		uint32_t j;

		pb_uint(&w->msg, LOCATION_ID, i + 1);
		pb_uint(&w->msg, LOCATION_MAPPING_ID, loc_map[i]);
		pb_uint(&w->msg, LOCATION_ADDRESS, l->addr);
		for (j = 0; j < loc_nr_lines(l); j++) {
			pb_uint(&w->sub, LINE_FUNCTION_ID, line_func[line_first[i] + j]);
			if (l->nr_lines)
				pb_uint(&w->sub, LINE_LINE, l->lines[j].line);
			pb_msg(&w->msg, LOCATION_LINE, &w->sub);
		}
		pb_msg(&w->out, PROFILE_LOCATION, &w->msg);
		err = flush_out(w);
	}
	return err;
}

/* The has_* flags of each mapping (index + 1 as loc_map), from what its locations carry. */
static void mapping_flags(const struct profile *p, const uint64_t *loc_map, unsigned int *has)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < p->nr_locs; i++) {
		const struct prof_location *l = &p->locs[i];

		if (!loc_map[i] || loc_map[i] > p->nr_maps)
			continue;
		for (j = 0; j < l->nr_lines; j++) {
			if (l->lines[j].file)
				has[loc_map[i] - 1] |= MAP_FILENAMES;
			/* a line number comes from DWARF, which also told the inline levels */
			if (l->lines[j].line)
				has[loc_map[i] - 1] |= MAP_LINE_NUMBERS | MAP_INLINE_FRAMES;
		}
	}
}

/*
 * Mapping ids for the locations.  Kernel frames without a mapping go to the
 * profile's kernel mapping, or to one made up here (*kmap, id nr_maps + 1,
 * spanning the kernel addresses seen) so pprof still shows them as kernel
 * code.  Returns whether the made-up mapping is needed.
 */
static bool map_locations(const struct profile *p, uint64_t *loc_map, struct prof_mapping *kmap)
{
	uint64_t kernel_id = 0;
	bool need_kmap = false;
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

		/* a dangling mapping index would make pprof reject the whole file */
		loc_map[i] = l->mapping <= p->nr_maps ? l->mapping : 0;
		if (loc_map[i] || l->kind != PROF_LOC_KERNEL)
			continue;
		if (kernel_id) {
			loc_map[i] = kernel_id;
			continue;
		}
		need_kmap = true;
		loc_map[i] = p->nr_maps + 1;
		if (l->addr < kmap->start)
			kmap->start = l->addr;
		if (l->addr >= kmap->limit)
			kmap->limit = l->addr + 1;
	}
	return need_kmap;
}

int pprof_write(FILE *f, const struct profile *p)
{
	uint64_t *loc_map = NULL, *line_func = NULL;
	size_t *line_first = NULL, nr_lines = 0;
	unsigned int *has = NULL;
	struct prof_mapping kmap;
	struct writer *w;
	bool need_kmap, zinit = false;
	size_t i;
	int err = -1;

	if (profile_check(p))
		return -1;
	w = calloc(1, sizeof(*w));
	loc_map = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*loc_map));
	line_first = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*line_first));
	has = calloc(p->nr_maps ? p->nr_maps : 1, sizeof(*has));
	if (!w || !loc_map || !line_first || !has)
		goto out;
	for (i = 0; i < p->nr_locs; i++) {
		line_first[i] = nr_lines;
		nr_lines += loc_nr_lines(&p->locs[i]);
	}
	line_func = calloc(nr_lines ? nr_lines : 1, sizeof(*line_func));
	if (!line_func)
		goto out;
	w->f = f;
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
	if (deflateInit2(&w->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto out;
	zinit = true;
	str_index(&w->st, "");

	value_type(w, PROFILE_SAMPLE_TYPE, "samples", "count");
	if (!p->nr_events)
		value_type(w, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	for (i = 0; i < p->nr_events; i++)
		value_type(w, PROFILE_SAMPLE_TYPE, p->events[i].type, p->events[i].unit);
	for (i = 0; i < p->nr_samples; i++)
		if (write_sample(w, p, &p->samples[i]))
			goto out;

	need_kmap = map_locations(p, loc_map, &kmap);
	mapping_flags(p, loc_map, has);
	for (i = 0; i < p->nr_maps; i++)
		if (write_mapping(w, i + 1, &p->maps[i], has[i]))
			goto out;
	if (need_kmap && write_mapping(w, p->nr_maps + 1, &kmap, 0))
		goto out;
	if (write_functions(w, p, loc_map, &kmap, line_first, nr_lines, line_func))
		goto out;
	if (write_locations(w, p, loc_map, line_first, line_func))
		goto out;

	pb_uint(&w->out, PROFILE_TIME_NANOS, p->start_unix_ns);
	pb_uint(&w->out, PROFILE_DURATION_NANOS, p->duration_ns);
	if (p->nr_events) {
		value_type(w, PROFILE_PERIOD_TYPE, p->events[0].type, p->events[0].unit);
	} else {
		value_type(w, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_uint(&w->out, PROFILE_PERIOD, p->period_ns);
	}
	pb_varint(&w->sub, str_index(&w->st, "cfiprof"));
	if (p->event && p->event[0])
		pb_varint(&w->sub, str_index(&w->st, p->event));
	for (i = 0; i < p->nr_comments; i++)
		pb_varint(&w->sub, str_index(&w->st, p->comments[i]));
	/* values past --event-budget are weighted estimates: the reader is told which */
	for (i = 0; i < p->nr_events; i++) {
		char *note = w->notes[i];

		if (!p->events[i].estimated || i >= PROF_MAX_EVENTS)
			continue;
		snprintf(note, sizeof(w->notes[i]),
			 "%s: estimated (sampled past --event-budget, each sample weighted by the "
			 "hits it stands for)",
			 p->events[i].name);
		pb_varint(&w->sub, str_index(&w->st, note));
	}
	pb_msg(&w->out, PROFILE_COMMENT, &w->sub);
	pb_uint(&w->out, PROFILE_DEFAULT_SAMPLE_TYPE,
		str_index(&w->st, p->nr_events ? p->events[0].type : "cpu"));

	/* every string is interned by now */
	for (i = 0; i < w->st.nr; i++) {
		pb_bytes(&w->out, PROFILE_STRING_TABLE, w->st.strs[i], strlen(w->st.strs[i]));
		if (flush_out(w))
			goto out;
	}
	if (w->out.oom || w->st.oom || gz_feed(w, Z_FINISH))
		goto out;
	err = fflush(f) || ferror(f) ? -1 : 0;
out:
	if (w) {
		if (zinit)
			deflateEnd(&w->zs);
		free(w->out.data);
		free(w->msg.data);
		free(w->sub.data);
		free(w->st.strs);
		free(w->st.slots);
		free(w);
	}
	free(loc_map);
	free(line_first);
	free(line_func);
	free(has);
	return err;
}
