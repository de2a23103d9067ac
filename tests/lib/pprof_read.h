/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading pprof files back, two ways: a minimal profile.proto decoder of our
 * own (exact values, labels, ids), and `go tool pprof`, the reader users run,
 * offline with its caches in a directory of the test's.
 */
#ifndef CFIPROF_TESTS_PPROF_READ_H
#define CFIPROF_TESTS_PPROF_READ_H

#include <ctype.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/cli_util.h"

/* ---- gzip ---- */

/* The gunzipped bytes (caller frees) or NULL; gzip only, as pprof: a zlib stream fails. */
static inline uint8_t *gunzip_mem(const void *in, size_t len, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap = len * 8 + 65536, n = 0;
	uint8_t *buf = malloc(cap), *nb;
	int ret;

	*out_len = 0;
	if (!buf || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(buf);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		if (cap - n < 65536) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		zs.next_out = buf + n;
		zs.avail_out = (uInt)(cap - n);
		ret = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
	} while (ret == Z_OK);
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(buf);
		return NULL;
	}
	*out_len = n;
	return buf;
}

static inline uint8_t *gunzip_file(const char *path, size_t *len)
{
	size_t gz_len;
	char *gz = slurp_len(path, &gz_len);
	uint8_t *out = NULL;

	*len = 0;
	if (access(path, R_OK) == 0)
		out = gunzip_mem(gz, gz_len, len);
	free(gz);
	return out;
}

/* ---- protobuf ---- */

struct field {
	uint32_t num;
	int wire;
	uint64_t v;	  /* varint */
	const uint8_t *p; /* length-delimited */
	size_t len;
};

static inline int get_varint(const uint8_t **pos, const uint8_t *end, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *pos < end; shift += 7) {
		uint8_t b = *(*pos)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* 1 for a field, 0 at the end, -1 if malformed. */
static inline int next_field(const uint8_t **pos, const uint8_t *end, struct field *fl)
{
	uint64_t key;

	if (*pos == end)
		return 0;
	if (get_varint(pos, end, &key))
		return -1;
	fl->num = key >> 3;
	fl->wire = key & 7;
	fl->p = NULL;
	fl->len = 0;
	switch (fl->wire) {
	case 0:
		return get_varint(pos, end, &fl->v) ? -1 : 1;
	case 2:
		if (get_varint(pos, end, &fl->v) || fl->v > (uint64_t)(end - *pos))
			return -1;
		fl->p = *pos;
		fl->len = fl->v;
		*pos += fl->len;
		return 1;
	default: /* profile.proto has no fixed-width fields */
		return -1;
	}
}

/* ---- profile.proto ---- */

#define DEC_MAX_LABELS	 16
#define DEC_MAX_COMMENTS 32

struct dec_sample {
	uint64_t *locs, vals[4];
	int nr_locs, nr_vals;
	int64_t pid, tid;
	const char *comm, *stop_reason;
	const char *label_keys[DEC_MAX_LABELS];
	const char *label_vals[DEC_MAX_LABELS]; /* string values, NULL for numbers */
	int nr_labels;
};

struct dec_map {
	uint64_t id, start, limit, offset, has_functions;
	const char *filename, *build_id;
};

#define DEC_LOC_LINES 8

struct dec_loc {
	uint64_t id, mapping, addr, func;
	int nr_lines;
	/* the first DEC_LOC_LINES lines (innermost first): function ids and line numbers */
	uint64_t line_func[DEC_LOC_LINES];
	int64_t line_no[DEC_LOC_LINES];
};

struct dec_func {
	uint64_t id;
	const char *name, *system_name, *filename;
};

struct decoded {
	char **strs;
	int nr_strs;
	const char *sample_type[4][2], *period_type[2];
	int nr_sample_types;
	struct dec_sample *samples;
	int nr_samples;
	struct dec_map *maps;
	int nr_maps;
	struct dec_loc *locs;
	int nr_locs;
	struct dec_func *funcs;
	int nr_funcs;
	uint64_t time_nanos, duration_nanos, period, comments[DEC_MAX_COMMENTS];
	uint64_t default_sample_type;
	int nr_comments;
	bool bad;
};

/* A zeroed new last element of a growing array (16, then doubled); NULL and d->bad if no room. */
static inline void *dec_grow(struct decoded *d, void **arr, int nr, size_t size)
{
	void *n;

	if (nr == 0 || (nr >= 16 && !(nr & (nr - 1)))) {
		n = realloc(*arr, (size_t)(nr ? nr * 2 : 16) * size);
		if (!n) {
			d->bad = true;
			return NULL;
		}
		*arr = n;
	}
	n = (char *)*arr + (size_t)nr * size;
	memset(n, 0, size);
	return n;
}

/* A repeated integer field, packed or not, appended to *out; returns the new count. */
static inline int get_ints(const struct field *fl, uint64_t *out, int nr, int max)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;

	if (fl->wire == 0) {
		if (nr < max)
			out[nr++] = fl->v;
		return nr;
	}
	while (pos < end && nr < max)
		if (get_varint(&pos, end, &out[nr++]))
			return -1;
	return nr;
}

static inline const char *str_at(struct decoded *d, uint64_t i)
{
	if (i >= (uint64_t)d->nr_strs) {
		d->bad = true;
		return "<bad string index>";
	}
	return d->strs[i];
}

/* Field numbers as in profile.proto; see user/output/pprof.c. */
static inline void dec_value_type(struct decoded *d, const struct field *fl, const char **out)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct field f;
	int r;

	out[0] = out[1] = "";
	while ((r = next_field(&pos, end, &f)) > 0)
		if (f.num == 1 || f.num == 2)
			out[f.num - 1] = str_at(d, f.v);
	d->bad |= r < 0;
}

static inline void dec_label(struct decoded *d, const struct field *fl, struct dec_sample *s)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	const char *key = "", *str = NULL;
	uint64_t num = 0;
	struct field f;
	int r;

	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1)
			key = str_at(d, f.v);
		else if (f.num == 2)
			str = str_at(d, f.v);
		else if (f.num == 3)
			num = f.v;
	}
	d->bad |= r < 0;
	if (s->nr_labels < DEC_MAX_LABELS) {
		s->label_vals[s->nr_labels] = str;
		s->label_keys[s->nr_labels++] = key;
	}
	if (!strcmp(key, "pid"))
		s->pid = (int64_t)num;
	else if (!strcmp(key, "tid"))
		s->tid = (int64_t)num;
	else if (!strcmp(key, "comm"))
		s->comm = str;
	else if (!strcmp(key, "stop_reason"))
		s->stop_reason = str;
}

static inline bool dec_add_loc(struct decoded *d, struct dec_sample *s, uint64_t id)
{
	uint64_t *n;

	if (!(s->nr_locs & 15)) {
		n = realloc(s->locs, (size_t)(s->nr_locs + 16) * sizeof(*n));
		if (!n) {
			d->bad = true;
			return false;
		}
		s->locs = n;
	}
	s->locs[s->nr_locs++] = id;
	return true;
}

/* The location ids of a sample, packed or not. */
static inline void dec_sample_locs(struct decoded *d, const struct field *f, struct dec_sample *s)
{
	const uint8_t *pos = f->p, *end = f->p + f->len;
	uint64_t v;

	if (f->wire == 0) {
		dec_add_loc(d, s, f->v);
		return;
	}
	while (pos < end) {
		if (get_varint(&pos, end, &v)) {
			d->bad = true;
			return;
		}
		if (!dec_add_loc(d, s, v))
			return;
	}
}

static inline void dec_sample(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_sample *s;
	struct field f;
	int r;

	s = dec_grow(d, (void **)&d->samples, d->nr_samples, sizeof(*s));
	if (!s)
		return;
	d->nr_samples++;
	s->pid = s->tid = -1;
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1)
			dec_sample_locs(d, &f, s);
		else if (f.num == 2)
			s->nr_vals = get_ints(&f, s->vals, s->nr_vals, 4);
		else if (f.num == 3)
			dec_label(d, &f, s);
	}
	d->bad |= r < 0 || s->nr_vals < 0;
}

static inline void dec_mapping(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_map *m;
	struct field f;
	int r;

	m = dec_grow(d, (void **)&d->maps, d->nr_maps, sizeof(*m));
	if (!m)
		return;
	d->nr_maps++;
	m->filename = m->build_id = "";
	while ((r = next_field(&pos, end, &f)) > 0) {
		switch (f.num) {
		case 1:
			m->id = f.v;
			break;
		case 2:
			m->start = f.v;
			break;
		case 3:
			m->limit = f.v;
			break;
		case 4:
			m->offset = f.v;
			break;
		case 5:
			m->filename = str_at(d, f.v);
			break;
		case 6:
			m->build_id = str_at(d, f.v);
			break;
		case 7:
			m->has_functions = f.v;
			break;
		}
	}
	d->bad |= r < 0;
}

static inline void dec_location(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_loc *l;
	struct field f, g;
	int r;

	l = dec_grow(d, (void **)&d->locs, d->nr_locs, sizeof(*l));
	if (!l)
		return;
	d->nr_locs++;
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1) {
			l->id = f.v;
		} else if (f.num == 2) {
			l->mapping = f.v;
		} else if (f.num == 3) {
			l->addr = f.v;
		} else if (f.num == 4) {
			const uint8_t *lp = f.p, *le = f.p + f.len;

			int k = l->nr_lines++;

			while (next_field(&lp, le, &g) > 0) {
				if (g.num == 1)
					l->func = g.v;
				if (g.num == 1 && k < DEC_LOC_LINES)
					l->line_func[k] = g.v;
				if (g.num == 2 && k < DEC_LOC_LINES)
					l->line_no[k] = (int64_t)g.v;
			}
		}
	}
	d->bad |= r < 0;
}

static inline void dec_function(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_func *fn;
	struct field f;
	int r;

	fn = dec_grow(d, (void **)&d->funcs, d->nr_funcs, sizeof(*fn));
	if (!fn)
		return;
	d->nr_funcs++;
	fn->name = fn->system_name = fn->filename = "";
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1)
			fn->id = f.v;
		else if (f.num == 2)
			fn->name = str_at(d, f.v);
		else if (f.num == 3)
			fn->system_name = str_at(d, f.v);
		else if (f.num == 4)
			fn->filename = str_at(d, f.v);
	}
	d->bad |= r < 0;
}

/*
 * A whole profile into d (free with decoded_free); 0, or -1 if malformed.
 * Two passes: the string table may come anywhere, and everything refers to it.
 */
static inline int decode(const uint8_t *buf, size_t len, struct decoded *d)
{
	const uint8_t *pos = buf, *end = buf + len;
	struct field f;
	char **s;
	int r;

	memset(d, 0, sizeof(*d));
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num != 6 || f.wire != 2)
			continue;
		s = dec_grow(d, (void **)&d->strs, d->nr_strs, sizeof(*s));
		if (!s)
			return -1;
		*s = strndup((const char *)f.p, f.len);
		d->nr_strs++;
	}
	if (r < 0)
		return -1;
	pos = buf;
	while ((r = next_field(&pos, end, &f)) > 0) {
		switch (f.num) {
		case 1:
			if (d->nr_sample_types < 4)
				dec_value_type(d, &f, d->sample_type[d->nr_sample_types++]);
			break;
		case 2:
			dec_sample(d, &f);
			break;
		case 3:
			dec_mapping(d, &f);
			break;
		case 4:
			dec_location(d, &f);
			break;
		case 5:
			dec_function(d, &f);
			break;
		case 9:
			d->time_nanos = f.v;
			break;
		case 10:
			d->duration_nanos = f.v;
			break;
		case 11:
			dec_value_type(d, &f, d->period_type);
			break;
		case 12:
			d->period = f.v;
			break;
		case 13:
			d->nr_comments =
			    get_ints(&f, d->comments, d->nr_comments, DEC_MAX_COMMENTS);
			break;
		case 14:
			d->default_sample_type = f.v;
			break;
		}
	}
	return r < 0 || d->bad ? -1 : 0;
}

static inline void decoded_free(struct decoded *d)
{
	int i;

	for (i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
	for (i = 0; i < d->nr_samples; i++)
		free(d->samples[i].locs);
	free(d->strs);
	free(d->samples);
	free(d->maps);
	free(d->locs);
	free(d->funcs);
	memset(d, 0, sizeof(*d));
}

static inline const struct dec_loc *loc_by_id(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nr_locs; i++)
		if (d->locs[i].id == id)
			return &d->locs[i];
	return NULL;
}

static inline const struct dec_func *func_by_id(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nr_funcs; i++)
		if (d->funcs[i].id == id)
			return &d->funcs[i];
	return NULL;
}

static inline const struct dec_map *map_by_id(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nr_maps; i++)
		if (d->maps[i].id == id)
			return &d->maps[i];
	return NULL;
}

static inline const char *loc_name(const struct decoded *d, uint64_t id)
{
	const struct dec_loc *l = loc_by_id(d, id);
	const struct dec_func *fn = l ? func_by_id(d, l->func) : NULL;

	return fn ? fn->name : "<dangling>";
}

/* ---- go tool pprof ---- */

/* Debian's golang-go, or a go from go.dev; NULL if there is none. */
static inline const char *find_go(void)
{
	static const char *const cands[] = {"/usr/bin/go", "/usr/lib/go/bin/go",
					    "/usr/local/go/bin/go"};

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (!access(cands[i], X_OK))
			return cands[i];
	return NULL;
}

/*
 * Environment for go tool pprof: HOME, caches and pprof's binary search path
 * under DIR/go, no network, no toolchain download.  env gets at most 9
 * entries, NULL-terminated.
 */
static inline void go_env_setup(const char *dir, char *env[10])
{
	static char buf[6][PATH_MAX + 64];
	static const char *const names[] = {"HOME", "GOCACHE", "GOPATH", "PPROF_TMPDIR",
					    "PPROF_BINARY_PATH"};
	static const char *const subs[] = {"", "/cache", "/gopath", "/tmp", ""};
	char go[PATH_MAX];
	int n = 0;

	snprintf(go, sizeof(go), "%s/go", dir);
	mkdir(go, 0755);
	for (int i = 0; i < 5; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s=%s%s", names[i], go, subs[i]);
		env[n++] = buf[i];
	}
	snprintf(buf[5], sizeof(buf[5]), "%s/tmp", go);
	mkdir(buf[5], 0755);
	env[n++] = "GOTOOLCHAIN=local";
	env[n++] = "GOPROXY=off";
	env[n++] = "GOFLAGS=";
	env[n] = NULL;
}

/*
 * Runs `GO tool pprof ARGS FILE` offline (go_env_setup(DIR)).  Returns its
 * output, stdout and stderr (caller frees), or NULL; *status gets the exit code.
 */
static inline char *go_pprof(const char *go, const char *dir, const char *args, const char *file,
			     int *status)
{
	char cmd[4 * PATH_MAX + 1024], *env[10], *out = NULL, buf[4096];
	size_t len = 0, got, n = 0;
	FILE *p, *m;
	int st;

	*status = -1;
	go_env_setup(dir, env);
	for (int i = 0; env[i]; i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s ", env[i]);
	snprintf(cmd + n, sizeof(cmd) - n, "%s tool pprof %s %s 2>&1", go, args, file);
	m = open_memstream(&out, &len);
	if (!m)
		return NULL;
	p = popen(cmd, "r");
	if (!p) {
		fclose(m);
		free(out);
		return NULL;
	}
	while ((got = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, got, m);
	st = pclose(p);
	fclose(m);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}

/*
 * One sample block of `go tool pprof -traces` output: its labels ("key:  value"
 * lines before the value), its value and its frames, leaf first (pointers into
 * the text being read, valid during the callback).
 */
#define TRACES_MAX_LABELS 16
#define TRACES_MAX_FRAMES 512
struct traces_block {
	const char *key[TRACES_MAX_LABELS], *value[TRACES_MAX_LABELS];
	int nr_labels;
	uint64_t count;
	const char *frame[TRACES_MAX_FRAMES];
	int nr_frames;
};

/* The value of label key in b, "" when it has none. */
static inline const char *traces_label(const struct traces_block *b, const char *key)
{
	for (int i = 0; i < b->nr_labels; i++)
		if (!strcmp(b->key[i], key))
			return b->value[i];
	return "";
}

/* Each block of -traces text (written into: labels and frames cut out of it) to fn. */
static inline void traces_each(char *text, void (*fn)(const struct traces_block *, void *),
			       void *ctx)
{
	struct traces_block b = {0};
	char *line, *save = NULL;
	bool in_block = false, have_value = false;

	/* one extra separator at the end ends the last block */
	for (line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		char *p = line ? line : "-----------+", *end, *colon;

		if (!strncmp(p, "-----------+", 12)) {
			if (in_block && have_value)
				fn(&b, ctx);
			memset(&b, 0, sizeof(b));
			in_block = true;
			have_value = false;
			if (!line)
				break;
			continue;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (!in_block || !*p)
			continue;
		if (!have_value) {
			/* label lines ("key:  value") come before the value line */
			if (!isdigit((unsigned char)*p)) {
				colon = strstr(p, ":  ");
				if (colon && b.nr_labels < TRACES_MAX_LABELS) {
					*colon = 0;
					for (end = colon + 3; *end == ' '; end++)
						;
					b.key[b.nr_labels] = p;
					b.value[b.nr_labels++] = end;
				}
				continue;
			}
			b.count = strtoull(p, &end, 10);
			if (*end != ' ' && *end != '\t')
				continue;
			have_value = true;
			for (p = end; *p == ' ' || *p == '\t'; p++)
				;
		}
		if (b.nr_frames < TRACES_MAX_FRAMES)
			b.frame[b.nr_frames++] = p;
	}
}

#endif
