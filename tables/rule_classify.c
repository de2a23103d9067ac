// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Maps a DWARF register state onto the walker's rule model: the pc, the
 * stack and frame pointers (rsp/rbp, sp/x29), x86-64's rbx, a CFA in any of
 * the first 16 general registers.  Whatever the model cannot express becomes
 * an explicit unsupported kind with a reason, never a guess.
 */
#include <string.h>

#include "tables/dwarf_reader.h"
#include "tables/internal.h"

enum {
	OP_DEREF = 0x06,
	OP_MINUS = 0x1c,
	OP_AND = 0x1a,
	OP_PLUS = 0x22,
	OP_PLUS_UCONST = 0x23,
	OP_SHL = 0x24,
	OP_GE = 0x2a,
	OP_LIT0 = 0x30,
	OP_LIT31 = 0x4f,
	OP_BREG0 = 0x70,
	OP_BREG31 = 0x8f,
	OP_BREGX = 0x92,
	/* pseudo-ops after decoding */
	XOP_CONST = 0x100,
	XOP_BREG = 0x101,
};

struct xop {
	int op;
	uint64_t reg;
	int64_t val;
};

#define MAX_XOPS 12

/* Decodes a short expression into normalised ops; -1 if it is not a shape we know. */
static int decode_expr(const uint8_t *p, uint64_t len, struct xop *ops)
{
	const uint8_t *end = p + len;
	int n = 0;

	while (p < end) {
		uint8_t op = *p++;
		struct xop *x;
		uint64_t u;

		if (n == MAX_XOPS)
			return -1;
		x = &ops[n++];
		memset(x, 0, sizeof(*x));
		if (op >= OP_LIT0 && op <= OP_LIT31) {
			x->op = XOP_CONST;
			x->val = op - OP_LIT0;
		} else if (op >= OP_BREG0 && op <= OP_BREG31) {
			x->op = XOP_BREG;
			x->reg = op - OP_BREG0;
			if (!rd_sleb(&p, end, &x->val))
				return -1;
		} else if (op == OP_BREGX) {
			x->op = XOP_BREG;
			if (!rd_uleb(&p, end, &x->reg) || !rd_sleb(&p, end, &x->val))
				return -1;
		} else if (op >= 0x08 && op <= 0x0f) {
			/* DW_OP_const{1,2,4,8}{u,s} */
			static const unsigned int size[] = {1, 1, 2, 2, 4, 4, 8, 8};
			unsigned int sz = size[op - 0x08];
			bool sign = (op & 1) != 0;

			if (!rd_fixed(&p, end, sz, &u))
				return -1;
			if (sign && sz < 8 && (u >> (sz * 8 - 1)) & 1)
				u |= ~0ull << (sz * 8);
			x->op = XOP_CONST;
			x->val = (int64_t)u;
		} else if (op == 0x10) {
			if (!rd_uleb(&p, end, &u))
				return -1;
			x->op = XOP_CONST;
			x->val = (int64_t)u;
		} else if (op == 0x11) {
			x->op = XOP_CONST;
			if (!rd_sleb(&p, end, &x->val))
				return -1;
		} else if (op == OP_PLUS_UCONST) {
			if (!rd_uleb(&p, end, &u))
				return -1;
			x->op = OP_PLUS_UCONST;
			x->val = (int64_t)u;
		} else if (op == OP_DEREF || op == OP_AND || op == OP_PLUS || op == OP_MINUS ||
			   op == OP_SHL || op == OP_GE) {
			x->op = op;
		} else {
			return -1;
		}
	}
	return n;
}

static bool is_const(const struct xop *x, int64_t v)
{
	return x->op == XOP_CONST && x->val == v;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* CFA expressions: the PLT stub form and the dereference (DRAP / realigned) forms. */
static void classify_cfa_expr(const struct reg_rule *cfa, const struct cfi_arch_regs *regs,
			      struct cfi_rule *out)
{
	struct xop o[MAX_XOPS];
	int n = decode_expr(cfa->expr, cfa->expr_len, o);

	out->cfa_kind = CFI_CFA_UNSUPPORTED;
	out->reason = CFI_UNSUP_CFA_EXPR;
	if (n == 9 && regs->pc != DW_REG_NONE && o[0].op == XOP_BREG && o[0].reg == regs->sp &&
	    o[1].op == XOP_BREG && o[1].reg == regs->pc && o[1].val == 0 && is_const(&o[2], 15) &&
	    o[3].op == OP_AND && o[4].op == XOP_CONST && o[4].val >= 0 && o[4].val < 16 &&
	    o[5].op == OP_GE && is_const(&o[6], 3) && o[7].op == OP_SHL && o[8].op == OP_PLUS &&
	    fits32(o[0].val)) {
		/* rsp + A + (((rip & 15) >= K) << 3): lazy-binding PLT entries */
		out->cfa_kind = CFI_CFA_PLT;
		out->cfa_off = (int32_t)o[0].val;
		out->aux = (int16_t)o[4].val;
		out->reason = CFI_UNSUP_NONE;
		return;
	}
	if (n >= 2 && o[0].op == XOP_BREG && o[1].op == OP_DEREF &&
	    (o[0].reg == regs->sp || o[0].reg == regs->fp) && fits32(o[0].val)) {
		int64_t add = 0;

		if (n == 3 && o[2].op == OP_PLUS_UCONST)
			add = o[2].val;
		else if (n == 4 && o[2].op == XOP_CONST && o[3].op == OP_PLUS)
			add = o[2].val;
		else if (n == 4 && o[2].op == XOP_CONST && o[3].op == OP_MINUS)
			add = -o[2].val;
		else if (n != 2)
			return;
		if (!fits16(add)) {
			out->reason = CFI_UNSUP_RANGE;
			return;
		}
		/* *(reg + off) + k: the CFA saved by a DRAP / stack-realigning prologue */
		out->cfa_kind = o[0].reg == regs->sp ? CFI_CFA_DEREF_RSP : CFI_CFA_DEREF_RBP;
		out->cfa_off = (int32_t)o[0].val;
		out->aux = (int16_t)add;
		out->reason = CFI_UNSUP_NONE;
	}
}

static void classify_cfa(const struct reg_rule *cfa, const struct cfi_arch_regs *regs,
			 struct cfi_rule *out)
{
	switch (cfa->kind) {
	case RR_OFFSET:
		if (!fits32(cfa->off)) {
			out->cfa_kind = CFI_CFA_UNSUPPORTED;
			out->reason = CFI_UNSUP_RANGE;
			return;
		}
		if (cfa->reg != regs->sp && cfa->reg != regs->fp) {
			/* beyond the general registers: keep register and offset for printing */
			out->cfa_kind = cfa->reg < CFI_DW_NR_REGS ? CFI_CFA_REG : CFI_CFA_UNSUPPORTED;
			out->reason = cfa->reg < CFI_DW_NR_REGS ? CFI_UNSUP_NONE : CFI_UNSUP_CFA_REG;
			out->aux = (int16_t)cfa->reg;
			out->cfa_off = (int32_t)cfa->off;
			return;
		}
		out->cfa_kind = cfa->reg == regs->sp ? CFI_CFA_RSP : CFI_CFA_RBP;
		out->cfa_off = (int32_t)cfa->off;
		return;
	case RR_EXPR:
		classify_cfa_expr(cfa, regs, out);
		return;
	default:
		out->cfa_kind = CFI_CFA_UNSUPPORTED;
		out->reason = CFI_UNSUP_CFA_UNDEF;
		return;
	}
}

/*
 * Returns the kind; *off is set for AT_CFA / VAL_CFA.  self: the column's own
 * register (DW_CFA_register to itself is a roundabout same value).  An RA of
 * kind SAME is in the link register (arm64 only: ra_in_lr), which only the
 * walk's first frame can read.
 */
static uint8_t classify_reg(const struct reg_rule *r, bool is_ra, bool ra_in_lr, uint16_t self,
			    const struct cfi_arch_regs *fp_exprs, int16_t *off)
{
	struct xop o[MAX_XOPS];

	*off = 0;
	switch (r->kind) {
	case RR_UNMENTIONED:
		/*
		 * the frame pointer is callee-saved (same value); an RA nobody
		 * described is the outermost frame on x86-64, still in x30 on arm64
		 */
		return is_ra && !ra_in_lr ? CFI_REG_UNDEFINED : CFI_REG_SAME;
	case RR_UNDEFINED:
		return CFI_REG_UNDEFINED;
	case RR_SAME:
		return is_ra && !ra_in_lr ? CFI_REG_UNSUPPORTED : CFI_REG_SAME;
	case RR_OFFSET:
	case RR_VAL_OFFSET:
		if (r->off < INT16_MIN || r->off > INT16_MAX)
			return CFI_REG_UNSUPPORTED;
		*off = (int16_t)r->off;
		return r->kind == RR_OFFSET ? CFI_REG_AT_CFA : CFI_REG_VAL_CFA;
	case RR_REGISTER:
		if (r->reg == self && (!is_ra || ra_in_lr))
			return CFI_REG_SAME;
		return CFI_REG_UNSUPPORTED;
	case RR_EXPR:
		/* at the frame pointer + N: JIT rows only (cfi_arch_regs' fp_exprs) */
		if (!fp_exprs || decode_expr(r->expr, r->expr_len, o) != 1 || o[0].op != XOP_BREG ||
		    o[0].reg != fp_exprs->fp || !fits16(o[0].val))
			return CFI_REG_UNSUPPORTED;
		*off = (int16_t)o[0].val;
		return CFI_REG_AT_FP;
	default:
		return CFI_REG_UNSUPPORTED;
	}
}

/* rbx matters only to a later CFA-in-rbx rule: anything but a stack slot or itself is "lost". */
static void classify_rbx(const struct reg_rule *r, const struct cfi_arch_regs *regs,
			 struct cfi_rule *out)
{
	int16_t off;

	out->rbx_kind = classify_reg(r, false, false, regs->carried, NULL, &off);
	if (out->rbx_kind == CFI_REG_UNDEFINED)
		out->rbx_kind = CFI_REG_UNSUPPORTED;
	out->rbx_off = off;
}

void rule_classify(const struct cfa_state *st, const struct cfi_arch_regs *regs, bool signal_frame,
		   struct cfi_rule *out)
{
	int16_t off;

	memset(out, 0, sizeof(*out));
	if (signal_frame) {
		/* the kernel's rt_sigframe holds every register; the walker reads it directly */
		out->cfa_kind = CFI_CFA_SIGNAL;
		out->rbp_kind = CFI_REG_UNSUPPORTED;
		out->ra_kind = CFI_REG_UNSUPPORTED;
		return;
	}
	classify_cfa(&st->cfa, regs, out);
	out->ra_kind = classify_reg(&st->ra, true, regs->ra_in_lr, DW_REG_A64_LR,
				    regs->fp_exprs ? regs : NULL, &off);
	out->ra_off = off;
	out->rbp_kind =
	    classify_reg(&st->rbp, false, false, regs->fp, regs->fp_exprs ? regs : NULL, &off);
	out->rbp_off = off;
	classify_rbx(&st->rbx, regs, out);
	/* one reason per rule: the CFA's first, then the RA's, then rbp's */
	if (out->reason == CFI_UNSUP_NONE) {
		if (out->ra_kind == CFI_REG_UNSUPPORTED)
			out->reason = CFI_UNSUP_RA;
		else if (out->rbp_kind == CFI_REG_UNSUPPORTED)
			out->reason = CFI_UNSUP_RBP;
	}
}
