/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Loaded BPF programs named as /proc/kallsyms names them ("bpf_prog_TAG_FUNC
 * [bpf]"), from the kernel's own list of programs: kallsyms lists none while
 * net.core.bpf_jit_kallsyms is 0, and a program loaded or unloaded during its
 * read can shift the entries it lists after.
 */
#ifndef CFIPROF_BPF_NAMES_H
#define CFIPROF_BPF_NAMES_H

#include <linux/types.h>

struct ksyms;
struct btf;

/* The BTF last loaded: a BPF object's programs share one. */
struct bpf_btf_cache {
	__u32 id;
	struct btf *btf;
};

/* Programs named per call at most: a host with more names the first ones. */
#define BPF_NAMES_MAX 8192

/* The program at fd's functions (main first, then subprograms) into k: how many. */
int bpf_names_add_fd(int fd, struct ksyms *k, struct bpf_btf_cache *c);
/* Every program loaded now (BPF_NAMES_MAX at most) into k, sorted: functions added. */
int bpf_names_add_all(struct ksyms *k);
void bpf_btf_cache_free(struct bpf_btf_cache *c);

#endif
