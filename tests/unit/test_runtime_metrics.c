// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each listed runtime says in /metrics, from the counters BPF keeps
 * (no kernel: the counters are made up, each value distinct): for every
 * runtime of CFI_RUNTIMES with interpreter frames, cfiprof_NAME_samples_total
 * by status carries its status counters and cfiprof_NAME_processes_total
 * is there; those on runtime_parts' frames description (PHP, Perl, Ruby)
 * also give cfiprof_NAME_frames_total its frames counter.  Before any
 * process was seen, the summary says nothing of them.  And --runtimes's
 * list: parsed by the table's names, a runtime left out not started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "user/profile/frame_names.h"
#include "user/session/runtimes.h"

static uint64_t counters[CNT_MAX];

static void test_metrics(void)
{
	struct session_runtimes sr;
	char *text = NULL, name[128];
	size_t len = 0;
	FILE *f;
	int checked = 0;

	for (int i = 0; i < CNT_MAX; i++)
		counters[i] = 0;
#define FILL(id, value, rname, tag, frames, type)                                                  \
	for (int s = 1; s < RT_STATUS_SLOTS; s++)                                                  \
		counters[CNT_RT_STATUS(id, s)] = 100u * value + (unsigned)s;                       \
	counters[CNT_RT_UNITS(id)] = 1000u * value + 7;
	CFI_RUNTIMES(FILL)
#undef FILL
	CHECK(session_runtimes_start(&sr, -1, 0) == 0, "the runtimes start without a map");
	f = open_memstream(&text, &len);
	session_runtimes_metrics(&sr, counters, f);
	fclose(f);
#define CHECK_RT(id, value, rname, tag, frames, type)                                              \
	if (frames) {                                                                              \
		snprintf(name, sizeof(name), "cfiprof_%s_samples_total{status=\"ok\"}", #rname);   \
		CHECK(metric_value(text, name) == 100.0 * value + 1, "%s: %g", name,               \
		      metric_value(text, name));                                                   \
		snprintf(name, sizeof(name), "cfiprof_%s_samples_total{status=\"unreadable\"}",    \
			 #rname);                                                                  \
		CHECK(metric_value(text, name) == 100.0 * value + 4, "%s: %g", name,               \
		      metric_value(text, name));                                                   \
		snprintf(name, sizeof(name), "cfiprof_%s_processes_total{version=\"supported\"}",  \
			 #rname);                                                                  \
		CHECK(metric_value(text, name) == 0, "%s: %g", name, metric_value(text, name));    \
		snprintf(name, sizeof(name), "cfiprof_%s_frames_total", #rname);                   \
		if (id != RT_PYTHON)                                                               \
			CHECK(metric_value(text, name) == 1000.0 * value + 7, "%s: %g", name,      \
			      metric_value(text, name));                                           \
		checked++;                                                                         \
	}
	CFI_RUNTIMES(CHECK_RT)
#undef CHECK_RT
	CHECK(checked >= 4, "%d runtimes with frames checked", checked);
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	session_runtimes_summary(&sr, counters, f);
	fclose(f);
	CHECK(text && !strstr(text, " process, "), "a summary of no process: %s", text ? text : "");
	free(text);
	session_runtimes_free(&sr);
}

static void test_runtimes_list(void)
{
	struct session_runtimes sr;
	struct frame_namer fn = {0};
	uint32_t off = 12345, named = 0;
	char err[256] = "";

	CHECK(session_runtimes_parse("all", &off, err, sizeof(err)) == 0 && off == 0, "all: %#x",
	      off);
	CHECK(session_runtimes_parse("none", &off, err, sizeof(err)) == 0 && off == ~0u,
	      "none: %#x", off);
	CHECK(session_runtimes_parse("python,hotspot", &off, err, sizeof(err)) == 0 &&
		  off == ~((1u << RT_PYTHON) | (1u << RT_HOTSPOT)),
	      "python,hotspot: %#x", off);
	off = 7;
	CHECK(session_runtimes_parse("python,java", &off, err, sizeof(err)) == -1 && off == 7 &&
		  strstr(err, "'java'") && strstr(err, session_runtime_names),
	      "python,java: %s", err);
	CHECK(session_runtimes_parse("", &off, err, sizeof(err)) == -1 &&
		  session_runtimes_parse("py", &off, err, sizeof(err)) == -1 &&
		  session_runtimes_parse("pythonx", &off, err, sizeof(err)) == -1,
	      "an empty list, a prefix or a longer name is taken");
	/* every runtime of the table by its name, each its own bit */
#define ONE(id, value, name, tag, frames, type)                                                    \
	CHECK(session_runtimes_parse(#name, &off, err, sizeof(err)) == 0 && off == ~(1u << id) &&  \
		  strstr(session_runtime_names, #name),                                            \
	      "%s: %#x", #name, off);                                                              \
	named++;
	CFI_RUNTIMES(ONE)
#undef ONE
	CHECK(named == RT_MAX - 1, "%u runtimes listed of %d", named, RT_MAX - 1);
	CHECK(session_runtimes_parse("ruby", &off, err, sizeof(err)) == 0 &&
		  session_runtimes_start(&sr, -1, off) == 0,
	      "ruby alone starts");
	session_runtimes_namers(&sr, &fn, NULL);
	CHECK(sr.by_id[RT_RUBY].ops && !sr.by_id[RT_PYTHON].ops && !sr.by_id[RT_HOTSPOT].ops &&
		  sr.nr_hooks == 1 && fn.interp[RT_RUBY] && !fn.interp[RT_PYTHON],
	      "ruby alone: ruby %p python %p, %u hooks", (void *)sr.by_id[RT_RUBY].ops,
	      (void *)sr.by_id[RT_PYTHON].ops, sr.nr_hooks);
	session_runtimes_free(&sr);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_metrics);
	RUN_TEST(test_runtimes_list);
	return HARNESS_DONE();
}
