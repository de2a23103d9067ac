/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel frames named by the kernel's own symbol lookup (struct
 * cfi_ksym_io): user space runs ksym_names (BPF_PROG_TEST_RUN) for the
 * addresses its samples hold, instead of reading all of /proc/kallsyms
 * (over a hundred thousand lines the kernel formats at every start).  The
 * names are current at the lookup: modules and BPF programs loaded since
 * the start are named too.
 */
#ifndef CFIPROF_KSYM_NAMES_BPF_H
#define CFIPROF_KSYM_NAMES_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct cfi_ksym_io);
} ksym_io SEC(".maps");

SEC("syscall")
int ksym_names(void *ctx)
{
	struct cfi_ksym_io *io;
	__u32 zero = 0;
	__u64 arg[1];

	(void)ctx;
	io = bpf_map_lookup_elem(&ksym_io, &zero);
	if (!io)
		return 1;
	arg[0] = io->addr;
	bpf_snprintf(io->name, KSYM_NAME_BYTES, "%pS", arg, sizeof(arg));
	return 0;
}

#endif
