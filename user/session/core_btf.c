// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The CO-RE types' cache (core_btf.h). */
#include <bpf/btf.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/hash.h"
#include "user/session/core_btf.h"
#include "user/session/kernel_btf.h"

#define CORE_BTF_PREFIX "core-btf-"
/* the kernel's whole BTF is 5-6 MB; what one object relocates against, a small part */
#define CORE_BTF_MAX_BYTES (16u << 20)
/* files of other kernels or builds kept beside this one's */
#define CORE_BTF_KEEP_OTHERS 3
/* struct nesting in the kernel's types is a few levels; more is not a kernel's BTF */
#define REDUCE_MAX_DEPTH 64

const void *core_btf_elf_section(const void *elf, size_t len, size_t *sec_len)
{
	const Elf64_Ehdr *eh = elf;
	const Elf64_Shdr *sh, *strs;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(*sh) ||
	    eh->e_shoff > len || (size_t)eh->e_shnum * sizeof(*sh) > len - eh->e_shoff ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (const void *)((const char *)elf + eh->e_shoff);
	strs = &sh[eh->e_shstrndx];
	for (int i = 0; i < eh->e_shnum; i++) {
		if (strs->sh_offset > len || sh[i].sh_name >= strs->sh_size ||
		    strs->sh_size > len - strs->sh_offset || sh[i].sh_offset > len ||
		    sh[i].sh_size > len - sh[i].sh_offset)
			continue;
		if (!strncmp((const char *)elf + strs->sh_offset + sh[i].sh_name, ".BTF",
			     strs->sh_size - sh[i].sh_name) &&
		    sh[i].sh_type == SHT_PROGBITS) {
			*sec_len = sh[i].sh_size;
			return (const char *)elf + sh[i].sh_offset;
		}
	}
	return NULL;
}

void core_btf_find(struct core_btf *c, const void *const elf[], const size_t elf_len[], int n)
{
	uint64_t h = HASH_FNV_OFFSET;
	char id[128];
	struct stat st;

	memset(c, 0, sizeof(*c));
	c->dir_fd = c->file_fd = -1;
	/*
	 * The objects' own types, all the reduced file depends on: another
	 * build with the same types shares it.
	 */
	for (int i = 0; i < n && i < CORE_BTF_OBJECTS; i++) {
		size_t len;
		const void *btf = core_btf_elf_section(elf[i], elf_len[i], &len);

		if (!btf)
			return;
		h = hash_bytes(h, btf, len);
		c->elf[i] = elf[i];
		c->elf_len[i] = elf_len[i];
		c->nr_objects++;
	}
	if (!c->nr_objects || kernel_build_id(id, sizeof(id)))
		return;
	snprintf(c->name, sizeof(c->name), CORE_BTF_PREFIX "%.64s-%016llx.btf", id,
		 (unsigned long long)h);
	c->dir_fd = cache_dir_open(false);
	if (c->dir_fd == -EPERM)
		c->refused = "the cache directory is another user's or writable by others";
	if (c->dir_fd < 0) {
		c->dir_fd = -1;
		return;
	}
	c->file_fd = openat(c->dir_fd, c->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (c->file_fd < 0)
		return;
	if (fstat(c->file_fd, &st) || !S_ISREG(st.st_mode) || !cache_private(&st) || !st.st_size ||
	    st.st_size > CORE_BTF_MAX_BYTES) {
		c->refused = "not a regular file of ours, or of no plausible size";
		core_btf_drop(c);
		return;
	}
	/* libbpf opens a path: this one is the file checked, whatever is renamed meanwhile */
	snprintf(c->custom, sizeof(c->custom), "/proc/self/fd/%d", c->file_fd);
}

void core_btf_drop(struct core_btf *c)
{
	if (c->file_fd >= 0) {
		close(c->file_fd);
		c->file_fd = -1;
		if (c->dir_fd >= 0)
			unlinkat(c->dir_fd, c->name, 0);
	}
	c->custom[0] = 0;
}

struct reducer {
	const struct btf *src;
	struct btf *dst;
	int32_t *done; /* src id -> dst id + 1 (0: not copied yet) */
	int void_ptr;  /* the one pointer every pointer becomes (0: none yet) */
};

/*
 * A relocation's access string walks through a struct's members and arrays,
 * never through a pointer, and libbpf's compatibility check of a pointer
 * field stops at its kind: so what is reached by value is copied whole and
 * every pointer becomes void *, which keeps the closure to what is embedded.
 */
static int copy_type(struct reducer *r, uint32_t id, int depth)
{
	const struct btf_type *t;
	const char *name;
	int out, err;

	if (!id)
		return 0;
	if (r->done[id])
		return r->done[id] - 1;
	if (depth > REDUCE_MAX_DEPTH)
		return -ELOOP;
	t = btf__type_by_id(r->src, id);
	if (!t)
		return -EINVAL;
	name = btf__name_by_offset(r->src, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		out = btf__add_int(r->dst, name, t->size, btf_int_encoding(t));
		break;
	case BTF_KIND_FLOAT:
		out = btf__add_float(r->dst, name, t->size);
		break;
	case BTF_KIND_PTR:
		if (!r->void_ptr)
			r->void_ptr = btf__add_ptr(r->dst, 0);
		out = r->void_ptr;
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int elem = copy_type(r, a->type, depth + 1);
		int index = elem < 0 ? elem : copy_type(r, a->index_type, depth + 1);

		out = index < 0 ? index : btf__add_array(r->dst, index, elem, a->nelems);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: {
		const struct btf_member *m = btf_members(t);
		int n = btf_vlen(t);

		/* members' types first: libbpf adds fields to the type added last */
		for (int i = 0; i < n; i++) {
			err = copy_type(r, m[i].type, depth + 1);
			if (err < 0)
				return err;
		}
		out = btf_is_struct(t) ? btf__add_struct(r->dst, name, t->size)
				       : btf__add_union(r->dst, name, t->size);
		for (int i = 0; out > 0 && i < n; i++) {
			err = btf__add_field(r->dst, btf__name_by_offset(r->src, m[i].name_off),
					     r->done[m[i].type] - 1, btf_member_bit_offset(t, i),
					     btf_member_bitfield_size(t, i));
			if (err)
				return err;
		}
		break;
	}
	case BTF_KIND_ENUM: {
		const struct btf_enum *v = btf_enum(t);

		out = btf__add_enum(r->dst, name, t->size);
		for (int i = 0; out > 0 && i < btf_vlen(t); i++)
			if ((err = btf__add_enum_value(
				 r->dst, btf__name_by_offset(r->src, v[i].name_off), v[i].val)))
				return err;
		break;
	}
	case BTF_KIND_ENUM64: {
		const struct btf_enum64 *v = btf_enum64(t);

		out = btf__add_enum64(r->dst, name, t->size, btf_kflag(t));
		for (int i = 0; out > 0 && i < btf_vlen(t); i++)
			if ((err = btf__add_enum64_value(r->dst,
							 btf__name_by_offset(r->src, v[i].name_off),
							 btf_enum64_value(&v[i]))))
				return err;
		break;
	}
	case BTF_KIND_FWD:
		out = btf__add_fwd(r->dst, name, btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
		break;
	case BTF_KIND_TYPEDEF:
		err = copy_type(r, t->type, depth + 1);
		out = err < 0 ? err : btf__add_typedef(r->dst, name, err);
		break;
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		/* libbpf skips modifiers on both sides before it compares */
		out = copy_type(r, t->type, depth + 1);
		break;
	default:
		/* functions and variables: not reached by value from a type */
		return -EINVAL;
	}
	if (out < 0)
		return out;
	r->done[id] = out + 1;
	return out;
}

/* libbpf's "essential" name: a local type's flavor suffix (___v2) dropped */
static size_t essential_len(const char *name)
{
	const char *f = strstr(name, "___");

	return f ? (size_t)(f - name) : strlen(name);
}

static bool relocatable_kind(int kind)
{
	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION || kind == BTF_KIND_ENUM ||
	       kind == BTF_KIND_ENUM64 || kind == BTF_KIND_TYPEDEF;
}

static bool same_kind(int a, int b)
{
	bool ea = a == BTF_KIND_ENUM || a == BTF_KIND_ENUM64;
	bool eb = b == BTF_KIND_ENUM || b == BTF_KIND_ENUM64;

	return a == b || (ea && eb);
}

struct named {
	const char *name;
	uint32_t id;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Every kernel type of the name and kind of one of local's (its essential name). */
static int reduce_local(struct reducer *r, const struct named *idx, uint32_t nk,
			const struct btf *local)
{
	uint32_t nl = btf__type_cnt(local);
	int err;

	for (uint32_t lid = 1; lid < nl; lid++) {
		const struct btf_type *lt = btf__type_by_id(local, lid);
		const char *lname = btf__name_by_offset(local, lt->name_off);
		size_t elen = essential_len(lname), lo = 0, hi = nk;
		char ename[256];

		if (!lt->name_off || !relocatable_kind(btf_kind(lt)) || !elen ||
		    elen >= sizeof(ename))
			continue;
		memcpy(ename, lname, elen);
		ename[elen] = 0;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (strcmp(idx[mid].name, ename) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nk && !strcmp(idx[lo].name, ename); lo++) {
			const struct btf_type *kt = btf__type_by_id(r->src, idx[lo].id);

			if (!same_kind(btf_kind(kt), btf_kind(lt)))
				continue;
			err = copy_type(r, idx[lo].id, 0);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

struct btf *core_btf_reduce(const struct btf *kernel, const struct btf *const local[], int n)
{
	uint32_t nt = btf__type_cnt(kernel), nk = 0;
	struct reducer r = {.src = kernel};
	struct named *idx = calloc(nt, sizeof(*idx));
	int err = -ENOMEM;

	r.done = calloc(nt, sizeof(*r.done));
	r.dst = btf__new_empty();
	if (!idx || !r.done || !r.dst)
		goto fail;
	/* one pass over the kernel's types, sorted by name, instead of one per local type */
	for (uint32_t id = 1; id < nt; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);

		if (t->name_off && relocatable_kind(btf_kind(t)))
			idx[nk++] = (struct named){btf__name_by_offset(kernel, t->name_off), id};
	}
	qsort(idx, nk, sizeof(*idx), named_cmp);
	for (int i = 0; i < n; i++) {
		err = reduce_local(&r, idx, nk, local[i]);
		if (err)
			goto fail;
	}
	free(idx);
	free(r.done);
	return r.dst;
fail:
	free(idx);
	free(r.done);
	btf__free(r.dst);
	errno = -err;
	return NULL;
}

struct aged {
	char name[96];
	time_t mtime;
};

static int newer_first(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	return (x->mtime < y->mtime) - (x->mtime > y->mtime);
}

/*
 * Other files of the cache (other kernels', other builds'): the newest few
 * are kept, for two cfiprof builds used in turn; the rest removed.
 */
static void remove_others(struct core_btf *c)
{
	int fd = openat(c->dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct aged old[64];
	struct dirent *e;
	struct stat st;
	int n = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) && n < (int)(sizeof(old) / sizeof(old[0])))
		if (!strncmp(e->d_name, CORE_BTF_PREFIX, strlen(CORE_BTF_PREFIX)) &&
		    strcmp(e->d_name, c->name) && strlen(e->d_name) < sizeof(old[0].name) &&
		    !fstatat(c->dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			memcpy(old[n].name, e->d_name, strlen(e->d_name) + 1);
			old[n++].mtime = st.st_mtime;
		}
	closedir(d);
	qsort(old, (size_t)n, sizeof(old[0]), newer_first);
	for (int i = CORE_BTF_KEEP_OTHERS; i < n; i++)
		unlinkat(c->dir_fd, old[i].name, 0);
}

int core_btf_write(struct core_btf *c)
{
	struct btf *kernel = NULL, *reduced = NULL, *local[CORE_BTF_OBJECTS] = {0};
	const void *raw;
	uint32_t len;
	int err, i;

	if (!c->name[0])
		return -ENOENT;
	if (c->dir_fd < 0) {
		if (c->refused)
			return -EPERM;
		c->dir_fd = cache_dir_open(true);
		if (c->dir_fd < 0) {
			err = c->dir_fd;
			c->dir_fd = -1;
			return err;
		}
	}
	for (i = 0; i < c->nr_objects; i++) {
		size_t sec_len;
		const void *sec = core_btf_elf_section(c->elf[i], c->elf_len[i], &sec_len);

		local[i] = sec ? btf__new(sec, (__u32)sec_len) : NULL;
		if (!local[i]) {
			err = -EINVAL;
			goto cleanup;
		}
	}
	kernel = btf__load_vmlinux_btf();
	err = kernel ? 0 : -errno;
	if (err)
		goto cleanup;
	reduced = core_btf_reduce(kernel, (const struct btf *const *)local, c->nr_objects);
	err = reduced ? 0 : -errno;
	if (err)
		goto cleanup;
	raw = btf__raw_data(reduced, &len);
	if (!raw || len > CORE_BTF_MAX_BYTES) {
		err = -E2BIG;
		goto cleanup;
	}
	err = cache_file_write(c->name, raw, len);
	if (!err)
		remove_others(c);
cleanup:
	btf__free(reduced);
	btf__free(kernel);
	for (i = 0; i < c->nr_objects; i++)
		btf__free(local[i]);
	return err;
}

void core_btf_describe(const struct core_btf *c, bool used, int written, char *buf, size_t len)
{
	if (used)
		snprintf(buf, len, "from the cache, %s/%s", cache_dir_path(), c->name);
	else if (c->refused)
		snprintf(buf, len, "from the kernel's BTF (the cache in %s refused: %s)",
			 cache_dir_path(), c->refused);
	else if (!c->name[0])
		snprintf(buf, len, "from the kernel's BTF (no cache: no build ID for this kernel)");
	else if (written == -EAGAIN)
		snprintf(buf, len, "from the kernel's BTF, being cached in %s", cache_dir_path());
	else if (written)
		snprintf(buf, len, "from the kernel's BTF (cannot cache them in %s: %s)",
			 cache_dir_path(), strerror(-written));
	else
		snprintf(buf, len, "from the kernel's BTF, now cached as %s/%s", cache_dir_path(),
			 c->name);
}

void core_btf_close(struct core_btf *c)
{
	if (c->file_fd >= 0)
		close(c->file_fd);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	c->file_fd = c->dir_fd = -1;
}
