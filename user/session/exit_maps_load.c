// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* on_exit_maps' object, loaded after the other (exit_maps_load.h). */
#include <bpf/libbpf.h>
#include <errno.h>

#include "exit_maps.skel.h"
#include "user/session/exit_maps_load.h"
#include "user/session/kfuncs.h"

bool exit_maps_supported(void)
{
	const struct kfunc_ids *ids = kfunc_ids();

	return ids->func[KFUNC_ITER_TASK_VMA_NEW] && ids->func[KFUNC_ITER_TASK_VMA_NEXT] &&
	       ids->func[KFUNC_ITER_TASK_VMA_DESTROY];
}

struct exit_maps_bpf *exit_maps_load(const struct bpf_object *shared, const char *core_path)
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
	err = err ? err : kfuncs_patch(skel->progs.on_exit_maps, kfunc_ids());
	err = err ? err : exit_maps_bpf__load(skel);
	if (err) {
		exit_maps_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}
