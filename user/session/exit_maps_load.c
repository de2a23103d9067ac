// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* on_exit_maps' object, loaded after the other (exit_maps_load.h). */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "exit_maps.skel.h"
#include "user/session/exit_maps_load.h"
#include "user/session/kernel_btf.h"

int exit_maps_kfunc_ids(int32_t ids[EXIT_KFUNC_MAX])
{
	static const char *const names[EXIT_KFUNC_MAX] = {
#define EXIT_MAPS_KFUNC_NAME(id, name) [EXIT_KFUNC_##id] = #name,
	    EXIT_MAPS_KFUNCS(EXIT_MAPS_KFUNC_NAME)
#undef EXIT_MAPS_KFUNC_NAME
	};
	int found = kernel_btf_func_ids(names, ids, EXIT_KFUNC_MAX);

	return found < 0 ? found : found < EXIT_KFUNC_MAX ? -ENOENT : 0;
}

int exit_maps_patch_kfuncs(struct bpf_program *prog, const int32_t ids[EXIT_KFUNC_MAX])
{
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	int err, patched = 0;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	for (size_t i = 0; i < n; i++) {
		struct bpf_insn *in = &insns[i];
		uint32_t k = (uint32_t)in->imm - EXIT_MAPS_KFUNC_BASE;

		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg || k >= EXIT_KFUNC_MAX)
			continue;
		in->src_reg = BPF_PSEUDO_KFUNC_CALL;
		in->off = 0; /* vmlinux's BTF, not a module's */
		in->imm = ids[k];
		patched++;
	}
	err = patched ? bpf_program__set_insns(prog, insns, n) : -ENOENT;
	free(insns);
	return err;
}

struct exit_maps_bpf *exit_maps_load(const struct bpf_object *shared, const char *core_path,
				     const int32_t ids[EXIT_KFUNC_MAX])
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_path);
	struct exit_maps_bpf *skel = exit_maps_bpf__open_opts(&oo);
	struct bpf_map *m;
	int err = 0, fd;

	if (!skel)
		return NULL;
	/* every map it declares is the other object's but its own constants */
	bpf_object__for_each_map(m, skel->obj)
	{
		if (bpf_map__is_internal(m))
			continue;
		fd = bpf_object__find_map_fd_by_name(shared, bpf_map__name(m));
		err = fd < 0 ? -ENOENT : bpf_map__reuse_fd(m, fd);
		if (err)
			break;
	}
	err = err ? err : exit_maps_patch_kfuncs(skel->progs.on_exit_maps, ids);
	err = err ? err : exit_maps_bpf__load(skel);
	if (err) {
		exit_maps_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}
