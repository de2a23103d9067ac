// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run PHP; see php_detect.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "elf/elf_read.h"
#include "elf/sections.h"
#include "elf/symbol_find.h"
#include "user/runtimes/php/php_detect.h"
#include "user/runtimes/php/php_offsets.h"

_Static_assert(sizeof(struct php_object) <= DETECT_INFO_BYTES, "detect info too small");

/* bytes read from one object: its symbol tables and .rodata (php8.2's: 0.2 and 0.5 MiB) */
#define PHP_READ_MAX (64ull << 20)

static bool may_be_php(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "php", 3) || !strncmp(base, "libphp", 6);
}

/* "API20220829,NTS" in .rodata (ZEND_MODULE_BUILD_ID): the Zend API and whether thread-safe. */
static void build_id(Elf *e, uint64_t *left, struct php_object *out)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(e, ".rodata", &sh);
	Elf_Data *d = scn ? elf_read_section(scn, left, NULL) : NULL;
	const char *p = d ? d->d_buf : NULL, *end = p ? p + d->d_size : NULL;
	unsigned int api;
	char ts[4];

	while (p && (p = memmem(p, (size_t)(end - p), "API", 3)) && end - p >= 15) {
		if (sscanf(p, "API%8u,%3[NTS]", &api, ts) == 2 && api >= 20000000 &&
		    (!strcmp(ts, "NTS") || !strcmp(ts, "TS"))) {
			out->api = api;
			out->thread_safe = !strcmp(ts, "TS");
			return;
		}
		p += 3;
	}
}

int php_elf_info(int fd, struct php_object *out)
{
	static const char *const names[] = {"executor_globals", "execute_ex"};
	uint64_t left = PHP_READ_MAX, values[2];
	uint64_t size;
	Elf *e;

	memset(out, 0, sizeof(*out));
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	elf_find_symbols(e, names, values, 2, &left, NULL);
	if (values[1])
		build_id(e, &left, out);
	/* cut while read: what was found may be anything; no executor: php-something, not PHP */
	if (!elf_read_close(e, fd, size) || !values[1] || !out->api)
		return -1;
	out->executor_globals = out->thread_safe ? 0 : values[0];
	return 0;
}

static int object(int fd, const char *path, void *info)
{
	(void)path;
	return php_elf_info(fd, info);
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct php_object *o = info;
	const struct php_offsets *off;
	struct cfi_php_proc *val = data;

	(void)pid;
	*version = php_version_of_api(o->api);
	off = o->executor_globals ? php_offsets_find(*version) : NULL;
	/* a thread-safe build: its executor globals are per thread, not read yet */
	if (o->thread_safe && *version > 1)
		*version |= DETECT_VERSION_VARIANT;
	if (!off)
		return -1;
	*val = off->bpf;
	val->executor_globals = bias + o->executor_globals;
	val->maps_read_ns = read_ns;
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops php_detect_ops = {
    .runtime = RT_PHP,
    .may_be = may_be_php,
    .variant = "thread-safe",
    .object = object,
    .entry = entry,
};
