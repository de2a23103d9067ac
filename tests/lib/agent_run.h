/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the agent suites (test_agent, test_agent_caps) share: starting an agent
 * and waiting for its metrics address, its log's key=value fields, its exit,
 * the interval files in a directory and what a gzipped pprof of them holds.
 * Include after tests/lib/e2e.h, cli_util.h and pprof_read.h.
 */
#ifndef CFIPROF_TEST_AGENT_RUN_H
#define CFIPROF_TEST_AGENT_RUN_H

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the go command, for go tool pprof, and build/progs/chain (agent_suite_setup) */
static char go_bin[PATH_MAX];
static char chain_bin[PATH_MAX + 256];

/* ---- processes ---- */

/* Waits until the file contains needle; true if it did within timeout. */
static bool wait_for_text(const char *path, const char *needle, double timeout)
{
	double deadline = mono_sec() + timeout;

	do {
		char *s = slurp(path);
		bool found = strstr(s, needle) != NULL;

		free(s);
		if (found)
			return true;
		usleep(50000);
	} while (mono_sec() < deadline);
	return false;
}

/* The value of key=VALUE in the last line of the log containing msg. */
static bool log_value(const char *log, const char *msg, const char *key, char *out, size_t len)
{
	char *s = slurp(log), *line = NULL, *p, pat[64];
	bool ok = false;

	for (p = strstr(s, msg); p; p = strstr(p + 1, msg))
		line = p;
	snprintf(pat, sizeof(pat), " %s=", key);
	if (line) {
		char *eol = strchr(line, '\n');

		if (eol)
			*eol = 0;
		p = strstr(line, pat);
		if (p) {
			p += strlen(pat);
			snprintf(out, len, "%.*s", (int)strcspn(p, " "), p);
			ok = true;
		}
	}
	free(s);
	return ok;
}

static uint64_t log_u64(const char *log, const char *msg, const char *key)
{
	char v[64];

	return log_value(log, msg, key, v, sizeof(v)) ? strtoull(v, NULL, 10) : UINT64_MAX;
}

/* ---- pprof decoding (just what the checks need) ---- */

struct pprof_info {
	bool ok;
	uint64_t nr_samples, total; /* sample messages, sum of value[0] */
	uint64_t duration_ns;
	bool has_leaf; /* a sample in leaf, of leaf_binary's code when that is set */
	char comments[512]; /* joined with ';' */
	char labels[512];   /* distinct label keys seen on the first sample */
};

/*
 * The binary whose leaf has_leaf looks for: a suite that runs beside others (whose
 * programs have a leaf too) sets it to its own copy of chain; NULL, any leaf.
 */
static const char *leaf_binary;

static bool sample_in_leaf(const struct decoded *d, const struct dec_sample *s)
{
	const struct dec_loc *l = s->nr_locs ? loc_by_id(d, s->locs[0]) : NULL;
	const struct dec_map *m = l ? map_by_id(d, l->mapping) : NULL;

	return l && !strcmp(loc_name(d, l->id), "leaf") &&
	       (!leaf_binary || (m && m->filename && !strcmp(m->filename, leaf_binary)));
}

/* What the checks need of a gzipped profile; .ok false if it does not decode. */
static struct pprof_info decode_pprof(const void *gz, size_t len)
{
	struct pprof_info pi = {0};
	struct decoded d;
	uint8_t *raw;
	size_t raw_len, n = 0;

	raw = gunzip_mem(gz, len, &raw_len);
	if (!raw)
		return pi;
	pi.ok = !decode(raw, raw_len, &d);
	pi.nr_samples = (uint64_t)d.nr_samples;
	for (int i = 0; i < d.nr_samples; i++)
		pi.total += d.samples[i].nr_vals ? d.samples[i].vals[0] : 0;
	pi.duration_ns = d.duration_nanos;
	for (int i = 0; i < d.nr_samples && !pi.has_leaf; i++)
		pi.has_leaf = sample_in_leaf(&d, &d.samples[i]);
	for (int i = 0; i < d.nr_comments; i++)
		if (d.comments[i] < (uint64_t)d.nr_strs && n < sizeof(pi.comments))
			n += (size_t)snprintf(pi.comments + n, sizeof(pi.comments) - n, "%s;",
					      d.strs[d.comments[i]]);
	n = 0;
	for (int i = 0; d.nr_samples && i < d.samples[0].nr_labels; i++)
		if (n < sizeof(pi.labels))
			n += (size_t)snprintf(pi.labels + n, sizeof(pi.labels) - n, "%s;",
					      d.samples[0].label_keys[i]);
	decoded_free(&d);
	free(raw);
	return pi;
}

static struct pprof_info decode_file(const char *path)
{
	size_t len;
	char *s = slurp_len(path, &len);
	struct pprof_info pi = decode_pprof(s, len);

	free(s);
	return pi;
}

/* go tool pprof ARGS FILE, offline with its caches in tmpdir. */
static char *run_pprof(const char *args, const char *file, int *status)
{
	return go_pprof(go_bin, tmpdir, args, file, status);
}

/* ---- files in a directory ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir starting with prefix (NULL: all but dot files); caller frees. */
static int list_dir(const char *dir, const char *prefix, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (prefix ? strncmp(e->d_name, prefix, strlen(prefix)) : e->d_name[0] == '.')
			continue;
		v = realloc(v, (size_t)(n + 1) * sizeof(*v));
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, int n)
{
	while (n-- > 0)
		free(v[n]);
	free(v);
}

/* ---- the agent ---- */

static pid_t start_agent(char **extra, const char *log)
{
	char *argv[64];
	int n = 0;

	argv[n++] = (char *)cfiprof_bin;
	argv[n++] = "agent";
	while (*extra && n < 63)
		argv[n++] = *extra++;
	argv[n] = NULL;
	return spawn(argv, NULL, log);
}

/* Starts the agent and waits for its metrics address (the "agent started" line). */
static pid_t start_agent_metrics(char **argv, const char *log, char *addr, size_t len,
				 const char *what)
{
	pid_t pid = start_agent(argv, log);

	CHECK(wait_for_text(log, "agent started", 15), "%s: agent did not start", what);
	CHECK(log_value(log, "agent started", "metrics", addr, len), "%s: no metrics address",
	      what);
	return pid;
}

static bool agent_exited_cleanly(pid_t pid, double timeout, const char *log)
{
	bool timed_out;
	int st = wait_timeout(pid, timeout, &timed_out);
	bool ok = exit_code(st, timed_out) == 0;

	CHECK(ok, "agent exit status %d%s", st, timed_out ? " (killed: it did not exit in time)" : "");
	if (!ok)
		print_tail(log, 20);
	return ok;
}

/* e2e_setup(name), chain and go found; false (a failed check) if something is missing */
static bool agent_suite_setup(const char *name)
{
	const char *go;

	if (!e2e_setup(name))
		return false;
	snprintf(chain_bin, sizeof(chain_bin), "%s/chain", progs_dir);
	if (access(cfiprof_bin, X_OK) || access(chain_bin, X_OK)) {
		CHECK(0, "setup: %s and %s must be built (make, make %s)", cfiprof_bin, chain_bin,
		      chain_bin);
		return false;
	}
	go = find_go();
	CHECK(go != NULL, "go not found (golang-go)");
	snprintf(go_bin, sizeof(go_bin), "%s", go ? go : "go");
	signal(SIGPIPE, SIG_IGN);
	return true;
}

#endif /* CFIPROF_TEST_AGENT_RUN_H */
