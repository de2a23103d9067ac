// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* File offset -> virtual address through PT_LOAD; see segments.h. */
#include "elf/segments.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>

static int load_segment(Elf *e, size_t i, struct elf_segment *out)
{
	GElf_Phdr ph;

	if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
		return -1;
	*out = (struct elf_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_flags};
	return 0;
}

static bool segment_maps(const struct elf_segment *s, uint64_t offset, uint64_t *vaddr)
{
	/* written as a difference: offset + filesz may wrap in a hostile header */
	if (offset < s->offset || offset - s->offset >= s->filesz)
		return false;
	*vaddr = offset - s->offset + s->vaddr;
	return true;
}

int elf_segments_read(Elf *e, struct elf_segments *out)
{
	size_t n, i;

	out->v = NULL;
	out->n = 0;
	if (elf_getphdrnum(e, &n) != 0 || n == 0)
		return 0;
	out->v = calloc(n, sizeof(*out->v));
	if (!out->v)
		return -1;
	for (i = 0; i < n; i++)
		if (!load_segment(e, i, &out->v[out->n]))
			out->n++;
	return 0;
}

void elf_segments_free(struct elf_segments *s)
{
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int elf_segments_offset_to_vaddr(const struct elf_segments *s, uint64_t offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (segment_maps(&s->v[i], offset, vaddr))
			return 0;
	return -1;
}

int elf_segments_vaddr_to_offset(const struct elf_segments *s, uint64_t vaddr, uint64_t len,
				 uint64_t *offset, size_t *seg)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct elf_segment *g = &s->v[i];

		/* differences only: a hostile header's sums may wrap */
		if (vaddr < g->vaddr || vaddr - g->vaddr > g->filesz ||
		    len > g->filesz - (vaddr - g->vaddr))
			continue;
		*offset = g->offset + (vaddr - g->vaddr);
		if (seg)
			*seg = i;
		return 0;
	}
	return -1;
}

int elf_offset_to_vaddr(Elf *e, uint64_t offset, uint64_t *vaddr)
{
	struct elf_segment s;
	size_t n, i;

	if (elf_getphdrnum(e, &n) != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (!load_segment(e, i, &s) && segment_maps(&s, offset, vaddr))
			return 0;
	return -1;
}
