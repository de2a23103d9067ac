// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading .gnu_debugdata; see minidebuginfo.h. */
#include "elf/minidebuginfo.h"

#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_read.h"
#include "elf/sections.h"

static uint64_t refused_total, read_total;

uint64_t minidebuginfo_refused_total(void)
{
	return __atomic_load_n(&refused_total, __ATOMIC_RELAXED);
}

uint64_t minidebuginfo_read_total(void)
{
	return __atomic_load_n(&read_total, __ATOMIC_RELAXED);
}

/* Decompresses @in (@len bytes of .xz) into a malloc'd buffer of at most @max bytes. */
static int xz_decode(const uint8_t *in, size_t len, uint64_t max, void **out, size_t *out_len)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = len * 4 < max ? len * 4 + 4096 : max;
	uint8_t *buf = NULL, *p;
	lzma_ret r;

	/* the decoder's own memory: xz -9 needs 65 MiB of dictionary, Fedora uses far less */
	if (lzma_stream_decoder(&s, 128ull << 20, 0) != LZMA_OK)
		return -1;
	s.next_in = in;
	s.avail_in = len;
	for (;;) {
		if (!buf || s.avail_out == 0) {
			size_t used = buf ? (size_t)(s.next_out - buf) : 0;

			if (buf && cap >= max)
				goto fail; /* a full buffer at the bound: past it */
			if (buf)
				cap = cap * 2 < max ? cap * 2 : max;
			p = realloc(buf, cap);
			if (!p)
				goto fail;
			buf = p;
			s.next_out = buf + used;
			s.avail_out = cap - used;
		}
		r = lzma_code(&s, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK)
			goto fail;
	}
	*out_len = (size_t)(s.next_out - buf);
	*out = buf;
	lzma_end(&s);
	return 0;
fail:
	lzma_end(&s);
	free(buf);
	return -1;
}

int minidebuginfo_open(Elf *e, uint64_t max, struct minidebuginfo *out)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(e, ".gnu_debugdata", &sh);
	/* the section is xz: more compressed bytes than it may inflate to is no MiniDebugInfo */
	uint64_t left = max ? max : MINIDEBUGINFO_MAX_DEFAULT;
	Elf_Data *d;

	memset(out, 0, sizeof(*out));
	if (!scn || sh.sh_type != SHT_PROGBITS)
		return -1;
	d = elf_read_section(scn, &left, NULL);
	if (!d || !d->d_buf || !d->d_size)
		goto refused;
	if (xz_decode(d->d_buf, d->d_size, max ? max : MINIDEBUGINFO_MAX_DEFAULT, &out->buf,
		      &out->len))
		goto refused;
	out->elf = elf_memory(out->buf, out->len);
	if (!out->elf || elf_kind(out->elf) != ELF_K_ELF)
		goto refused;
	__atomic_fetch_add(&read_total, 1, __ATOMIC_RELAXED);
	return 0;
refused:
	minidebuginfo_close(out);
	__atomic_fetch_add(&refused_total, 1, __ATOMIC_RELAXED);
	return -2;
}

void minidebuginfo_close(struct minidebuginfo *m)
{
	if (m->elf)
		elf_end(m->elf);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}
