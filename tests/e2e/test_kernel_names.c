// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel frames named as the kernel names them.  cfiprof asks the kernel's
 * own symbol lookup for the addresses its samples hold (bpf/ksym_names.bpf.h)
 * instead of reading all of /proc/kallsyms at every start.  The oracle is
 * /proc/kallsyms itself, read here: `record --format perf-script` of
 * progs/events_wait opening /dev/null over and over (most of its samples in
 * the kernel); every kernel frame's address is looked up in kallsyms (the
 * last symbol at or below it, of any type, as the kernel's lookup bounds a
 * symbol by the next) and its name must be that symbol's (any of the names
 * an address has), "name [module]" for a module's; an address kallsyms has
 * no symbol for prints as itself.  BPF programs' frames ("... [bpf]", named
 * from the programs' own BTF, test_faults' subject) are left out: cfiprof's
 * own load after this kallsyms is read.  And /proc/kallsyms is never opened.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"

#define PATHBUF (PATH_MAX + 64)

struct ksym {
	uint64_t addr;
	char *name; /* "name" or "name [module]" */
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* every /proc/kallsyms line with an address, sorted; NULL when addresses are hidden */
static struct ksym *read_kallsyms(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	struct ksym *v = NULL;
	size_t cap = 0;
	char line[1024];

	*n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char name[512], mod[256] = "";
		unsigned long long addr;
		char type;

		if (sscanf(line, "%llx %c %511s %255s", &addr, &type, name, mod) < 3 || !addr)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				break;
		}
		v[*n].addr = addr;
		if (mod[0] == '[')
			strcat(strcat(name, " "), mod);
		v[(*n)++].name = strdup(name);
	}
	if (f)
		fclose(f);
	if (v)
		qsort(v, *n, sizeof(*v), by_addr);
	return v;
}

/* whether name is one of the names of the last address at or below addr; *none: no symbol */
static bool names_match(const struct ksym *v, size_t n, uint64_t addr, const char *name,
			bool *none)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*none = lo == 0;
	for (size_t i = lo; i-- > 0 && v[i].addr == v[lo - 1].addr;)
		if (!strcmp(v[i].name, name))
			return true;
	return false;
}

static void test_names_from_kernel(void)
{
	char bin[PATHBUF], out[PATH_MAX], line[1024], bad[600] = "", *log = NULL;
	char *opts[] = {"--format", "perf-script", NULL};
	char *cmd[] = {bin, "open", "300000", NULL};
	uint64_t frames = 0, named = 0, unknown = 0, wrong = 0, bpf = 0;
	struct ksym *v;
	size_t n = 0;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s/events_wait", progs_dir);
	v = read_kallsyms(&n);
	CHECK(v && n > 1000, "/proc/kallsyms: %zu symbols with addresses (root?)", n);
	if (!v || e2e_record("open.perf", "999", opts, cmd, &log))
		goto out;
	f = fopen(tpath(out, sizeof(out), "open.perf"), "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char name[512];
		bool none;
		int at = 0;
		size_t len;

		/* "\t    ffffffff81234567 name ([kernel.kallsyms])" */
		if (!strstr(line, " ([kernel.kallsyms])\n") ||
		    sscanf(line, " %llx %n", &addr, &at) != 1)
			continue;
		len = (size_t)(strstr(line, " ([kernel.kallsyms])\n") - (line + at));
		snprintf(name, sizeof(name), "%.*s", (int)len, line + at);
		frames++;
		if (len > 6 && !strcmp(name + len - 6, " [bpf]")) {
			bpf++;
			continue;
		}
		if (names_match(v, n, addr, name, &none)) {
			named++;
		} else if (none && strtoull(name, NULL, 16) == addr) {
			unknown++;
		} else {
			wrong++;
			if (!bad[0])
				snprintf(bad, sizeof(bad), "%llx named '%s'", addr, name);
		}
	}
	if (f)
		fclose(f);
	printf("  %" PRIu64 " kernel frames: %" PRIu64 " named as kallsyms names them, %" PRIu64
	       " with no symbol, %" PRIu64 " otherwise, %" PRIu64 " in BPF programs\n",
	       frames, named, unknown, wrong, bpf);
	/* opening /dev/null is mostly the kernel's work: most of ~1,000 samples a CPU-second */
	CHECK(named >= 100, "%" PRIu64 " kernel frames named (want 100 or more)", named);
	CHECK(wrong == 0, "%" PRIu64 " of %" PRIu64 " kernel frames named otherwise, the first %s",
	      wrong, frames, bad);
out:
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
	free(log);
}

/* record does not read /proc/kallsyms (strace's list of what it opens) */
static void test_no_kallsyms_read(void)
{
	char trace[PATH_MAX], out[PATH_MAX], *log, *opened;
	char *argv[] = {"strace", "-f",	     "-qq",	   "-e",	 "trace=open,openat",
			"-o",	  trace,     (char *)cfiprof_bin, "record", "-o",
			out,	  "--",	     "/bin/true",	  NULL};
	int rc;

	tpath(trace, sizeof(trace), "record.strace");
	tpath(out, sizeof(out), "true.folded");
	rc = run(argv, NULL, "-", 60);
	opened = slurp(trace);
	log = opened ? strstr(opened, "/proc/kallsyms") : NULL;
	CHECK(rc == 0 && opened && strstr(opened, "openat"),
	      "strace of record exited %d (make test-deps installs strace)", rc);
	CHECK(!log, "record opened /proc/kallsyms: %.200s", log ? log : "");
	free(opened);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("kernel-names"))
		return HARNESS_DONE();
	RUN_TEST(test_names_from_kernel);
	RUN_TEST(test_no_kallsyms_read);
	e2e_finish();
	return HARNESS_DONE();
}
