// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The target and rate options of record and top; see target_opts.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/parse.h"
#include "user/cli/target_opts.h"
#include "user/track/cgroups.h"

enum {
	OPT_DEFER_STACK = 512,
	OPT_DEFER_BUDGET,
	OPT_TABLE_CACHE,
	OPT_TABLE_CACHE_SIZE,
	OPT_BUILD_WORKERS,
};

static const struct argp_option target_options[] = {
	{NULL, 0, NULL, 0, "What to sample:", 1},
	{"pid", 'p', "PID[,PID...]", 0, "these processes (all their threads)", 1},
	{"all-cpus", 'a', NULL, 0, "the whole system", 1},
	{"cgroup", 'c', "PATH", 0,
	 "every process in this cgroup v2 directory and below (absolute, or relative to the cgroup2 "
	 "mount)",
	 1},
	{"container", 'C', "ID", 0,
	 "a container (docker, containerd, CRI-O, podman id or prefix; nspawn machine name)", 1},
	{"freq", 'F', "HZ", 0, "samples per second per CPU (default 99)", 1},
	{"duration", 'd', "SECONDS", 0,
	 "stop after SECONDS (also 500ms, 2m, 1h; default: until stopped)", 1},
	{"kernel", 'k', NULL, 0, "kernel stacks too (default)", 1},
	{"user-only", 'u', NULL, 0, "no kernel stacks", 1},
	{NULL, 0, NULL, 0, "Samples taken before a process's tables are loaded:", 4},
	{"defer-stack", OPT_DEFER_STACK, "SIZE", 0,
	 "bytes of user stack such a sample carries, so that its walk is finished once the tables "
	 "are in (default 64K, at most 256K; 0: off, the sample stays tables-pending)",
	 4},
	{"defer-budget", OPT_DEFER_BUDGET, "SIZE", 0,
	 "stack bytes copied per second at most (default: a quarter of all samples at full size)", 4},
	{"table-cache", OPT_TABLE_CACHE, "DIR", 0,
	 "keep compiled unwind tables in DIR and take them from there: the next run finds them "
	 "ready (default: off; DIR is created 0700 and must be writable by this user only)",
	 4},
	{"table-cache-size", OPT_TABLE_CACHE_SIZE, "SIZE", 0,
	 "bytes the table cache may hold; the least recently used go first (default 256M)", 4},
	{"build-workers", OPT_BUILD_WORKERS, "N", 0,
	 "tables of one process built at once, one thread each (default: the CPUs, at most 4; "
	 "1: one after the other)",
	 4},
	{},
};

static error_t parse_target(int key, char *arg, struct argp_state *state)
{
	struct target_opts *t = state->input;
	struct session_opts *so = t->so;
	char *tok, *save = NULL;
	double size;
	uint32_t v;

	switch (key) {
	case 'p':
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (parse_u32(tok, 1, INT32_MAX, &v))
				argp_error(state, "invalid pid '%s'", tok);
			if (so->nr_pids == SESSION_MAX_PIDS)
				argp_error(state, "at most %d pids", SESSION_MAX_PIDS);
			so->pids[so->nr_pids++] = v;
		}
		break;
	case 'a':
		so->all = true;
		break;
	case 'c':
		if (cgroup_resolve(arg, so->cgroup, sizeof(so->cgroup)))
			argp_failure(state, 2, 0, "cannot use cgroup '%s'", arg);
		break;
	case 'C':
		if (cgroup_find_container(arg, so->cgroup, sizeof(so->cgroup)))
			argp_failure(state, 2, 0, "cannot find container '%s'", arg);
		break;
	case 'F':
		if (parse_u32(arg, 1, 100000, &so->freq))
			argp_error(state, "invalid frequency '%s' (1..100000)", arg);
		break;
	case 'd':
		if (parse_seconds(arg, &t->duration) || t->duration <= 0)
			argp_error(state, "invalid duration '%s'", arg);
		break;
	case 'k':
		so->kernel = true;
		break;
	case OPT_DEFER_STACK:
		if (parse_size(arg, &size) || size > DEFER_STACK_MAX)
			argp_error(state, "invalid --defer-stack '%s' (0..256K)", arg);
		so->defer_stack = (uint32_t)size;
		break;
	case OPT_TABLE_CACHE:
		if (!*arg || strlen(arg) >= sizeof(so->table_cache))
			argp_error(state, "invalid --table-cache '%s'", arg);
		snprintf(so->table_cache, sizeof(so->table_cache), "%s",
			 strcmp(arg, "off") ? arg : "");
		break;
	case OPT_TABLE_CACHE_SIZE:
		if (parse_size(arg, &size) || size < (1 << 20) || size > 1e13)
			argp_error(state, "invalid --table-cache-size '%s' (1M..10T)", arg);
		so->table_cache_bytes = (uint64_t)size;
		break;
	case OPT_BUILD_WORKERS:
		if (parse_u32(arg, 1, 64, &so->build_workers))
			argp_error(state, "invalid --build-workers '%s' (1..64)", arg);
		break;
	case OPT_DEFER_BUDGET:
		if (parse_size(arg, &size) || size < DEFER_CHUNK || size > 1e12)
			argp_error(state, "invalid --defer-budget '%s' (4K..1T per second)", arg);
		so->defer_budget = (uint64_t)size;
		break;
	case 'u':
		so->kernel = false;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp target_argp = {target_options, parse_target, NULL, NULL, NULL, NULL, NULL};

int target_opts_count(const struct session_opts *so)
{
	return (so->nr_pids > 0) + so->all + (so->cgroup[0] != 0);
}
