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
 * for as long as its start takes: BPF verification and its first loads
 * beside storming attackers and CPU hogs took over 10 s in a make
 * test-stress run.  The 2 minutes are a guard against a hang, not a bound on
 * the start; false without one.
 */
static inline bool agent_metrics_addr(const char *log, char *addr, size_t len)
{
	char fmt[32];

	snprintf(fmt, sizeof(fmt), "%%%zu[0-9.:]", len - 1);
	addr[0] = '\0';
	for (int i = 0; i < 2400 && !addr[0]; i++) {
		char *l = slurp(log), *m = strstr(l, "metrics=");

		if (m)
			sscanf(m + 8, fmt, addr);
		free(l);
		if (!addr[0])
			sleep_s(0.05);
	}
	return addr[0] != '\0';
}

/* ---- what an agent's interval files hold ---- */

/* `go tool pprof -traces FILE`, malloc'd ("" on failure). */
static inline char *pprof_traces(const char *file)
{
	char out[PATH_MAX + 64];

	snprintf(out, sizeof(out), "%s/traces.txt", tmp);
	if (!shell_ok("HOME=%s/go GOCACHE=%s/go/cache GOPATH=%s/go/gopath GOTOOLCHAIN=local "
		      "GOPROXY=off go tool pprof -traces %s > %s 2>/dev/null",
		      tmp, tmp, tmp, file, out))
		return strdup("");
	return slurp(out);
}

static int kernel_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A kernel frame's name as cfiprof prints it: a function /proc/kallsyms
 * lists (read by the test, which runs as root: the oracle is the kernel's
 * list, not cfiprof), its " [module]" left out; a BPF program's ("... [bpf]",
 * gone from kallsyms once the agent exits); or an address.
 */
static inline bool kernel_frame(const char *name)
{
	static char **names;
	static size_t n;
	char buf[256], *key = buf, *sp;

	if (!strncmp(name, "0xffff", 6))
		return true;
	if (strlen(name) > 6 && !strcmp(name + strlen(name) - 6, " [bpf]"))
		return true;
	if (!names) {
		FILE *f = fopen("/proc/kallsyms", "re");
		size_t cap = 0;
		char line[512], sym[256];

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%*s %*c %255s", sym) == 1) {
				if (n == cap) {
					cap = cap ? 2 * cap : 65536;
					names = realloc(names, cap * sizeof(*names));
				}
				if (names)
					names[n++] = strdup(sym);
			}
		if (f)
			fclose(f);
		if (names)
			qsort(names, n, sizeof(*names), kernel_name_cmp);
	}
	snprintf(buf, sizeof(buf), "%s", name);
	sp = strstr(buf, " [");
	if (sp)
		*sp = '\0';
	return names && bsearch(&key, names, n, sizeof(*names), kernel_name_cmp);
}

struct chain_count {
	int samples, chain_ok, incomplete, pending; /* distinct stacks */
	char first_bad[512];
};

/*
 * The samples of comm in -traces output: each block lists its labels
 * ("comm:  chain") and its frames leaf first; chain_ok counts those whose
 * frames, root first, are chain's known chain.  Kernel frames below the
 * leaf (kernel_frame) are left out.
 */
static inline struct chain_count count_chain(const char *traces, const char *comm)
{
	static const char *const exp[] = {
	    "_start", "__libc_start_main", "__libc_start_call_main", "main", "a", "b", "c", "d",
	    "leaf"};
	struct chain_count cc = {0};
	char *copy = strdup(traces), *save = NULL, *line, *frames[256], want[64];
	int n = 0;
	bool ours = false, bad = false, pending = false;

	snprintf(want, sizeof(want), "comm:  %s", comm);
	for (line = strtok_r(copy, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		if (!line || !strncmp(line, "-----------+", 12)) {
			if (ours) {
				char *rev[256];
				int leaf_at = -1, root = 0;

				cc.samples++;
				for (int i = 0; i < n; i++)
					rev[i] = frames[n - 1 - i];
				for (int i = 0; i < n; i++)
					if (!strcmp(rev[i], "leaf"))
						leaf_at = i;
				/* libc names its start differently across versions: match from main
				 */
				while (root < n && strcmp(rev[root], "main"))
					root++;
				cc.incomplete += bad;
				cc.pending += pending;
				/* below the leaf only what it calls, then the kernel's */
				while (n > leaf_at + 1 && kernel_frame(rev[n - 1]))
					n--;
				if (!bad && root < n && n - root >= 6 && leaf_at >= root &&
				    chain_is(rev + root, n - root, leaf_at - root, exp + 3, 6))
					cc.chain_ok++;
				else if (!cc.first_bad[0])
					join_frames(cc.first_bad, sizeof(cc.first_bad), rev, n);
			}
			if (!line)
				break;
			ours = bad = pending = false;
			n = 0;
			continue;
		}
		if (strstr(line, want)) {
			ours = true;
			continue;
		}
		if (strstr(line, "[incomplete: ")) {
			bad = true;
			pending |= strstr(line, "tables-pending") != NULL;
			continue;
		}
		if (strchr(line, ':'))
			continue; /* another label */
		{
			char *f = line;

			while (*f == ' ')
				f++;
			/* the first frame follows the sample's count */
			if (n == 0 && *f >= '0' && *f <= '9') {
				f = strchr(f, ' ');
				while (f && *f == ' ')
					f++;
			}
			if (!f || !*f)
				continue;
			if (n < 256)
				frames[n++] = f;
		}
	}
	free(copy);
	return cc;
}

#endif
