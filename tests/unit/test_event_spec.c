// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The -e parser: bpftrace's probe names, perf's event names, the errors a user sees. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/session/event_catalog.h"
#include "user/session/event_spec.h"

static int parse(struct event_list *l, const char *arg, char *err)
{
	memset(l, 0, sizeof(*l));
	err[0] = 0;
	return event_list_parse(l, arg, err, 256);
}

static void test_perf_names(void)
{
	struct event_list l;
	char err[256];

	CHECK(!parse(&l, "cpu-clock,page-faults,cs,cycles,cache-misses", err), "%s", err);
	CHECK(l.nr == 5, "%d events", l.nr);
	CHECK(l.ev[0].kind == EVENT_PERF && l.ev[0].perf_type == PERF_TYPE_SOFTWARE &&
		  l.ev[0].perf_config == PERF_COUNT_SW_CPU_CLOCK && l.ev[0].time_weighted &&
		  !l.ev[0].hardware,
	      "cpu-clock");
	CHECK(l.ev[1].perf_config == PERF_COUNT_SW_PAGE_FAULTS && !l.ev[1].time_weighted,
	      "page-faults");
	CHECK(!strcmp(l.ev[2].name, "context-switches") &&
		  l.ev[2].perf_config == PERF_COUNT_SW_CONTEXT_SWITCHES,
	      "cs is context-switches: %s", l.ev[2].name);
	CHECK(l.ev[3].hardware && l.ev[3].perf_type == PERF_TYPE_HARDWARE &&
		  l.ev[3].perf_config == PERF_COUNT_HW_CPU_CYCLES &&
		  event_is_cpu_sampling(&l.ev[3]),
	      "cycles");
	CHECK(l.ev[4].hardware && l.ev[4].perf_config == PERF_COUNT_HW_CACHE_MISSES,
	      "cache-misses");
	CHECK(event_is_cpu_sampling(&l.ev[0]) && !event_is_cpu_sampling(&l.ev[1]), "cpu sampling");
}

static void test_probes(void)
{
	struct event_list l;
	char err[256];

	CHECK(
	    !parse(
		&l,
		"uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc,ur:libc:free,kprobe:do_sys_openat2,"
		"t:sched:sched_switch,usdt:/usr/bin/python3:python:function__entry,kr:vfs_read",
		err),
	    "%s", err);
	CHECK(l.nr == 6, "%d events", l.nr);
	CHECK(l.ev[0].kind == EVENT_UPROBE &&
		  !strcmp(l.ev[0].path, "/lib/x86_64-linux-gnu/libc.so.6") &&
		  !strcmp(l.ev[0].target, "malloc") &&
		  !strcmp(l.ev[0].name, "uprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc"),
	      "uprobe: %s %s %s", l.ev[0].path, l.ev[0].target, l.ev[0].name);
	CHECK(l.ev[1].kind == EVENT_URETPROBE && !strcmp(l.ev[1].path, "libc") &&
		  !strcmp(l.ev[1].target, "free") && !strcmp(l.ev[1].name, "uretprobe:libc:free"),
	      "short uretprobe: %s", l.ev[1].name);
	CHECK(l.ev[2].kind == EVENT_KPROBE && !strcmp(l.ev[2].target, "do_sys_openat2") &&
		  !l.ev[2].path[0],
	      "kprobe");
	CHECK(l.ev[3].kind == EVENT_TRACEPOINT && !strcmp(l.ev[3].target, "sched") &&
		  !strcmp(l.ev[3].target2, "sched_switch") &&
		  !strcmp(l.ev[3].name, "tracepoint:sched:sched_switch"),
	      "tracepoint: %s", l.ev[3].name);
	CHECK(l.ev[4].kind == EVENT_USDT && !strcmp(l.ev[4].path, "/usr/bin/python3") &&
		  !strcmp(l.ev[4].target, "python") && !strcmp(l.ev[4].target2, "function__entry"),
	      "usdt");
	CHECK(l.ev[5].kind == EVENT_KRETPROBE && !strcmp(l.ev[5].target, "vfs_read"), "kretprobe");
	/* a path with a ':' keeps it: fields are split from the right */
	CHECK(!parse(&l, "uprobe:/opt/a:b/prog:main", err) &&
		  !strcmp(l.ev[0].path, "/opt/a:b/prog") && !strcmp(l.ev[0].target, "main"),
	      "path with a colon: %s", err);
	CHECK(!event_list_add_off_cpu(&l) && l.ev[1].kind == EVENT_OFF_CPU &&
		  l.ev[1].time_weighted && event_list_has(&l, EVENT_OFF_CPU) &&
		  !event_list_has(&l, EVENT_KPROBE),
	      "off-cpu appended");
}

static void test_errors(void)
{
	static const struct {
		const char *arg, *says;
	} bad[] = {
	    {"cpu-clok", "unknown event 'cpu-clok'"},
	    {"uprobe:/bin/true", "too few fields"},
	    {"uprobe:/bin/true:", "bad probe"},
	    {"uprobe::main", "bad probe"},
	    {"kprobe:", "bad probe"},
	    {"kprobe:a:b", "bad probe"},
	    {"tracepoint:sched", "too few fields"},
	    {"tracepoint:a:b:c", "bad probe"},
	    {"usdt:/bin/x:prov", "too few fields"},
	    {"fentry:vfs_read", "unknown probe type"},
	    {"cpu-clock,", "empty event"},
	    {",cpu-clock", "empty event"},
	    {"", "no event"},
	};
	struct event_list l;
	char err[256], many[400] = "";
	size_t i;
	int n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse(&l, bad[i].arg, err) == -1 && strstr(err, bad[i].says),
		      "'%s' -> '%s', wanted '%s'", bad[i].arg, err, bad[i].says);
	for (n = 0; n < EVENT_MAX + 1; n++)
		strcat(many, n ? ",cs" : "cs");
	CHECK(parse(&l, many, err) == -1 && strstr(err, "too many"), "17 events: %s", err);
}

static void test_list(void)
{
	char buf[8192] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	event_print_list(f);
	fclose(f);
	CHECK(strstr(buf, "page-faults") && strstr(buf, "cache-misses") &&
		  strstr(buf, "uprobe:PATH:SYMBOL") && strstr(buf, "tracepoint:CATEGORY:NAME") &&
		  strstr(buf, "usdt:PATH:PROVIDER:NAME") && strstr(buf, "--off-cpu"),
	      "list:\n%s", buf);
}

/* What list PATTERN prints, in out (freed by the caller); how many matched. */
static long catalog(const char *pattern, char **out)
{
	char err[256] = "";
	size_t len = 0;
	FILE *f;
	long n;

	*out = NULL;
	f = open_memstream(out, &len);
	n = f ? event_catalog_print(f, pattern, err, sizeof(err)) : -1;
	if (f)
		fclose(f);
	if (n < 0)
		printf("catalog %s: %s\n", pattern, err);
	return n;
}

/* list PATTERN: this machine's events matching a glob, as -e takes them */
static void test_catalog(void)
{
	char *out;
	long n;

	/* the kernel's BTF (every kernel cfiprof runs on has it) names vfs_write */
	n = catalog("kprobe:vfs_write", &out);
	CHECK(n == 1 && out && !strcmp(out, "kprobe:vfs_write\n"), "kprobe:vfs_write: %ld: %s", n,
	      out ? out : "");
	free(out);
	n = catalog("*-faults", &out);
	CHECK(n >= 5 && out && strstr(out, "page-faults\n") && strstr(out, "major-faults\n"),
	      "*-faults: %ld: %s", n, out ? out : "");
	free(out);
	/* tracefs mounted or not, the tracepoint is named so that -e takes it */
	n = catalog("tracepoint:sched:sched_switch", &out);
	CHECK(n == 1 && out &&
		  (!strcmp(out, "tracepoint:sched:sched_switch\n") ||
		   !strcmp(out, "tracepoint:*:sched_switch\n")),
	      "tracepoint:sched:sched_switch: %ld: %s", n, out ? out : "");
	free(out);
	n = catalog("nosuch_event_*", &out);
	CHECK(n == 0, "nosuch_event_*: %ld", n);
	free(out);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_perf_names);
	RUN_TEST(test_probes);
	RUN_TEST(test_errors);
	RUN_TEST(test_list);
	RUN_TEST(test_catalog);
	return HARNESS_DONE();
}
