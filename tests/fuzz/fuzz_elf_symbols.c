/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for ELF symbol tables and the separate debug file lookup
 * (sym_cache_get and the sym_obj lookups).  The input is an object, optionally
 * followed by FUZZ_ELF_SEP and a debug file.  The object is read from a memfd
 * whose nominal path is DIR/obj in a private directory where both the
 * debuglink candidates (DIR/obj.debug, DIR/.debug/obj.debug) and the build-id
 * candidate (ROOT/.build-id/xx/rest.debug) lead to the debug file's memfd, so
 * the fuzzer reaches the build-id check, the CRC check and the debug symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/build_id.h"
#include "user/symbolize/sym_cache.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ELF_SEP "\n==CFIPROF-DEBUG-FILE==\n"

static char elf_dir[64], elf_root[96], elf_obj[96];
static int elf_debug_fd = -1;

static void elf_cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", elf_dir);
	if (elf_dir[0] && system(cmd) != 0)
		fprintf(stderr, "fuzz_elf_symbols: cannot remove %s\n", elf_dir);
}

static void elf_link(const char *target, const char *fmt, const char *a)
{
	char p[256];

	snprintf(p, sizeof(p), fmt, elf_dir, a);
	if (symlink(target, p) < 0 && errno != EEXIST)
		abort();
}

static void elf_mkdir(const char *fmt, const char *a)
{
	char p[256];

	snprintf(p, sizeof(p), fmt, elf_dir, a);
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		abort();
}

static void elf_setup(void)
{
	char target[64];

	if (elf_debug_fd >= 0)
		return;
	snprintf(elf_dir, sizeof(elf_dir), "/tmp/cfiprof-fuzz-elf-XXXXXX");
	if (!mkdtemp(elf_dir))
		abort();
	atexit(elf_cleanup);
	elf_debug_fd = fuzz_memfd("debug", "", 0, target, sizeof(target));
	snprintf(elf_obj, sizeof(elf_obj), "%s/obj", elf_dir);
	snprintf(elf_root, sizeof(elf_root), "%s/root", elf_dir);
	/* the debuglink name the seeds carry: next to the object and in its .debug/ */
	elf_link(target, "%s/%s", "obj.debug");
	elf_mkdir("%s/%s", ".debug");
	elf_link(target, "%s/.debug/%s", "obj.debug");
	elf_mkdir("%s/%s", "root");
	elf_mkdir("%s/%s", "root/.build-id");
}

/* ROOT/.build-id/xx/rest.debug -> the debug file, for this object's build-id. */
static int elf_link_build_id(int fd, char *link, size_t len)
{
	char id[ELF_BUILD_ID_HEX_LEN], dir[256], target[64];

	if (elf_build_id_hex_fd(fd, id, sizeof(id)) < 0 || strlen(id) <= 2)
		return -1;
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", elf_root, id);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		abort();
	snprintf(link, len, "%s/%s.debug", dir, id + 2);
	snprintf(target, sizeof(target), "/proc/self/fd/%d", elf_debug_fd);
	unlink(link);
	if (symlink(target, link) < 0)
		abort();
	return 0;
}

static void elf_probe(struct sym_obj *o, const uint8_t *data, size_t size)
{
	const char *name, *s;
	uint64_t vaddr, off, a;
	size_t i;

	for (i = 0; i < 64; i++) {
		/* file offsets through the PT_LOADs, and addresses from the input */
		a = i < 48 ? i * 0x80 : fuzz_u64(data, size, (i - 48) * 8);
		if (sym_obj_offset_to_vaddr(o, a, &vaddr) < 0)
			vaddr = a;
		name = NULL;
		if (sym_obj_lookup(o, vaddr, &name, &off) == 0 && (!name || off > vaddr))
			abort();
		if (name)
			(void)strlen(name);
	}
	sym_obj_count(o);
	s = sym_obj_build_id(o);
	if (!s || strlen(s) >= ELF_BUILD_ID_HEX_LEN)
		abort();
	s = sym_obj_debug_file(o);
	if (s)
		(void)strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, FUZZ_ELF_SEP, sizeof(FUZZ_ELF_SEP) - 1);
	size_t obj_len = sep ? (size_t)(sep - data) : size, dbg_off;
	char link[512];
	struct sym_cache *c;
	struct sym_obj *o;
	int fd, linked;

	elf_setup();
	dbg_off = sep ? obj_len + sizeof(FUZZ_ELF_SEP) - 1 : size;
	fuzz_fill_fd(elf_debug_fd, data + dbg_off, size - dbg_off);
	fd = fuzz_memfd("obj", data, obj_len, NULL, 0);
	linked = elf_link_build_id(fd, link, sizeof(link)) == 0;

	c = sym_cache_new();
	if (!c || sym_cache_set_debug_root(c, elf_root))
		abort();
	sym_cache_set_demangle(c, (size & 1) ? SYM_DEMANGLE_FULL : SYM_DEMANGLE_NO_PARAMS);
	o = sym_cache_get(c, NULL, elf_obj, fd, 0);
	if (o) {
		elf_probe(o, data, size);
		sym_cache_set_demangle(c, SYM_DEMANGLE_NONE);
		elf_probe(o, data, size);
		/* a second get is a cache hit on the same object */
		if (sym_cache_get(c, NULL, elf_obj, fd, 0) != o)
			abort();
	}
	if (sym_cache_count(c) != 1 || sym_cache_remove(c, elf_obj) != 0)
		abort();
	sym_cache_free(c);
	if (linked)
		unlink(link);
	close(fd);
	return 0;
}
