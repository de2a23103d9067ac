// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run perl; see perl_detect.h. */
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/runtimes/perl/perl_detect.h"
#include "user/runtimes/perl/perl_offsets.h"

_Static_assert(sizeof(struct perl_object) <= DETECT_INFO_BYTES, "detect info too small");

/* bytes read from one object: its symbol tables (perl's: 0.1 MiB) */
#define PERL_READ_MAX (16ull << 20)

static bool may_be_perl(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "perl", 4);
}

/*
 * The offset of the TLS symbol at value from the thread pointer, for the
 * executable's own block, the first: on x86-64 (variant II) the block ends
 * at the thread pointer, its start aligned; on arm64 (variant I) it follows
 * the 16-byte thread control block, aligned.  0 when it has no PT_TLS.
 */
static int32_t exe_tls_offset(Elf *e, uint64_t value)
{
	size_t nph, i;
	GElf_Ehdr eh;
	GElf_Phdr ph;

	if (!gelf_getehdr(e, &eh))
		return 0;
	for (i = 0; !elf_getphdrnum(e, &nph) && i < nph; i++) {
		uint64_t align, first, size;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		first = (align - (ph.p_vaddr & (align - 1))) & (align - 1);
		size = (ph.p_memsz + first + align - 1) & ~(align - 1);
		if (value >= ph.p_memsz || size > (1u << 20) || align > (1u << 16))
			return 0;
		if (eh.e_machine == EM_AARCH64)
			return (int32_t)(((16 + align - 1) & ~(align - 1)) + value);
		return (int32_t)value - (int32_t)size;
	}
	return 0;
}

int perl_elf_info(int fd, struct perl_object *out)
{
	static const char *const names[] = {"Perl_runops_standard", "PL_current_context",
					    "PL_revision", "PL_version"};
	uint64_t left = PERL_READ_MAX, values[4];
	uint8_t revision = 0, version = 0;
	uint32_t found = 0;
	uint64_t size;
	Elf *e;

	memset(out, 0, sizeof(*out));
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	elf_find_symbols(e, names, values, 4, &left, &found);
	if (values[0] && values[2] && values[3] &&
	    !elf_read_vaddr(e, fd, values[2], &revision, 1) &&
	    !elf_read_vaddr(e, fd, values[3], &version, 1) && revision == 5)
		out->version = (uint16_t)(revision << 8 | version);
	/* PL_current_context's value is its offset in the TLS block: 0 is one */
	if (values[0] && (found & 2))
		out->tls_context = exe_tls_offset(e, values[1]);
	/* cut while read: what was found may be anything */
	if (!elf_read_close(e, fd, size) || !values[0])
		return -1;
	return 0;
}

static int object(int fd, const char *path, void *info)
{
	(void)path;
	return perl_elf_info(fd, info);
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct perl_object *o = info;
	const struct perl_offsets *off = perl_offsets_find(o->version);
	struct cfi_perl_proc *val = data;

	(void)bias;
	(void)pid;
	*version = o->version;
	if (!off || !o->tls_context)
		return -1;
	*val = off->bpf;
	val->tls_context = o->tls_context;
	val->maps_read_ns = read_ns;
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops perl_detect_ops = {
    .runtime = RT_PERL,
    .may_be = may_be_perl,
    .object = object,
    .entry = entry,
};
