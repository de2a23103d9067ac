// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The target and rate options of record and top; see target_opts.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "user/cli/target_opts.h"
#include "user/session/runtimes.h"
#include "user/track/cgroups.h"

enum {
	OPT_DEFER_STACK = 512,
	OPT_DEFER_BUDGET,
	OPT_TABLE_CACHE,
	OPT_TABLE_CACHE_SIZE,
	OPT_BUILD_WORKERS,
	OPT_PERIOD,
	OPT_OFF_CPU,
	OPT_ON_AND_OFF_CPU,
	OPT_MIN_BLOCK,
	OPT_EVENT_BUDGET,
	OPT_KERNEL,
	OPT_CALL_GRAPH,
	OPT_RUNTIMES,
	OPT_RUNTIMES_AT_START,
};

static const struct argp_option target_options[] = {
	{NULL, 0, NULL, 0, "What to sample:", 1},
	{"pid", 'p', "PID[,PID...]", 0, "these processes (all their threads)", 1},
	{"all-cpus", 'a', NULL, 0, "the whole system", 1},
	{"cgroup", 'G', "PATH", 0,
	 "every process in this cgroup v2 directory and below (absolute, or relative to the cgroup2 "
	 "mount)",
	 1},
	{"container", 'C', "ID", 0,
	 "a container (docker, containerd, CRI-O, podman id or prefix; nspawn machine name)", 1},
	{"freq", 'F', "HZ", 0, "samples per second per CPU (default 99)", 1},
	{"duration", 'd', "SECONDS", 0,
	 "stop after SECONDS (also 500ms, 2m, 1h; default: until stopped)", 1},
	{"kernel", OPT_KERNEL, NULL, 0, "kernel stacks too (default)", 1},
	{"user-only", 'u', NULL, 0, "no kernel stacks", 1},
	{"runtimes", OPT_RUNTIMES, "LIST", 0,
	 "language runtimes whose frames are read, comma-separated (cfiprof list --runtimes "
	 "names them), or all (default) or none; one left out costs no start time",
	 1},
	{"runtimes-at-start", OPT_RUNTIMES_AT_START, NULL, 0,
	 "their walks, and the native walk, verified before sampling starts, so that a "
	 "runtime's first samples carry its frames (the start takes tens of ms more); by default "
	 "they are verified while sampling runs, once a runtime's process is seen, the samples "
	 "taken meanwhile counted",
	 1},
	{NULL, 0, NULL, 0, "What to take stacks on (default: cpu-clock, -F times a second):", 2},
	{"event", 'e', "EVENT[,EVENT...]", 0,
	 "perf events (cpu-clock, page-faults, cycles...) and probes in bpftrace's names "
	 "(uprobe:PATH:SYMBOL, uretprobe:, kprobe:FUNC, kretprobe:, tracepoint:CATEGORY:NAME, "
	 "usdt:PATH:PROVIDER:NAME); 'help' or 'cfiprof list' lists them",
	 2},
	{"period", OPT_PERIOD, "N", 0,
	 "perf events: a stack every N events, each weighing N (default: -F times a second)", 2},
	{"off-cpu", OPT_OFF_CPU, NULL, 0,
	 "off-CPU time: the stack each thread blocked in, weighted by the time until it ran again", 2},
	{"on-and-off-cpu", OPT_ON_AND_OFF_CPU, NULL, 0,
	 "CPU time (cpu-clock) and off-CPU time in one profile, both in nanoseconds", 2},
	{"min-block", OPT_MIN_BLOCK, "TIME", 0,
	 "off-CPU: blocks shorter than TIME are counted, not sampled (default 0; 10us, 1ms...)", 2},
	{"event-budget", OPT_EVENT_BUDGET, "N", 0,
	 "probe, tracepoint, off-CPU and -e hits sampled per process per second at most (all "
	 "processes: 5 N, at least 10000); past it the samples are weighted to estimate every hit "
	 "(marked estimated). Default: record counts every hit, top samples 1000",
	 2},
	/* perf's habits: a perf user's record -g or --call-graph dwarf works and is told why */
	{"call-graph", OPT_CALL_GRAPH, "MODE", OPTION_ARG_OPTIONAL,
	 "accepted for perf's sake, as -g is: call stacks are always recorded, unwound from DWARF "
	 "CFI (frame pointers where there is none)",
	 2},
	{NULL, 'g', NULL, 0, "the same as --call-graph", 2},
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

int target_events_finish(struct target_opts *t, char *err, size_t errlen)
{
	struct session_opts *so = t->so;
	struct event_list *l = &t->events;

	if (t->off_cpu && t->on_and_off_cpu) {
		snprintf(err, errlen, "give --off-cpu or --on-and-off-cpu, not both");
		return -1;
	}
	/* one cpu-clock or cycles event, sampled -F times a second: the default profile */
	if (l->nr == 1 && event_is_cpu_sampling(&l->ev[0]) && !so->period && !t->off_cpu &&
	    !t->on_and_off_cpu) {
		so->cycles = l->ev[0].hardware;
		return 0;
	}
	if (t->on_and_off_cpu && !l->nr)
		event_list_parse(l, "cpu-clock", err, errlen);
	if ((t->off_cpu || t->on_and_off_cpu) && event_list_add_off_cpu(l)) {
		snprintf(err, errlen, "too many events");
		return -1;
	}
	so->events = *l;
	so->explicit_events = l->nr && !t->on_and_off_cpu && !t->off_cpu;
	return 0;
}

static error_t parse_target(int key, char *arg, struct argp_state *state)
{
	struct target_opts *t = state->input;
	struct session_opts *so = t->so;
	char *tok, *save = NULL, err[256];
	double size, secs;
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
	case 'G':
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
	case OPT_KERNEL:
		so->kernel = true;
		break;
	case OPT_RUNTIMES:
		if (session_runtimes_parse(arg, &so->runtimes_off, err, sizeof(err)))
			argp_failure(state, 2, 0, "invalid --runtimes: %s", err);
		break;
	case OPT_RUNTIMES_AT_START:
		so->runtime_walks_first = true;
		break;
	case 'g':
	case OPT_CALL_GRAPH:
		if (!t->call_graph_noted)
			fprintf(stderr, "cfiprof: %s: call stacks are always recorded, unwound from "
					"DWARF CFI; nothing to choose\n",
				key == 'g' ? "-g" : "--call-graph");
		t->call_graph_noted = true;
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
	case 'e':
		if (!strcmp(arg, "help")) {
			event_print_list(stdout);
			exit(0);
		}
		if (event_list_parse(&t->events, arg, err, sizeof(err)))
			argp_failure(state, 2, 0, "%s", err);
		break;
	case OPT_PERIOD:
		if (parse_u32(arg, 1, UINT32_MAX, &v))
			argp_error(state, "invalid --period '%s'", arg);
		so->period = v;
		break;
	case OPT_OFF_CPU:
		t->off_cpu = true;
		break;
	case OPT_ON_AND_OFF_CPU:
		t->on_and_off_cpu = true;
		break;
	case OPT_MIN_BLOCK:
		if (parse_seconds(arg, &secs) || secs > 3600)
			argp_error(state, "invalid --min-block '%s'", arg);
		so->min_block_ns = (uint64_t)(secs * 1e9);
		break;
	case OPT_EVENT_BUDGET:
		if (parse_u32(arg, 1, 10000000, &so->event_budget))
			argp_error(state, "invalid --event-budget '%s' (1..10000000)", arg);
		break;
	case ARGP_KEY_END:
		if (target_events_finish(t, err, sizeof(err)))
			argp_error(state, "%s", err);
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
