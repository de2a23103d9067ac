// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF side's counters are one list, CFI_COUNTERS in bpf/cfiprof_abi.h:
 * the enum and the agent's /metrics come from it.  Checked here: each has a
 * metric name Prometheus takes (a counter's _total) or is rendered by hand in
 * user/agent/metrics.c; one metric's entries sit together and the first one
 * says what it is; each counter is incremented somewhere in bpf/ (a counter
 * nothing counts would always say 0).  Run from the source tree.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cfiprof_abi.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

static const struct {
	const char *name, *metric, *label, *help;
} counters[] = {
#define COUNTER_ENTRY(e, metric, label, help) {#e, metric, label, help},
    CFI_COUNTERS(COUNTER_ENTRY)
#undef COUNTER_ENTRY
};
#define NR_COUNTERS (sizeof(counters) / sizeof(counters[0]))

static bool metric_name_ok(const char *m)
{
	size_t n = strlen(m);

	if (strncmp(m, "cfiprof_", 8) || n < 14 || strcmp(m + n - 6, "_total"))
		return false;
	for (; *m; m++)
		if (!islower((unsigned char)*m) && *m != '_')
			return false;
	return true;
}

static void test_names(void)
{
	CHECK(NR_COUNTERS == CNT_RT_BASE, "%zu entries, the enum has %d before its ranges",
	      NR_COUNTERS, (int)CNT_RT_BASE);
	for (size_t i = 0; i < NR_COUNTERS; i++) {
		const char *m = counters[i].metric;

		CHECK(!*m || metric_name_ok(m), "%s: metric name '%s' (cfiprof_..._total)",
		      counters[i].name, m);
		/* a family is one run of entries: Prometheus wants its samples together */
		for (size_t j = 0; *m && j + 1 < i; j++)
			CHECK(strcmp(counters[j].metric, m) || !strcmp(counters[j + 1].metric, m),
			      "%s: metric %s also before, apart from this entry", counters[i].name,
			      m);
		if (*m && (i == 0 || strcmp(counters[i - 1].metric, m)))
			CHECK(counters[i].help[0], "%s: the first entry of %s has no help",
			      counters[i].name, m);
		/* two entries of one family differ by their label */
		for (size_t j = 0; *m && j < i; j++)
			CHECK(strcmp(counters[j].metric, m) ||
				  strcmp(counters[j].label, counters[i].label),
			      "%s and %s: the same metric and label", counters[j].name,
			      counters[i].name);
	}
}

/* "": rendered by hand (metrics.c reads c[NAME]); every one counted in bpf/ */
static void test_uses(void)
{
	char *metrics = slurp("user/agent/metrics.c");
	char *bpf = NULL;
	size_t bpf_len = 0;
	FILE *p = popen("cat bpf/*.bpf.c bpf/*.bpf.h bpf/walker.h", "r");
	char buf[4096], key[96];
	size_t n;

	CHECK(metrics && p, "run from the source tree");
	if (!metrics || !p) {
		free(metrics);
		if (p)
			pclose(p);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		char *nb = realloc(bpf, bpf_len + n + 1);

		if (!nb)
			break;
		bpf = nb;
		memcpy(bpf + bpf_len, buf, n);
		bpf_len += n;
		bpf[bpf_len] = 0;
	}
	pclose(p);
	for (size_t i = 0; i < NR_COUNTERS; i++) {
		if (!counters[i].metric[0]) {
			snprintf(key, sizeof(key), "c[%s]", counters[i].name);
			CHECK(strstr(metrics, key),
			      "%s has no metric of its own and metrics.c does not "
			      "render it",
			      counters[i].name);
		}
		CHECK(bpf && strstr(bpf, counters[i].name), "%s: nothing in bpf/ counts it",
		      counters[i].name);
	}
	free(bpf);
	free(metrics);
}

/* The users' page of the agent names every metric of the list. */
static void test_documented(void)
{
	char *doc = slurp("docs/agent.md"), quoted[128];

	for (size_t i = 0; i < NR_COUNTERS; i++) {
		if (!counters[i].metric[0])
			continue;
		snprintf(quoted, sizeof(quoted), "`%s", counters[i].metric);
		CHECK(doc && strstr(doc, quoted), "docs/agent.md does not name %s",
		      counters[i].metric);
	}
	free(doc);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_names);
	RUN_TEST(test_uses);
	RUN_TEST(test_documented);
	return HARNESS_DONE();
}
