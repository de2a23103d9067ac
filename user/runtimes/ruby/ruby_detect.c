// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run Ruby; see ruby_detect.h. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/runtimes/ruby/ruby_detect.h"
#include "user/runtimes/ruby/ruby_offsets.h"
#include "user/runtimes/ruby/ruby_symbols.h"

_Static_assert(sizeof(struct ruby_object) <= DETECT_INFO_BYTES, "detect info too small");

/* bytes read from one object: its symbol and relocation tables (libruby's: 0.7 MiB) */
#define RUBY_READ_MAX (32ull << 20)

static bool may_be_ruby(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libruby", 7);
}

int ruby_elf_info(int fd, struct ruby_object *out)
{
	static const char *const names[] = {"ruby_current_ec", "rb_vm_exec", "ruby_version",
					    "rb_id2str"};
	uint64_t left = RUBY_READ_MAX, values[4];
	uint32_t found = 0;
	unsigned int major = 0, minor = 0;
	char version[16] = "";
	uint64_t size;
	bool ruby;
	Elf *e;

	memset(out, 0, sizeof(*out));
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	/* rb_id2str is not needed to be Ruby (only for C methods' names) */
	elf_find_symbols(e, names, values, 4, &left, &found);
	ruby = (found & 7) == 7;
	if (ruby) {
		out->tls_offset = values[0];
		out->tls_slot = elf_tls_slot(e, names[0], &left, &out->tls_desc);
		/* C methods' names: no frame needs them to be unwound, so none is refused */
		out->symbols = ruby_symbols_find(e, fd, values[3]);
		if (!elf_read_vaddr(e, fd, values[2], version, sizeof(version) - 1) &&
		    sscanf(version, "%u.%u.", &major, &minor) == 2 && major < 256 && minor < 256)
			out->version = (uint16_t)(major << 8 | minor);
	}
	/* cut while read: what was found may be anything */
	if (!elf_read_close(e, fd, size) || !ruby)
		return -1;
	return 0;
}

static int object(int fd, const char *path, void *info)
{
	(void)path;
	return ruby_elf_info(fd, info);
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct ruby_object *o = info;
	const struct ruby_offsets *off = ruby_offsets_find(o->version);
	struct cfi_ruby_proc *val = data;

	(void)pid;
	*version = o->version;
	if (!off || !o->tls_slot)
		return -1;
	*val = off->bpf;
	val->tls = (struct cfi_tls_var){
	    .slot = bias + o->tls_slot, .offset = o->tls_offset, .desc = o->tls_desc};
	val->global_symbols = o->symbols ? bias + o->symbols : 0;
	val->maps_read_ns = read_ns;
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops ruby_detect_ops = {
    .runtime = RT_RUBY,
    .may_be = may_be_ruby,
    .object = object,
    .entry = entry,
};
