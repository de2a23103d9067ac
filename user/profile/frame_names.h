/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Names for frames: ELF symbols, kallsyms, perf-PID.map, or object+offset. */
#ifndef CFIPROF_FRAME_NAMES_H
#define CFIPROF_FRAME_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/runtime_units.h"
#include "user/track/proc_tracker.h"

struct ksyms;
struct perfmap;
struct interp_namer;
struct saved_frames;
struct saved_interp;

/*
 * Kernel frames named when they were recorded: BPF programs come and go, so
 * a recording keeps their names rather than trusting kallsyms at report time.
 */
struct kernel_names {
	struct kernel_name {
		uint64_t pc;
		char *name;
	} *v;
	size_t n, cap;
};

/* Adds pc's name unless pc is there already; -1 when out of memory. */
int kernel_names_add(struct kernel_names *kn, uint64_t pc, const char *name);
const char *kernel_names_find(const struct kernel_names *kn, uint64_t pc);
void kernel_names_free(struct kernel_names *kn);
/* Names of this kind are not stable after the recording ends. */
bool kernel_name_is_transient(const char *name);

struct frame_namer {
	struct proc_tracker *pt;
	struct ksyms *ksyms; /* NULL: kernel frames print as addresses */
	const struct kernel_names *saved_kernel; /* consulted before ksyms (report) */
	/* report: user frames as the recording named them, consulted first (saved_frames.h) */
	const struct saved_frames *saved_user;
	/*
	 * report: perf maps read as /tmp/perf-PID.map of whoever runs it; live:
	 * through the process's root, owned by its user (perfmap_new_proc)
	 */
	bool perfmaps_by_path;
	/*
	 * Each runtime's namer of its interpreter frames (runtime_units.h), by
	 * enum cfi_runtime; NULL: its frames are not shown (unless saved_interp)
	 */
	const struct interp_namer *interp[RT_MAX];
	/* each runtime's decoder of its units into labels (NULL: they are none) */
	runtime_labels_fn labels[RT_MAX];
	/* report: interpreter frames as the recording showed them (saved_interp.h) */
	const struct saved_interp *saved_interp;
	struct {
		uint32_t pid;
		struct perfmap *pm;
	} perfmaps[64];
	int nr_perfmaps;
};

void frame_namer_init(struct frame_namer *fn, struct proc_tracker *pt, struct ksyms *ks);
void frame_namer_free(struct frame_namer *fn);
/* leaf: the sampled pc itself; otherwise a return address, looked up at pc-1. */
/* gen: the mapping generation the sample was taken in (0: the current mappings). */
const char *frame_name_user(struct frame_namer *fn, uint32_t pid, uint32_t gen, uint64_t pc, bool leaf,
			    char *buf, size_t len);
/* The same when the caller already looked up the mapping of the lookup address (NULL: none). */
const char *frame_name_mapped(struct frame_namer *fn, uint32_t pid, const struct proc_mapping *m,
			      uint64_t pc, bool leaf, char *buf, size_t len);
const char *frame_name_kernel(struct frame_namer *fn, uint64_t pc, char *buf, size_t len);
/* The name CFI_STOP_REASONS gives reason; "unknown(N)" for a value it does not list. */
const char *stop_reason_name(int reason);
/* False for the reasons a sample had no user stack to walk; true for unknown ones. */
bool stop_reason_walkable(int reason);
/*
 * A kernel frame of a probe's own call chain (SAMPLE_PROBE_STACK): the BPF
 * program, the tracepoint glue, a trampoline (unnamed: an address).
 */
bool frame_is_bpf_glue(const char *name);
/* The one frame of an off-CPU time sum of that cause (enum cfi_unwalked_cause). */
const char *unwalked_frame_name(int cause);

/*
 * Formats one frame: @name when known, else "obj+0xOFF" when the object is
 * known, else "[unknown]". Returns what snprintf returns.
 */
int sym_format_frame(char *buf, size_t len, const char *obj_basename, const char *name,
		     uint64_t obj_offset);

#endif
