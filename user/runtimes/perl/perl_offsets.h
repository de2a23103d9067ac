/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Field offsets of the supported perl versions (MULTIPLICITY builds), per
 * architecture: what BPF reads of the context stacks (struct cfi_perl_proc)
 * and what user space reads of a CV to name it.  Debian ships no debug
 * information: they are perl's own headers', checked against offsetof()
 * over the installed headers (.../perl/5.36/CORE) by tests/unit/test_perl.c,
 * and over Debian's arm64 headers run under qemu-aarch64.  The interpreter
 * embeds a sigjmp_buf (PL_start_env) before PL_phase, which is 96 bytes
 * larger on arm64.
 */
#ifndef CFIPROF_PERL_OFFSETS_H
#define CFIPROF_PERL_OFFSETS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

struct perl_offsets {
	uint16_t version; /* major << 8 | minor: 5.36 is 0x0524 */
	uint8_t arch;	  /* enum cfi_arch */
	const char *name; /* "5.36" */
	struct cfi_perl_proc bpf;
	uint16_t cop_file;	 /* COP.cop_file: a char * (MULTIPLICITY) */
	uint16_t sv_any;	 /* SV.sv_any: the body */
	uint16_t sv_flags;	 /* SV.sv_flags */
	uint32_t svf_ook;	 /* SVf_OOK: a hash with its aux part */
	uint16_t xcv_stash;	 /* XPVCV.xcv_stash, from sv_any */
	uint16_t xcv_gv_u;	 /* .xcv_gv_u: a GV, or a HEK when CvNAMED */
	uint16_t xcv_file;	 /* .xcv_file: a char * */
	uint16_t xcv_flags;	 /* .xcv_flags */
	uint32_t cvf_named;	 /* CVf_NAMED */
	uint16_t xgv_namehek;	 /* XPVGV.xiv_u.xivu_namehek */
	uint16_t xgv_stash;	 /* .xnv_u.xgv_stash */
	uint16_t hek_len;	 /* HEK.hek_len */
	uint16_t hek_key;	 /* .hek_key */
	uint16_t xhv_aux;	 /* struct xpvhv_with_aux.xhv_aux, from sv_any */
	uint16_t aux_name;	 /* struct xpvhv_aux.xhv_name_u */
	uint16_t aux_name_count; /* .xhv_name_count */
};

/* The entry of a version for arch (enum cfi_arch), NULL when it has none. */
const struct perl_offsets *perl_offsets_find_arch(uint16_t version, int arch);

/* ... for the architecture cfiprof runs on (a process of another is never read). */
const struct perl_offsets *perl_offsets_find(uint16_t version);

#endif
