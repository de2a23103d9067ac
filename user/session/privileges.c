// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capability checks with capget(2) (no libcap).  CAP_SYS_ADMIN implies the
 * BPF and perf capabilities on every kernel; CAP_BPF and CAP_PERFMON exist
 * since 5.8.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "user/session/privileges.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

bool privileges_check(bool other_processes)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	bool admin, ok = true;

	if (syscall(SYS_capget, &h, d))
		return true; /* cannot tell: let the kernel decide */
	admin = has_cap(d, CAP_SYS_ADMIN);
	if (!admin && !has_cap(d, CAP_BPF)) {
		fprintf(stderr, "cfiprof: missing CAP_BPF: needed to load the unwinder into the "
				"kernel (run as root, or grant it: setcap cap_bpf,cap_perfmon+ep)\n");
		ok = false;
	}
	if (!admin && !has_cap(d, CAP_PERFMON)) {
		fprintf(stderr, "cfiprof: missing CAP_PERFMON: needed to open sampling perf events "
				"and read kernel stacks\n");
		ok = false;
	}
	if (ok && other_processes && !admin && !has_cap(d, CAP_SYS_PTRACE))
		fprintf(stderr, "cfiprof: warning: no CAP_SYS_PTRACE: processes of other users "
				"cannot be read and will not unwind\n");
	return ok;
}
