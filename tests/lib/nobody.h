/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Running the agent as its systemd unit does (nobody with the unit's four
 * capabilities) beside processes of nobody without any: a run directory
 * (tmpfs when there is one: the agent's fsyncs then measure the agent, not
 * the disk) holding copies of cfiprof and the test programs nobody can reach
 * wherever the tree is cloned (tests/e2e/test_hostile*.c).
 */
#ifndef CFIPROF_TESTS_NOBODY_H
#define CFIPROF_TESTS_NOBODY_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

#define UNIT_CAPS "+bpf,+perfmon,+sys_ptrace,+dac_read_search"

/* the run directory; the build's programs; their copies for nobody (nprogs/, ncfiprof) */
static char tmp[64];
static char progs[PATH_MAX], nprogs[128], ncfiprof[160];
static char *cfiprof; /* the build's, by absolute path */

/*
 * Makes the run directory (/dev/shm/cfiprof-NAME.XXXXXX, else /tmp), copies
 * cfiprof ($CFIPROF, default build/cfiprof) and the named programs of
 * $OUT/progs into it for nobody, and checks the tools the tests need (NULL
 * ended). A failed check and false when anything is missing.
 */
static inline bool nobody_setup(const char *name, const char *const copied[], size_t n,
				const char *const tools[])
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char rel[PATH_MAX], cmd[PATH_MAX * 4];
	bool ok = true;

	snprintf(rel, sizeof(rel), "%s/progs", out);
	snprintf(tmp, sizeof(tmp), "/dev/shm/cfiprof-%s.XXXXXX", name);
	if (!mkdtemp(tmp)) {
		snprintf(tmp, sizeof(tmp), "/tmp/cfiprof-%s.XXXXXX", name);
		if (!mkdtemp(tmp))
			tmp[0] = '\0';
	}
	cfiprof = realpath(getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof", NULL);
	if (!cfiprof || !realpath(rel, progs) || !tmp[0]) {
		CHECK(0, "setup: cfiprof and %s must be built (make test builds them)", rel);
		return false;
	}
	chmod(tmp, 0755);
	snprintf(nprogs, sizeof(nprogs), "%s/bin", tmp);
	snprintf(ncfiprof, sizeof(ncfiprof), "%s/cfiprof", nprogs);
	snprintf(cmd, sizeof(cmd), "mkdir -m 0755 %s && cp %s %s/", nprogs, cfiprof, nprogs);
	for (size_t i = 0; i < n; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " && cp %s/%s %s/", progs,
			 copied[i], nprogs);
	ok = system(cmd) == 0;
	CHECK(ok, "setup: copying the programs for nobody (%s)", cmd);
	for (size_t i = 0; tools && tools[i]; i++) {
		CHECK(tool_exists(tools[i]), "setup: %s is missing (make test-deps installs it)",
		      tools[i]);
		ok = ok && tool_exists(tools[i]);
	}
	return ok;
}

/* Waits until file has text containing needle (a program's "ready" line); false past 5 s. */
static inline bool wait_output(const char *file, const char *needle)
{
	for (int i = 0; i < 100; i++) {
		char *s = slurp(file);
		bool ok = strstr(s, needle) != NULL;

		free(s);
		if (ok)
			return true;
		sleep_s(0.05);
	}
	return false;
}

/* argv run as nobody with the unit's capabilities (or none at all). */
static inline pid_t spawn_as_nobody(char **argv, bool caps, const char *out, const char *err)
{
	char *full[32] = {"setpriv",
			  "--reuid=65534",
			  "--regid=65534",
			  "--clear-groups",
			  caps ? "--inh-caps=" UNIT_CAPS : "--inh-caps=-all",
			  caps ? "--ambient-caps=" UNIT_CAPS : "--bounding-set=-all"};
	int n = 6;

	for (int i = 0; argv[i] && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	return spawn(full, out, err);
}

/* Waits up to 10 s for "ready" in a program's output file; true when it came. */
static inline bool wait_ready(const char *out)
{
	for (int i = 0; i < 200; i++) {
		char *text = slurp(out);
		bool ready = strstr(text, "ready") != NULL;

		free(text);
		if (ready)
			return true;
		sleep_s(0.05);
	}
	return false;
}

/* A "Field:" of /proc/PID/status in kB (VmHWM: the kernel's peak RSS), or -1. */
static inline long proc_status_kb(pid_t pid, const char *field)
{
	char path[64], *s, *p;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = slurp(path);
	p = strstr(s, field);
	if (p)
		kb = strtol(p + strlen(field) + 1, NULL, 10);
	free(s);
	return kb;
}

/* The agent's interval files in @dir ("cfiprof-*.pb.gz"), sorted, at most @max. */
static inline int interval_files(const char *dir, char names[][96], int max)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "cfiprof-", 8) && strstr(e->d_name, ".pb.gz") && n < max)
			snprintf(names[n++], 96, "%.95s", e->d_name);
	if (d)
		closedir(d);
	qsort(names, (size_t)n, 96, (int (*)(const void *, const void *))strcmp);
	return n;
}

/*
 * The agent's /metrics address from its log's "metrics=A.B.C.D:PORT", waited
 * for 10 s at most (a loaded host starts it slowly); false without one.
 */
static inline bool agent_metrics_addr(const char *log, char *addr, size_t len)
{
	char fmt[32];

	snprintf(fmt, sizeof(fmt), "%%%zu[0-9.:]", len - 1);
	addr[0] = '\0';
	for (int i = 0; i < 200 && !addr[0]; i++) {
		char *l = slurp(log), *m = strstr(l, "metrics=");

		if (m)
			sscanf(m + 8, fmt, addr);
		free(l);
		if (!addr[0])
			sleep_s(0.05);
	}
	return addr[0] != '\0';
}

#endif
