// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof writer: a hand-built profile is written, then read back twice: by a
 * minimal protobuf decoder here (exact values, labels, ids) and by
 * `go tool pprof` (the consumer users actually run, so a file that decodes
 * here but not there still fails).  Flat counts are distinct per function so
 * the -top order is unambiguous.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/harness.h"
#include "user/output/pprof.h"

#define PERIOD_NS   10000000ULL /* 100 Hz: 70 samples print as 0.70s */
#define START_NS    1700000000123456789ULL
#define MAX_N	    64
#define FLUSH_BYTES (64 * 1024) /* the deflate batch in user/output/pprof.c */

/* ---- the profile under test ---- */

enum { L_LEAF, L_B, L_A, L_MAIN, L_LIBC, L_SYSCALL, L_WORKER, L_INCOMPLETE, L_OVERFLOW, NR_LOCS };

static struct prof_mapping maps[] = {
    {0x400000, 0x402000, 0, "/usr/bin/app", "0123456789abcdef", 100},
    {0x7f0000000000, 0x7f0000200000, 0x28000, "/usr/lib/x86_64-linux-gnu/libc.so.6", "", 100},
};

static struct prof_location locs[NR_LOCS] = {
    [L_LEAF] = {0x401100, 0x1100, 1, PROF_LOC_USER, "leaf"},
    [L_B] = {0x401200, 0x1200, 1, PROF_LOC_USER, "b"},
    [L_A] = {0x401300, 0x1300, 1, PROF_LOC_USER, "a"},
    [L_MAIN] = {0x401400, 0x1400, 1, PROF_LOC_USER, "main"},
    [L_LIBC] = {0x7f0000029d90, 0x29d90, 2, PROF_LOC_USER, "__libc_start_call_main"},
    [L_SYSCALL] = {0xffffffff81e00100, 0, 0, PROF_LOC_KERNEL, "do_syscall_64"},
    [L_WORKER] = {0xffffffff810c0200, 0, 0, PROF_LOC_KERNEL, "worker_thread"},
    [L_INCOMPLETE] = {0, 0, 0, PROF_LOC_SYNTHETIC, "[incomplete: no-rule]"},
    [L_OVERFLOW] = {0, 0, 0, PROF_LOC_SYNTHETIC, "[overflow: stack table full]"},
};

static uint32_t full[] = {L_LEAF, L_B, L_A, L_MAIN, L_LIBC};
static uint32_t from_b[] = {L_B, L_A, L_MAIN, L_LIBC};
static uint32_t from_a[] = {L_A, L_MAIN, L_LIBC};
static uint32_t in_kernel[] = {L_SYSCALL, L_LEAF, L_B, L_A, L_MAIN, L_LIBC};
static uint32_t kthread[] = {L_WORKER};
static uint32_t incomplete[] = {L_LEAF, L_INCOMPLETE};
static uint32_t overflow[] = {L_OVERFLOW};

#define STACK(s) .nr_locs = (uint32_t)(sizeof(s) / sizeof(s[0])), .locs = s
#define SAMPLE(n, p, t, c, r, st)                                                                  \
	{                                                                                          \
		.count = n, .pid = p, .tid = t, .comm = c, .reason = r, STACK(st)                  \
	}

/* flat: leaf 52+15+3 = 70, b 12, a 8, do_syscall_64 5, worker_thread 3, overflow 2; total 100 */
static struct prof_sample samples[] = {
    SAMPLE(52, 100, 101, "app", STOP_COMPLETE, full),
    SAMPLE(15, 100, 102, "app", STOP_COMPLETE, full),
    SAMPLE(12, 100, 101, "app", STOP_COMPLETE, from_b),
    SAMPLE(8, 100, 101, "app", STOP_COMPLETE, from_a),
    SAMPLE(5, 100, 101, "app", STOP_COMPLETE, in_kernel),
    SAMPLE(3, 42, 42, "kworker/0:1", STOP_NO_USER, kthread),
    SAMPLE(3, 100, 103, "app-worker", STOP_NO_RULE, incomplete),
    SAMPLE(2, 0, 0, "[overflow]", STOP_TRUNCATED, overflow),
};

static void fill_profile(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->samples = samples;
	p->nr_samples = sizeof(samples) / sizeof(samples[0]);
	p->locs = locs;
	p->nr_locs = NR_LOCS;
	p->maps = maps;
	p->nr_maps = sizeof(maps) / sizeof(maps[0]);
	p->total = 100;
	p->overflow = 2;
	p->period_ns = PERIOD_NS;
	p->start_unix_ns = START_NS;
	p->duration_ns = 3000000000ULL;
	p->event = "cpu-clock";
}

/* ---- a minimal profile.proto reader ---- */

struct field {
	uint32_t num;
	int wire;
	uint64_t v;	  /* varint */
	const uint8_t *p; /* length-delimited */
	size_t len;
};

static int get_varint(const uint8_t **pos, const uint8_t *end, uint64_t *v)
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
static int next_field(const uint8_t **pos, const uint8_t *end, struct field *fl)
{
	uint64_t key;

	if (*pos == end)
		return 0;
	if (get_varint(pos, end, &key))
		return -1;
	fl->num = key >> 3;
	fl->wire = key & 7;
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

/* A repeated integer field, packed or not; returns how many were added. */
static int get_ints(const struct field *fl, uint64_t *out, int nr, int max)
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

struct dec_sample {
	uint64_t locs[MAX_N], vals[4];
	int nr_locs, nr_vals;
	int64_t pid, tid;
	const char *comm, *stop_reason;
};

struct dec_map {
	uint64_t id, start, limit, offset, has_functions;
	const char *filename, *build_id;
};

struct dec_loc {
	uint64_t id, mapping, addr, func;
	int nr_lines;
};

struct dec_func {
	uint64_t id;
	const char *name, *system_name, *filename;
};

struct decoded {
	char *strs[MAX_N * 2];
	int nr_strs;
	const char *sample_type[4][2], *period_type[2];
	int nr_sample_types;
	struct dec_sample samples[MAX_N];
	int nr_samples;
	struct dec_map maps[MAX_N];
	int nr_maps;
	struct dec_loc locs[MAX_N];
	int nr_locs;
	struct dec_func funcs[MAX_N];
	int nr_funcs;
	uint64_t time_nanos, duration_nanos, period, comments[4], default_sample_type;
	int nr_comments;
	bool bad;
};

static const char *str_at(struct decoded *d, uint64_t i)
{
	if (i >= (uint64_t)d->nr_strs) {
		d->bad = true;
		return "<bad string index>";
	}
	return d->strs[i];
}

/* Field numbers as in profile.proto; see user/output/pprof.c. */
static void dec_value_type(struct decoded *d, const struct field *fl, const char **out)
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

static void dec_label(struct decoded *d, const struct field *fl, struct dec_sample *s)
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
	if (!strcmp(key, "pid"))
		s->pid = (int64_t)num;
	else if (!strcmp(key, "tid"))
		s->tid = (int64_t)num;
	else if (!strcmp(key, "comm"))
		s->comm = str;
	else if (!strcmp(key, "stop_reason"))
		s->stop_reason = str;
}

static void dec_sample(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_sample *s;
	struct field f;
	int r;

	if (d->nr_samples == MAX_N) {
		d->bad = true;
		return;
	}
	s = &d->samples[d->nr_samples++];
	s->pid = s->tid = -1;
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1)
			s->nr_locs = get_ints(&f, s->locs, s->nr_locs, MAX_N);
		else if (f.num == 2)
			s->nr_vals = get_ints(&f, s->vals, s->nr_vals, 4);
		else if (f.num == 3)
			dec_label(d, &f, s);
	}
	d->bad |= r < 0 || s->nr_locs < 0 || s->nr_vals < 0;
}

static void dec_mapping(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_map *m;
	struct field f;
	int r;

	if (d->nr_maps == MAX_N) {
		d->bad = true;
		return;
	}
	m = &d->maps[d->nr_maps++];
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

static void dec_location(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_loc *l;
	struct field f, g;
	int r;

	if (d->nr_locs == MAX_N) {
		d->bad = true;
		return;
	}
	l = &d->locs[d->nr_locs++];
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num == 1) {
			l->id = f.v;
		} else if (f.num == 2) {
			l->mapping = f.v;
		} else if (f.num == 3) {
			l->addr = f.v;
		} else if (f.num == 4) {
			const uint8_t *lp = f.p, *le = f.p + f.len;

			l->nr_lines++;
			while (next_field(&lp, le, &g) > 0)
				if (g.num == 1)
					l->func = g.v;
		}
	}
	d->bad |= r < 0;
}

static void dec_function(struct decoded *d, const struct field *fl)
{
	const uint8_t *pos = fl->p, *end = fl->p + fl->len;
	struct dec_func *fn;
	struct field f;
	int r;

	if (d->nr_funcs == MAX_N) {
		d->bad = true;
		return;
	}
	fn = &d->funcs[d->nr_funcs++];
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

/* Two passes: the string table may come anywhere, and everything else refers to it. */
static int decode(const uint8_t *buf, size_t len, struct decoded *d)
{
	const uint8_t *pos = buf, *end = buf + len;
	struct field f;
	int r;

	memset(d, 0, sizeof(*d));
	while ((r = next_field(&pos, end, &f)) > 0) {
		if (f.num != 6 || f.wire != 2)
			continue;
		if (d->nr_strs == MAX_N * 2)
			return -1;
		d->strs[d->nr_strs++] = strndup((const char *)f.p, f.len);
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
			d->nr_comments = get_ints(&f, d->comments, d->nr_comments, 4);
			break;
		case 14:
			d->default_sample_type = f.v;
			break;
		}
	}
	return r < 0 || d->bad ? -1 : 0;
}

static void decoded_free(struct decoded *d)
{
	int i;

	for (i = 0; i < d->nr_strs; i++)
		free(d->strs[i]);
}

static const struct dec_loc *loc_by_id(const struct decoded *d, uint64_t id)
{
	int i;

	for (i = 0; i < d->nr_locs; i++)
		if (d->locs[i].id == id)
			return &d->locs[i];
	return NULL;
}

static const struct dec_func *func_by_id(const struct decoded *d, uint64_t id)
{
	int i;

	for (i = 0; i < d->nr_funcs; i++)
		if (d->funcs[i].id == id)
			return &d->funcs[i];
	return NULL;
}

static const struct dec_map *map_by_id(const struct decoded *d, uint64_t id)
{
	int i;

	for (i = 0; i < d->nr_maps; i++)
		if (d->maps[i].id == id)
			return &d->maps[i];
	return NULL;
}

static const char *loc_name(const struct decoded *d, uint64_t id)
{
	const struct dec_loc *l = loc_by_id(d, id);
	const struct dec_func *fn = l ? func_by_id(d, l->func) : NULL;

	return fn ? fn->name : "<dangling>";
}

/* ---- files and processes ---- */

static char tmpdir[] = "/tmp/test_pprof.XXXXXX";

static int write_file(const char *path, const struct profile *p)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -1;
	err = pprof_write(f, p);
	if (fclose(f))
		err = -1;
	return err;
}

static uint8_t *gunzip_file(const char *path, size_t *len)
{
	uint8_t in[4096], *out = NULL, *n;
	size_t cap = 0, got;
	z_stream zs = {0};
	int ret = Z_OK;
	FILE *f;

	*len = 0;
	f = fopen(path, "r");
	if (!f)
		return NULL;
	/* 15 + 16: gzip only, so a zlib-wrapped file would fail here as in pprof */
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		goto fail;
	while (ret != Z_STREAM_END && (got = fread(in, 1, sizeof(in), f)) > 0) {
		zs.next_in = in;
		zs.avail_in = got;
		while (zs.avail_in && ret != Z_STREAM_END) {
			if (*len == cap) {
				cap = cap ? cap * 2 : 65536;
				n = realloc(out, cap);
				if (!n)
					goto fail_z;
				out = n;
			}
			zs.next_out = out + *len;
			zs.avail_out = cap - *len;
			ret = inflate(&zs, Z_NO_FLUSH);
			if (ret != Z_OK && ret != Z_STREAM_END)
				goto fail_z;
			*len = cap - zs.avail_out;
		}
	}
	if (ret != Z_STREAM_END)
		goto fail_z;
	inflateEnd(&zs);
	fclose(f);
	return out ? out : malloc(1);
fail_z:
	inflateEnd(&zs);
fail:
	fclose(f);
	free(out);
	return NULL;
}

static const char *find_go(void)
{
	static const char *const cands[] = {"/usr/bin/go", "/usr/lib/go/bin/go"};
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (!access(cands[i], X_OK))
			return cands[i];
	return NULL;
}

/*
 * Runs `go tool pprof ARGS FILE` offline: HOME, caches and pprof's binary
 * search path all point into our temp dir so nothing outside is read or written.
 * Returns its output (stdout and stderr) or NULL; *status gets the exit code.
 */
static char *run_pprof(const char *go, const char *args, const char *file, int *status)
{
	char cmd[1024], *out = NULL;
	size_t len = 0, got;
	char buf[4096];
	FILE *p, *m;
	int st;

	*status = -1;
	snprintf(cmd, sizeof(cmd),
		 "HOME=%1$s GOCACHE=%1$s/gocache GOPATH=%1$s/gopath GOTOOLCHAIN=local "
		 "GOFLAGS= GOPROXY=off PPROF_TMPDIR=%1$s PPROF_BINARY_PATH=%1$s "
		 "%2$s tool pprof %3$s %4$s 2>&1",
		 tmpdir, go, args, file);
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

struct top_row {
	char flat[32], flat_pct[32], cum[32], cum_pct[32], name[128];
};

/* The rows of -top after its "flat  flat%" header line. */
static int parse_top(const char *out, struct top_row *rows, int max)
{
	const char *line = strstr(out, "flat%");
	int nr = 0;

	if (!line)
		return 0;
	for (line = strchr(line, '\n'); line && nr < max; line = strchr(line, '\n')) {
		char sum[32];

		line++;
		if (sscanf(line, "%31s %31s %31s %31s %31s %127[^\n]", rows[nr].flat,
			   rows[nr].flat_pct, sum, rows[nr].cum, rows[nr].cum_pct,
			   rows[nr].name) == 6)
			nr++;
	}
	return nr;
}

static bool has_row(const char *out, const char *flat, const char *name)
{
	struct top_row rows[8];
	int nr = parse_top(out, rows, 8), i;

	for (i = 0; i < nr; i++)
		if (!strcmp(rows[i].flat, flat) && !strcmp(rows[i].name, name))
			return true;
	return false;
}

/* ---- checks ---- */

static void check_decoded(const char *path)
{
	static const struct {
		const char *name;
		uint64_t flat;
	} want[] = {
	    {"leaf", 70},
	    {"b", 12},
	    {"a", 8},
	    {"do_syscall_64", 5},
	    {"worker_thread", 3},
	    {"[overflow: stack table full]", 2},
	    {"main", 0},
	    {"__libc_start_call_main", 0},
	    {"[incomplete: no-rule]", 0},
	};
	const struct dec_map *kmap = NULL;
	uint64_t count = 0, cpu = 0;
	struct decoded *d;
	uint8_t *buf;
	size_t len, i;
	int j, k;

	d = calloc(1, sizeof(*d));
	buf = gunzip_file(path, &len);
	CHECK(buf != NULL, "gunzip %s", path);
	if (!buf || !d)
		goto out;
	CHECK(decode(buf, len, d) == 0, "protobuf decode of %zu bytes", len);

	/* string table: "" first, no duplicates */
	CHECK(d->nr_strs > 0 && !strcmp(d->strs[0], ""), "string_table[0] is \"\"");
	for (j = 0; j < d->nr_strs; j++)
		for (k = j + 1; k < d->nr_strs; k++)
			CHECK(strcmp(d->strs[j], d->strs[k]), "string %d \"%s\" repeated at %d", j,
			      d->strs[j], k);

	CHECK(d->nr_sample_types == 2, "%d sample types", d->nr_sample_types);
	CHECK(!strcmp(d->sample_type[0][0], "samples") && !strcmp(d->sample_type[0][1], "count"),
	      "sample_type[0] %s/%s", d->sample_type[0][0], d->sample_type[0][1]);
	CHECK(!strcmp(d->sample_type[1][0], "cpu") && !strcmp(d->sample_type[1][1], "nanoseconds"),
	      "sample_type[1] %s/%s", d->sample_type[1][0], d->sample_type[1][1]);
	CHECK(d->period_type[0] && !strcmp(d->period_type[0], "cpu") &&
		  !strcmp(d->period_type[1], "nanoseconds"),
	      "period_type");
	CHECK(d->period == PERIOD_NS, "period %lu", (unsigned long)d->period);
	CHECK(d->time_nanos == START_NS, "time_nanos %lu", (unsigned long)d->time_nanos);
	CHECK(d->duration_nanos == 3000000000ULL, "duration %lu", (unsigned long)d->duration_nanos);
	CHECK(d->nr_comments >= 1 && !strcmp(str_at(d, d->comments[0]), "cfiprof"), "comment");
	CHECK(!strcmp(str_at(d, d->default_sample_type), "cpu"), "default_sample_type");

	/* samples: one per prof_sample, in order, values [count, count * period] */
	CHECK(d->nr_samples == (int)(sizeof(samples) / sizeof(samples[0])), "%d samples",
	      d->nr_samples);
	for (j = 0; j < d->nr_samples && j < (int)(sizeof(samples) / sizeof(samples[0])); j++) {
		const struct dec_sample *s = &d->samples[j];
		const struct prof_sample *ps = &samples[j];

		CHECK(s->nr_vals == 2 && s->vals[0] == ps->count &&
			  s->vals[1] == ps->count * PERIOD_NS,
		      "sample %d values", j);
		CHECK(s->nr_locs == (int)ps->nr_locs, "sample %d: %d locations", j, s->nr_locs);
		for (k = 0; k < s->nr_locs && k < (int)ps->nr_locs; k++)
			CHECK(s->locs[k] == ps->locs[k] + 1 &&
				  !strcmp(loc_name(d, s->locs[k]), locs[ps->locs[k]].function),
			      "sample %d frame %d: id %lu %s", j, k, (unsigned long)s->locs[k],
			      loc_name(d, s->locs[k]));
		count += s->vals[0];
		cpu += s->vals[1];
	}
	CHECK(count == 100 && cpu == 100 * PERIOD_NS, "totals %lu / %lu", (unsigned long)count,
	      (unsigned long)cpu);

	/* labels */
	CHECK(d->samples[0].pid == 100 && d->samples[0].tid == 101, "sample 0 pid/tid");
	CHECK(d->samples[1].tid == 102, "sample 1 tid %ld", (long)d->samples[1].tid);
	CHECK(d->samples[0].comm && !strcmp(d->samples[0].comm, "app"), "sample 0 comm");
	CHECK(!d->samples[0].stop_reason, "complete stack has no stop_reason");
	CHECK(d->samples[5].pid == 42 && d->samples[5].comm &&
		  !strcmp(d->samples[5].comm, "kworker/0:1") && !d->samples[5].stop_reason,
	      "kernel thread: pid, comm, no stop_reason");
	CHECK(d->samples[6].tid == 103 && d->samples[6].comm &&
		  !strcmp(d->samples[6].comm, "app-worker") && d->samples[6].stop_reason &&
		  !strcmp(d->samples[6].stop_reason, "no-rule"),
	      "incomplete: tid, comm, stop_reason=%s",
	      d->samples[6].stop_reason ? d->samples[6].stop_reason : "(none)");
	CHECK(d->samples[7].comm && !strcmp(d->samples[7].comm, "[overflow]"), "overflow comm");

	/* flat per function: the first (leaf) location of each sample */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t flat = 0;

		for (j = 0; j < d->nr_samples; j++)
			if (d->samples[j].nr_locs &&
			    !strcmp(loc_name(d, d->samples[j].locs[0]), want[i].name))
				flat += d->samples[j].vals[0];
		CHECK(flat == want[i].flat, "flat %s: %lu, want %lu", want[i].name,
		      (unsigned long)flat, (unsigned long)want[i].flat);
	}

	/* functions: one per name (each name here is in one object), system_name = name */
	CHECK(d->nr_funcs == NR_LOCS, "%d functions", d->nr_funcs);
	for (j = 0; j < d->nr_funcs; j++) {
		CHECK(d->funcs[j].id && !strcmp(d->funcs[j].name, d->funcs[j].system_name),
		      "function %d", j);
		for (k = j + 1; k < d->nr_funcs; k++)
			CHECK(d->funcs[j].id != d->funcs[k].id, "function id %lu twice",
			      (unsigned long)d->funcs[j].id);
	}

	/* mappings: the two given, then a made-up kernel one */
	CHECK(d->nr_maps == 3, "%d mappings", d->nr_maps);
	if (d->nr_maps >= 2) {
		CHECK(d->maps[0].id == 1 && d->maps[0].start == 0x400000 &&
			  d->maps[0].limit == 0x402000 &&
			  !strcmp(d->maps[0].filename, "/usr/bin/app") &&
			  !strcmp(d->maps[0].build_id, "0123456789abcdef") &&
			  d->maps[0].has_functions,
		      "mapping 1");
		CHECK(d->maps[1].id == 2 && d->maps[1].offset == 0x28000 &&
			  d->maps[1].has_functions,
		      "mapping 2");
	}
	for (j = 0; j < d->nr_maps; j++)
		if (!strcmp(d->maps[j].filename, "[kernel.kallsyms]"))
			kmap = &d->maps[j];
	CHECK(kmap && kmap->id == 3 && kmap->start == 0xffffffff810c0200 &&
		  kmap->limit == 0xffffffff81e00101,
	      "kernel mapping spans the kernel locations");

	/* locations: id = index + 1, address, mapping, one line */
	CHECK(d->nr_locs == NR_LOCS, "%d locations", d->nr_locs);
	for (j = 0; j < d->nr_locs && j < NR_LOCS; j++) {
		const struct dec_loc *l = &d->locs[j];
		const struct dec_func *fn = func_by_id(d, l->func);
		const struct dec_map *m = map_by_id(d, l->mapping);
		uint64_t want_map = locs[j].mapping;

		if (locs[j].kind == PROF_LOC_KERNEL)
			want_map = 3;
		CHECK(l->id == (uint64_t)j + 1 && l->addr == locs[j].addr && l->nr_lines == 1,
		      "location %d", j);
		CHECK(l->mapping == want_map && (!want_map || m), "location %d mapping %lu", j,
		      (unsigned long)l->mapping);
		CHECK(fn && !strcmp(fn->name, locs[j].function) &&
			  !strcmp(fn->filename, m ? m->filename : ""),
		      "location %d function %s file %s", j, fn ? fn->name : "?",
		      fn ? fn->filename : "?");
	}
out:
	if (d)
		decoded_free(d);
	free(d);
	free(buf);
}

/* Consecutive lines equal to want[] once their leading blanks are dropped. */
static bool has_lines(const char *out, const char *const *want, int n)
{
	const char *line, *p;
	int i;

	for (line = out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		for (i = 0, p = line; i < n; i++) {
			size_t len = strlen(want[i]);

			while (*p == ' ')
				p++;
			if (strncmp(p, want[i], len) || p[len] != '\n')
				break;
			p += len + 1;
		}
		if (i == n)
			return true;
	}
	return false;
}

static void check_go_top(const char *go, const char *file)
{
	static const struct {
		const char *name, *flat, *flat_pct, *count, *cum;
	} want[] = {
	    {"leaf", "700ms", "70.00%", "70", "750ms"},
	    {"b", "120ms", "12.00%", "12", "840ms"},
	    {"a", "80ms", "8.00%", "8", "920ms"},
	    {"do_syscall_64", "50ms", "5.00%", "5", "50ms"},
	    {"worker_thread", "30ms", "3.00%", "3", "30ms"},
	    {"[overflow: stack table full]", "20ms", "2.00%", "2", "20ms"},
	};
	struct top_row rows[32];
	int status, nr, i;
	char *out;

	out = run_pprof(go, "-top -nodecount=20", file, &status);
	CHECK(out && status == 0, "go tool pprof -top exited %d:\n%s", status, out ? out : "");
	if (!out)
		return;
	printf("--- go tool pprof -top -nodecount=20\n%s", out);
	CHECK(strstr(out, "Type: cpu") != NULL, "-top type");
	CHECK(strstr(out, "Showing nodes accounting for 1000ms, 100% of 1000ms total") != NULL,
	      "-top total");
	nr = parse_top(out, rows, 32);
	CHECK(nr == NR_LOCS, "-top shows %d rows", nr);
	for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])) && i < nr; i++)
		CHECK(!strcmp(rows[i].name, want[i].name) && !strcmp(rows[i].flat, want[i].flat) &&
			  !strcmp(rows[i].flat_pct, want[i].flat_pct) &&
			  !strcmp(rows[i].cum, want[i].cum),
		      "-top row %d: %s %s %s cum %s, want %s %s %s cum %s", i, rows[i].name,
		      rows[i].flat, rows[i].flat_pct, rows[i].cum, want[i].name, want[i].flat,
		      want[i].flat_pct, want[i].cum);
	free(out);

	out = run_pprof(go, "-top -nodecount=20 -sample_index=samples", file, &status);
	CHECK(out && status == 0, "go tool pprof -top -sample_index=samples exited %d:\n%s", status,
	      out ? out : "");
	if (!out)
		return;
	nr = parse_top(out, rows, 32);
	CHECK(strstr(out, "Showing nodes accounting for 100, 100% of 100 total") != NULL,
	      "-sample_index=samples total:\n%s", out);
	for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])) && i < nr; i++)
		CHECK(!strcmp(rows[i].name, want[i].name) && !strcmp(rows[i].flat, want[i].count) &&
			  !strcmp(rows[i].flat_pct, want[i].flat_pct),
		      "-sample_index=samples row %d: %s %s, want %s %s", i, rows[i].name,
		      rows[i].flat, want[i].name, want[i].count);
	free(out);

	/* the labels work as pprof filters */
	out = run_pprof(go, "-top -tagfocus=stop_reason=no-rule -sample_index=samples", file,
			&status);
	CHECK(out && status == 0 &&
		  strstr(out, "Showing nodes accounting for 3, 3.00% of 100 total"),
	      "-tagfocus=stop_reason=no-rule:\n%s", out ? out : "");
	free(out);
	out = run_pprof(go, "-top -tagfocus=tid=102 -sample_index=samples", file, &status);
	CHECK(out && status == 0 &&
		  strstr(out, "Showing nodes accounting for 15, 15.00% of 100 total"),
	      "-tagfocus=tid=102:\n%s", out ? out : "");
	free(out);
}

/* After the line ending in "VALUE   LEAF", the rest of the chain, root last. */
static bool has_trace(const char *out, const char *value, const char *const *chain, int n)
{
	char head[128];
	const char *p;
	int i;

	snprintf(head, sizeof(head), "%s   %s\n", value, chain[0]);
	p = strstr(out, head);
	if (!p)
		return false;
	p += strlen(head);
	for (i = 1; i < n; i++) {
		size_t len = strlen(chain[i]);

		while (*p == ' ')
			p++;
		if (strncmp(p, chain[i], len) || p[len] != '\n')
			return false;
		p += len + 1;
	}
	return true;
}

static void check_go_traces(const char *go, const char *file)
{
	static const char *const full_chain[] = {"leaf", "b", "a", "main",
						 "__libc_start_call_main"};
	static const char *const kernel_chain[] = {
	    "do_syscall_64", "leaf", "b", "a", "main", "__libc_start_call_main"};
	static const char *const incomplete_chain[] = {"leaf", "[incomplete: no-rule]"};
	static const char *const incomplete_labels[] = {
	    "comm:  app-worker", "stop_reason:  no-rule", "pid:  100", "tid:  103", "30ms   leaf"};
	int status;
	char *out;

	out = run_pprof(go, "-traces", file, &status);
	CHECK(out && status == 0, "go tool pprof -traces exited %d:\n%s", status, out ? out : "");
	if (!out)
		return;
	printf("--- go tool pprof -traces\n%s", out);
	CHECK(has_trace(out, "520ms", full_chain, 5), "-traces: leaf-first chain of 520ms");
	CHECK(has_trace(out, "50ms", kernel_chain, 6), "-traces: kernel frame above user stack");
	CHECK(has_trace(out, "30ms", incomplete_chain, 2), "-traces: incomplete chain");
	/* the labels of the incomplete sample, in pprof's (sorted) order, before its chain */
	CHECK(has_lines(out, incomplete_labels, 5), "-traces: labels of the incomplete sample");
	CHECK(!strstr(out, "stop_reason:  kernel-thread"), "-traces: kernel thread is complete");
	free(out);
}

static void check_empty(const char *go, const char *file)
{
	struct profile p;
	struct decoded *d = calloc(1, sizeof(*d));
	uint8_t *buf;
	size_t len;
	char *out;
	int status;

	memset(&p, 0, sizeof(p));
	p.period_ns = PERIOD_NS;
	p.event = "cpu-clock";
	CHECK(write_file(file, &p) == 0, "write empty profile");
	buf = gunzip_file(file, &len);
	CHECK(buf && d && decode(buf, len, d) == 0 && d->nr_samples == 0 &&
		  d->nr_sample_types == 2 && d->nr_maps == 0 && d->nr_locs == 0,
	      "empty profile decodes");
	if (d)
		decoded_free(d);
	free(d);
	free(buf);
	if (!go)
		return;
	out = run_pprof(go, "-top", file, &status);
	CHECK(out && status == 0 && strstr(out, "Type: cpu"), "go tool pprof on empty: %d\n%s",
	      status, out ? out : "");
	if (out)
		printf("--- go tool pprof -top (empty profile)\n%s", out);
	free(out);
}

/*
 * Enough distinct names to grow the string table several times and enough
 * bytes to go through deflate in many pieces: pprof must still read it whole.
 */
#define BIG_N 3000

static void check_large(const char *go, const char *file)
{
	struct prof_location *bl = calloc(BIG_N, sizeof(*bl));
	struct prof_sample *bs = calloc(BIG_N, sizeof(*bs));
	uint32_t *stacks = calloc(BIG_N * 2, sizeof(*stacks));
	char(*names)[32] = calloc(BIG_N, sizeof(*names));
	struct prof_mapping m = {0x400000, 0x400000 + BIG_N * 16, 0, "/usr/bin/big", "", 7};
	uint64_t nr_samples = 0, nr_strs = 0;
	const uint8_t *pos, *end;
	struct field f;
	struct profile p;
	uint8_t *buf = NULL;
	size_t len = 0;
	int i, status;
	char *out;

	CHECK(bl && bs && stacks && names, "allocations");
	if (!bl || !bs || !stacks || !names)
		goto out;
	for (i = 0; i < BIG_N; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%d", i);
		bl[i] =
		    (struct prof_location){0x400000 + i * 16, i * 16, 1, PROF_LOC_USER, names[i]};
		stacks[2 * i] = i;
		stacks[2 * i + 1] = (i + 1) % BIG_N;
		bs[i] = (struct prof_sample){.count = i + 1,
					     .pid = 7,
					     .tid = 1000 + i,
					     .comm = "big",
					     .reason = STOP_COMPLETE,
					     .nr_locs = 2,
					     .locs = &stacks[2 * i]};
	}
	memset(&p, 0, sizeof(p));
	p.samples = bs;
	p.nr_samples = BIG_N;
	p.locs = bl;
	p.nr_locs = BIG_N;
	p.maps = &m;
	p.nr_maps = 1;
	p.period_ns = PERIOD_NS;
	CHECK(write_file(file, &p) == 0, "write large profile");
	buf = gunzip_file(file, &len);
	CHECK(buf != NULL && len > 3 * FLUSH_BYTES, "large profile: %zu bytes", len);
	if (!buf)
		goto out;
	for (pos = buf, end = buf + len; next_field(&pos, end, &f) > 0;) {
		nr_samples += f.num == 2;
		nr_strs += f.num == 6;
	}
	CHECK(pos == end, "large profile parses to the end");
	/* the BIG_N names and a few fixed strings (tids are numbers) */
	CHECK(nr_samples == BIG_N && nr_strs > BIG_N && nr_strs < BIG_N + 20,
	      "large profile: %lu samples, %lu strings", (unsigned long)nr_samples,
	      (unsigned long)nr_strs);
	if (!go)
		goto out;
	out =
	    run_pprof(go, "-top -nodecount=2 -nodefraction=0 -sample_index=samples", file, &status);
	CHECK(out && status == 0 && strstr(out, "of 4501500 total") &&
		  strstr(out, "Showing top 2 nodes out of 3000") &&
		  has_row(out, "3000", "fn2999") && has_row(out, "2999", "fn2998"),
	      "go tool pprof on the large profile:\n%s", out ? out : "");
	free(out);
out:
	free(buf);
	free(bl);
	free(bs);
	free(stacks);
	free(names);
}

/* A sample naming a location that does not exist is refused, not written. */
static void check_dangling(const char *file)
{
	static uint32_t dangling[] = {NR_LOCS};
	struct prof_sample bad_sample = {
	    .count = 1, .pid = 1, .tid = 1, .comm = "x", .reason = STOP_COMPLETE, .nr_locs = 1,
	    .locs = dangling};
	struct profile p;

	fill_profile(&p);
	p.samples = &bad_sample;
	p.nr_samples = 1;
	errno = 0;
	CHECK(write_file(file, &p) == -1 && errno == EINVAL, "dangling location index refused");
}

int main(int argc, char **argv)
{
	char file[sizeof(tmpdir) + 32], cmd[sizeof(tmpdir) + 16];
	const char *go = find_go();
	struct profile p;

	harness_init(argc, argv);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/cpu.pb.gz", tmpdir);

	/* the file the decoder and go tool pprof read */
	fill_profile(&p);
	CHECK(write_file(file, &p) == 0, "pprof_write");
	RUN_TEST_AS("decoded", check_decoded(file));

	/* go tool pprof is the reader that matters: its absence is a failure, not a skip */
	CHECK(go != NULL, "no go at /usr/bin/go or /usr/lib/go/bin/go (Debian golang-go)");
	if (go) {
		RUN_TEST_AS("go_top", check_go_top(go, file));
		RUN_TEST_AS("go_traces", check_go_traces(go, file));
	}

	/* these write files of their own over it */
	RUN_TEST_AS("empty", check_empty(go, file));
	RUN_TEST_AS("large", check_large(go, file));
	RUN_TEST_AS("dangling", check_dangling(file));

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return HARNESS_DONE();
}
