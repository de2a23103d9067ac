// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go programs in the processes a load reads.  A Go executable names its
 * toolchain in .go.buildinfo ("go1.19.8", inline from Go 1.18 on), which
 * gives the field offsets of runtime.g and runtime.m (go_offsets below); g
 * itself is in the thread's TLS block, 8 bytes below the thread pointer
 * when the executable's TLS is Go's alone (internal linking has no PT_TLS,
 * a cgo program's external link one of 8 bytes).  Everything is read from
 * the mapped file, never from the process; the object's answer is cached by
 * its mapping key, the process's in a pid table.
 */
#include <bpf/bpf.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_read.h"
#include "user/runtimes/go/go_detect.h"
#include "user/track/proc_tracker.h"
#include "user/track/runtime_hooks.h"
#include "user/track/runtime_procs.h"

#define GO_OBJS	   256 /* Go executables remembered, a ring of the newest */
#define GO_BUCKETS 1024

/*
 * Field offsets of runtime.g and runtime.m on x86-64, per version, from the
 * DWARF of each toolchain's own build (llvm-dwarfdump --name=runtime.g);
 * only versions whose binaries the tests run are listed (1.20 is not in
 * Debian).  Up to 1.23 g.labels is a *labelMap, a map[string]string.
 */
static const struct go_offsets {
	uint16_t version;
	uint16_t g_m, m_curg, g_labels;
} go_offsets[] = {
    {0x0113, 48, 192, 360},
    {0x0115, 48, 192, 344},
    {0x0116, 48, 192, 344},
    {0x0117, 48, 192, 352},
};

struct go_obj {
	char key[PROC_MAPPING_KEY_LEN];
	uint16_t version;
	int32_t tls_g;
	bool g_found;
};

struct go_proc {
	struct go_proc *next;
	uint32_t pid;
};

struct go_detect {
	int map_fd;
	pthread_mutex_t lock;
	struct go_obj objs[GO_OBJS];
	uint32_t nr_objs, next_obj;
	struct go_proc *buckets[GO_BUCKETS];
	struct go_detect_stats stats;
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
		return true;
	}
	return false;
}

struct go_detect *go_detect_new(int go_procs_fd)
{
	struct go_detect *gd = calloc(1, sizeof(*gd));

	if (!gd)
		return NULL;
	gd->map_fd = go_procs_fd;
	pthread_mutex_init(&gd->lock, NULL);
	return gd;
}

void go_detect_free(struct go_detect *gd)
{
	struct go_proc *p, *n;

	if (!gd)
		return;
	for (uint32_t b = 0; b < GO_BUCKETS; b++)
		for (p = gd->buckets[b]; p; p = n) {
			n = p->next;
			free(p);
		}
	pthread_mutex_destroy(&gd->lock);
	free(gd);
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

static struct go_obj *find_obj(struct go_detect *gd, const char *key)
{
	for (uint32_t i = 0; i < gd->nr_objs; i++)
		if (!strcmp(gd->objs[i].key, key))
			return &gd->objs[i];
	return NULL;
}

void go_detect_object(struct go_detect *gd, const char *key, int fd)
{
	struct go_obj o = {0}, *slot;
	int r;

	if (!gd || fd < 0)
		return;
	pthread_mutex_lock(&gd->lock);
	slot = find_obj(gd, key);
	pthread_mutex_unlock(&gd->lock);
	if (slot)
		return;
	r = go_elf_info(fd, &o.version, &o.tls_g);
	if (r < 0)
		return;
	o.g_found = r == 0;
	snprintf(o.key, sizeof(o.key), "%s", key);
	pthread_mutex_lock(&gd->lock);
	gd->objs[gd->next_obj] = o;
	gd->next_obj = (gd->next_obj + 1) % GO_OBJS;
	if (gd->nr_objs < GO_OBJS)
		gd->nr_objs++;
	pthread_mutex_unlock(&gd->lock);
}

static struct go_proc **find_proc(struct go_detect *gd, uint32_t pid)
{
	struct go_proc **pp = &gd->buckets[pid % GO_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* early: nothing is removed or counted when the mappings hold no Go program. */
static void detect_proc(struct go_detect *gd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr, uint64_t read_ns, bool early)
{
	struct cfi_go_proc val;
	const struct go_obj *found = NULL;
	struct go_proc **pp, *p;
	bool ok = false;

	if (!gd)
		return;
	pthread_mutex_lock(&gd->lock);
	for (uint32_t i = 0; gd->nr_objs && i < nr && !found; i++)
		found = find_obj(gd, maps[i].key);
	if (!found && early) {
		pthread_mutex_unlock(&gd->lock);
		return;
	}
	pp = find_proc(gd, pid);
	p = *pp;
	if (found && found->g_found && go_offsets_find(found->version, &val)) {
		val.tls_g = found->tls_g;
		val.maps_read_ns = read_ns;
		ok = !runtime_procs_put(gd->map_fd, pid, RT_GO, &val, sizeof(val));
	}
	if (!ok)
		runtime_procs_drop(gd->map_fd, pid, RT_GO);
	/* counted once per process, found or refused */
	if (found && !p) {
		p = calloc(1, sizeof(*p));
		if (p) {
			p->pid = pid;
			p->next = gd->buckets[pid % GO_BUCKETS];
			gd->buckets[pid % GO_BUCKETS] = p;
			if (ok) {
				gd->stats.procs++;
			} else {
				gd->stats.unsupported++;
				gd->stats.unsup_version = found->version;
			}
		}
	}
	pthread_mutex_unlock(&gd->lock);
}

void go_detect_proc_read_at(struct go_detect *gd, uint32_t pid, const struct proc_mapping *maps,
			    uint32_t nr, uint64_t read_ns)
{
	detect_proc(gd, pid, maps, nr, read_ns, false);
}

void go_detect_early(struct go_detect *gd, uint32_t pid, const struct proc_mapping *maps,
		     const int *fds, uint32_t nr, uint64_t read_ns)
{
	if (!gd)
		return;
	for (uint32_t i = 0; i < nr; i++)
		if (fds[i] >= 0)
			go_detect_object(gd, maps[i].key, fds[i]);
	/* a kept mapping's key is still "": it matches no program */
	detect_proc(gd, pid, maps, nr, read_ns, true);
}

void go_detect_unload(struct go_detect *gd, uint32_t pid)
{
	if (gd)
		runtime_procs_drop(gd->map_fd, pid, RT_GO);
}

void go_detect_forget(struct go_detect *gd, uint32_t pid)
{
	struct go_proc **pp, *p;

	if (!gd)
		return;
	pthread_mutex_lock(&gd->lock);
	pp = find_proc(gd, pid);
	p = *pp;
	if (p) {
		*pp = p->next;
		free(p);
	}
	pthread_mutex_unlock(&gd->lock);
	runtime_procs_drop(gd->map_fd, pid, RT_GO);
}

void go_detect_stats(struct go_detect *gd, struct go_detect_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!gd)
		return;
	pthread_mutex_lock(&gd->lock);
	*out = gd->stats;
	pthread_mutex_unlock(&gd->lock);
}

static void hook_object(void *ctx, const char *key, const char *path, int fd)
{
	(void)path;
	go_detect_object(ctx, key, fd);
}

static void hook_early(void *ctx, uint32_t pid, const struct proc_mapping *maps,
		       const struct maps_entry *ents, const int *fds, uint32_t nr, uint64_t read_ns)
{
	(void)ents;
	go_detect_early(ctx, pid, maps, fds, nr, read_ns);
}

static void hook_proc(void *ctx, uint32_t pid, const struct proc_mapping *maps, uint32_t nr,
		      uint64_t read_ns)
{
	go_detect_proc_read_at(ctx, pid, maps, nr, read_ns);
}

static void hook_unload(void *ctx, uint32_t pid)
{
	go_detect_unload(ctx, pid);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	go_detect_forget(ctx, pid);
}

void go_detect_hooks(struct go_detect *gd, struct runtime_hooks *out)
{
	*out = (struct runtime_hooks){.ctx = gd,
				      .object = hook_object,
				      .early = hook_early,
				      .proc = hook_proc,
				      .unload = hook_unload,
				      .forget = hook_forget};
}
