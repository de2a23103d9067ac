// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Inflated debug files kept for the next open; see src_lines_cache.h. */
#include "user/symbolize/src_lines_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/hash.h"
#include "elf/build_id.h"
#include "user/symbolize/src_lines_sections.h"

#define PREFIX "lines-"
/* a section's alignment beyond a page is no debug section's */
#define MAX_ALIGN 4096u
/* the cache files looked at for eviction, at most */
#define MAX_SCAN 4096

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

bool src_lines_cache_name(Elf *e, int fd, char *name, size_t len)
{
	char id[ELF_BUILD_ID_HEX_LEN] = "none";
	uint64_t h = HASH_FNV_OFFSET;
	GElf_Ehdr eh;
	struct stat st;

	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != NATIVE_DATA || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    !src_lines_compressed(e) || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if (elf_build_id_hex(e, id, sizeof(id)))
		snprintf(id, sizeof(id), "none");
	/*
	 * The file's identity, not only its build ID: another file claiming the
	 * ID (a container's own debug file) is cached apart, and a file rewritten
	 * in place has new times.
	 */
	h = hash_bytes(h, &st.st_dev, sizeof(st.st_dev));
	h = hash_bytes(h, &st.st_ino, sizeof(st.st_ino));
	h = hash_bytes(h, &st.st_size, sizeof(st.st_size));
	h = hash_bytes(h, &st.st_mtim, sizeof(st.st_mtim));
	h = hash_bytes(h, &st.st_ctim, sizeof(st.st_ctim));
	return snprintf(name, len, PREFIX "%.80s-%016llx.debug", id, (unsigned long long)h) <
	       (int)len;
}

int src_lines_cache_open(const char *name)
{
	int fd = cache_file_open(name, (off_t)sizeof(Elf64_Ehdr) + 1);

	/* used now: the last to be evicted */
	if (fd >= 0)
		futimens(fd, NULL);
	return fd;
}

static bool is_debug(const char *name)
{
	return name && !strncmp(name, ".debug_", 7);
}

/*
 * The program headers as they are (a debug file's describe the object's
 * segments, which tools such as eu-addr2line place its addresses by), after
 * the ELF header.
 */
static int write_phdrs(Elf *e, int fd, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf64_Phdr out;
		int err;

		if (!gelf_getphdr(e, (int)i, &ph))
			return -EINVAL;
		out = (Elf64_Phdr){ph.p_type,  ph.p_flags,  ph.p_offset, ph.p_vaddr,
				   ph.p_paddr, ph.p_filesz, ph.p_memsz,	 ph.p_align};
		err = cache_pwrite_all(fd, &out, sizeof(out),
				       (off_t)(sizeof(Elf64_Ehdr) + i * sizeof(out)));
		if (err)
			return err;
	}
	return 0;
}

/* The sections as read (the debug ones inflated), then their headers and the ELF header. */
static int write_sections(Elf *e, int fd, const GElf_Ehdr *eh, size_t shnum, size_t shstrndx)
{
	Elf64_Shdr *out = calloc(shnum, sizeof(*out));
	Elf64_Ehdr oh = {0};
	size_t phnum = 0;
	uint64_t off;
	int err = out ? 0 : -ENOMEM;

	if (elf_getphdrnum(e, &phnum) || phnum >= PN_XNUM)
		phnum = 0;
	off = sizeof(oh) + phnum * sizeof(Elf64_Phdr);
	if (!err)
		err = write_phdrs(e, fd, phnum);

	for (size_t i = 1; !err && i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t a;
		bool keep;

		if (!scn || !gelf_getshdr(scn, &sh)) {
			err = -EINVAL;
			break;
		}
		out[i] = (Elf64_Shdr){
		    sh.sh_name, sh.sh_type, sh.sh_flags, sh.sh_addr,	  0,
		    sh.sh_size, sh.sh_link, sh.sh_info,	 sh.sh_addralign, sh.sh_entsize};
		keep = sh.sh_type != SHT_NOBITS && !(sh.sh_flags & SHF_COMPRESSED) &&
		       (i == shstrndx || is_debug(elf_strptr(e, shstrndx, sh.sh_name)));
		if (!keep) {
			/* what lines never read: its header only */
			out[i].sh_type = SHT_NOBITS;
			out[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			out[i].sh_offset = off;
			continue;
		}
		d = elf_getdata(scn, NULL);
		if (!d || d->d_size != sh.sh_size || (sh.sh_size && !d->d_buf)) {
			err = -EINVAL;
			break;
		}
		a = sh.sh_addralign > 1 && sh.sh_addralign <= MAX_ALIGN ? sh.sh_addralign : 1;
		off = (off + a - 1) & ~(a - 1);
		out[i].sh_offset = off;
		err = cache_pwrite_all(fd, d->d_buf, d->d_size, (off_t)off);
		off += d->d_size;
	}
	off = (off + 7) & ~7ull;
	if (!err)
		err = cache_pwrite_all(fd, out, shnum * sizeof(*out), (off_t)off);
	memcpy(oh.e_ident, eh->e_ident, EI_NIDENT);
	oh.e_type = eh->e_type;
	oh.e_machine = eh->e_machine;
	oh.e_version = eh->e_version;
	oh.e_entry = eh->e_entry;
	oh.e_phoff = phnum ? sizeof(oh) : 0;
	oh.e_phentsize = phnum ? sizeof(Elf64_Phdr) : 0;
	oh.e_phnum = (uint16_t)phnum;
	oh.e_shoff = off;
	oh.e_flags = eh->e_flags;
	oh.e_ehsize = sizeof(oh);
	oh.e_shentsize = sizeof(*out);
	oh.e_shnum = (uint16_t)shnum;
	oh.e_shstrndx = (uint16_t)shstrndx;
	if (!err)
		err = cache_pwrite_all(fd, &oh, sizeof(oh), 0);
	free(out);
	return err;
}

struct aged {
	char name[SRC_LINES_CACHE_NAME_LEN];
	struct timespec mtime;
	off_t size;
};

static int older_first(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* The oldest files go until the rest fit in SRC_LINES_CACHE_MAX_BYTES. */
static void evict(int dir, const char *kept)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct aged *v = NULL, *grown;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *ent;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((ent = readdir(d)) && n < MAX_SCAN) {
		if (strncmp(ent->d_name, PREFIX, strlen(PREFIX)) ||
		    strlen(ent->d_name) >= SRC_LINES_CACHE_NAME_LEN ||
		    fstatat(dir, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		if (!strcmp(ent->d_name, kept))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown)
				break;
			v = grown;
		}
		memcpy(v[n].name, ent->d_name, strlen(ent->d_name) + 1);
		v[n].mtime = st.st_mtim;
		v[n++].size = st.st_size;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), older_first);
	for (size_t i = 0; i < n && total > SRC_LINES_CACHE_MAX_BYTES; i++)
		if (!unlinkat(dir, v[i].name, 0))
			total -= (uint64_t)v[i].size;
	free(v);
}

int src_lines_cache_write(Elf *e, const char *name)
{
	size_t shnum, shstrndx;
	struct cache_tmp t;
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) || elf_getshdrstrndx(e, &shstrndx) ||
	    shnum >= SHN_LORESERVE || shstrndx >= shnum || !shstrndx)
		return -EINVAL;
	err = cache_tmp_open(&t, name);
	if (err)
		return err;
	err = cache_tmp_commit(&t, name, write_sections(e, t.fd, &eh, shnum, shstrndx));
	if (!err)
		evict(t.dir, name);
	close(t.dir);
	return err;
}
