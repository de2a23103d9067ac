// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The separate debug file search shared by tables/ and the symbolizer; see debug_file.h. */
#include "elf/debug_file.h"

#include <errno.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/clock.h"
#include "elf/build_id.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "elf/sections.h"

#define VIA_BUILD_ID  ".note.gnu.build-id"
#define VIA_DEBUGLINK ".gnu_debuglink"
#define VIA_FETCHED   "debuginfod"

/* What a candidate must match: the object's build-id, or its debuglink CRC. */
struct want {
	char build_id[ELF_BUILD_ID_HEX_LEN]; /* "" when the object has none */
	bool check_crc;
	bool nofollow; /* next to the object: a directory its owner controls */
	int root_fd;   /* the process's root, paths resolved inside it; -1: ours */
	uint32_t crc;
	const char *via;
};

static uint64_t refused_total;

uint64_t debug_file_refused_total(void)
{
	return __atomic_load_n(&refused_total, __ATOMIC_RELAXED);
}

static void refuse(const struct debug_file_search *s, const struct want *w, const char *path,
		   const char *why)
{
	__atomic_fetch_add(&refused_total, 1, __ATOMIC_RELAXED);
	if (s->refused)
		s->refused(s->ctx, w->via, path, why);
}

#define CRC_CHUNK (1u << 20)

/*
 * zlib's CRC-32 of the whole file (@size bytes), as objcopy --add-gnu-debuglink
 * computes it: read with pread in chunks, never mapped (a file truncated under
 * a mapping is SIGBUS), the deadline checked between chunks. NULL, or why not.
 */
static const char *file_crc32(const struct debug_file_search *s, int fd, uint64_t size,
			      uint32_t *out)
{
	uint64_t deadline = s->deadline_ns ? s->deadline_ns : mono_ns() + DEBUG_FILE_CRC_NS_DEFAULT;
	uLong crc = crc32(0, Z_NULL, 0);
	const char *why = NULL;
	uint64_t off = 0;
	unsigned char *buf = malloc(CRC_CHUNK);

	if (!buf)
		return "cannot be read: out of memory";
	while (off < size) {
		size_t want = size - off < CRC_CHUNK ? (size_t)(size - off) : CRC_CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);

		if (n <= 0) {
			/* counted truncated by the caller, which checks the size */
			why = "was cut short while its CRC was read";
			break;
		}
		crc = crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
		if ((s->cancel && __atomic_load_n(s->cancel, __ATOMIC_RELAXED)) ||
		    mono_ns() > deadline) {
			why = "took past the deadline to check its CRC";
			break;
		}
	}
	free(buf);
	*out = (uint32_t)crc;
	return why;
}

/* Takes @fd (@path) into @out if it is the debug file @w describes; 0, or -1 with fd closed. */
static int check_candidate(const struct debug_file_search *s, const struct want *w, int fd,
			   const char *path, struct debug_file *out)
{
	char id[ELF_BUILD_ID_HEX_LEN];
	const char *why = NULL;
	struct stat st;
	uint32_t crc;
	Elf *e = NULL;

	if (fstat(fd, &st) < 0) {
		why = strerror(errno);
		goto refused;
	}
	if (!S_ISREG(st.st_mode)) {
		why = "is not a regular file";
		goto refused;
	}
	if (s->self && st.st_dev == s->self->st_dev && st.st_ino == s->self->st_ino) {
		why = "is the object itself";
		goto refused;
	}
	e = elf_read_begin(fd);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		why = "is not an ELF file";
		goto refused;
	}
	if (w->build_id[0] && elf_build_id_hex(e, id, sizeof(id)) == 0) {
		/* a stale debug file from another build would describe other code */
		if (strcmp(id, w->build_id) != 0)
			why = "has a different build-id";
	} else if (w->check_crc) {
		/* the CRC reads the whole file: a candidate planted huge must not cost that */
		if (st.st_size > DEBUG_FILE_CRC_MAX)
			why = "is too large to check its CRC";
		else if (!(why = file_crc32(s, fd, (uint64_t)st.st_size, &crc)) && crc != w->crc)
			why = "does not match the .gnu_debuglink CRC";
	} else if (w->build_id[0]) {
		why = "has no build-id";
	}
	if (!why && s->unusable)
		why = s->unusable(e, s->ctx);
	/* whatever it was refused for, a short read may be why (counted there) */
	if (why && elf_read_truncated(fd, (uint64_t)st.st_size))
		why = "was truncated while it was read";
	if (why)
		goto refused;
	out->fd = fd;
	out->elf = e;
	out->size = (uint64_t)st.st_size;
	snprintf(out->path, sizeof(out->path), "%s", path);
	return 0;
refused:
	refuse(s, w, path, why);
	if (e)
		elf_end(e);
	close(fd);
	return -1;
}

/* Opens @path into @out if it is the debug file @w describes; 0 or -1. */
static int try_candidate(const struct debug_file_search *s, const struct want *w, const char *path,
			 struct debug_file *out)
{
	int fd;

	if (w->root_fd >= 0)
		fd = w->nofollow ? open_in_root(w->root_fd, path)
				 : open_beneath_root(w->root_fd, path);
	else
		fd = w->nofollow ? open_regular_nofollow(path) : open_regular(path);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ENOTDIR)
			refuse(s, w, path,
			       fd == -EINVAL  ? "is not a regular file"
			       : fd == -ELOOP ? "is a symbolic link"
			       : fd == -EXDEV ? "is a symbolic link out of the process's root"
					      : strerror(-fd));
		return -1;
	}
	return check_candidate(s, w, fd, path, out);
}

/*
 * Reads .gnu_debuglink: a bare file name and its CRC. Returns 0, -1 when
 * absent or odd, -2 when the name is a path (*name set).
 */
static int read_debuglink(Elf *e, const char **name, uint32_t *crc)
{
	/* a file name, padding and a CRC: anything larger is not a debuglink */
	uint64_t left = PATH_MAX + 8;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t len, off;

	scn = elf_section_by_name(e, VIA_DEBUGLINK, &sh);
	if (!scn || sh.sh_type != SHT_PROGBITS)
		return -1;
	d = elf_read_section(scn, &left, NULL);
	if (!d || !d->d_buf)
		return -1;
	len = strnlen(d->d_buf, d->d_size);
	/* The CRC follows the NUL, 4-byte aligned, in the file's byte order. */
	off = (len + 1 + 3) & ~(size_t)3;
	if (len == 0 || len == d->d_size || off + 4 > d->d_size)
		return -1;
	*name = d->d_buf;
	/* a debuglink is a bare file name; a path could point anywhere */
	if (strchr(*name, '/'))
		return -2;
	memcpy(crc, (const char *)d->d_buf + off, 4);
	return 0;
}

/* snprintf that refuses to truncate: a cut path could open some other file. */
__attribute__((format(printf, 3, 4))) static bool path_fmt(char *buf, size_t len, const char *fmt,
							   ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

static int find_in(Elf *e, const struct debug_file_search *s, struct want *w,
		   struct debug_file *out)
{
	const char *root = s->root && s->root[0] ? s->root : NULL;
	const char *link, *slash;
	char cand[PATH_MAX], dir[PATH_MAX];
	int err;

	if (root && strlen(w->build_id) > 2 &&
	    path_fmt(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", root, w->build_id,
		     w->build_id + 2) &&
	    !try_candidate(s, w, cand, out))
		return 0;

	if (!s->obj_path)
		return -1;
	w->check_crc = true;
	w->via = VIA_DEBUGLINK;
	err = read_debuglink(e, &link, &w->crc);
	if (err == -2)
		refuse(s, w, link, "is a path, not a file name");
	if (err)
		return -1;
	slash = strrchr(s->obj_path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (!path_fmt(dir, sizeof(dir), "%.*s",
			   slash == s->obj_path ? 1 : (int)(slash - s->obj_path), s->obj_path))
		return -1;
	/*
	 * gdb's order: next to the object, its .debug/, then the global tree.  The
	 * first two are the object owner's directories: a link planted there is
	 * not followed.
	 */
	w->nofollow = true;
	if (path_fmt(cand, sizeof(cand), "%s/%s", dir, link) && !try_candidate(s, w, cand, out))
		return 0;
	if (path_fmt(cand, sizeof(cand), "%s/.debug/%s", dir, link) &&
	    !try_candidate(s, w, cand, out))
		return 0;
	w->nofollow = false;
	if (root && dir[0] == '/' && path_fmt(cand, sizeof(cand), "%s%s/%s", root, dir, link) &&
	    !try_candidate(s, w, cand, out))
		return 0;
	return -1;
}

int debug_file_find(Elf *e, const struct debug_file_search *s, struct debug_file *out)
{
	struct want w = {.via = VIA_BUILD_ID, .root_fd = -1};
	struct debug_file_search in_root;
	int ret;

	out->fd = -1;
	out->elf = NULL;
	out->path[0] = '\0';
	if (elf_build_id_hex(e, w.build_id, sizeof(w.build_id)) < 0)
		w.build_id[0] = '\0';
	if (s->pid) {
		w.root_fd = open_proc_root(s->pid);
		/*
		 * A process gone (or its root out of reach) has no directories of
		 * its own any more: only its build-id still names a debug file, and
		 * it names the same one in our tree (candidates are checked against
		 * it).  Its debuglink is a path of its root: never followed in ours.
		 * A short process often goes between its load and its names: had its
		 * objects kept their .dynsym names, every later process sharing
		 * them would have too (libc.so.6+0x271d0, __libc_start_call_main).
		 */
		if (w.root_fd < 0) {
			if (!w.build_id[0])
				return -1;
			in_root = *s;
			in_root.pid = 0;
			in_root.obj_path = NULL;
			return find_in(e, &in_root, &w, out);
		}
		if (s->obj_path) {
			in_root = *s;
			in_root.obj_path = path_in_proc_root(s->pid, s->obj_path);
			s = &in_root;
		}
	}
	ret = find_in(e, s, &w, out);
	if (w.root_fd >= 0)
		close(w.root_fd);
	return ret;
}

int debug_file_take(int fd, const char *path, const char *build_id,
		    const struct debug_file_search *s, struct debug_file *out)
{
	struct want w = {.via = VIA_FETCHED, .root_fd = -1};

	out->fd = -1;
	out->elf = NULL;
	out->path[0] = '\0';
	/* fetched by build-id: a file without the one asked for is another object's */
	if (!build_id || !build_id[0] || strlen(build_id) >= sizeof(w.build_id)) {
		close(fd);
		return -1;
	}
	snprintf(w.build_id, sizeof(w.build_id), "%s", build_id);
	return check_candidate(s, &w, fd, path, out);
}

void debug_file_close(struct debug_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}
