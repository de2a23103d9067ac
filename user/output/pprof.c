// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof output: profile.proto, gzip-compressed as go tool pprof expects.
 *
 * The wire format is protobuf.c's, the frame tables proto_frames.c's (both
 * shared with the OTLP output).  Finished top-level fields go through
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

#include "user/output/pprof.h"
#include "user/output/proto_frames.h"
#include "user/output/protobuf.h"

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

#define FLUSH_AT    (64 * 1024)

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
	/* Go's goroutine labels, keyed as Go's own profiler keys them */
	for (i = 0; i < s->nr_rt_labels; i++)
		str_label(w, s->rt_labels[i].key, s->rt_labels[i].value);
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
	pb_uint(&w->msg, MAPPING_HAS_FILENAMES, !!(has & PROTO_MAP_FILENAMES));
	pb_uint(&w->msg, MAPPING_HAS_LINE_NUMBERS, !!(has & PROTO_MAP_LINE_NUMBERS));
	pb_uint(&w->msg, MAPPING_HAS_INLINE_FRAMES, !!(has & PROTO_MAP_INLINE_FRAMES));
	pb_msg(&w->out, PROFILE_MAPPING, &w->msg);
	return flush_out(w);
}

static int write_functions(struct writer *w, const struct proto_frames *fr)
{
	size_t i;
	int err = 0;

	for (i = 0; i < fr->nr_funcs && !err; i++) {
		pb_uint(&w->msg, FUNCTION_ID, i + 1);
		pb_uint(&w->msg, FUNCTION_NAME, fr->funcs[i].name);
		pb_uint(&w->msg, FUNCTION_SYSTEM_NAME, fr->funcs[i].system_name);
		pb_uint(&w->msg, FUNCTION_FILENAME, fr->funcs[i].file);
		pb_uint(&w->msg, FUNCTION_START_LINE, fr->funcs[i].start_line);
		pb_msg(&w->out, PROFILE_FUNCTION, &w->msg);
		err = flush_out(w);
	}
	return err;
}

/* One Line per level, innermost first, as profile.proto orders them. */
static int write_locations(struct writer *w, const struct profile *p, const struct proto_frames *fr)
{
	size_t i;
	int err = 0;

	for (i = 0; i < p->nr_locs && !err; i++) {
		const struct prof_location *l = &p->locs[i];
		uint32_t j;

		pb_uint(&w->msg, LOCATION_ID, i + 1);
		pb_uint(&w->msg, LOCATION_MAPPING_ID, fr->loc_map[i]);
		pb_uint(&w->msg, LOCATION_ADDRESS, l->addr);
		for (j = 0; j < proto_loc_nr_lines(l); j++) {
			pb_uint(&w->sub, LINE_FUNCTION_ID, fr->line_func[fr->line_first[i] + j]);
			if (l->nr_lines)
				pb_uint(&w->sub, LINE_LINE, l->lines[j].line);
			pb_msg(&w->msg, LOCATION_LINE, &w->sub);
		}
		pb_msg(&w->out, PROFILE_LOCATION, &w->msg);
		err = flush_out(w);
	}
	return err;
}

int pprof_write(FILE *f, const struct profile *p)
{
	struct proto_frames fr = {0};
	struct writer *w;
	bool zinit = false;
	size_t i;
	int err = -1;

	if (profile_check(p))
		return -1;
	w = calloc(1, sizeof(*w));
	if (!w || proto_frames_map(&fr, p))
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

	for (i = 0; i < p->nr_maps; i++)
		if (write_mapping(w, i + 1, &p->maps[i], fr.has[i]))
			goto out;
	if (fr.need_kmap && write_mapping(w, p->nr_maps + 1, &fr.kmap, 0))
		goto out;
	if (proto_frames_functions(&fr, p, &w->st) || write_functions(w, &fr))
		goto out;
	if (write_locations(w, p, &fr))
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
		pb_free(&w->out);
		pb_free(&w->msg);
		pb_free(&w->sub);
		strtab_free(&w->st);
		free(w);
	}
	proto_frames_free(&fr);
	return err;
}
