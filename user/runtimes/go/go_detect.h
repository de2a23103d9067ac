/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which processes run a Go program, of which version, and where its g is:
 * found in the executable a load opens (.go.buildinfo's version, PT_TLS),
 * told to the BPF side through its runtime_procs entry (bpf/go.bpf.h), which
 * reads the sampled goroutine's profiler labels.  Found by runtime_detect.c.
 */
#ifndef CFIPROF_GO_DETECT_H
#define CFIPROF_GO_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/runtimes/runtime_detect.h"

extern const struct detect_ops go_detect_ops;

/*
 * What an ELF file says of Go: its version (major << 8 | minor) from
 * .go.buildinfo and g's offset from the thread pointer.  0 when it is a Go
 * program whose g was found, 1 when a Go program whose g was not (*version
 * set), -1 when no Go program.  For tests too.
 */
int go_elf_info(int fd, uint16_t *version, int32_t *tls_g);

/* The field offsets of a Go version (g.m, m.curg, g.labels); false when none. */
bool go_offsets_find(uint16_t version, struct cfi_go_proc *out);

#endif
