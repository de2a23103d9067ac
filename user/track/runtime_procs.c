// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The runtime_procs map's entries; see runtime_procs.h. */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "bpf/cfiprof_abi.h"
#include "user/track/runtime_procs.h"

int runtime_procs_put(int fd, uint32_t pid, uint8_t rt, bool keep_bp, const void *data, size_t size)
{
	struct cfi_runtime_proc e, old;

	if (fd < 0)
		return 0;
	if (size > sizeof(e.data)) {
		errno = EINVAL;
		return -1;
	}
	if (!bpf_map_lookup_elem(fd, &pid, &old) && old.runtime != RT_NONE && old.runtime < rt) {
		errno = EEXIST;
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.runtime = rt;
	e.keep_bp = keep_bp;
	memcpy(e.data, data, size);
	return bpf_map_update_elem(fd, &pid, &e, BPF_ANY) ? -1 : 0;
}

void runtime_procs_drop(int fd, uint32_t pid, uint8_t rt)
{
	struct cfi_runtime_proc old;

	if (fd >= 0 && !bpf_map_lookup_elem(fd, &pid, &old) && old.runtime == rt)
		bpf_map_delete_elem(fd, &pid);
}

bool runtime_procs_has(int fd, uint32_t pid)
{
	struct cfi_runtime_proc e;

	return fd >= 0 && !bpf_map_lookup_elem(fd, &pid, &e) && e.runtime != RT_NONE;
}
