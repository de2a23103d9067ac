// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perl's layout as its own headers give it, printed as "field value" per
 * line with the names of struct perl_offsets (user/runtimes/perl/perl_offsets.h):
 * test_perl builds this against the installed perl's headers (its CORE
 * directory, with the flags `perl -MExtUtils::Embed -e ccopts` gives) and
 * compares with the table's entry.
 */
#include <EXTERN.h>
#include <perl.h>
#include <stddef.h>
#include <stdio.h>

#define P(name, expr) printf("%s %zu\n", name, (size_t)(expr))

int main(void)
{
	P("version", PERL_REVISION << 8 | PERL_VERSION);
	P("bpf.interp_curstackinfo", offsetof(PerlInterpreter, Icurstackinfo));
	P("bpf.interp_curcop", offsetof(PerlInterpreter, Icurcop));
	P("bpf.si_cxstack", offsetof(PERL_SI, si_cxstack));
	P("bpf.si_cxix", offsetof(PERL_SI, si_cxix));
	P("bpf.si_prev", offsetof(PERL_SI, si_prev));
	P("bpf.cx_size", sizeof(PERL_CONTEXT));
	P("bpf.cx_oldcop", offsetof(PERL_CONTEXT, cx_u.cx_blk.blku_oldcop));
	P("bpf.cx_sub_cv", offsetof(PERL_CONTEXT, cx_u.cx_blk.blk_u.blku_sub.cv));
	P("bpf.cop_line", offsetof(COP, cop_line));
	P("bpf.cxt_sub", CXt_SUB);
	P("bpf.interp_phase", offsetof(PerlInterpreter, Iphase));
	P("bpf.phase_run", PERL_PHASE_RUN);
	P("phase_is_int", sizeof(((PerlInterpreter *)0)->Iphase) == 4);
	P("cop_file", offsetof(COP, cop_file));
	P("sv_any", offsetof(SV, sv_any));
	P("sv_flags", offsetof(SV, sv_flags));
	P("svf_ook", SVf_OOK);
	P("xcv_stash", offsetof(XPVCV, xcv_stash));
	P("xcv_gv_u", offsetof(XPVCV, xcv_gv_u));
	P("xcv_file", offsetof(XPVCV, xcv_file));
	P("xcv_flags", offsetof(XPVCV, xcv_flags));
	P("cvf_named", CVf_NAMED);
	P("xgv_namehek", offsetof(XPVGV, xiv_u.xivu_namehek));
	P("xgv_stash", offsetof(XPVGV, xnv_u.xgv_stash));
	P("hek_len", offsetof(HEK, hek_len));
	P("hek_key", offsetof(HEK, hek_key));
	P("xhv_aux", offsetof(struct xpvhv_with_aux, xhv_aux));
	P("aux_name", offsetof(struct xpvhv_aux, xhv_name_u));
	P("aux_name_count", offsetof(struct xpvhv_aux, xhv_name_count));
	/* what BPF reads at once holds every field it reads */
	P("fits", offsetof(PERL_CONTEXT, cx_u.cx_blk.blk_u.blku_sub.cv) + 8 <= PERL_CX_READ_CHECK &&
		      offsetof(PERL_SI, si_cxix) + 4 <= PERL_SI_READ_CHECK);
	/* a context's type is its first byte's low bits */
	P("cx_type_first", offsetof(PERL_CONTEXT, cx_u.cx_blk.blku_type) == 0 && CXTYPEMASK == 0xf);
	return 0;
}
