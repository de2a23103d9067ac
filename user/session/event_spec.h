/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a session samples stacks on: `-e EVENT[,EVENT...]` in bpftrace's
 * names (uprobe:PATH:SYMBOL, uretprobe:, kprobe:FUNC, kretprobe:,
 * tracepoint:CATEGORY:NAME, usdt:PATH:PROVIDER:NAME) and perf's event names
 * (cpu-clock, page-faults, cycles, ...), plus off-CPU time.  A record's
 * `event` is its index in the session's list.  Parsing only: no kernel.
 */
#ifndef CFIPROF_EVENT_SPEC_H
#define CFIPROF_EVENT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EVENT_MAX	16
#define EVENT_FIELD_LEN 256

enum event_kind {
	EVENT_PERF = 0, /* a perf event: sampled every --period events or -F times a second */
	EVENT_UPROBE,
	EVENT_URETPROBE,
	EVENT_KPROBE,
	EVENT_KRETPROBE,
	EVENT_TRACEPOINT,
	EVENT_USDT,
	EVENT_OFF_CPU, /* blocked time, from sched_switch to finish_task_switch */
};

struct event_spec {
	enum event_kind kind;
	char name[2 * EVENT_FIELD_LEN]; /* canonical, as outputs show it */
	/* uprobes, usdt: the file; kprobes: empty */
	char path[EVENT_FIELD_LEN];
	/* uprobes, kprobes: the function; tracepoints: the category; usdt: the provider */
	char target[EVENT_FIELD_LEN];
	char target2[EVENT_FIELD_LEN]; /* tracepoints, usdt: the name */
	uint32_t perf_type;	       /* EVENT_PERF: PERF_TYPE_* and config */
	uint64_t perf_config;
	bool hardware;	    /* needs a PMU */
	bool time_weighted; /* weights are nanoseconds (cpu-clock, task-clock, off-CPU) */
};

struct event_list {
	struct event_spec ev[EVENT_MAX];
	int nr;
};

/*
 * Appends the comma-separated events of arg to l.  Returns 0, or -1 with a
 * message in err ("unknown event 'x'; cfiprof list shows the events").
 */
int event_list_parse(struct event_list *l, const char *arg, char *err, size_t errlen);
/* Appends off-CPU time; -1 if the list is full. */
int event_list_add_off_cpu(struct event_list *l);
bool event_list_has(const struct event_list *l, enum event_kind kind);
/* The index of the first event of that kind, -1 if none. */
int event_list_find(const struct event_list *l, enum event_kind kind);
/* Whether an event is the default sampling one (cpu-clock or cycles, weighted by count). */
bool event_is_cpu_sampling(const struct event_spec *e);
struct prof_event;
/* The profile's description of each event (user/profile/profile.h): pprof type and unit. */
void event_list_describe(const struct event_list *l, struct prof_event *out);
/* `cfiprof list`: the perf events by name and the probe syntax. */
void event_print_list(FILE *f);
/* The i-th perf event name, its alias (or NULL) and what it counts; NULL past the last. */
const char *event_perf_name(size_t i, const char **alias, const char **what);

#endif
