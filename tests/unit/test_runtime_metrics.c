// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each listed runtime says in /metrics, from the counters BPF keeps
 * (no kernel: the counters are made up, each value distinct): for every
 * runtime of CFI_RUNTIMES with interpreter frames, cfiprof_NAME_samples_total
 * by status carries its status counters and cfiprof_NAME_processes_total
 * is there; those on runtime_parts' frames description (PHP, Perl, Ruby)
 * also give cfiprof_NAME_frames_total its frames counter.  Before any
 * process was seen, the summary says nothing of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
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
	CHECK(session_runtimes_start(&sr, -1) == 0, "the runtimes start without a map");
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

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_metrics);
	return HARNESS_DONE();
}
