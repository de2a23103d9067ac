// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Text forms of rules.  The column forms follow readelf --debug-dump=frames-interp
 * ("rsp+16", "c-8", "u", "exp") so that --dump output and the oracle test can
 * compare against binutils directly.
 */
#include <stdio.h>
#include <string.h>

#include "tables/internal.h"

static const char *const x86_64_regs[] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",  "r9",  "r10",
	"r11", "r12", "r13", "r14", "r15", "rip",
};

/* readelf's names (binutils dwarf.c): x86-64's by table, arm64's x0..x30, sp */
const char *dwarf_regname(int arch, unsigned int reg)
{
	static __thread char buf[16];

	if (arch == CFI_ARCH_ARM64) {
		if (reg == DW_REG_A64_SP)
			return "sp";
		snprintf(buf, sizeof(buf), reg < DW_REG_A64_SP ? "x%u" : "r%u", reg);
		return buf;
	}
	if (reg < sizeof(x86_64_regs) / sizeof(x86_64_regs[0]))
		return x86_64_regs[reg];
	if (reg >= 17 && reg <= 32) {
		snprintf(buf, sizeof(buf), "xmm%u", reg - 17);
		return buf;
	}
	snprintf(buf, sizeof(buf), "r%u", reg);
	return buf;
}

const char *cfi_strerror(int err)
{
	switch (err) {
	case CFI_OK:
		return "success";
	case CFI_ERR_IO:
		return "cannot read the file";
	case CFI_ERR_ELF:
		return "not a usable x86-64 or arm64 ELF file";
	case CFI_ERR_NO_CFI:
		return "no .eh_frame or .debug_frame";
	case CFI_ERR_MALFORMED:
		return "malformed CFI: no FDE could be used";
	case CFI_ERR_NOMEM:
		return "out of memory";
	case CFI_ERR_TOO_BIG:
		return "too many rules or rows for the table encoding";
	case CFI_ERR_BUDGET:
		return "over the build budget (time, FDEs, rows or section bytes)";
	default:
		return "unknown error";
	}
}

const char *cfi_unsupported_name(int reason)
{
	switch (reason) {
	case CFI_UNSUP_NONE:
		return "none";
	case CFI_UNSUP_CFA_REG:
		return "cfa-other-register";
	case CFI_UNSUP_CFA_EXPR:
		return "cfa-unknown-expression";
	case CFI_UNSUP_RA:
		return "ra-elsewhere";
	case CFI_UNSUP_RBP:
		return "rbp-elsewhere";
	case CFI_UNSUP_CFA_UNDEF:
		return "cfa-undefined";
	case CFI_UNSUP_RANGE:
		return "offset-out-of-range";
	case CFI_UNSUP_REG_LOST:
		return "cfa-register-lost";
	default:
		return "unknown";
	}
}

void cfi_rule_format_cfa(const struct cfi_rule *r, int arch, char *buf, size_t len)
{
	const struct cfi_arch_regs *regs = cfi_arch_regs(arch);

	if (!regs)
		regs = cfi_arch_regs(CFI_ARCH_X86_64);
	switch (r->cfa_kind) {
	case CFI_CFA_NONE:
		snprintf(buf, len, "none");
		break;
	case CFI_CFA_RSP:
	case CFI_CFA_RBP:
		snprintf(buf, len, "%s%+d",
			 dwarf_regname(arch, r->cfa_kind == CFI_CFA_RSP ? regs->sp : regs->fp),
			 r->cfa_off);
		break;
	case CFI_CFA_REG:
		snprintf(buf, len, "%s%+d", dwarf_regname(arch, (unsigned int)r->aux), r->cfa_off);
		break;
	case CFI_CFA_UNSUPPORTED:
		if (r->reason == CFI_UNSUP_CFA_REG) {
			snprintf(buf, len, "%s%+d", dwarf_regname(arch, (unsigned int)r->aux),
				 r->cfa_off);
			break;
		}
		if (r->reason == CFI_UNSUP_CFA_UNDEF) {
			snprintf(buf, len, "undef");
			break;
		}
		snprintf(buf, len, "exp");
		break;
	default: /* PLT, DEREF, SIGNAL: all DW_CFA_def_cfa_expression in the source */
		snprintf(buf, len, "exp");
		break;
	}
}

void cfi_rule_format_reg(int kind, int off, char *buf, size_t len)
{
	switch (kind) {
	case CFI_REG_SAME:
	case CFI_REG_UNDEFINED:
		snprintf(buf, len, "u");
		break;
	case CFI_REG_AT_CFA:
		snprintf(buf, len, "c%+d", off);
		break;
	case CFI_REG_VAL_CFA:
		snprintf(buf, len, "v%+d", off);
		break;
	case CFI_REG_AT_FP:
		snprintf(buf, len, "f%+d", off);
		break;
	default:
		snprintf(buf, len, "x");
		break;
	}
}

static const char *reg_kind_name(int kind)
{
	switch (kind) {
	case CFI_REG_SAME:
		return "same";
	case CFI_REG_UNDEFINED:
		return "undef";
	case CFI_REG_AT_CFA:
		return "at";
	case CFI_REG_VAL_CFA:
		return "val";
	case CFI_REG_AT_FP:
		return "atfp";
	default:
		return "unsupported";
	}
}

void cfi_rule_describe(const struct cfi_rule *r, int arch, char *buf, size_t len)
{
	const struct cfi_arch_regs *regs = cfi_arch_regs(arch);
	bool x86 = arch != CFI_ARCH_ARM64;
	char cfa[48];

	if (!regs)
		regs = cfi_arch_regs(CFI_ARCH_X86_64);
	switch (r->cfa_kind) {
	case CFI_CFA_PLT:
		snprintf(cfa, sizeof(cfa), "plt(rsp%+d,>=%d)", r->cfa_off, r->aux);
		break;
	case CFI_CFA_DEREF_RSP:
	case CFI_CFA_DEREF_RBP:
		snprintf(
		    cfa, sizeof(cfa), "*(%s%+d)%+d",
		    dwarf_regname(arch, r->cfa_kind == CFI_CFA_DEREF_RSP ? regs->sp : regs->fp),
		    r->cfa_off, r->aux);
		break;
	case CFI_CFA_SIGNAL:
		snprintf(cfa, sizeof(cfa), "signal-frame");
		break;
	default:
		cfi_rule_format_cfa(r, arch, cfa, sizeof(cfa));
		break;
	}
	/* arm64 carries no register through a walk: no rbx part */
	snprintf(buf, len, "cfa=%s %s=%s%+d ra=%s%+d", cfa, x86 ? "rbp" : "fp",
		 reg_kind_name(r->rbp_kind), r->rbp_off, reg_kind_name(r->ra_kind), r->ra_off);
	if (x86) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " rbx=%s%+d", reg_kind_name(r->rbx_kind), r->rbx_off);
	}
	if (r->reason) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " unsupported=%s", cfi_unsupported_name(r->reason));
	}
	if (r->hole_len) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " hole=+%u,%u", r->hole_off, r->hole_len);
	}
}
