// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The runtimes' walks are verified only once a runtime's process is seen
 * (docs/runtimes.md): record's sampling program is loaded a second time, with
 * them, for a Python command, and never for a native one, which so never
 * shares the machine with that verification.  The oracle is the kernel's
 * list of loaded programs (`bpftool prog show`: each program's name and the
 * maps it uses) and of the maps record holds (its fdinfo), read while the
 * command runs.  Before, every record
 * loaded it at its start: two programs named on_sample for any command.
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

/*
 * How many programs named on_sample use pid's maps, by `bpftool prog show`
 * ("N: perf_event  name on_sample ..." and, below, "map_ids A,B,..."): the
 * second load shares every map of the first and is held by a program array
 * only, so the maps, not a descriptor, say whose it is.  -1 when bpftool did
 * not run cleanly.
 */
static int on_sample_progs(pid_t pid)
{
	unsigned int ids[512];
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
		const char *m = strstr(line, "map_ids ");
		unsigned int id;
		bool ours = false;

		/* a program's first line; the lines after it are its own */
		if (sscanf(line, "%u: ", &id) == 1) {
			sampler = strstr(line, " name on_sample ") != NULL;
			continue;
		}
		if (!sampler || !m)
			continue;
		/* "map_ids 12,34,56" */
		for (char *q = (char *)m + 8, *end;
		     !ours && (id = (unsigned int)strtoul(q, &end, 10)); q = end + (*end == ','))
			for (int i = 0; i < nr && !ours; i++)
				ours = ids[i] == id;
		n += ours;
		sampler = false;
	}
	return pclose(p) ? -1 : n;
}

/*
 * Records cmd (which runs until flag exists, or 60 s) and reads the kernel's
 * list of programs every 50 ms until both loads of record's sampling program
 * are there, cmd ends, or 30 s pass (a loaded machine: the second load is
 * tens of ms of CPU); then lets cmd end.  The most seen at once, and
 * record's log.
 */
static int most_on_sample(const char *name, char *const cmd[], const char *flag, char **log)
{
	char err[PATH_MAX + 16];
	double deadline = mono_sec() + 30;
	int most = -1, n, st;
	bool timed_out;
	pid_t reaped = 0;
	FILE *f;
	pid_t pid = e2e_record_start(name, "99", NULL, cmd);

	if (pid < 0) {
		CHECK(0, "%s: record did not start", name);
		return -1;
	}
	while (mono_sec() < deadline && !(reaped = waitpid(pid, &st, WNOHANG))) {
		n = on_sample_progs(pid);
		CHECK(n >= 0, "%s: bpftool prog show did not run cleanly", name);
		if (n > most)
			most = n;
		if (n < 0 || most >= 2)
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
	return most;
}

/*
 * name's command (run until flag exists) under record: at most want programs
 * named on_sample on record's maps at once, read all along, and record -v's
 * line about the walks says says.
 */
static void walks_case(const char *name, char *const cmd[], const char *flag, int want,
		       const char *says)
{
	char *log = NULL;
	int most = most_on_sample(name, cmd, flag, &log);

	printf("  %s: at most %d on_sample programs of record's at once\n", name, most);
	CHECK(most == want, "%s: %d programs named on_sample on record's maps (want %d)", name,
	      most, want);
	CHECK(log && strstr(log, says), "%s: record -v says \"%s\": %s", name, says,
	      log ? log : "");
	free(log);
}

/*
 * sh's busy loop, native code only, for 3 s (polled all along: before, the
 * walks were in place tens of ms after the start), or until flag exists:
 * the first load alone.
 */
static void test_native(void)
{
	char flag[PATH_MAX], script[PATH_MAX + 128];
	char *cmd[] = {"/bin/sh", "-c", script, NULL};

	tpath(flag, sizeof(flag), "native.flag");
	snprintf(script, sizeof(script),
		 "end=$(($(date +%%s) + 3)); while [ ! -e %s ] && [ $(date +%%s) -lt $end ]; "
		 "do :; done",
		 flag);
	walks_case("native", cmd, flag, 1,
		   "runtimes' walks: not loaded, no runtime's process seen");
}

/* python3.11 until flag exists: the walks loaded, a second program */
static void test_python(void)
{
	char flag[PATH_MAX], code[PATH_MAX + 128];
	char *cmd[] = {PYTHON, "-c", code, NULL};

	tpath(flag, sizeof(flag), "python.flag");
	snprintf(code, sizeof(code),
		 "import os, time\nend = time.time() + 60\n"
		 "while not os.path.exists('%s') and time.time() < end:\n    sum(range(1000))\n",
		 flag);
	walks_case("python", cmd, flag, 2, "runtimes' walks: verified beside sampling");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("walks"))
		return HARNESS_DONE();
	RUN_TEST(test_native);
	RUN_TEST(test_python);
	e2e_finish();
	return HARNESS_DONE();
}
