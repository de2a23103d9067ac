/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * PT_LOAD segments: how file offsets (what /proc/PID/maps shows) become the
 * ELF's own virtual addresses (what symbols and CFI tables are keyed by).
 */
#ifndef CFIPROF_ELF_SEGMENTS_H
#define CFIPROF_ELF_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct elf_segment {
	uint64_t offset, vaddr, filesz;
	uint32_t flags; /* PF_R, PF_W, PF_X */
};

/* The PT_LOAD segments of one object, kept after its Elf handle is gone. */
struct elf_segments {
	struct elf_segment *v;
	size_t n;
};

/* Reads the PT_LOAD segments of @e (none is not an error). Returns 0, or -1 on ENOMEM. */
int elf_segments_read(Elf *e, struct elf_segments *out);
void elf_segments_free(struct elf_segments *s);

/*
 * ELF virtual address of @offset, from the first segment whose file bytes
 * hold it. Returns 0, or -1 when no segment maps that offset.
 */
int elf_segments_offset_to_vaddr(const struct elf_segments *s, uint64_t offset, uint64_t *vaddr);

/*
 * File offset of [@vaddr, @vaddr + @len) when one segment's file bytes hold
 * all of it (and its index in *@seg, may be NULL). Returns 0, or -1.
 */
int elf_segments_vaddr_to_offset(const struct elf_segments *s, uint64_t vaddr, uint64_t len,
				 uint64_t *offset, size_t *seg);

/* The same straight from the program headers, for a caller with a one-off question. */
int elf_offset_to_vaddr(Elf *e, uint64_t offset, uint64_t *vaddr);

#endif
