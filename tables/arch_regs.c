// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The registers each architecture's rules are written in; see internal.h. */
#include <elf.h>

#include "tables/internal.h"

static const struct cfi_arch_regs arch_regs[CFI_ARCH_MAX] = {
    [CFI_ARCH_X86_64] = {.arch = CFI_ARCH_X86_64,
			 .sp = DW_REG_RSP,
			 .fp = DW_REG_RBP,
			 .carried = DW_REG_RBX,
			 .pc = DW_REG_RIP},
    /* the return address is in x30 until a prologue saves it (AAPCS64) */
    [CFI_ARCH_ARM64] = {.arch = CFI_ARCH_ARM64,
			.sp = DW_REG_A64_SP,
			.fp = DW_REG_A64_FP,
			.carried = DW_REG_NONE,
			.pc = DW_REG_NONE,
			.ra_in_lr = true},
};

const struct cfi_arch_regs *cfi_arch_regs(int arch)
{
	return arch >= 0 && arch < CFI_ARCH_MAX ? &arch_regs[arch] : NULL;
}

const struct cfi_arch_regs *cfi_arch_regs_of_machine(unsigned int e_machine)
{
	switch (e_machine) {
	case EM_X86_64:
		return &arch_regs[CFI_ARCH_X86_64];
	case EM_AARCH64:
		return &arch_regs[CFI_ARCH_ARM64];
	default:
		return NULL;
	}
}

const char *cfi_arch_name(int arch)
{
	switch (arch) {
	case CFI_ARCH_X86_64:
		return "x86-64";
	case CFI_ARCH_ARM64:
		return "arm64";
	default:
		return "unknown";
	}
}
