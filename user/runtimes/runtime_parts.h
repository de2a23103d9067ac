/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The parts a runtime is made of: its detector (runtime_detect.c) and, for
 * one with interpreter frames, its reader of code objects (code_names.c;
 * NULL for Go's labels), and the runtime_ops calls that only reach those.
 * A runtime's instance starts with a struct runtime_parts; its ops take
 * these functions for hooks, note, carry, wait and sweep, and keep their
 * own for naming and reporting.
 */
#ifndef CFIPROF_RUNTIME_PARTS_H
#define CFIPROF_RUNTIME_PARTS_H

#include "user/runtimes/code_names.h"
#include "user/runtimes/runtime.h"
#include "user/runtimes/runtime_detect.h"

struct runtime_frames_desc;

struct runtime_parts {
	struct runtime_detect *detect;
	struct code_names *names;
	const struct runtime_frames_desc *desc; /* what its summary and metrics say */
};

/*
 * An instance of a runtime made of these parts alone: its detector (ops,
 * procs_fd), its reader (names_ops, whose ctx is the instance) and what
 * its summary and metrics say (desc, static); NULL when out of memory.
 * runtime_parts_free frees it, the reader first.
 */
void *runtime_parts_new(const struct detect_ops *detect_ops, const struct code_names_ops *names_ops,
			const struct runtime_frames_desc *desc, int procs_fd);
void runtime_parts_free(void *rt);
void runtime_parts_hooks(void *rt, struct runtime_hooks *out);
void runtime_parts_note(void *rt, const struct cfi_sample_record *r, size_t size);
void runtime_parts_carry(void *rt, const struct cfi_sample_record *r, size_t size,
			  uint32_t taken_gen);
bool runtime_parts_wait(void *rt, double timeout);
void runtime_parts_sweep(void *rt);
/*
 * The summary's first words of a runtime ("cfiprof: php: 1 process, 337
 * samples: ") into f, with its unsupported processes' line before them when
 * there are some ("cfiprof: php: 1 PHP process of unsupported version 8.3:
 * native stacks only": what "PHP", missing what they lack); false (nothing
 * printed but that line) when no supported process was seen.  samples: its
 * samples of any status.
 */
bool runtime_parts_summary_head(void *rt, const char *name, const char *what, const char *missing,
				uint64_t samples, FILE *f);

/*
 * /metrics' cfiprof_NAME_processes_total{version="supported"|"unsupported"}
 * of such a runtime (help: the family's).
 */
void runtime_parts_metrics_procs(void *rt, const char *name, const char *help, FILE *f);
/*
 * cfiprof_NAME_samples_total{status} of runtime rt_id (enum cfi_runtime):
 * its counters of statuses 1..nr-1, named status[i].
 */
void runtime_parts_metrics_samples(const char *name, const char *help, uint8_t rt_id,
				   const char *const *status, int nr, const uint64_t *counters,
				   FILE *f);
/* cfiprof_NAME_WHAT_total{outcome="read"|"unreadable"|"refused"}: its reader's reads. */
void runtime_parts_metrics_reads(void *rt, const char *name, const char *what, const char *help,
				 FILE *f);

/*
 * What the summary and /metrics say of a runtime with interpreter frames
 * whose statuses are 1 ok, 2 none in this thread (its own words), 3
 * truncated, 4 unreadable (PHP, Perl, Ruby):
 * "cfiprof: NAME: 1 process, 226 samples: 226 OK_TEXT, 0 NONE_TEXT, 0
 * truncated, 0 unreadable; 1802 WHAT frames; UNITS 14 read (...)".
 */
struct runtime_frames_desc {
	uint8_t rt;	       /* enum cfi_runtime */
	const char *name;      /* "ruby": the summary's and the metrics' */
	const char *what;      /* "Ruby" */
	const char *ok_text;   /* "with their frames" */
	const char *none_text; /* "of threads without an execution context" */
	const char *status[5]; /* the metrics' status names, 1..4 */
	const char *units;     /* "iseqs": what the reader reads */
	const char *samples_help, *procs_help, *reads_help;
};

/*
 * The runtime_ops of a runtime made of these parts, with hooks, a summary
 * and metrics of its own (HotSpot's: its JIT rows besides its frames).
 */
#define RUNTIME_PARTS_OPS_OWN(ID, CREATE, HOOKS, NAMER, SUMMARY, METRICS)                          \
	{                                                                                          \
		.id = (ID), .create = (CREATE), .destroy = runtime_parts_free, .hooks = (HOOKS),   \
		.namer = (NAMER), .note = runtime_parts_note, .carry = runtime_parts_carry,        \
		.wait = runtime_parts_wait, .sweep = runtime_parts_sweep, .summary = (SUMMARY),    \
		.metrics = (METRICS),                                                              \
	}

/* The runtime_ops of a runtime made of these parts alone (PHP, Perl, Ruby). */
#define RUNTIME_PARTS_OPS(ID, CREATE, NAMER)                                                       \
	RUNTIME_PARTS_OPS_OWN(ID, CREATE, runtime_parts_hooks, NAMER, runtime_parts_summary,       \
			      runtime_parts_metrics)

/* runtime_ops.summary and .metrics of such a runtime, from its desc */
void runtime_parts_summary(void *rt, const uint64_t *c, FILE *f);
void runtime_parts_metrics(void *rt, const uint64_t *c, FILE *f);

#endif
