/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Python frames as a recording keeps them (recording.h, "pyframe" lines):
 * how record showed each distinct frame (struct cfi_python_frame of a
 * process and mapping generation): its role at the evaluation loop, name,
 * file and line.  `report` shows a recording's Python frames from here: the
 * code objects they name lived in a process that is gone.  The writer uses
 * the same table to save each frame once.
 */
#ifndef CFIPROF_SAVED_PYTHON_H
#define CFIPROF_SAVED_PYTHON_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/python_names.h"

struct saved_python;

struct saved_python *saved_python_new(void);
void saved_python_free(struct saved_python *sp);

/* Keeps how frame f of (pid, gen) is shown: 1 when new, 0 when kept already, -1 out of memory. */
int saved_python_add(struct saved_python *sp, uint32_t pid, uint32_t gen,
		     const struct cfi_python_frame *f, const struct python_frame_shown *how);

/* How frame f of (pid, gen) is shown; NULL when not kept.  Lives as long as sp. */
const struct python_frame_shown *saved_python_find(const struct saved_python *sp, uint32_t pid,
						   uint32_t gen, const struct cfi_python_frame *f);

#endif
