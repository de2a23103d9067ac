/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a runtime's units in a sample (after its PCs) become in a profile:
 * interpreter frames (struct cfi_interp_frame, a runtime whose CFI_RUNTIMES
 * FRAMES is not 0), named by the runtime, or labels.  Each group of a
 * sample's interpreter frames goes above the native frame of the
 * evaluation-loop call that runs it; the runtime says which native frames
 * those are and which recorded frame each call began with.
 */
#ifndef CFIPROF_RUNTIME_UNITS_H
#define CFIPROF_RUNTIME_UNITS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

/* How one recorded frame is shown where the native stack passes through the evaluation loop. */
enum interp_frame_role {
	INTERP_FRAME_SHOW = 0,
	INTERP_FRAME_SKIP = 1 << 0, /* not (yet) a running frame: incomplete, or a shim */
	INTERP_FRAME_LAST = 1 << 1, /* the first frame its evaluation-loop call ran */
};

/* How one recorded frame is shown: its role, name, file and line. */
struct interp_frame_shown {
	unsigned int role; /* enum interp_frame_role */
	uint32_t line;	   /* 0 when unknown */
	const char *name;  /* the runtime's "[NAME]" when its code was not read */
	const char *file;  /* "" when unknown */
};

/* What a runtime with interpreter frames tells the profile. */
struct interp_namer {
	void *ctx;
	/* how frame f of process pid (mapping generation gen) is shown; strings live as ctx */
	void (*show)(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		     struct interp_frame_shown *out);
	/* whether a native frame's name is the runtime's evaluation loop */
	bool (*is_eval_frame)(const char *native_name);
};

/*
 * One label a runtime read with a sample (Go's goroutine labels): its key
 * and value as far as the kernel kept them (room bytes at most) and their
 * whole lengths, so that one cut short is known.
 */
struct runtime_label {
	const char *key, *value;
	uint32_t key_room, value_room;
	uint32_t key_len, value_len;
};

/* Decodes a runtime's units into at most max labels: how many. */
typedef uint32_t (*runtime_labels_fn)(const void *units, uint32_t nr_units,
				      struct runtime_label *out, uint32_t max);

/* CFI_RUNTIMES' TAG of runtime rt ("py"), NULL for none or one it does not list. */
static inline const char *runtime_tag(unsigned int rt)
{
#define CFI_RUNTIME_TAG(id, value, name, tag, frames, type)                                        \
	if (rt == (value))                                                                         \
		return tag;
	CFI_RUNTIMES(CFI_RUNTIME_TAG)
#undef CFI_RUNTIME_TAG
	return NULL;
}

/* CFI_RUNTIMES' NAME of runtime rt ("python"), NULL for none or one it does not list. */
static inline const char *runtime_name(unsigned int rt)
{
#define CFI_RUNTIME_NAME(id, value, name, tag, frames, type)                                       \
	if (rt == (value))                                                                         \
		return name;
	CFI_RUNTIMES(CFI_RUNTIME_NAME)
#undef CFI_RUNTIME_NAME
	return NULL;
}

/* CFI_RUNTIMES' FRAME_TYPE of runtime rt's frames ("cpython"), NULL for none. */
static inline const char *runtime_frame_type(unsigned int rt)
{
#define CFI_RUNTIME_TYPE(id, value, name, tag, frames, type)                                       \
	if (rt == (value))                                                                         \
		return type;
	CFI_RUNTIMES(CFI_RUNTIME_TYPE)
#undef CFI_RUNTIME_TYPE
	return NULL;
}

/* How many struct cfi_interp_frame units runtime rt records at most (0: its units are not). */
static inline uint32_t runtime_max_frames(unsigned int rt)
{
#define CFI_RUNTIME_FRAMES(id, value, name, tag, frames, type)                                     \
	if (rt == (value))                                                                         \
		return frames;
	CFI_RUNTIMES(CFI_RUNTIME_FRAMES)
#undef CFI_RUNTIME_FRAMES
	return 0;
}

/* The interpreter frames of r after its PCs, *n of them; NULL when none (sizes checked). */
static inline const struct cfi_interp_frame *interp_frames_of(const struct cfi_sample_record *r,
							      uint32_t *n)
{
	*n = runtime_max_frames(r->runtime) ? r->nr_rt : 0;
	return *n ? (const struct cfi_interp_frame *)(r->pcs + r->nr_kernel + r->nr_user) : NULL;
}

#endif
