/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Names of Python frames: a code object's qualified name, file and first
 * line and its location table, read from the process once (when the
 * consumer first sees the code object in a sample) and kept by (pid, mapping
 * generation, code object address), so the names outlive the process for the
 * profile being written.
 */
#ifndef CFIPROF_PYTHON_NAMES_H
#define CFIPROF_PYTHON_NAMES_H

#include "user/runtimes/code_names.h"
#include "user/symbolize/runtime_units.h"
#include "user/runtimes/python/python_lines.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct python_names;
struct python_offsets;

/*
 * Where a process's CPython keeps what a code object's name is read from:
 * its version's offsets, or NULL (not Python, or a version without an
 * entry).  The tracker's python_detect answers it (python_detect_offsets).
 */
typedef const struct python_offsets *(*python_offsets_of)(void *ctx, uint32_t pid);

struct python_names *python_names_new(python_offsets_of offsets_of, void *ctx);
void python_names_free(struct python_names *pn);
/* The reader of code objects under pn (code_names.h). */
struct code_names *python_names_reader(struct python_names *pn);

/*
 * The consumer saw sample r (its size bytes are checked): the code objects
 * of its Python frames not read yet are queued for the reader threads, read
 * at once, while the process lives.  Never reads target memory itself.
 */
void python_names_note(struct python_names *pn, const struct cfi_sample_record *r, size_t size);
/*
 * Waits (timeout seconds at most) for the code objects queued so far to be
 * read, before a profile names them; a stalled read is not waited for.
 * true if none is left.
 */
bool python_names_wait(struct python_names *pn, double timeout);
void python_names_stats(struct python_names *pn, struct code_names_stats *out);

/* enum interp_frame_role of frame f of process pid (generation gen). */
unsigned int python_frame_role(struct python_names *pn, uint32_t pid, uint32_t gen,
			       const struct cfi_interp_frame *f);
/*
 * The name of one Python frame: qualified name, file and line of the
 * instruction it runs (0 when unknown).  false when the code object was not
 * read: *name is then "[python]" and *file "".  The strings live as long as
 * pn.  (The one place a Python frame is named: the profile model takes it
 * from here.)
 */
bool python_frame_name(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, const char **name, const char **file,
		       uint32_t *line);
/* The same for pn NULL (no code object read): "[python]", placed by 3.11's is_entry. */
void python_frame_show(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, struct interp_frame_shown *out);

/* Whether a native frame's name is CPython's evaluation loop, where Python frames go. */

/* What the profile names pn's frames with (pn NULL: "[python]" only). */
void python_names_namer(struct python_names *pn, struct interp_namer *out);

#endif
