/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What to sample and how often, shared by record and top as one argp child:
 * -p PID[,PID..], -a, -c/--cgroup, -C/--container, -F, -d, -k, -u/--user-only.
 * The parent passes a struct target_opts as the child's input.
 */
#ifndef CFIPROF_TARGET_OPTS_H
#define CFIPROF_TARGET_OPTS_H

#include <argp.h>

#include "user/session/session.h"

struct target_opts {
	struct session_opts *so;
	double duration; /* -d in seconds; 0: until stopped */
	struct event_list events; /* -e as given */
	bool off_cpu, on_and_off_cpu;
	bool call_graph_noted; /* -g / --call-graph said once why it changes nothing */
};

/* The session's event list from -e, --off-cpu and --on-and-off-cpu; -1 and why in err. */
int target_events_finish(struct target_opts *t, char *err, size_t errlen);

extern const struct argp target_argp;

/* How many of -p, -a and --cgroup/--container were given. */
int target_opts_count(const struct session_opts *so);

#endif
