// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's BTF read in place (kernel_btf.h). */
#include "user/session/kernel_btf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct kbtf {
	const char *data;
	size_t len;
	bool mapped;
	struct btf_header h;
};

/*
 * Mapped where the kernel allows it (6.16 on): sysfs reads a page per call,
 * and reading it whole was a read and a copy's page faults per page.  The
 * header is checked against the file's size before either section is used.
 */
static int kbtf_open(struct kbtf *k)
{
	struct stat st;
	char *buf;
	int err = -EINVAL, fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -errno;
	if (pread(fd, &k->h, sizeof(k->h), 0) != sizeof(k->h) || k->h.magic != BTF_MAGIC ||
	    k->h.hdr_len < sizeof(k->h) || fstat(fd, &st) || st.st_size > (1l << 30))
		goto cleanup;
	if ((uint64_t)k->h.hdr_len + k->h.str_off + k->h.str_len > (uint64_t)st.st_size ||
	    (uint64_t)k->h.hdr_len + k->h.type_off + k->h.type_len > (uint64_t)st.st_size)
		goto cleanup;
	k->len = (size_t)st.st_size;
	k->data = mmap(NULL, k->len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (k->data != MAP_FAILED) {
		k->mapped = true;
		err = 0;
		goto cleanup;
	}
	k->data = NULL;
	buf = malloc(k->len);
	err = -ENOMEM;
	if (!buf)
		goto cleanup;
	for (size_t got = 0; got < k->len;) {
		ssize_t n = pread(fd, buf + got, k->len - got, (off_t)got);

		if (n <= 0) {
			free(buf);
			err = n < 0 ? -errno : -EIO;
			goto cleanup;
		}
		got += (size_t)n;
	}
	k->data = buf;
	err = 0;
cleanup:
	close(fd);
	return err;
}

static void kbtf_close(struct kbtf *k)
{
	if (k->mapped)
		munmap((void *)k->data, k->len);
	else
		free((void *)k->data);
	k->data = NULL;
}

/* The offset of the whole string name in the string section, -1: none. */
static int64_t kbtf_string(const struct kbtf *k, const char *name)
{
	const char *strs = k->data + k->h.hdr_len + k->h.str_off;
	size_t len = k->h.str_len, nlen = strlen(name);

	for (const char *p = strs; p < strs + len;) {
		const char *hit = memmem(p, (size_t)(strs + len - p), name, nlen + 1);

		if (!hit)
			return -1;
		/* a whole string, not the tail of a longer one */
		if (hit == strs || hit[-1] == 0)
			return hit - strs;
		p = hit + 1;
	}
	return -1;
}

/* The bytes a type takes with what follows its header; 0: a kind this does not know. */
static size_t type_size(const struct btf_type *t)
{
	size_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_FWD:
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return sizeof(*t);
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return sizeof(*t) + sizeof(__u32);
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return sizeof(*t) + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return sizeof(*t) + vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return sizeof(*t) + vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return sizeof(*t) + vlen * sizeof(struct btf_var_secinfo);
	default:
		return 0;
	}
}

int kernel_btf_ids(const char *const names[], const uint8_t kinds[], int32_t ids[], int n)
{
	int64_t off[8];
	struct kbtf k;
	const char *types, *p;
	int32_t id = 1;
	int err, found = 0;

	if (n > (int)(sizeof(off) / sizeof(off[0])))
		return -E2BIG;
	err = kbtf_open(&k);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		ids[i] = 0;
		off[i] = kbtf_string(&k, names[i]);
	}
	types = k.data + k.h.hdr_len + k.h.type_off;
	for (p = types; found < n && p + sizeof(struct btf_type) <= types + k.h.type_len; id++) {
		const struct btf_type *t = (const struct btf_type *)p;
		size_t size = type_size(t);

		if (!size || size > (size_t)(types + k.h.type_len - p))
			break; /* a kind newer than this code: the rest cannot be walked */
		for (int i = 0; i < n; i++)
			if (!ids[i] && off[i] == (int64_t)t->name_off &&
			    BTF_INFO_KIND(t->info) == kinds[i]) {
				ids[i] = id;
				found++;
			}
		p += size;
	}
	kbtf_close(&k);
	return found;
}

int kernel_build_id(char *hex, size_t len)
{
	unsigned char buf[4096];
	size_t n = 0, off = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n < sizeof(buf) && (r = read(fd, buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)r;
	close(fd);
	while (off + sizeof(Elf64_Nhdr) <= n) {
		const Elf64_Nhdr *nh = (const void *)(buf + off);
		size_t name_at = off + sizeof(*nh), desc_at = name_at + ((nh->n_namesz + 3u) & ~3u);

		if (desc_at + nh->n_descsz > n || desc_at < name_at)
			break;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(buf + name_at, "GNU", 4) && nh->n_descsz && nh->n_descsz * 2 < len) {
			for (size_t i = 0; i < nh->n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", buf[desc_at + i]);
			return 0;
		}
		off = desc_at + ((nh->n_descsz + 3u) & ~3u);
	}
	return -ENOENT;
}
