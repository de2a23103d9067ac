// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof writer: a hand-built profile is written, then read back twice: by a
 * minimal protobuf decoder here (exact values, labels, ids) and by
 * `go tool pprof` (the consumer users actually run, so a file that decodes
 * here but not there still fails).  Flat counts are distinct per function so
 * the -top order is unambiguous.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/harness.h"
#include "tests/lib/pprof_read.h"
#include "user/output/pprof.h"
#include "user/profile/profile.h"

#define PERIOD_NS   10000000ULL /* 100 Hz: 70 samples print as 0.70s */
#define START_NS    1700000000123456789ULL
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

/* go tool pprof ARGS FILE, offline with its caches in tmpdir. */
static char *run_pprof(const char *go, const char *args, const char *file, int *status)
{
	return go_pprof(go, tmpdir, args, file, status);
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
		bl[i] = (struct prof_location){.addr = 0x400000 + i * 16,
					       .rel_addr = i * 16,
					       .mapping = 1,
					       .kind = PROF_LOC_USER,
					       .function = names[i]};
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

/*
 * The agent's per-service pushes: profile_subset of each of profile_services
 * keeps exactly that service's samples, with their frames, the locations and
 * mappings they use renumbered, and nothing else; the subsets add up.
 */
static void check_by_service(const char *file)
{
	static const char *const want[] = {"app", "kworker", NULL};
	static const size_t want_locs[] = {7, 1, 1}, want_maps[] = {2, 0, 0};
	static const uint64_t want_total[] = {95, 3, 2};
	struct prof_sample svc[sizeof(samples) / sizeof(samples[0])];
	struct profile p, sub;
	const char **services;
	uint64_t sum = 0;
	size_t nr = 0, i, k, j, s;

	fill_profile(&p);
	memcpy(svc, samples, sizeof(svc));
	for (i = 0; i < p.nr_samples; i++)
		svc[i].service = svc[i].pid == 100 ? "app" : svc[i].pid == 42 ? "kworker" : NULL;
	p.samples = svc;
	services = profile_services(&p, &nr);
	CHECK(services && nr == 3 && !strcmp(services[0], "app") &&
		  !strcmp(services[1], "kworker") && !services[2],
	      "services: %zu, want app, kworker, (none)", nr);
	for (s = 0; services && s < nr && s < 3; s++) {
		CHECK(profile_subset(&p, services[s], &sub) == 0, "profile_subset %s", want[s]);
		CHECK(profile_check(&sub) == 0, "%s: a location index out of range", want[s]);
		CHECK(sub.total == want_total[s] && sub.nr_locs == want_locs[s] &&
			  sub.nr_maps == want_maps[s],
		      "%s: total %" PRIu64 " locations %zu mappings %zu, want %" PRIu64 " %zu %zu",
		      want[s] ? want[s] : "(none)", sub.total, sub.nr_locs, sub.nr_maps,
		      want_total[s], want_locs[s], want_maps[s]);
		CHECK(sub.overflow == (want[s] ? 0 : 2), "overflow %" PRIu64, sub.overflow);
		/* the same frames, in order, for each of the service's samples */
		for (i = 0, k = 0; i < p.nr_samples; i++) {
			const struct prof_sample *o = &svc[i], *n = &sub.samples[k];

			if (o->service != services[s])
				continue;
			CHECK(k < sub.nr_samples && n->count == o->count && n->nr_locs == o->nr_locs,
			      "%s: sample %zu differs", want[s], k);
			for (j = 0; k < sub.nr_samples && j < o->nr_locs && j < n->nr_locs; j++) {
				const struct prof_location *a = &locs[o->locs[j]],
							   *b = &sub.locs[n->locs[j]];

				CHECK(a->addr == b->addr && !strcmp(a->function, b->function) &&
					  (!a->mapping ||
					   !strcmp(maps[a->mapping - 1].path,
						   sub.maps[b->mapping - 1].path)),
				      "%s: sample %zu frame %zu is %s, not %s", want[s], k, j,
				      b->function, a->function);
			}
			k++;
		}
		CHECK(k == sub.nr_samples, "%s: %zu samples, want %zu", want[s], sub.nr_samples, k);
		CHECK(write_file(file, &sub) == 0, "%s: pprof_write of the subset", want[s]);
		sum += sub.total;
		profile_free(&sub);
	}
	CHECK(sum == p.total, "the subsets hold %" PRIu64 " samples of %" PRIu64, sum, p.total);
	free(services);
}

/*
 * The agent's bound on services an interval: past max, the services with the
 * fewest samples become one ("other"); the busiest keep their names, samples
 * without a service keep none, and no sample is lost.
 */
static void check_fold_services(void)
{
	struct prof_sample svc[sizeof(samples) / sizeof(samples[0])];
	struct prof_fold f;
	struct profile p;
	const char **services;
	uint64_t other = 0, app = 0;
	size_t nr = 0, i;

	fill_profile(&p);
	memcpy(svc, samples, sizeof(svc));
	/* app 92 samples, kworker/0:1 3, app-worker 3, [overflow] none */
	for (i = 0; i < p.nr_samples; i++)
		svc[i].service = svc[i].pid ? svc[i].comm : NULL;
	p.samples = svc;
	CHECK(profile_fold_services(&p, 3, "other", &f) == 0 && f.services == 3 && !f.folded,
	      "3 services under a bound of 3: %" PRIu64 " folded", f.folded);
	CHECK(profile_fold_services(&p, 2, "other", &f) == 0 && f.services == 3 && f.folded == 2 &&
		  f.samples == 6,
	      "bound 2: %" PRIu64 " services, %" PRIu64 " folded, %" PRIu64
	      " samples (want 3, 2, 6)",
	      f.services, f.folded, f.samples);
	for (i = 0; i < p.nr_samples; i++) {
		other += svc[i].service && !strcmp(svc[i].service, "other") ? svc[i].count : 0;
		app += svc[i].service && !strcmp(svc[i].service, "app") ? svc[i].count : 0;
	}
	CHECK(app == 92 && other == 6 && !svc[p.nr_samples - 1].service,
	      "app %" PRIu64 " other %" PRIu64 " (want 92, 6; the overflow without a service)", app,
	      other);
	services = profile_services(&p, &nr);
	CHECK(services && nr == 3, "%zu services after the fold (want app, other, none)", nr);
	free(services);
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
	RUN_TEST_AS("by_service", check_by_service(file));
	RUN_TEST_AS("fold_services", check_fold_services());

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return HARNESS_DONE();
}
