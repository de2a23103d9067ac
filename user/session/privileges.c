// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capability checks with capget(2) (no libcap).  CAP_SYS_ADMIN implies the
 * BPF and perf capabilities on every kernel; CAP_BPF and CAP_PERFMON exist
 * since 5.8.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
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
				"kernel (run as root; see " PRIVILEGES_ADVICE ")\n");
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

int privileges_raise(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};

	if (syscall(SYS_capget, &h, d))
		return -errno;
	/* installed with "+p": the capabilities are permitted, this makes them effective */
	if (d[0].effective == d[0].permitted && d[1].effective == d[1].permitted)
		return 0;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

int privileges_drop_all(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};

	/* nothing this process execs may get them back either */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}
