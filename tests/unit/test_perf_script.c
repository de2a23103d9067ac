// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The `perf script` writer over a hand-built profile, byte for byte against
 * text worked out here from perf's own format: a stack counted twice is two
 * blocks, times spread over the recording in order, kernel frames in
 * [kernel.kallsyms], a frame without a mapping in [unknown], a task without
 * a comm ":PID", a newline in a name a space and whitespace in a dso '_' (the
 * readers split there), and a profile with a dangling location refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"
#include "user/output/perf_script.h"

enum { L_LEAF, L_MAIN, L_SYS, L_ODD, L_INC, NR_LOCS };

static struct prof_mapping maps[] = {
    {.start = 0x400000, .limit = 0x500000, .path = "/opt/my app/bin", .build_id = "", .pid = 7},
};

static struct prof_location locs[NR_LOCS] = {
    [L_LEAF] = {.addr = 0x401000, .mapping = 1, .kind = PROF_LOC_USER, .function = "leaf"},
    [L_MAIN] = {.addr = 0x402000, .mapping = 1, .kind = PROF_LOC_USER, .function = "main"},
    [L_SYS] = {.addr = 0xffffffff81000010, .kind = PROF_LOC_KERNEL, .function = "do_sys"},
    [L_ODD] = {.addr = 0x7f00, .kind = PROF_LOC_USER, .function = "two\nlines"},
    [L_INC] = {.kind = PROF_LOC_SYNTHETIC, .function = "[incomplete: no-rule]"},
};

static uint32_t user_stack[] = {L_LEAF, L_MAIN};
static uint32_t kernel_stack[] = {L_SYS, L_LEAF, L_MAIN};
static uint32_t odd_stack[] = {L_ODD, L_INC};

static struct prof_sample samples[] = {
    {.count = 2, .pid = 7, .tid = 8, .comm = "app", .nr_locs = 2, .locs = user_stack},
    {.count = 1, .pid = 7, .tid = 7, .comm = "app", .nr_locs = 3, .locs = kernel_stack},
    {.count = 1, .pid = 9, .tid = 9, .comm = "", .nr_locs = 2, .locs = odd_stack},
};

static const char want[] =
    /* 4 samples over 2 s from 1000 s: at 0, 0.5, 1 and 1.5 s */
    "app 7/8 1000.000000: 1000000 cpu-clock:\n"
    "\t          401000 leaf (/opt/my_app/bin)\n"
    "\t          402000 main (/opt/my_app/bin)\n"
    "\n"
    "app 7/8 1000.500000: 1000000 cpu-clock:\n"
    "\t          401000 leaf (/opt/my_app/bin)\n"
    "\t          402000 main (/opt/my_app/bin)\n"
    "\n"
    "app 7/7 1001.000000: 1000000 cpu-clock:\n"
    "\tffffffff81000010 do_sys ([kernel.kallsyms])\n"
    "\t          401000 leaf (/opt/my_app/bin)\n"
    "\t          402000 main (/opt/my_app/bin)\n"
    "\n"
    ":9 9/9 1001.500000: 1000000 cpu-clock:\n"
    "\t            7f00 two lines ([unknown])\n"
    "\t               0 [incomplete: no-rule] ([unknown])\n"
    "\n";

static void fill(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->samples = samples;
	p->nr_samples = sizeof(samples) / sizeof(samples[0]);
	p->locs = locs;
	p->nr_locs = NR_LOCS;
	p->maps = maps;
	p->nr_maps = 1;
	p->total = 4;
	p->period_ns = 1000000;
	p->start_unix_ns = 1000000000000ull;
	p->duration_ns = 2000000000ull;
	p->event = "cpu-clock";
}

static void test_blocks(void)
{
	struct profile p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	fill(&p);
	rc = f ? perf_script_write(f, &p) : -1;
	if (f)
		fclose(f);
	CHECK(rc == 0, "perf_script_write: %d", rc);
	CHECK(text && !strcmp(text, want), "perf script text differs; got:\n%s\nwant:\n%s",
	      text ? text : "", want);
	free(text);
}

static void test_dangling(void)
{
	static uint32_t bad[] = {NR_LOCS};
	struct prof_sample s = {.count = 1, .pid = 1, .tid = 1, .comm = "x", .nr_locs = 1,
				.locs = bad};
	struct profile p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	fill(&p);
	p.samples = &s;
	p.nr_samples = 1;
	errno = 0;
	rc = f ? perf_script_write(f, &p) : 0;
	if (f)
		fclose(f);
	CHECK(rc == -1 && errno == EINVAL, "a dangling location index is written (%d)", rc);
	CHECK(len == 0, "%zu bytes written for a refused profile", len);
	free(text);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_blocks);
	RUN_TEST(test_dangling);
	return HARNESS_DONE();
}
