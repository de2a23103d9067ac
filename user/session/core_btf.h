/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's types the BPF object's CO-RE relocations need, cut out of the
 * kernel's BTF once per kernel and BPF object and kept in a cache file: libbpf
 * searches the whole kernel BTF for each relocated type otherwise (a scan of
 * every type, for each of them), at every start.  BTFGen's idea
 * (`bpftool gen min_core_btf`), done by the profiler for the kernel it runs on.
 */
#ifndef CFIPROF_CORE_BTF_H
#define CFIPROF_CORE_BTF_H

#include <stdbool.h>
#include <stddef.h>

struct btf;

#define CORE_BTF_OBJECTS 2

struct core_btf {
	int nr_objects;
	const void *elf[CORE_BTF_OBJECTS]; /* the BPF objects' ELF images (skeletons') */
	size_t elf_len[CORE_BTF_OBJECTS];
	int dir_fd;	     /* the cache directory (O_PATH), -1: none */
	int file_fd;	     /* the cache file found (O_PATH), -1: none */
	char name[96];	     /* the file's name for this kernel and object */
	char custom[64];     /* what libbpf opens: /proc/self/fd/N of file_fd */
	const char *refused; /* why a file there was not used (NULL: none was) */
};

/*
 * Finds the cache file for this kernel and the objects (their ELF images, n
 * <= CORE_BTF_OBJECTS, kept until core_btf_write): c->custom is set when one
 * is usable (for btf_custom_path), else "".  Never fails: without a cache
 * the kernel's BTF is used as before.
 */
void core_btf_find(struct core_btf *c, const void *const elf[], const size_t elf_len[], int n);
/* The file found did not fit the object: removed, not used again. */
void core_btf_drop(struct core_btf *c);
/* Writes the file from the kernel's BTF for the types the objects name: 0 or -errno. */
int core_btf_write(struct core_btf *c);
/*
 * The reduced BTF of the types the n BTFs of local name, from @kernel; NULL:
 * -errno in errno.
 */
struct btf *core_btf_reduce(const struct btf *kernel, const struct btf *const local[], int n);
/* An ELF image's .BTF section, NULL: none (*len its size). */
const void *core_btf_elf_section(const void *elf, size_t elf_len, size_t *len);
/* For record -v: where the types came from, whether they are cached now. */
void core_btf_describe(const struct core_btf *c, bool used, int written, char *buf, size_t len);
void core_btf_close(struct core_btf *c);

#endif
