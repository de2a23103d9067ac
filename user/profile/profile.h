/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A symbolized profile: the one structure every output writer (folded,
 * pprof, svg, text, speedscope) consumes, built once from the aggregated
 * stacks.  Locations are distinct (mapping, address) frames; samples refer
 * to them leaf first, as pprof does.  An incomplete stack ends (at the root
 * side) with a synthetic "[incomplete: REASON]" location; samples the stack
 * table had no room for form one sample whose only location is
 * "[overflow: stack table full]".  Writers never special-case either.
 *
 * The frame model.  A location is one address; what it shows is its lines,
 * as in pprof: a frame is a function name, and optionally a source file and
 * a line, and it is either the function the address is in or one inlined
 * into it.  lines[] lists them innermost first; the last is the function
 * itself (its name is the location's `function`), the ones before it were
 * inlined into it.  A location without lines (nr_lines 0: kernel, JIT,
 * unnamed, synthetic) shows `function` alone.  Interpreted frames (Python)
 * fit the same model: one line, the function with its file and line; their
 * `function` is what the other writers show, "name (file:line)".
 *
 * pprof writes the lines as they are; the other writers see one frame per
 * line (outermost first going up a stack), or with --no-inline the function
 * alone, after profile_apply_view.
 */
#ifndef CFIPROF_PROFILE_H
#define CFIPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/profile/aggregate.h"
#include "user/track/cgroups.h"
#include "user/profile/frame_names.h"

struct prof_mapping {
	uint64_t start, limit, offset; /* runtime range and file offset */
	const char *path;	       /* as mapped; "[vdso]", "[kernel.kallsyms]" */
	const char *build_id;	       /* hex, "" if none */
	uint32_t pid;		       /* 0 for the kernel */
};

enum prof_loc_kind {
	PROF_LOC_USER = 0,
	PROF_LOC_KERNEL,
	PROF_LOC_SYNTHETIC, /* [incomplete: ...] / [overflow: ...] */
	PROF_LOC_GO,	    /* machine code of a Go function (its pclntab's) */
	/* + enum cfi_runtime: a frame of that runtime's interpreter: name, file, line */
	PROF_LOC_INTERP,
	PROF_LOC_KINDS = PROF_LOC_INTERP + RT_MAX,
};

/* A frame of an interpreted language (any runtime's). */
static inline bool prof_loc_is_interp(uint32_t kind)
{
	return kind > PROF_LOC_INTERP && kind < PROF_LOC_KINDS;
}

/* Machine code in a process: a user frame, Go's or not. */
static inline bool prof_loc_is_user(uint32_t kind)
{
	return kind == PROF_LOC_USER || kind == PROF_LOC_GO;
}

/*
 * A kind's profile.frame.type (OpenTelemetry's semantic conventions: native,
 * kernel, go, and each runtime's: cpython...), NULL for one that is no code
 * ([incomplete: ...]);
 * and back, PROF_LOC_USER for a type not listed.
 */
const char *prof_loc_frame_type(uint32_t kind);
uint32_t prof_loc_kind_of(const char *frame_type);

/* One frame of a location: see "The frame model" above. */
struct prof_line {
	const char *function;	 /* as shown (demangled) */
	const char *system_name; /* as linked (mangled); the same as function when not mangled */
	const char *file;	 /* source file, NULL when unknown */
	uint32_t line;		 /* 0 when unknown */
	uint32_t start_line;	 /* first line of the function, 0 when unknown */
};

struct prof_location {
	uint64_t addr;	      /* runtime address looked up (return addresses: pc - 1) */
	uint64_t rel_addr;    /* address in the object's ELF vaddr space (0 if unknown) */
	uint32_t mapping;     /* index + 1 into maps, 0 = none */
	uint32_t kind;	      /* enum prof_loc_kind */
	const char *function; /* symbol, or "libfoo.so+0x1234", or "[unknown]" */
	uint32_t nr_lines;    /* 0: function alone */
	uint32_t inlined;     /* after profile_apply_view: a frame inlined into the one below */
	struct prof_line *lines; /* innermost first; lines[nr_lines - 1].function == function */
	/*
	 * A part of location whole - 1, split where an interpreter's frames go
	 * between the function and what is inlined into it at that address:
	 * the function alone, or (inline_part) the inlined levels alone.
	 */
	uint32_t whole;
	bool inline_part;
};

/*
 * The per-sample labels a writer may leave out (struct profile_info's
 * labels_omitted): each distinct value is a series in a fleet store such as
 * Pyroscope, so the agent keeps only the bounded ones by default.
 */
enum prof_label_bit {
	PROF_LABEL_PID = 1u << 0,
	PROF_LABEL_TID = 1u << 1,
	PROF_LABEL_COMM = 1u << 2,
	PROF_LABEL_NS_PID = 1u << 3,
	PROF_LABEL_CGROUP = 1u << 4,
	PROF_LABEL_CONTAINER = 1u << 5,
	PROF_LABEL_STOP_REASON = 1u << 6,
	PROF_LABELS_ALL = (1u << 7) - 1,
};

/* A label that every sample of a profile carries (the agent's hostname and --labels). */
struct prof_label {
	const char *key, *value;
};

/*
 * What a profile's values are.  SAMPLES: the default CPU profile, a count of
 * samples (pprof adds cpu/nanoseconds = count * period).  EVENTS: -e hits
 * (1 each) or perf event periods.  NANOSECONDS: off-CPU time, and CPU time
 * beside it (--on-and-off-cpu).
 */
enum prof_unit {
	PROF_UNIT_SAMPLES = 0,
	PROF_UNIT_EVENTS,
	PROF_UNIT_NANOSECONDS,
};

/* One of the session's events: a pprof sample type of its own. */
struct prof_event {
	const char *name; /* "off-cpu", "uprobe:/lib/...:malloc", "page-faults" */
	const char *type; /* pprof sample type: "off_cpu", "cpu", or the name */
	const char *unit; /* "nanoseconds" or "count" */
	bool estimated;	  /* sampled past --event-budget: its values are weighted estimates */
};

#define PROF_MAX_EVENTS 16

struct prof_sample {
	uint64_t count;
	uint64_t value;	 /* what outputs show: count, hits / periods, or nanoseconds (unit) */
	uint32_t event;	 /* index into the profile's events */
	uint32_t pid, tid;
	uint32_t ns_pid;	 /* pid inside its PID namespace (== pid on the host) */
	const char *comm;
	const char *root;	 /* what flame graphs show under "all": comm, or "GROUP: comm" */
	const char *group;	 /* --group-by container: container id or cgroup, else NULL */
	const char *cgroup;	 /* cgroup v2 path, NULL if unknown */
	const char *container;	 /* container id from the cgroup path, NULL if none */
	const char *service;	 /* Pyroscope service_name, NULL if not asked for */
	uint32_t reason; /* enum cfi_stop_reason */
	uint32_t nr_locs;
	uint32_t *locs; /* indices into locs, leaf first */
	/* labels the program gave the running code (Go's goroutine labels), interned */
	const struct prof_label *rt_labels;
	uint32_t nr_rt_labels;
};

struct profile {
	struct prof_sample *samples;
	size_t nr_samples;
	struct prof_location *locs;
	size_t nr_locs;
	struct prof_mapping *maps;
	size_t nr_maps;
	uint64_t total;	       /* samples, overflow included */
	uint64_t total_value;  /* values, overflow included */
	enum prof_unit unit;   /* of the values */
	struct prof_event events[PROF_MAX_EVENTS]; /* nr_events 0: the default CPU profile */
	size_t nr_events;
	uint64_t overflow;     /* samples in the [overflow] sample */
	uint64_t period_ns;    /* sampling period: 1e9 / frequency */
	uint64_t start_unix_ns;
	uint64_t duration_ns;
	const char *event;     /* "cpu-clock" or "cycles" */
	/* the caller's, living as long as the profile: */
	const struct prof_label *labels; /* added to every sample */
	size_t nr_labels;
	const char *const *comments;	 /* notes on the whole profile (pprof comments) */
	size_t nr_comments;
	uint32_t labels_omitted; /* enum prof_label_bit: sample labels writers leave out */
	void *priv;	       /* string pool and lookup tables */
};

/*
 * A service name a process gives itself (its unit, its comm) is cleaned to these
 * characters and at most PROF_SERVICE_MAX - 1 bytes: the agent pushes each
 * service under its name and spools it under a file name (user/agent/push.c).
 */
#define PROF_SERVICE_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define PROF_SERVICE_MAX   128

struct profile_info {
	uint64_t period_ns, start_unix_ns, duration_ns;
	const char *event;
	/* the session's events (none: the default CPU profile), the caller's, as names */
	const struct prof_event *events;
	size_t nr_events;
	struct cgroup_names *cgroups; /* cgroup id -> path; NULL: no cgroup labels */
	bool group_by_container;
	const struct prof_label *labels; /* see struct profile */
	size_t nr_labels;
	const char *const *comments;
	size_t nr_comments;
	uint32_t labels_omitted; /* see struct profile; 0: every label */
	/*
	 * A service_name label on every sample: this one, or (service_by_process)
	 * from the process's cgroup (cgroup_service_name), else its comm.
	 */
	const char *service_name;
	bool service_by_process;
};

/* Symbolizes every stack of a (user PCs through fn's process tracker, kernel PCs through its ksyms). */
int profile_build(struct profile *p, struct aggregator *a, struct frame_namer *fn,
		  const struct profile_info *info);
void profile_free(struct profile *p);

/*
 * The distinct services (struct prof_sample's service, NULL included) of p's
 * samples in first-seen order, malloc'd, their number in *nr; NULL if out of memory.
 */
const char **profile_services(const struct profile *p, size_t *nr);
struct prof_fold {
	uint64_t services; /* distinct before */
	uint64_t folded;   /* of them, now other */
	uint64_t samples;  /* theirs */
};

/*
 * At most max distinct services (NULL left out, max >= 2): the max - 1 with
 * the most samples keep their names, the others' samples become service
 * other (a string that outlives p).  0, or -1 when out of memory (p unchanged).
 */
int profile_fold_services(struct profile *p, size_t max, const char *other, struct prof_fold *out);
/*
 * The samples of service (NULL: those without one, the [overflow] sample
 * among them) as a profile of their own: the locations and mappings they use,
 * renumbered.  Strings and labels stay p's, so p must outlive sub;
 * profile_free(sub) frees it.  0, or -1 (out of memory, or p fails profile_check).
 */
int profile_subset(const struct profile *p, const char *service, struct profile *sub);

/*
 * 0 when every sample's location index is inside p->locs; -1 with errno
 * EINVAL otherwise (a writer refuses such a profile rather than write a file
 * its readers reject).
 */
int profile_check(const struct profile *p);
/*
 * How the frame-per-name writers (folded, svg, text, speedscope, perf-script)
 * show locations: inline levels as frames unless no_inline; with lines, each
 * name followed by " FILE:LINE" (the file's base name) when known.
 */
struct prof_view {
	bool no_inline;
	bool lines;
};

/*
 * Rewrites @p's samples so that each of their locations is one frame of the
 * view: a location with inline levels becomes one location per level (same
 * address and mapping, `inlined` set for the inlined ones), names get
 * their file:line.  The locations' lines are kept (nr_lines of the new ones is
 * 0).  Not for pprof, which carries the lines themselves. Returns 0 or -1.
 */
int profile_apply_view(struct profile *p, const struct prof_view *v);
/* Room for more locations in a built profile (profile_view.c); -1 (errno) if none. */
int profile_reserve_loc(struct profile *p);

/* The name a frame shows in flame graphs: the function, kernel ones suffixed "_[k]"; malloc'd. */
char *prof_loc_label(const struct prof_location *l);

/* What outputs show of a sample: its count in the default CPU profile, else its value. */
static inline uint64_t prof_value(const struct profile *p, const struct prof_sample *s)
{
	return p->nr_events ? s->value : s->count;
}

/* "12.3 ms", "45 samples", "1200 events": a value in the profile's unit. */
void prof_format_value(const struct profile *p, uint64_t v, char *buf, size_t len);
/* The same in a unit of its own (one event's, in a profile of several). */
void prof_format_unit(enum prof_unit unit, uint64_t v, char *buf, size_t len);

/* Interned copy of s, owned by the profile (for writers that make new names). */
const char *profile_intern(struct profile *p, const char *s);
/*
 * An empty profile with a pool of its own, for a reader that fills it from
 * a file (user/output/otlp_read.c): strings through profile_intern, lines
 * through profile_alloc_lines, locations through profile_reserve_loc;
 * samples (each one's locs) and maps malloc'd, as profile_free frees them.
 * 0 or -1.
 */
int profile_init(struct profile *p);
/* Room for n lines of a location, owned by the profile; NULL when out of memory. */
struct prof_line *profile_alloc_lines(struct profile *p, uint32_t n);

#endif
