// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Field offsets of the supported perl versions; see perl_offsets.h. */
#include <stddef.h>

#include "tables/cfi_table.h"
#include "user/runtimes/perl/perl_offsets.h"

/* 5.36: the same layout on both architectures but for PL_phase (perl_offsets.h) */
#define PERL_5_36(arch_, phase_)                                                                   \
	{                                                                                          \
		.version = 0x0524, .arch = (arch_), .name = "5.36",                                \
		.bpf =                                                                             \
		    {                                                                              \
			.version = 0x0524,                                                         \
			.interp_curstackinfo = 224, /* PerlInterpreter.Icurstackinfo */            \
			.interp_curcop = 208,	    /* .Icurcop */                                 \
			.si_cxstack = 8,	    /* PERL_SI.si_cxstack */                       \
			.si_cxix = 32,		    /* .si_cxix */                                 \
			.si_prev = 16,		    /* .si_prev */                                 \
			.cx_size = 104,		    /* sizeof(PERL_CONTEXT) */                     \
			.cx_oldcop = 16,	    /* .blk_oldcop */                              \
			.cx_sub_cv = 72,	    /* .blk_sub.cv */                              \
			.cop_line = 36,		    /* COP.cop_line */                             \
			.cxt_sub = 9,		    /* CXt_SUB */                                  \
			.interp_phase = (phase_),   /* .Iphase */                                  \
			.phase_run = 4,		    /* PERL_PHASE_RUN */                           \
		    },                                                                             \
		.cop_file = 48, .sv_any = 0, .sv_flags = 12, .svf_ook = 0x2000000,                 \
		.xcv_stash = 32, .xcv_gv_u = 56, .xcv_file = 64, .xcv_flags = 92,                  \
		.cvf_named = 0x8000, .xgv_namehek = 32, .xgv_stash = 40, .hek_len = 4,             \
		.hek_key = 8, .xhv_aux = 32, .aux_name = 0, .aux_name_count = 28,                  \
	}

static const struct perl_offsets versions[] = {
    PERL_5_36(CFI_ARCH_X86_64, 2512),
    PERL_5_36(CFI_ARCH_ARM64, 2608),
};

const struct perl_offsets *perl_offsets_find_arch(uint16_t version, int arch)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (versions[i].version == version && versions[i].arch == arch)
			return &versions[i];
	return NULL;
}

const struct perl_offsets *perl_offsets_find(uint16_t version)
{
	return perl_offsets_find_arch(version, CFI_ARCH_NATIVE);
}
