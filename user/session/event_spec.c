// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The -e event list: names to specs; see event_spec.h. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "user/profile/profile.h"
#include "user/session/event_spec.h"

struct perf_name {
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
	const char *what;
};

/* perf list's names (the generic ones every kernel has; hardware ones need a PMU) */
static const struct perf_name perf_names[] = {
    {"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "CPU time (ns), per CPU"},
    {"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task time (ns)"},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults"},
    {"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor faults"},
    {"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major faults"},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
     "context switches (the stack switched out)"},
    {"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
     "migrations to another CPU"},
    {"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
     "alignment faults"},
    {"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
     "emulation faults"},
    {"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles (PMU)"},
    {"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
     "instructions retired (PMU)"},
    {"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
     "last-level cache references (PMU)"},
    {"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
     "last-level cache misses (PMU)"},
    {"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     "branches retired (PMU)"},
    {"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
     "mispredicted branches (PMU)"},
    {"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles (PMU)"},
    {"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
     "reference cycles (PMU)"},
};

#define NR_PERF_NAMES (sizeof(perf_names) / sizeof(perf_names[0]))

/* bpftrace's probe types and their short forms; fields is the number after the type */
static const struct {
	const char *name, *alias;
	enum event_kind kind;
	int fields;
} probe_types[] = {
    {"uprobe", "u", EVENT_UPROBE, 2},	      {"uretprobe", "ur", EVENT_URETPROBE, 2},
    {"kprobe", "k", EVENT_KPROBE, 1},	      {"kretprobe", "kr", EVENT_KRETPROBE, 1},
    {"tracepoint", "t", EVENT_TRACEPOINT, 2}, {"usdt", "U", EVENT_USDT, 3},
};

#define NR_PROBE_TYPES (sizeof(probe_types) / sizeof(probe_types[0]))

static int fail(char *err, size_t errlen, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what);
	return -1;
}

static int copy_field(char *dst, const char *src, size_t len)
{
	if (!len || len >= EVENT_FIELD_LEN)
		return -1;
	memcpy(dst, src, len);
	dst[len] = 0;
	return 0;
}

static int parse_perf(struct event_spec *e, const char *s)
{
	size_t i;

	for (i = 0; i < NR_PERF_NAMES; i++) {
		const struct perf_name *p = &perf_names[i];

		if (strcmp(s, p->name) && (!p->alias || strcmp(s, p->alias)))
			continue;
		e->kind = EVENT_PERF;
		e->perf_type = p->type;
		e->perf_config = p->config;
		e->hardware = p->type == PERF_TYPE_HARDWARE;
		e->time_weighted =
		    p->type == PERF_TYPE_SOFTWARE &&
		    (p->config == PERF_COUNT_SW_CPU_CLOCK || p->config == PERF_COUNT_SW_TASK_CLOCK);
		snprintf(e->name, sizeof(e->name), "%s", p->name);
		return 0;
	}
	return -1;
}

static bool has_path(enum event_kind kind)
{
	return kind == EVENT_UPROBE || kind == EVENT_URETPROBE || kind == EVENT_USDT;
}

/*
 * TYPE:F1[:F2[:F3]]: the fields are split from the right, so a path keeps any
 * ':' it has; the symbol, category, provider and name cannot have one.
 */
static int parse_probe(struct event_spec *e, const char *s, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':'), *cut[3], *end;
	size_t i, tlen;
	int n, k;

	if (!colon)
		return fail(err, errlen, "unknown event '%s'; 'cfiprof list' shows the events", s);
	tlen = (size_t)(colon - s);
	for (i = 0; i < NR_PROBE_TYPES; i++) {
		if ((strlen(probe_types[i].name) == tlen &&
		     !strncmp(s, probe_types[i].name, tlen)) ||
		    (strlen(probe_types[i].alias) == tlen &&
		     !strncmp(s, probe_types[i].alias, tlen)))
			break;
	}
	if (i == NR_PROBE_TYPES)
		return fail(err, errlen,
			    "unknown probe type in '%s' (uprobe, uretprobe, kprobe, kretprobe, "
			    "tracepoint, usdt); 'cfiprof list' explains them",
			    s);
	e->kind = probe_types[i].kind;
	n = probe_types[i].fields;
	/* cut[k]: the ':' before field k, found from the right */
	cut[0] = colon;
	end = s + strlen(s);
	for (k = n - 1; k >= 1; k--) {
		const char *c = end - 1;

		while (c > colon && *c != ':')
			c--;
		if (c <= colon)
			return fail(err, errlen,
				    "too few fields in '%s'; 'cfiprof list' explains them", s);
		cut[k] = c;
		end = c;
	}
	/* every field but a path's is one name, without ':' */
	for (k = 0; k < n; k++) {
		const char *from = cut[k] + 1, *to = k + 1 < n ? cut[k + 1] : s + strlen(s);
		char *dst = k == 0 && has_path(e->kind)			? e->path
			    : (k == 0 || (k == 1 && has_path(e->kind))) ? e->target
									: e->target2;

		if (copy_field(dst, from, (size_t)(to - from)) ||
		    ((k || !has_path(e->kind)) && memchr(from, ':', (size_t)(to - from))))
			return fail(err, errlen,
				    "bad probe '%s'; 'cfiprof list' explains the syntax", s);
	}
	/* the canonical name: the long type, then the fields as given */
	snprintf(e->name, sizeof(e->name), "%s%s", probe_types[i].name, colon);
	return 0;
}

int event_list_parse(struct event_list *l, const char *arg, char *err, size_t errlen)
{
	const char *p = arg;

	if (!*arg)
		return fail(err, errlen, "%sno event given", "");
	while (*p) {
		size_t len = strcspn(p, ",");
		char one[3 * EVENT_FIELD_LEN];
		struct event_spec *e;

		if (!len)
			return fail(err, errlen, "empty event in '%s'", arg);
		if (len >= sizeof(one))
			return fail(err, errlen, "event too long in '%s'", arg);
		if (l->nr >= EVENT_MAX)
			return fail(err, errlen, "too many events in '%s' (at most 16)", arg);
		memcpy(one, p, len);
		one[len] = 0;
		e = &l->ev[l->nr];
		memset(e, 0, sizeof(*e));
		if (parse_perf(e, one) && parse_probe(e, one, err, errlen))
			return -1;
		l->nr++;
		p += len;
		if (*p == ',' && !*++p)
			return fail(err, errlen, "empty event in '%s'", arg);
	}
	return 0;
}

int event_list_add_off_cpu(struct event_list *l)
{
	struct event_spec *e;

	if (l->nr >= EVENT_MAX)
		return -1;
	e = &l->ev[l->nr++];
	memset(e, 0, sizeof(*e));
	e->kind = EVENT_OFF_CPU;
	e->time_weighted = true;
	snprintf(e->name, sizeof(e->name), "off-cpu");
	return 0;
}

int event_list_find(const struct event_list *l, enum event_kind kind)
{
	int i;

	for (i = 0; i < l->nr; i++)
		if (l->ev[i].kind == kind)
			return i;
	return -1;
}

bool event_list_has(const struct event_list *l, enum event_kind kind)
{
	return event_list_find(l, kind) >= 0;
}

bool event_is_cpu_sampling(const struct event_spec *e)
{
	return e->kind == EVENT_PERF &&
	       ((e->perf_type == PERF_TYPE_SOFTWARE && e->perf_config == PERF_COUNT_SW_CPU_CLOCK) ||
		(e->perf_type == PERF_TYPE_HARDWARE && e->perf_config == PERF_COUNT_HW_CPU_CYCLES));
}

const char *event_perf_name(size_t i, const char **alias, const char **what)
{
	if (i >= NR_PERF_NAMES)
		return NULL;
	*alias = perf_names[i].alias;
	*what = perf_names[i].what;
	return perf_names[i].name;
}

void event_print_list(FILE *f)
{
	size_t i;

	fputs("Perf events (-e NAME; sampled -F HZ times a second, or every --period N events):\n",
	      f);
	for (i = 0; i < NR_PERF_NAMES; i++) {
		char names[64];

		snprintf(names, sizeof(names), "%s%s%s", perf_names[i].name,
			 perf_names[i].alias ? " OR " : "",
			 perf_names[i].alias ? perf_names[i].alias : "");
		fprintf(f, "  %-32s %s\n", names, perf_names[i].what);
	}
	fputs("\nProbes (bpftrace's names; a stack on every hit, weighing 1):\n"
	      "  uprobe:PATH:SYMBOL               entry of a function in a program or library\n"
	      "  uretprobe:PATH:SYMBOL            return from it (the caller's stack)\n"
	      "  kprobe:FUNCTION                  entry of a kernel function (/proc/kallsyms)\n"
	      "  kretprobe:FUNCTION               return from it\n"
	      "  tracepoint:CATEGORY:NAME         a kernel tracepoint (perf list tracepoint)\n"
	      "  usdt:PATH:PROVIDER:NAME          a USDT probe (readelf -n PATH)\n"
	      "  PATH is a file, or a library name (libc, libc.so.6) looked for in the library\n"
	      "  directories; short forms u: ur: k: kr: t: U: as bpftrace.\n"
	      "\nOff-CPU time (--off-cpu, --on-and-off-cpu): the stack a thread blocked in, "
	      "weighted\n"
	      "by the nanoseconds until it ran again (--min-block TIME drops shorter blocks).\n",
	      f);
}

void event_list_describe(const struct event_list *l, struct prof_event *out)
{
	int i;

	for (i = 0; i < l->nr && i < PROF_MAX_EVENTS; i++) {
		const struct event_spec *e = &l->ev[i];

		out[i].name = e->name;
		out[i].type = e->kind == EVENT_OFF_CPU ? "off_cpu"
			      : e->time_weighted       ? "cpu"
						       : e->name;
		out[i].unit = e->time_weighted ? "nanoseconds" : "count";
	}
}
