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
#include <string.h>

#include "bpf/cfiprof_abi.h"

/* How one recorded frame is shown where the native stack passes through the evaluation loop. */
enum interp_frame_role {
	INTERP_FRAME_SHOW = 0,
	INTERP_FRAME_SKIP = 1 << 0, /* not (yet) a running frame: incomplete, or a shim */
	INTERP_FRAME_LAST = 1 << 1, /* the first frame its evaluation-loop call ran */
};

/*
 * A level a JIT inlined into a shown frame at its pc (HotSpot's C2): its
 * name and file as offsets in the frame's strs, its line (0 when unknown).
 */
struct interp_inlined {
	uint32_t name, file;
	uint32_t line;
};

/*
 * How one recorded frame is shown: its role, name, file and line, and what
 * was inlined into it there: inline frames above it, as DWARF's inline
 * levels of a native frame are (a location's lines, innermost first).
 */
struct interp_frame_shown {
	unsigned int role; /* enum interp_frame_role */
	uint32_t line;	   /* 0 when unknown */
	const char *name;  /* the runtime's "[NAME]" when its code was not read */
	const char *file;  /* "" when unknown */
	uint32_t nr_inlined;		      /* 0: none */
	const struct interp_inlined *inlined; /* innermost first */
	const char *strs;		      /* their strings */
};

/* What a runtime with interpreter frames tells the profile. */
struct interp_namer {
	void *ctx;
	/* how frame f of process pid (mapping generation gen) is shown; strings live as ctx */
	void (*show)(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		     struct interp_frame_shown *out);
	/* the runtime's evaluation loop: a native frame of this name (interp_is_eval_frame) */
	const char *eval_frame;
	/*
	 * Instead: each frame is a native frame of its own (a JIT's), the one
	 * whose PC's low 32 bits are its instr, and is shown in its place.
	 */
	bool by_pc;
};

/* Whether f names the native frame at pc (struct interp_namer's by_pc). */
static inline bool interp_frame_at_pc(const struct cfi_interp_frame *f, uint64_t pc)
{
	return f->instr == (uint32_t)pc;
}

/*
 * Whether a native frame named native_name is in's evaluation loop: its
 * eval_frame, or a part of it a compiler split off (LTO's ".cold",
 * ".part.N": the name, a dot, a suffix).
 */
static inline bool interp_is_eval_frame(const struct interp_namer *in, const char *native_name)
{
	size_t n = in->eval_frame ? strlen(in->eval_frame) : 0;

	return n && !strncmp(native_name, in->eval_frame, n) &&
	       (!native_name[n] || native_name[n] == '.');
}

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

/* What CFI_RUNTIMES says of one runtime. */
struct runtime_info {
	const char *name;    /* "python", as the summary and metrics show it */
	const char *tag;     /* "py": a recording's frame lines and stack lists */
	uint32_t max_frames; /* its units are that many interpreter frames at most; 0: not frames */
	const char *frame_type; /* "cpython": its frames' profile.frame.type */
};

/* CFI_RUNTIMES' entry of runtime rt; every field NULL or 0 for none or one it does not list. */
static inline const struct runtime_info *runtime_info(unsigned int rt)
{
	static const struct runtime_info infos[RT_MAX] = {
#define CFI_RUNTIME_INFO(id, value, name, tag, frames, type) [value] = {#name, tag, frames, type},
	    CFI_RUNTIMES(CFI_RUNTIME_INFO)
#undef CFI_RUNTIME_INFO
	};
	static const struct runtime_info none;

	return rt < RT_MAX ? &infos[rt] : &none;
}

static inline const char *runtime_tag(unsigned int rt)
{
	return runtime_info(rt)->tag;
}

static inline const char *runtime_name(unsigned int rt)
{
	return runtime_info(rt)->name;
}

static inline const char *runtime_frame_type(unsigned int rt)
{
	return runtime_info(rt)->frame_type;
}

static inline uint32_t runtime_max_frames(unsigned int rt)
{
	return runtime_info(rt)->max_frames;
}

/* The interpreter frames of r after its PCs, *n of them; NULL when none (sizes checked). */
static inline const struct cfi_interp_frame *interp_frames_of(const struct cfi_sample_record *r,
							      uint32_t *n)
{
	*n = runtime_max_frames(r->runtime) ? r->nr_rt : 0;
	return *n ? (const struct cfi_interp_frame *)(r->pcs + r->nr_kernel + r->nr_user) : NULL;
}

#endif
