// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Loaded BPF programs named as kallsyms names them; see bpf_names.h. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/session/bpf_names.h"
#include "user/symbolize/kallsyms.h"

void bpf_btf_cache_free(struct bpf_btf_cache *c)
{
	btf__free(c->btf);
	c->btf = NULL;
	c->id = 0;
}

int bpf_names_add_fd(int fd, struct ksyms *k, struct bpf_btf_cache *c)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), n, i, rec;
	__u64 *addrs = NULL;
	__u32 *lens = NULL;
	__u8(*tags)[BPF_TAG_SIZE] = NULL;
	struct bpf_func_info *funcs = NULL;
	struct btf *btf = NULL;
	int added = 0;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.nr_jited_ksyms)
		return 0;
	n = info.nr_jited_ksyms;
	rec = info.func_info_rec_size ? info.func_info_rec_size : sizeof(*funcs);
	addrs = calloc(n, sizeof(*addrs));
	lens = calloc(n, sizeof(*lens));
	tags = calloc(n, sizeof(*tags));
	funcs = info.nr_func_info == n ? calloc(n, rec) : NULL;
	if (!addrs || !lens || !tags)
		goto cleanup;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = n;
	info.jited_ksyms = (__u64)(unsigned long)addrs;
	info.nr_jited_func_lens = n;
	info.jited_func_lens = (__u64)(unsigned long)lens;
	info.nr_prog_tags = n;
	info.prog_tags = (__u64)(unsigned long)tags;
	if (funcs) {
		info.nr_func_info = n;
		info.func_info_rec_size = rec;
		info.func_info = (__u64)(unsigned long)funcs;
	}
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		goto cleanup;
	if (funcs && info.btf_id) {
		if (c->id != info.btf_id) {
			bpf_btf_cache_free(c);
			c->btf = btf__load_from_kernel_by_id(info.btf_id);
			c->id = c->btf ? info.btf_id : 0;
		}
		btf = c->btf;
	}
	for (i = 0; i < n && addrs[i]; i++) {
		const struct bpf_func_info *fi =
			funcs ? (const void *)((const char *)funcs + (size_t)i * rec) : NULL;
		const struct btf_type *t = btf && fi ? btf__type_by_id(btf, fi->type_id) : NULL;
		const char *fname = t ? btf__name_by_offset(btf, t->name_off) : NULL;
		char name[128];
		int o, b;

		/* the kernel's bpf_get_prog_name(): the function's tag, then its BTF name */
		o = snprintf(name, sizeof(name), "bpf_prog_");
		for (b = 0; b < BPF_TAG_SIZE; b++)
			o += snprintf(name + o, sizeof(name) - (size_t)o, "%02x", tags[i][b]);
		snprintf(name + o, sizeof(name) - (size_t)o, "_%s [bpf]",
			 fname ? fname : (i == 0 ? info.name : "F"));
		if (ksyms_add(k, addrs[i], addrs[i] + (lens[i] ? lens[i] : 1), name))
			break;
		added++;
	}
cleanup:
	free(funcs);
	free(tags);
	free(lens);
	free(addrs);
	return added;
}

int bpf_names_add_all(struct ksyms *k)
{
	struct bpf_btf_cache cache = {0};
	__u32 id = 0;
	int added = 0, seen = 0;

	while (seen < BPF_NAMES_MAX && !bpf_prog_get_next_id(id, &id)) {
		/* gone since it was listed: the next id goes on from this one */
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		added += bpf_names_add_fd(fd, k, &cache);
		close(fd);
		seen++;
	}
	bpf_btf_cache_free(&cache);
	if (added)
		ksyms_sort(k);
	return added;
}
