/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The arm64 kernel's types for the BPF programs: vmlinux_btf.h is the BTF of
 * Debian's linux-image-6.1.0-47-cloud-arm64 (6.1.170), dumped by bpftool
 * (make arm64-vmlinux), plus the types of later kernels the programs use
 * through __weak kfuncs, checked for at load time.
 */
#ifndef CFIPROF_VMLINUX_ARM64_H
#define CFIPROF_VMLINUX_ARM64_H

#include "vmlinux_btf.h"

/* Linux 6.4: the open-coded VMA iterator (bpf/lifecycle.bpf.h) */
struct bpf_iter_task_vma {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

#endif
