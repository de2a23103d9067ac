// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SVG flame graph, text report and speedscope writers over a profile
 * built by hand (no BPF, no symbolization).  The outputs are checked by
 * independent readers where one exists: xmllint for the SVG, Python's json
 * module for speedscope; expected counts are worked out from the sample
 * list, not from the writers.  A missing xmllint or python3 is a failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/output/flamegraph_svg.h"
#include "user/output/format.h"
#include "user/output/output_file.h"
#include "user/output/utf8.h"
#include "user/profile/profile.h"
#include "user/output/speedscope.h"
#include "user/output/text_report.h"

#define RECURSE_DEPTH 299 /* plus main: a 300-frame stack */
#define MAX_SAMPLES   16

enum {
	L_MAIN,
	L_MAIN2, /* main again at another address: must merge with L_MAIN */
	L_COMPUTE,
	L_RECURSE,
	L_LEAF,
	L_OSTREAM,
	L_SYSCALL,
	L_INCOMPLETE,
	L_OVERFLOW,
	L_START_THREAD,
	L_WORKER,
	L_MAIN_B, /* the same program in a second process */
	L_COMPUTE_B,
	L_LEAF_B,
	L_ODD,
	NR_LOCS,
};

#define OSTREAM_NAME "operator<<(std::ostream&, \"x\")"
#define ODD_NAME     "caf\xc3\xa9\x01\xff"	   /* UTF-8, a control char, an invalid byte */
#define ODD_JSON     "caf\xc3\xa9\x01\xef\xbf\xbd" /* what JSON must decode it to */
#define ODD_XML	     "caf\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd"
#define CUT_COMM     "b\xce" /* a comm cut in the middle of a UTF-8 character */
#define CUT_COMM_FIX "b\xef\xbf\xbd"

static struct prof_mapping maps[] = {
    {.start = 0x400000, .limit = 0x500000, .path = "/usr/bin/app", .build_id = "", .pid = 100},
    {.start = 0x7f0000000000,
     .limit = 0x7f0000100000,
     .path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
     .build_id = "",
     .pid = 100},
    {.start = 0xffffffff81000000,
     .limit = 0xffffffff82000000,
     .path = "[kernel.kallsyms]",
     .build_id = ""},
    {.start = 0x400000, .limit = 0x500000, .path = "/usr/bin/worker", .build_id = "", .pid = 200},
    {.start = 0x400000, .limit = 0x500000, .path = "/usr/bin/app", .build_id = "", .pid = 101},
};

static struct prof_location locs[NR_LOCS] = {
    [L_MAIN] = {0x401000, 0x401000, 1, PROF_LOC_USER, "main"},
    [L_MAIN2] = {0x401040, 0x401040, 1, PROF_LOC_USER, "main"},
    [L_COMPUTE] = {0x402000, 0x402000, 1, PROF_LOC_USER, "compute"},
    [L_RECURSE] = {0x403000, 0x403000, 1, PROF_LOC_USER, "recurse"},
    [L_LEAF] = {0x404000, 0x404000, 1, PROF_LOC_USER, "leaf_work"},
    [L_OSTREAM] = {0x7f0000001000, 0x1000, 2, PROF_LOC_USER, OSTREAM_NAME},
    [L_SYSCALL] = {0xffffffff81001000, 0, 3, PROF_LOC_KERNEL, "do_syscall_64"},
    [L_INCOMPLETE] = {0, 0, 0, PROF_LOC_SYNTHETIC, "[incomplete: no-rule]"},
    [L_OVERFLOW] = {0, 0, 0, PROF_LOC_SYNTHETIC, "[overflow: stack table full]"},
    [L_START_THREAD] = {0x401000, 0x401000, 4, PROF_LOC_USER, "start_thread"},
    [L_WORKER] = {0x402000, 0x402000, 4, PROF_LOC_USER, "worker_loop"},
    [L_MAIN_B] = {0x401000, 0x401000, 5, PROF_LOC_USER, "main"},
    [L_COMPUTE_B] = {0x402000, 0x402000, 5, PROF_LOC_USER, "compute"},
    [L_LEAF_B] = {0x404000, 0x404000, 5, PROF_LOC_USER, "leaf_work"},
    [L_ODD] = {0x403000, 0x403000, 4, PROF_LOC_USER, ODD_NAME},
};

struct fixture {
	struct profile p;
	struct prof_sample samples[MAX_SAMPLES];
	uint32_t stacks[MAX_SAMPLES][RECURSE_DEPTH + 1];
};

/* Adds a sample whose locations are given root first, as one reads a stack; stored leaf first. */
static void add(struct fixture *fx, uint64_t count, uint32_t pid, const char *comm, uint32_t reason,
		uint32_t n, const uint32_t *root_first)
{
	struct prof_sample *s = &fx->samples[fx->p.nr_samples];
	uint32_t k;

	for (k = 0; k < n; k++)
		fx->stacks[fx->p.nr_samples][k] = root_first[n - 1 - k];
	*s = (struct prof_sample){.count = count,
				  .pid = pid,
				  .tid = pid + (pid == 200),
				  .comm = comm,
				  .reason = reason,
				  .nr_locs = n,
				  .locs = fx->stacks[fx->p.nr_samples]};
	fx->p.nr_samples++;
	fx->p.total += count;
}

#define ADD(fx, count, pid, comm, reason, ...)                                                     \
	add(fx, count, pid, comm, reason, sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t),    \
	    (uint32_t[]){__VA_ARGS__})

static void fixture_init(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->p.samples = fx->samples;
	fx->p.locs = locs;
	fx->p.nr_locs = NR_LOCS;
	fx->p.maps = maps;
	fx->p.nr_maps = sizeof(maps) / sizeof(maps[0]);
	fx->p.period_ns = 1000000000 / 99;
	fx->p.duration_ns = 3000000000ull;
	fx->p.event = "cpu-clock";
}

/*
 * The main fixture, 137 samples:
 *   app 100:  main;compute;leaf_work 50   main;compute 10   main;recurse x299 20
 *             main;operator<< 7   main;compute;do_syscall_64_[k] 3
 *             [incomplete: no-rule];leaf_work 5
 *   app 101:  main;compute;leaf_work 6
 *   worker 200: start_thread;worker_loop 30
 *   (no comm): [overflow: stack table full] 4
 *   b\xce 300: ODD_NAME 2
 */
static void fixture_main(struct fixture *fx)
{
	uint32_t deep[RECURSE_DEPTH + 1], k;

	fixture_init(fx);
	ADD(fx, 50, 100, "app", STOP_COMPLETE, L_MAIN, L_COMPUTE, L_LEAF);
	ADD(fx, 10, 100, "app", STOP_COMPLETE, L_MAIN2, L_COMPUTE);
	deep[0] = L_MAIN;
	for (k = 1; k <= RECURSE_DEPTH; k++)
		deep[k] = L_RECURSE;
	add(fx, 20, 100, "app", STOP_TRUNCATED, RECURSE_DEPTH + 1, deep);
	ADD(fx, 7, 100, "app", STOP_COMPLETE, L_MAIN, L_OSTREAM);
	ADD(fx, 3, 100, "app", STOP_COMPLETE, L_MAIN, L_COMPUTE, L_SYSCALL);
	ADD(fx, 30, 200, "worker", STOP_COMPLETE, L_START_THREAD, L_WORKER);
	ADD(fx, 5, 100, "app", STOP_NO_RULE, L_INCOMPLETE, L_LEAF);
	ADD(fx, 4, 0, "", STOP_COMPLETE, L_OVERFLOW);
	ADD(fx, 6, 101, "app", STOP_COMPLETE, L_MAIN_B, L_COMPUTE_B, L_LEAF_B);
	ADD(fx, 2, 300, CUT_COMM, STOP_COMPLETE, L_ODD);
	/* a stack seen zero times must not show up anywhere */
	ADD(fx, 0, 100, "app", STOP_COMPLETE, L_MAIN, L_WORKER);
	fx->p.overflow = 4;
}

/* Every sample passes through main, twice in the recursive one: main is 100%, not 175%. */
static void fixture_recursive(struct fixture *fx)
{
	fixture_init(fx);
	ADD(fx, 3, 100, "app", STOP_COMPLETE, L_MAIN, L_COMPUTE, L_MAIN2, L_COMPUTE, L_LEAF);
	ADD(fx, 1, 100, "app", STOP_COMPLETE, L_MAIN, L_COMPUTE);
}

/* One sample among a million: its frames are far narrower than 0.1 px. */
static void fixture_tiny(struct fixture *fx)
{
	fixture_init(fx);
	ADD(fx, 1000000, 100, "big", STOP_COMPLETE, L_MAIN);
	ADD(fx, 1, 101, "tiny", STOP_COMPLETE, L_MAIN_B, L_LEAF_B);
}

static char tmpdir[] = "/tmp/test_outputs.XXXXXX";

static const char *path(const char *name)
{
	static char buf[8][256];
	static int next;
	char *b = buf[next++ % 8];

	snprintf(b, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return b;
}

enum writer { W_SVG, W_TEXT, W_SPEEDSCOPE };

/* Runs one writer into file and returns its output (malloc'd), or NULL if it failed. */
static char *render(enum writer w, const struct profile *p, const char *file, int max_rows)
{
	FILE *f = fopen(file, "w");
	int err;

	if (!f)
		return NULL;
	if (w == W_SVG)
		err = svg_write(f, p, "Flame <Graph> & \"test\"");
	else if (w == W_TEXT)
		err = text_report_write(f, p, max_rows);
	else
		err = speedscope_write(f, p, "test \"profile\"");
	if (fclose(f) || err)
		return NULL;
	return slurp(file);
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

static char *pct(uint64_t n, uint64_t total)
{
	static char buf[4][32];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%.2f", 100.0 * n / total);
	return b;
}

/* An attribute of the first <rect> after needle (a frame's <title> start), or -1. */
static double rect_attr(const char *svg, const char *needle, const char *attr)
{
	const char *t = strstr(svg, needle), *r, *end;
	char key[32];

	if (!t || !(r = strstr(t, "<rect")) || !(end = strchr(r, '>')))
		return -1;
	snprintf(key, sizeof(key), " %s=\"", attr);
	t = strstr(r, key);
	if (!t || t > end)
		return -1;
	return strtod(t + strlen(key), NULL);
}

static bool has_title(const char *svg, const char *name, uint64_t n, uint64_t total)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "<title>%s (%" PRIu64 " samples, %s%%)</title>", name, n,
		 pct(n, total));
	return strstr(svg, buf) != NULL;
}

static void check_svg(void)
{
	struct fixture fx;
	const uint64_t T = 137;
	double w_app, w_worker, w_all;
	char *svg;

	fixture_main(&fx);
	if (fx.p.total != T)
		CHECK(0, "fixture total %" PRIu64, fx.p.total);
	svg = render(W_SVG, &fx.p, path("main.svg"), 0);
	CHECK(svg, "svg_write failed");
	if (!svg)
		return;
	if (sh_fmt("command -v xmllint >/dev/null"))
		CHECK(0, "xmllint not installed (make deps)");
	CHECK(sh_fmt("xmllint --noout %s", path("main.svg")) == 0, "SVG is not well-formed XML");
	CHECK(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["), "no inline script");
	CHECK(strstr(svg, "function zoom(") && strstr(svg, "function unzoom("), "no zoom");
	CHECK(strstr(svg, "function search(") && strstr(svg, "prompt("), "no search");
	CHECK(strstr(svg, ">Reset Zoom</text>") && strstr(svg, ">Search</text>"), "no controls");
	CHECK(strstr(svg, "ctrlKey"), "Ctrl-F not bound");
	CHECK(strstr(svg, "Flame &lt;Graph&gt; &amp; &quot;test&quot;"), "title not escaped");

	CHECK(has_title(svg, "all", T, T), "all");
	CHECK(has_title(svg, "app", 101, T), "app comm: both pids merge by name");
	CHECK(has_title(svg, "worker", 30, T), "worker comm");
	CHECK(has_title(svg, "[unknown]", 4, T), "empty comm");
	CHECK(has_title(svg, CUT_COMM_FIX, 2, T), "cut UTF-8 comm");
	CHECK(has_title(svg, "main", 96, T), "main: two addresses and two pids merge");
	CHECK(has_title(svg, "compute", 69, T), "compute under main");
	CHECK(has_title(svg, "leaf_work", 56, T), "leaf_work under compute");
	CHECK(has_title(svg, "leaf_work", 5, T), "leaf_work under [incomplete]");
	CHECK(has_title(svg, "operator&lt;&lt;(std::ostream&amp;, &quot;x&quot;)", 7, T),
	      "ostream");
	CHECK(!strstr(svg, "operator<<"), "unescaped name in the SVG");
	CHECK(has_title(svg, "do_syscall_64_[k]", 3, T), "kernel frame");
	CHECK(has_title(svg, "[incomplete: no-rule]", 5, T), "incomplete frame");
	CHECK(has_title(svg, "[overflow: stack table full]", 4, T), "overflow frame");
	CHECK(has_title(svg, "start_thread", 30, T) && has_title(svg, "worker_loop", 30, T),
	      "worker frames");
	CHECK(has_title(svg, ODD_XML, 2, T), "odd name sanitized");
	CHECK(count_str(svg, "<title>recurse (20 samples,") == RECURSE_DEPTH, "recurse frames: %d",
	      count_str(svg, "<title>recurse (20 samples,"));
	CHECK(!strstr(svg, "worker_loop (0") && count_str(svg, "<title>worker_loop") == 1,
	      "zero-count sample drawn");

	/* widths: 1180 px for all samples, root-level frames in proportion */
	w_all = rect_attr(svg, "<title>all (", "width");
	w_app = rect_attr(svg, "<title>app (", "width");
	w_worker = rect_attr(svg, "<title>worker (", "width");
	CHECK(rect_attr(svg, "<title>all (", "x") == 10.0, "all x");
	CHECK(w_all > 1179.99 && w_all < 1180.01, "all width %f", w_all);
	CHECK(w_app > 1180.0 * 101 / T - 0.01 && w_app < 1180.0 * 101 / T + 0.01, "app width %f",
	      w_app);
	CHECK(w_worker > 0 && w_app / w_worker > 101.0 / 30 - 0.001 &&
		      w_app / w_worker<101.0 / 30 + 0.001, "app/worker width ratio %f", w_worker> 0
		  ? w_app / w_worker
		  : -1);
	/* 7 of 137 samples are 60 px: room for 7 characters, so 5 and ".." */
	CHECK(strstr(svg, ">opera..</text>"), "long label not truncated with ..");
	/* 302 rows: all, comm, main and 299 recurse frames */
	CHECK(strstr(svg, "height=\"4918\""), "image height for 302 rows");
	free(svg);

	fixture_tiny(&fx);
	svg = render(W_SVG, &fx.p, path("tiny.svg"), 0);
	CHECK(svg && sh_fmt("xmllint --noout %s", path("tiny.svg")) == 0, "tiny SVG");
	CHECK(svg && !strstr(svg, "<title>tiny ("), "0.001 px frame drawn");
	CHECK(svg && strstr(svg, "3 frames narrower than 0.1 px omitted"),
	      "omitted frames not counted");
	CHECK(svg && has_title(svg, "big", 1000000, 1000001), "big frame");
	free(svg);
}

/* The first row after a table's column header, split into its fields. */
static bool table_row(const char *report, const char *heading, int row, double *self, double *total,
		      uint64_t *n, char *fn, size_t fnlen)
{
	const char *t = strstr(report, heading);
	int i, off = 0;

	if (!t)
		return false;
	for (i = 0; i < row + 2 && t; i++) {
		t = strchr(t, '\n');
		t = t ? t + 1 : NULL;
	}
	if (!t || sscanf(t, "%lf%% %lf%% %" SCNu64 " %n", self, total, n, &off) != 3 || !off)
		return false;
	snprintf(fn, fnlen, "%.*s", (int)strcspn(t + off, "\n"), t + off);
	return true;
}

/* The row of function fn in a table. */
static bool find_row(const char *report, const char *heading, const char *fn, double *self,
		     double *total, uint64_t *n)
{
	char name[256];
	int row;

	for (row = 0; table_row(report, heading, row, self, total, n, name, sizeof(name)); row++)
		if (!strcmp(name, fn))
			return true;
	return false;
}

static int table_rows(const char *report, const char *heading)
{
	double s, t;
	uint64_t n;
	char name[256];
	int row = 0;

	while (table_row(report, heading, row, &s, &t, &n, name, sizeof(name)))
		row++;
	return row;
}

#define SELF_TABLE  "Top functions by self samples:"
#define TOTAL_TABLE "Top functions by total (inclusive) samples:"

static bool near(double a, const char *b)
{
	return a > strtod(b, NULL) - 0.005 && a < strtod(b, NULL) + 0.005;
}

/* The percentages of the first call tree line ending in fn. */
static bool tree_line(const char *tree, const char *fn, double *total, double *self)
{
	char want[256];
	const char *t;

	snprintf(want, sizeof(want), "%s\n", fn);
	t = strstr(tree, want);
	if (!t)
		return false;
	while (t > tree && t[-1] != '\n')
		t--;
	return sscanf(t, "%lf%% %lf%%", total, self) == 2;
}

static void check_text(void)
{
	const uint64_t T = 137;
	struct fixture fx;
	char *r, *tree, fn[256], line[128];
	double self, total;
	uint64_t n;

	fixture_main(&fx);
	r = render(W_TEXT, &fx.p, path("main.txt"), 0);
	CHECK(r, "text_report_write failed");
	if (!r)
		return;
	CHECK(strstr(r, "# Samples: 137\n"), "header samples");
	CHECK(strstr(r, "# Event: cpu-clock"), "header event");
	CHECK(strstr(r, "# Duration: 3.000 s\n"), "header duration");
	/* truncated (20) and no-rule (5) are incomplete */
	snprintf(line, sizeof(line), "# Incomplete stacks: 25 samples (%s%%)\n", pct(25, T));
	CHECK(strstr(r, line), "header incomplete: want %s", line);

	CHECK(table_row(r, SELF_TABLE, 0, &self, &total, &n, fn, sizeof(fn)), "no self table");
	CHECK(!strcmp(fn, "leaf_work [app]") && n == 61 && near(self, pct(61, T)) &&
		  near(total, pct(61, T)),
	      "top self: %s %" PRIu64 " %.2f %.2f", fn, n, self, total);
	CHECK(table_row(r, SELF_TABLE, 1, &self, &total, &n, fn, sizeof(fn)) &&
		  !strcmp(fn, "worker_loop [worker]") && n == 30,
	      "second self: %s", fn);
	CHECK(find_row(r, SELF_TABLE, "do_syscall_64 [[kernel.kallsyms]]", &self, &total, &n) &&
		  n == 3,
	      "kernel function");
	CHECK(find_row(r, SELF_TABLE, OSTREAM_NAME " [libstdc++.so.6]", &self, &total, &n) &&
		  n == 7,
	      "ostream row");
	CHECK(find_row(r, TOTAL_TABLE, "main [app]", &self, &total, &n) && n == 96 &&
		  near(total, pct(96, T)) && near(self, "0"),
	      "main total %" PRIu64 " %.2f", n, total);
	CHECK(find_row(r, TOTAL_TABLE, "recurse [app]", &self, &total, &n) && n == 20 &&
		  near(total, pct(20, T)) && near(self, pct(20, T)),
	      "recurse counted once per sample: %" PRIu64 " %.2f", n, total);
	CHECK(find_row(r, TOTAL_TABLE, "compute [app]", &self, &total, &n) && n == 69 &&
		  near(self, pct(10, T)),
	      "compute");
	CHECK(!find_row(r, TOTAL_TABLE, "worker_loop [app]", &self, &total, &n),
	      "zero-count sample counted");
	CHECK(table_row(r, TOTAL_TABLE, 0, &self, &total, &n, fn, sizeof(fn)) &&
		  !strcmp(fn, "main [app]"),
	      "top total %s", fn);

	tree = strstr(r, "Call tree");
	CHECK(tree, "no call tree");
	if (tree) {
		snprintf(line, sizeof(line), "%7s%% %7s%%  app\n", pct(101, T), "0.00");
		CHECK(strstr(tree, line), "app line: want '%s'", line);
		CHECK(tree_line(tree, "main [app]", &total, &self) && near(total, pct(96, T)) &&
			  near(self, "0"),
		      "main line %.2f %.2f", total, self);
		CHECK(count_str(tree, "recurse [app]\n") == RECURSE_DEPTH, "recurse lines %d",
		      count_str(tree, "recurse [app]\n"));
		/* branches indent, the recursion chain does not */
		CHECK(strstr(tree, "%    |- main [app]\n") &&
			  strstr(tree, "%    |  |- compute [app]\n") &&
			  strstr(tree, "%    `- [incomplete: no-rule]\n") &&
			  strstr(tree, "%       leaf_work [app]\n"),
		      "branch drawing");
		CHECK(count_str(tree, "%    |  |  recurse [app]\n") == RECURSE_DEPTH - 1,
		      "recursion chain indentation");
		CHECK(strstr(tree, "caf\xc3\xa9?\xff [worker]\n"), "control characters in a name");
	}
	free(r);

	r = render(W_TEXT, &fx.p, path("rows.txt"), 3);
	CHECK(r && table_rows(r, SELF_TABLE) == 3 && table_rows(r, TOTAL_TABLE) == 3, "max_rows 3");
	free(r);

	fixture_recursive(&fx);
	r = render(W_TEXT, &fx.p, path("recursive.txt"), 0);
	CHECK(r && find_row(r, TOTAL_TABLE, "main [app]", &self, &total, &n) && n == 4 &&
		  near(total, "100.00"),
	      "recursive main: %" PRIu64 " %.2f", n, total);
	CHECK(r && find_row(r, TOTAL_TABLE, "compute [app]", &self, &total, &n) && n == 4 &&
		  near(total, "100.00") && near(self, "25.00"),
	      "recursive compute");
	CHECK(r && table_row(r, SELF_TABLE, 0, &self, &total, &n, fn, sizeof(fn)) &&
		  !strcmp(fn, "leaf_work [app]") && near(self, "75.00"),
	      "recursive top self");
	free(r);

	fixture_tiny(&fx);
	r = render(W_TEXT, &fx.p, path("tiny.txt"), 0);
	tree = r ? strstr(r, "Call tree") : NULL;
	CHECK(tree && strstr(tree, "big\n") && !strstr(tree, "tiny"), "0.5%% pruning");
	free(r);
}

/*
 * Two events of different units (cpu-clock in nanoseconds, page-faults
 * counted and estimated): a section each, in its own unit, nanoseconds never
 * added to faults; the header names both events whole with no sampling rate.
 */
static void check_text_events(void)
{
	struct fixture fx;
	char *r, *cpu, *pf;
	double self, total;
	uint64_t n;

	fixture_init(&fx);
	ADD(&fx, 3, 100, "app", STOP_COMPLETE, L_MAIN, L_COMPUTE, L_LEAF);
	ADD(&fx, 2, 100, "app", STOP_COMPLETE, L_MAIN, L_WORKER);
	fx.samples[0].value = 3000000; /* 3 ms of cpu-clock */
	fx.samples[1].value = 40;      /* 40 faults (estimated) */
	fx.samples[1].event = 1;
	fx.p.events[0] = (struct prof_event){"cpu-clock", "cpu", "nanoseconds", false};
	fx.p.events[1] = (struct prof_event){"page-faults", "page-faults", "count", true};
	fx.p.nr_events = 2;
	fx.p.unit = PROF_UNIT_EVENTS;
	r = render(W_TEXT, &fx.p, path("events.txt"), 0);
	CHECK(r, "text_report_write failed");
	if (!r)
		return;
	cpu = strstr(r, "\n## cpu-clock: 3.00 ms\n");
	pf = strstr(r, "\n## page-faults: ~40 events\n");
	CHECK(strstr(r, "# Events: cpu-clock, page-faults\n") && !strstr(r, " Hz"),
	      "header:\n%.300s", r);
	CHECK(strstr(r, "# Total: 3.00 ms (cpu-clock)\n") &&
		  strstr(r, "# Total: ~40 events (page-faults; estimated"),
	      "a total per event:\n%.500s", r);
	CHECK(cpu && pf && cpu < pf, "a section per event:\n%s", r);
	if (!cpu || !pf || cpu > pf)
		goto out;
	*pf++ = 0; /* the cpu-clock section ends where the page-faults one starts */
	/* each section's tables in its unit: leaf_work 3.00 ms, worker_loop 40 faults, 100% each */
	CHECK(strstr(cpu, " 100.00%  100.00%       3.00  leaf_work [app]\n") &&
		  strstr(cpu, "Time(ms)") && !strstr(cpu, "worker_loop"),
	      "cpu-clock section:\n%s", cpu);
	CHECK(find_row(pf, SELF_TABLE, "worker_loop [worker]", &self, &total, &n) && n == 40 &&
		  near(self, "100.00"),
	      "page-faults section:\n%s", pf);
out:
	free(r);
}

static void hex(char *out, const char *s)
{
	for (; *s; s++, out += 2)
		sprintf(out, "%02x", (unsigned char)*s);
	*out = 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "PROFILE_HEX sample WEIGHT NAME_HEX..." for one fixture sample, as the reader prints it. */
static char *expected_line(const struct prof_sample *s)
{
	char *buf = NULL, h[512], name[128];
	size_t len = 0;
	uint32_t k;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	snprintf(name, sizeof(name), "%s (pid %u)",
		 !s->comm[0]		      ? "[unknown]"
		 : !strcmp(s->comm, CUT_COMM) ? CUT_COMM_FIX
					      : s->comm,
		 s->pid);
	hex(h, name);
	fprintf(f, "%s sample %" PRIu64, h, s->count);
	for (k = s->nr_locs; k-- > 0;) {
		const struct prof_location *l = &locs[s->locs[k]];

		if (s->locs[k] == L_ODD)
			snprintf(name, sizeof(name), "%s", ODD_JSON);
		else
			snprintf(name, sizeof(name), "%s%s", l->function,
				 l->kind == PROF_LOC_KERNEL ? "_[k]" : "");
		hex(h, name);
		fprintf(f, " %s", h);
	}
	fclose(f);
	return buf;
}

static const char reader[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "out = open(sys.argv[2], 'w')\n"
    "assert d['$schema'] == 'https://www.speedscope.app/file-format-schema.json', d['$schema']\n"
    "assert d['exporter'] == 'cfiprof'\n"
    "frames = d['shared']['frames']\n"
    "assert all(isinstance(f['name'], str) for f in frames)\n"
    "print('name', d['name'].encode().hex(), file=out)\n"
    "for p in d['profiles']:\n"
    "    assert p['type'] == 'sampled' and p['unit'] == 'none' and p['startValue'] == 0, p\n"
    "    assert len(p['samples']) == len(p['weights'])\n"
    "    assert p['endValue'] == sum(p['weights'])\n"
    "    print('profile', p['endValue'], file=out)\n"
    "    for s, w in zip(p['samples'], p['weights']):\n"
    "        print(p['name'].encode().hex(), 'sample', w,\n"
    "              *[frames[i]['name'].encode().hex() for i in s], file=out)\n"
    "print('ok', file=out)\n";

/* reader.py, the independent speedscope reader of check_speedscope and check_empty. */
static void write_reader(void)
{
	FILE *f = fopen(path("reader.py"), "w");

	/* setup: a failure counts, a success is no check of cfiprof */
	if (!f || fputs(reader, f) < 0 || fclose(f))
		CHECK(0, "writing reader.py");
	if (sh_fmt("command -v python3 >/dev/null"))
		CHECK(0, "python3 not installed (make deps)");
}

static void check_speedscope(void)
{
	char *json, *out, *lines[64], *want[64], *line, *save = NULL, name[128];
	int nl = 0, nw = 0, profiles = 0, i;
	uint64_t sum = 0, v, first = 0;
	struct fixture fx;


	fixture_main(&fx);
	json = render(W_SPEEDSCOPE, &fx.p, path("main.json"), 0);
	CHECK(json, "speedscope_write failed");
	if (!json)
		return;
	CHECK(strstr(json, "\"name\":\"operator<<(std::ostream&, \\\"x\\\")\""), "quote escaping");
	CHECK(strstr(json, "\\u0001"), "control character escaping");
	CHECK(strstr(json, "\"file\":\"/usr/bin/app\""), "frame file");
	CHECK(sh_fmt("python3 %s %s %s", path("reader.py"), path("main.json"), path("main.out")) == 0,
	      "speedscope JSON does not parse or misses schema fields");
	out = slurp(path("main.out"));
	CHECK(out && strstr(out, "\nok\n"), "reader output");
	if (!out) {
		free(json);
		return;
	}
	hex(name, "test \"profile\"");
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "profile %" SCNu64, &v) == 1) {
			sum += v;
			if (!profiles++)
				first = v;
		} else if (!strncmp(line, "name ", 5)) {
			CHECK(!strcmp(line + 5, name), "file name %s", line + 5);
		} else if (strcmp(line, "ok") && nl < 64) {
			lines[nl++] = line;
		}
	}
	CHECK(sum == 137, "sum of weights %" PRIu64, sum);
	CHECK(profiles == 5, "profiles per (pid, comm): %d", profiles);
	CHECK(first == 95, "busiest profile (app, pid 100) first: %" PRIu64, first);
	for (i = 0; i < (int)fx.p.nr_samples; i++)
		if (fx.samples[i].count)
			want[nw++] = expected_line(&fx.samples[i]);
	qsort(lines, nl, sizeof(*lines), by_str);
	qsort(want, nw, sizeof(*want), by_str);
	CHECK(nl == nw, "samples %d, want %d", nl, nw);
	for (i = 0; i < nl && i < nw; i++)
		CHECK(want[i] && !strcmp(lines[i], want[i]), "sample decodes to\n  %s\nwant\n  %s",
		      lines[i], want[i]);
	for (i = 0; i < nw; i++)
		free(want[i]);
	free(out);
	free(json);
}

static void check_empty(void)
{
	struct profile p = {.event = "cpu-clock"};
	char *out;

	out = render(W_SVG, &p, path("empty.svg"), 0);
	CHECK(out && strstr(out, "No samples"), "empty SVG");
	CHECK(sh_fmt("xmllint --noout %s", path("empty.svg")) == 0, "empty SVG not well-formed");
	free(out);
	out = render(W_TEXT, &p, path("empty.txt"), 10);
	CHECK(out && strstr(out, "# Samples: 0\n") && strstr(out, "Call tree"), "empty report");
	free(out);
	out = render(W_SPEEDSCOPE, &p, path("empty.json"), 0);
	CHECK(out, "empty speedscope");
	CHECK(sh_fmt("python3 %s %s %s", path("reader.py"), path("empty.json"), path("empty.out")) == 0,
	      "empty speedscope JSON");
	free(out);
	out = slurp(path("empty.out"));
	CHECK(out && strstr(out, "profile 0\nok\n"), "empty speedscope profile");
	free(out);
}

/*
 * Issue 12, item 13: a name chosen by a profiled process reaches top's terminal
 * only as printable text; an output path planted as a symlink is not followed.
 */
static void check_terminal_and_links(void)
{
	char out[64], victim[256], link[256];
	FILE *f;

	utf8_printable(out, sizeof(out), "f\033[2J\033]0;owned\007x\x9b" "31mé\x80");
	CHECK(!strchr(out, '\033') && !strchr(out, '\007') && !strstr(out, "\x9b") &&
		  strstr(out, "é") && !strcmp(out, "f?[2J?]0;owned?x?31mé?"),
	      "escape sequences and C1 controls neutralized: '%s'", out);
	utf8_printable(out, 4, "abcdé");
	CHECK(!strcmp(out, "abc"), "cut to the buffer, never inside a character: '%s'", out);
	utf8_printable(out, 5, "abcé");
	CHECK(!strcmp(out, "abcé") || !strcmp(out, "abc"), "a character fits whole or not: '%s'",
	      out);

	snprintf(victim, sizeof(victim), "%s", path("victim"));
	snprintf(link, sizeof(link), "%s", path("planted.svg"));
	f = fopen(victim, "w");
	if (!f || fputs("keep\n", f) < 0 || fclose(f) || symlink(victim, link)) {
		CHECK(0, "setting up %s -> %s", link, victim);
		return;
	}
	f = output_create(link, 0600);
	CHECK(!f && errno == ELOOP, "output_create over a planted symlink: %s",
	      f ? "opened" : strerror(errno));
	if (f)
		fclose(f);
	{
		char *kept = slurp(victim);

		CHECK(kept && !strcmp(kept, "keep\n"), "the link's target is untouched");
		free(kept);
	}
	f = output_create("/dev/null", 0600);
	CHECK(f != NULL, "/dev/ links and devices still work: %s", strerror(errno));
	if (f)
		fclose(f);
}

/* The format list: every name parses back, every extension chooses its format, help lists all. */
static void check_format_list(void)
{
	static const struct {
		const char *path;
		enum out_format fmt;
	} paths[] = {
	    {"a.folded", OUT_FOLDED},	{"a.collapsed", OUT_FOLDED},
	    {"a.pb.gz", OUT_PPROF},	{"a.pprof", OUT_PPROF},
	    {"a.pb", OUT_PPROF},	{"a.svg", OUT_SVG},
	    {"a.txt", OUT_TEXT},	{"a.speedscope.json", OUT_SPEEDSCOPE},
	    {"a.json", OUT_SPEEDSCOPE}, {"a.perf-script", OUT_PERF_SCRIPT},
	    {"a.otlp.pb", OUT_OTLP},	{"a.otlp", OUT_UNKNOWN},
	    {"a.gz", OUT_UNKNOWN},	{"svg", OUT_UNKNOWN},
	    {"a.txt.bak", OUT_UNKNOWN},
	};
	char help[] = OUT_FORMAT_NAMES;
	int n = 0;

	for (int i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++) {
		const char *name = output_format_name((enum out_format)i);

		CHECK(name && (int)output_format_parse(name) == i, "format %d: %s", i,
		      name ? name : "-");
		CHECK(name && strstr(output_format_names(), name) && strstr(help, name),
		      "%s missing from the names: '%s' / '%s'", name ? name : "-",
		      output_format_names(), help);
		n++;
	}
	CHECK(n == 7 && output_format_parse("bogus") == OUT_UNKNOWN &&
		  !output_format_name(OUT_UNKNOWN) && !output_format_name(OUT_FORMAT_MAX),
	      "%d formats", n);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		CHECK(output_format_from_path(paths[i].path) == paths[i].fmt,
		      "%s: format %d, want %d", paths[i].path,
		      output_format_from_path(paths[i].path), paths[i].fmt);
	/* the users' page names every format the list has (run from the tree) */
	{
		char *doc = slurp("docs/outputs.md");

		for (int i = OUT_UNKNOWN + 1; i < OUT_FORMAT_MAX; i++) {
			char quoted[64];

			snprintf(quoted, sizeof(quoted), "`%s`", output_format_name((enum out_format)i));
			CHECK(doc && strstr(doc, quoted), "docs/outputs.md does not name %s", quoted);
		}
		free(doc);
	}
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	write_reader();
	RUN_TEST(check_svg);
	RUN_TEST(check_text);
	RUN_TEST(check_text_events);
	RUN_TEST(check_speedscope);
	RUN_TEST(check_empty);
	RUN_TEST(check_terminal_and_links);
	RUN_TEST(check_format_list);
	/* CFIPROF_KEEP_OUTPUTS=1 keeps the files to look at */
	if (getenv("CFIPROF_KEEP_OUTPUTS"))
		printf("outputs kept in %s\n", tmpdir);
	else
		sh_fmt("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
