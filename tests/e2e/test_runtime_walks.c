// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampling program's later loads (docs/record.md#start-up): the walk is
 * verified while the command runs, its samples meanwhile walked in user
 * space, complete; the runtimes' walks only once a runtime's process is seen
 * (docs/runtimes.md): loaded again, with them, for a Python command, never
 * for a native one, which so never shares the machine with that
 * verification; with --defer-stack 0 the walk is there before the command
 * starts.  The oracle is the kernel's list of loaded programs (`bpftool prog
 * show`: each program's name, size and the maps it uses) and of the maps
 * record holds (its fdinfo), read while the command runs, and the call chain
 * of tests/progs/chain.c.  Before, record's start waited for the walk's
 * verification ("walk: verified beside sampling" was never said).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"

#define PYTHON "/usr/bin/python3.11"

/* The ids of the BPF maps pid holds (its fdinfo's "map_id:"), up to max; how many. */
static int held_maps(pid_t pid, unsigned int *ids, int max)
{
	char path[64], line[256];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char fi[PATH_MAX];
		FILE *f;

		snprintf(fi, sizeof(fi), "%s/%s", path, e->d_name);
		f = e->d_name[0] != '.' ? fopen(fi, "r") : NULL;
		while (f && fgets(line, sizeof(line), f) && n < max)
			if (sscanf(line, "map_id: %u", &ids[n]) == 1)
				n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

/* The programs named on_sample on record's maps seen so far: ids, and the largest's size. */
struct samplers {
	unsigned int ids[16];
	int nr;
	unsigned long biggest; /* xlated bytes */
};

/*
 * Adds the programs named on_sample that use pid's maps, by `bpftool prog
 * show` ("N: perf_event  name on_sample ..." and, below, "xlated NB ...
 * map_ids A,B,..."): later loads share every map of the first and are held
 * by a program array only, so the maps, not a descriptor, say whose it is.
 * How many are there now; -1 when bpftool did not run cleanly.
 */
static int on_sample_progs(pid_t pid, struct samplers *seen)
{
	unsigned int ids[512], id, prog = 0;
	char line[8192];
	bool sampler = false;
	int n = 0, nr = held_maps(pid, ids, 512);
	FILE *p;

	if (!nr)
		return 0;
	p = popen("bpftool prog show 2>/dev/null", "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		const char *m = strstr(line, "map_ids "), *x = strstr(line, "xlated ");
		bool ours = false, known = false;

		/* a program's first line; the lines after it are its own */
		if (sscanf(line, "%u: ", &id) == 1) {
			sampler = strstr(line, " name on_sample ") != NULL;
			prog = id;
			continue;
		}
		if (!sampler || !m)
			continue;
		/* "map_ids 12,34,56" */
		for (char *q = (char *)m + 8, *end;
		     !ours && (id = (unsigned int)strtoul(q, &end, 10)); q = end + (*end == ','))
			for (int i = 0; i < nr && !ours; i++)
				ours = ids[i] == id;
		sampler = false;
		if (!ours)
			continue;
		n++;
		for (int i = 0; i < seen->nr; i++)
			known |= seen->ids[i] == prog;
		if (!known && seen->nr < 16)
			seen->ids[seen->nr++] = prog;
		if (x && strtoul(x + 7, NULL, 10) > seen->biggest)
			seen->biggest = strtoul(x + 7, NULL, 10);
	}
	return pclose(p) ? -1 : n;
}

/*
 * Records cmd (which runs until flag exists, or 60 s) with opts and reads the
 * kernel's list of programs every 50 ms until an on_sample of more than
 * until_bigger bytes is there (0: never), cmd ends, or 30 s pass (a loaded
 * machine: a later load is tens of ms of CPU); then lets cmd end.  What it
 * saw, and record's log.
 */
static void watch_on_sample(const char *name, char *const opts[], char *const cmd[],
			    const char *flag, unsigned long until_bigger, struct samplers *seen,
			    char **log)
{
	char err[PATH_MAX + 16];
	double deadline = mono_sec() + 30;
	int n, st;
	bool timed_out;
	pid_t reaped = 0;
	FILE *f;
	pid_t pid = e2e_record_start(name, "999", opts, cmd);

	memset(seen, 0, sizeof(*seen));
	*log = NULL;
	if (pid < 0) {
		CHECK(0, "%s: record did not start", name);
		return;
	}
	while (mono_sec() < deadline && !(reaped = waitpid(pid, &st, WNOHANG))) {
		n = on_sample_progs(pid, seen);
		CHECK(n >= 0, "%s: bpftool prog show did not run cleanly", name);
		if (n < 0 || (until_bigger && seen->biggest > until_bigger))
			break;
		usleep(50000);
	}
	f = fopen(flag, "w");
	if (f)
		fclose(f);
	timed_out = false;
	if (reaped != pid)
		st = wait_timeout(pid, 90, &timed_out);
	CHECK(exit_code(st, timed_out) == 0, "%s: record exited %d", name, exit_code(st, timed_out));
	snprintf(err, sizeof(err), "%s/%s.err", tmpdir, name);
	*log = slurp(err);
}

/* record -v's log says says */
static void log_says(const char *name, const char *log, const char *says)
{
	CHECK(log && strstr(log, says), "%s: record -v says \"%s\": %s", name, says,
	      log ? log : "");
}

/*
 * chain (main -> a -> b -> c -> d -> leaf, tests/progs/chain.c) for 2 s,
 * polled all along (before, the runtimes' walks were in place tens of ms
 * after the start): one on_sample of record's, the walk loaded after the
 * start, never the runtimes'.  Its samples, those taken before the walk was
 * in place among them (sent unwalked, walked in user space), are complete:
 * each in leaf has the whole chain the source calls.
 */
static void test_native(void)
{
	char flag[PATH_MAX], bin[PATH_MAX + 8], folded[PATH_MAX], line[4096];
	char *cmd[] = {bin, "2c", NULL}, *log = NULL; /* 2 s of its CPU, however busy */
	struct samplers seen;
	long in_leaf = 0, whole = 0;
	FILE *f;

	tpath(flag, sizeof(flag), "native.flag");
	snprintf(bin, sizeof(bin), "%s/chain", progs_dir);
	watch_on_sample("native", NULL, cmd, flag, 0, &seen, &log);
	printf("  native: %d on_sample programs of record's, the largest %lu bytes\n", seen.nr,
	       seen.biggest);
	CHECK(seen.nr == 1, "native: %d programs named on_sample on record's maps (want 1)",
	      seen.nr);
	log_says("native", log, "runtimes' walks: not loaded, no runtime's process seen");
	log_says("native", log, "walk: verified beside sampling");
	tpath(folded, sizeof(folded), "native");
	f = fopen(folded, "r");
	CHECK(f != NULL, "native: no profile");
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' ');
		long n = sp ? strtol(sp + 1, NULL, 10) : 0;

		if (strncmp(line, "chain;", 6) || !strstr(line, ";leaf"))
			continue;
		in_leaf += n;
		if (strstr(line, "main;a;b;c;d;leaf"))
			whole += n;
	}
	if (f)
		fclose(f);
	printf("  native: %ld samples in leaf, %ld with the whole chain\n", in_leaf, whole);
	/* 2 s of CPU at 999 Hz: most of them in leaf (spin.h), however slow the machine */
	CHECK(in_leaf >= 100 && whole == in_leaf,
	      "native: %ld of %ld samples in leaf have main;a;b;c;d;leaf", whole, in_leaf);
	free(log);
}

/* python3.11 until flag exists: the runtimes' walks loaded, a larger on_sample */
static void test_python(void)
{
	char flag[PATH_MAX], code[PATH_MAX + 128], script[PATH_MAX + 128];
	char *cmd[] = {PYTHON, "-c", code, NULL}, *log = NULL;
	struct samplers seen;

	tpath(flag, sizeof(flag), "python.flag");
	snprintf(code, sizeof(code),
		 "import os, time\nend = time.time() + 60\n"
		 "while not os.path.exists('%s') and time.time() < end:\n    sum(range(1000))\n",
		 flag);
	unsigned long native_bytes;
	char *busy[] = {"/bin/sh", "-c", script, NULL};

	/* the native walk's size, from sh's busy loop until flag (each case runs apart) */
	tpath(flag, sizeof(flag), "python.flag");
	snprintf(script, sizeof(script),
		 "end=$(($(date +%%s) + 30)); while [ ! -e %s ] && [ $(date +%%s) -lt $end ]; "
		 "do :; done",
		 flag);
	watch_on_sample("python_native", NULL, busy, flag, 1, &seen, &log);
	native_bytes = seen.biggest;
	free(log);
	log = NULL;
	unlink(flag);
	watch_on_sample("python", NULL, cmd, flag, native_bytes, &seen, &log);
	printf("  python: %d on_sample programs of record's, the largest %lu bytes (native %lu)\n",
	       seen.nr, seen.biggest, native_bytes);
	CHECK(native_bytes && seen.biggest > native_bytes,
	      "python: no on_sample with the runtimes' walks (%lu bytes, the native walk's %lu)",
	      seen.biggest, native_bytes);
	log_says("python", log, "runtimes' walks: verified beside sampling");
	free(log);
}

/*
 * --defer-stack 0: no stack copies for samples to be walked later, so the walk
 * is verified before the command starts: the command's own first look at
 * the kernel's programs finds record's on_sample.
 */
static void test_at_start(void)
{
	char flag[PATH_MAX], list[PATH_MAX], script[2 * PATH_MAX + 128];
	char *cmd[] = {"/bin/sh", "-c", script, NULL}, *opts[] = {"--defer-stack", "0", NULL};
	char *log = NULL, *progs;
	struct samplers seen;

	tpath(flag, sizeof(flag), "at_start.flag");
	tpath(list, sizeof(list), "at_start.progs");
	snprintf(script, sizeof(script),
		 "bpftool prog show > %s; end=$(($(date +%%s) + 3)); "
		 "while [ ! -e %s ] && [ $(date +%%s) -lt $end ]; do sleep 0.05; done",
		 list, flag);
	watch_on_sample("at_start", opts, cmd, flag, 0, &seen, &log);
	progs = slurp(list);
	/* record's on_sample was seen by the test's polling; the command's list has one too */
	CHECK(seen.nr == 1, "at_start: %d programs named on_sample on record's maps", seen.nr);
	CHECK(progs && strstr(progs, " name on_sample "),
	      "at_start: no on_sample loaded when the command started: %s", progs ? progs : "");
	CHECK(log && !strstr(log, "walk: verified beside"), "at_start: %s", log ? log : "");
	free(progs);
	free(log);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("walks"))
		return HARNESS_DONE();
	RUN_TEST(test_native);
	RUN_TEST(test_python);
	RUN_TEST(test_at_start);
	e2e_finish();
	return HARNESS_DONE();
}
