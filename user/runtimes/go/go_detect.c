// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go programs in the processes a load reads.  A Go executable names its
 * toolchain in .go.buildinfo ("go1.19.8", inline from Go 1.18 on), which
 * gives the field offsets of runtime.g and runtime.m (go_offsets below); g
 * itself is in the thread's TLS block, 8 bytes below the thread pointer
 * when the executable's TLS is Go's alone (internal linking has no PT_TLS,
 * a cgo program's external link one of 8 bytes).  Everything is read from
 * the mapped file, never from the process (runtime_detect.c keeps the
 * objects' answers and the processes').
 */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_read.h"
#include "elf/gopclntab.h"
#include "user/runtimes/go/go_detect.h"

/*
 * Field offsets of runtime.g and runtime.m on x86-64 and arm64 (the same),
 * per version, from the DWARF of each toolchain's own build
 * (llvm-dwarfdump --name=runtime.g --name=runtime.m);
 * only versions whose binaries the tests run are listed (1.20 is not in
 * Debian).  Up to 1.23 g.labels is a *labelMap, a map[string]string.
 */
static const struct go_offsets {
	uint16_t version;
	uint16_t g_m, m_curg, g_labels, m_vdso_sp, m_vdso_pc;
} go_offsets[] = {
    {0x0113, 48, 192, 360, 800, 808},
    {0x0115, 48, 192, 344, 808, 816},
    {0x0116, 48, 192, 344, 1120, 1128},
    {0x0117, 48, 192, 352, 856, 864},
};

bool go_offsets_find(uint16_t version, struct cfi_go_proc *out)
{
	for (size_t i = 0; i < sizeof(go_offsets) / sizeof(go_offsets[0]); i++) {
		if (go_offsets[i].version != version)
			continue;
		memset(out, 0, sizeof(*out));
		out->version = version;
		out->g_m = go_offsets[i].g_m;
		out->m_curg = go_offsets[i].m_curg;
		out->g_labels = go_offsets[i].g_labels;
		out->m_vdso_sp = go_offsets[i].m_vdso_sp;
		out->m_vdso_pc = go_offsets[i].m_vdso_pc;
		return true;
	}
	return false;
}

/* "go1.19.8", "go1.21rc2": major << 8 | minor; 0 for anything else (a devel build). */
static uint16_t version_of(const char *s, size_t len)
{
	unsigned int major, minor;
	char buf[32];

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = 0;
	if (sscanf(buf, "go%u.%u", &major, &minor) != 2 || major > 255 || minor > 255)
		return 0;
	return (uint16_t)(major << 8 | minor);
}

/*
 * The version .go.buildinfo names: a 32-byte header ("\xff Go buildinf:",
 * pointer size, flags), then, when flags has bit 1 (Go 1.18 on), the
 * version as a string with a varint length.  Older layouts point to it
 * instead: 0, as an unknown version.
 */
static uint16_t buildinfo_version(int fd, const GElf_Shdr *sh)
{
	static const char magic[] = "\xff Go buildinf:";
	unsigned char b[32 + 2 + 32];
	size_t len;

	if (sh->sh_type != SHT_PROGBITS || sh->sh_size < sizeof(b) ||
	    pread(fd, b, sizeof(b), (off_t)sh->sh_offset) != (ssize_t)sizeof(b) ||
	    memcmp(b, magic, sizeof(magic) - 1) || !(b[15] & 2))
		return 0;
	len = b[32];
	if (len & 0x80 || len > 32)
		return 0;
	return version_of((const char *)b + 33, len);
}

int go_elf_info(int fd, uint16_t *version, int32_t *tls_g)
{
	Elf *e = elf_read_begin(fd);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t shstrndx, nph, i;
	bool go = false, tls_ok = true;

	*version = 0;
	*tls_g = -8;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
		elf_end(e);
		return -1;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".go.buildinfo")) {
			go = true;
			*version = buildinfo_version(fd, &sh);
			break;
		}
	}
	/* TLS of more than g's 8 bytes: where Go's slot lies in it is not known */
	for (i = 0; go && !elf_getphdrnum(e, &nph) && i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_TLS)
			tls_ok = ph.p_memsz <= 8 && ph.p_align <= 8;
	elf_end(e);
	if (!go)
		return -1;
	return tls_ok ? 0 : 1;
}

/*
 * Go's assembly that calls the vDSO on the system stack, switched to
 * without a frame (x86-64: time.now, nanotime1; arm64: walltime, nanotime1;
 * walltime1 before Go 1.17; vgetrandom1 from 1.24), by their names in the
 * pclntab, which a stripped binary keeps.
 */
static const char *const go_switchers[GO_SWITCHERS] = {"time.now", "runtime.nanotime1",
						       "runtime.walltime", "runtime.walltime1",
						       "runtime.vgetrandom1"};

/* what an object says of Go */
struct go_object {
	uint16_t version;
	int32_t tls_g;
	bool g_found;
	uint64_t switcher_start[GO_SWITCHERS], switcher_end[GO_SWITCHERS]; /* vaddrs */
};

/* o's switchers' ranges from the pclntab of fd, empty when it is refused */
static void switchers_find(int fd, struct go_object *o)
{
	Elf *e = elf_read_begin(fd);
	struct gopclntab *g = NULL;
	uint64_t i, start, end;
	const char *name;

	if (!e || gopclntab_read_names(e, fd, &g, NULL)) {
		elf_end(e);
		return;
	}
	for (i = 0; i < gopclntab_nfunc(g); i++) {
		if (gopclntab_func(g, i, &start, &end, &name))
			continue;
		for (size_t k = 0; k < GO_SWITCHERS; k++)
			if (!strcmp(name, go_switchers[k])) {
				o->switcher_start[k] = start;
				o->switcher_end[k] = end;
			}
	}
	gopclntab_free(g);
	elf_end(e);
}

_Static_assert(sizeof(struct go_object) <= DETECT_INFO_BYTES, "detect info too small");

static int object(int fd, const char *path, void *info)
{
	struct go_object *o = info;
	int r = go_elf_info(fd, &o->version, &o->tls_g);

	(void)path;
	o->g_found = r == 0;
	if (o->g_found)
		switchers_find(fd, o);
	return r < 0 ? -1 : 0;
}

/* A Go program of a version with offsets whose g was found: its labels are read. */
static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct go_object *o = info;
	struct cfi_go_proc *val = data;

	(void)pid;
	*version = o->version;
	if (!o->g_found || !go_offsets_find(o->version, val))
		return -1;
	val->tls_g = o->tls_g;
	val->maps_read_ns = read_ns;
	for (size_t k = 0; k < GO_SWITCHERS; k++)
		if (o->switcher_end[k]) {
			val->switcher_start[k] = o->switcher_start[k] + bias;
			val->switcher_end[k] = o->switcher_end[k] + bias;
		}
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops go_detect_ops = {
    .runtime = RT_GO,
    .object = object,
    .entry = entry,
};
