// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The DW_CFA interpreter.  Only the columns the walker can use are tracked
 * (CFA, rbp, rbx, return address); every other register's instructions are
 * decoded for their operands and otherwise ignored.
 */
#include <string.h>

#include "tables/diag.h"
#include "tables/dwarf_reader.h"
#include "tables/internal.h"

/* GCC never nests remember_state more than a few levels; deeper is corrupt input. */
#define MAX_REMEMBER 64

enum {
	DW_CFA_advance_loc = 0x40,
	DW_CFA_offset = 0x80,
	DW_CFA_restore = 0xc0,
	DW_CFA_nop = 0x00,
	DW_CFA_set_loc = 0x01,
	DW_CFA_advance_loc1 = 0x02,
	DW_CFA_advance_loc2 = 0x03,
	DW_CFA_advance_loc4 = 0x04,
	DW_CFA_offset_extended = 0x05,
	DW_CFA_restore_extended = 0x06,
	DW_CFA_undefined = 0x07,
	DW_CFA_same_value = 0x08,
	DW_CFA_register = 0x09,
	DW_CFA_remember_state = 0x0a,
	DW_CFA_restore_state = 0x0b,
	DW_CFA_def_cfa = 0x0c,
	DW_CFA_def_cfa_register = 0x0d,
	DW_CFA_def_cfa_offset = 0x0e,
	DW_CFA_def_cfa_expression = 0x0f,
	DW_CFA_expression = 0x10,
	DW_CFA_offset_extended_sf = 0x11,
	DW_CFA_def_cfa_sf = 0x12,
	DW_CFA_def_cfa_offset_sf = 0x13,
	DW_CFA_val_offset = 0x14,
	DW_CFA_val_offset_sf = 0x15,
	DW_CFA_val_expression = 0x16,
	DW_CFA_GNU_window_save = 0x2d,
	DW_CFA_GNU_args_size = 0x2e,
	DW_CFA_GNU_negative_offset_extended = 0x2f,
};

struct interp {
	const struct fde *fde; /* NULL while running the CIE */
	const struct cie *cie;
	const struct cfi_section *sec;
	struct cfa_state st;
	const struct cfa_state *init; /* NULL while running the CIE */
	uint64_t loc;
	struct cfa_state stack[MAX_REMEMBER];
	int depth;
	row_fn emit;
	void *ctx;
	const char *why;
};

static int64_t factored(int64_t v, int64_t factor)
{
	int64_t r;

	/* saturate: the classifier rejects anything that does not fit the encoding */
	if (__builtin_mul_overflow(v, factor, &r))
		return INT64_MAX;
	return r;
}

/*
 * The frame pointer's, the carried register's and the RA's columns in
 * struct cfa_state order; -1 for any other register.
 */
static int column_index(const struct interp *in, uint64_t reg)
{
	if (reg == in->sec->regs->fp)
		return 0;
	if (reg == in->sec->regs->carried && reg != DW_REG_NONE)
		return 1;
	if (reg == in->cie->ra_reg)
		return 2;
	return -1;
}

static struct reg_rule *column(struct interp *in, uint64_t reg)
{
	struct reg_rule *cols[] = {&in->st.rbp, &in->st.rbx, &in->st.ra};
	int i = column_index(in, reg);

	return i < 0 ? NULL : cols[i];
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off, uint64_t reg2)
{
	struct reg_rule *r = column(in, reg);

	if (!r)
		return;
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->off = off;
	r->reg = (uint16_t)(reg2 > 0xffff ? 0xffff : reg2);
}

static void restore_rule(struct interp *in, uint64_t reg)
{
	struct reg_rule *r = column(in, reg);
	const struct reg_rule *init[3];

	if (!r)
		return;
	if (!in->init) {
		memset(r, 0, sizeof(*r));
		return;
	}
	init[0] = &in->init->rbp;
	init[1] = &in->init->rbx;
	init[2] = &in->init->ra;
	*r = *init[column_index(in, reg)];
}

/* Moves to new_loc, emitting the row in force before the move. Returns 1 past the FDE end. */
static int advance_to(struct interp *in, uint64_t new_loc)
{
	int err;

	if (!in->init)
		return 0; /* location changes inside a CIE are meaningless; ignore */
	if (new_loc <= in->loc)
		return 0;
	err = in->emit(in->ctx, in->loc, &in->st);
	if (err)
		return err;
	if (new_loc >= in->fde->pc_end) {
		in->loc = in->fde->pc_end;
		return 1;
	}
	in->loc = new_loc;
	return 0;
}

static int advance_by(struct interp *in, uint64_t delta)
{
	uint64_t room = in->fde ? in->fde->pc_end - in->loc : 0;

	if (!in->init)
		return 0;
	if (delta > room / in->cie->code_align)
		return advance_to(in, in->fde->pc_end);
	return advance_to(in, in->loc + delta * in->cie->code_align);
}

#define NEED(cond, msg)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			in->why = msg;                                                             \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/*
 * The DW_CFA interpreter: one case per opcode of the DWARF 5 table (6.4.2),
 * each a few lines, in the standard's order.  It stays one switch, as
 * readelf's and libunwind's do: split by opcode family, every case would
 * still need the interpreter's whole state, and the order against the
 * standard is what a reader checks.
 */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end)
{
	const int64_t da = in->cie->data_align;
	uint64_t reg, u, len;
	int64_t s;
	uint8_t op;
	int r;

	while (p < end) {
		op = *p++;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			r = advance_by(in, op & 0x3f);
			if (r)
				return r;
			continue;
		case DW_CFA_offset:
			NEED(rd_uleb(&p, end, &u), "truncated DW_CFA_offset");
			set_rule(in, op & 0x3f, RR_OFFSET, factored((int64_t)u, da), 0);
			continue;
		case DW_CFA_restore:
			restore_rule(in, op & 0x3f);
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save: /* SPARC/AArch64 only; meaningless on x86-64 */
			break;
		case DW_CFA_set_loc: {
			uint64_t addr;

			NEED(read_encoded(in->sec, &p, end, in->cie->fde_enc, &addr) == 0,
			     "bad DW_CFA_set_loc operand");
			if (!in->init)
				break;
			NEED(addr >= in->loc, "DW_CFA_set_loc moves backwards");
			r = advance_to(in, addr);
			if (r)
				return r;
			break;
		}
		case DW_CFA_advance_loc1:
			NEED(rd_fixed(&p, end, 1, &u), "truncated DW_CFA_advance_loc1");
			r = advance_by(in, u);
			if (r)
				return r;
			break;
		case DW_CFA_advance_loc2:
			NEED(rd_fixed(&p, end, 2, &u), "truncated DW_CFA_advance_loc2");
			r = advance_by(in, u);
			if (r)
				return r;
			break;
		case DW_CFA_advance_loc4:
			NEED(rd_fixed(&p, end, 4, &u), "truncated DW_CFA_advance_loc4");
			r = advance_by(in, u);
			if (r)
				return r;
			break;
		case DW_CFA_offset_extended:
			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &u),
			     "truncated DW_CFA_offset_extended");
			set_rule(in, reg, RR_OFFSET, factored((int64_t)u, da), 0);
			break;
		case DW_CFA_offset_extended_sf:
			NEED(rd_uleb(&p, end, &reg) && rd_sleb(&p, end, &s),
			     "truncated DW_CFA_offset_extended_sf");
			set_rule(in, reg, RR_OFFSET, factored(s, da), 0);
			break;
		case DW_CFA_GNU_negative_offset_extended:
			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &u),
			     "truncated DW_CFA_GNU_negative_offset_extended");
			set_rule(in, reg, RR_OFFSET, -factored((int64_t)u, da), 0);
			break;
		case DW_CFA_val_offset:
			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &u),
			     "truncated DW_CFA_val_offset");
			set_rule(in, reg, RR_VAL_OFFSET, factored((int64_t)u, da), 0);
			break;
		case DW_CFA_val_offset_sf:
			NEED(rd_uleb(&p, end, &reg) && rd_sleb(&p, end, &s),
			     "truncated DW_CFA_val_offset_sf");
			set_rule(in, reg, RR_VAL_OFFSET, factored(s, da), 0);
			break;
		case DW_CFA_restore_extended:
			NEED(rd_uleb(&p, end, &reg), "truncated DW_CFA_restore_extended");
			restore_rule(in, reg);
			break;
		case DW_CFA_undefined:
			NEED(rd_uleb(&p, end, &reg), "truncated DW_CFA_undefined");
			set_rule(in, reg, RR_UNDEFINED, 0, 0);
			break;
		case DW_CFA_same_value:
			NEED(rd_uleb(&p, end, &reg), "truncated DW_CFA_same_value");
			set_rule(in, reg, RR_SAME, 0, 0);
			break;
		case DW_CFA_register:
			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &u),
			     "truncated DW_CFA_register");
			set_rule(in, reg, RR_REGISTER, 0, u);
			break;
		case DW_CFA_remember_state:
			NEED(in->depth < MAX_REMEMBER, "DW_CFA_remember_state nested too deep");
			in->stack[in->depth++] = in->st;
			break;
		case DW_CFA_restore_state:
			NEED(in->depth > 0, "DW_CFA_restore_state without remember_state");
			in->st = in->stack[--in->depth];
			break;
		case DW_CFA_def_cfa:
			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &u),
			     "truncated DW_CFA_def_cfa");
			memset(&in->st.cfa, 0, sizeof(in->st.cfa));
			in->st.cfa.kind = RR_OFFSET;
			in->st.cfa.reg = (uint16_t)(reg > 0xffff ? 0xffff : reg);
			in->st.cfa.off = u > INT64_MAX ? INT64_MAX : (int64_t)u;
			break;
		case DW_CFA_def_cfa_sf:
			NEED(rd_uleb(&p, end, &reg) && rd_sleb(&p, end, &s),
			     "truncated DW_CFA_def_cfa_sf");
			memset(&in->st.cfa, 0, sizeof(in->st.cfa));
			in->st.cfa.kind = RR_OFFSET;
			in->st.cfa.reg = (uint16_t)(reg > 0xffff ? 0xffff : reg);
			in->st.cfa.off = factored(s, da);
			break;
		case DW_CFA_def_cfa_register:
			NEED(rd_uleb(&p, end, &reg), "truncated DW_CFA_def_cfa_register");
			/* like readelf: a register rule replaces an expression, keeping the offset */
			in->st.cfa.kind = RR_OFFSET;
			in->st.cfa.reg = (uint16_t)(reg > 0xffff ? 0xffff : reg);
			in->st.cfa.expr = NULL;
			break;
		case DW_CFA_def_cfa_offset:
			NEED(rd_uleb(&p, end, &u), "truncated DW_CFA_def_cfa_offset");
			in->st.cfa.off = u > INT64_MAX ? INT64_MAX : (int64_t)u;
			break;
		case DW_CFA_def_cfa_offset_sf:
			NEED(rd_sleb(&p, end, &s), "truncated DW_CFA_def_cfa_offset_sf");
			in->st.cfa.off = factored(s, da);
			break;
		case DW_CFA_def_cfa_expression:
			NEED(rd_uleb(&p, end, &len) && len <= (uint64_t)(end - p),
			     "DW_CFA_def_cfa_expression past the end");
			memset(&in->st.cfa, 0, sizeof(in->st.cfa));
			in->st.cfa.kind = RR_EXPR;
			in->st.cfa.expr = p;
			in->st.cfa.expr_len = len;
			p += len;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression: {
			struct reg_rule *col;

			NEED(rd_uleb(&p, end, &reg) && rd_uleb(&p, end, &len) &&
				     len <= (uint64_t)(end - p),
			     "DW_CFA_expression past the end");
			col = column(in, reg);
			if (col) {
				memset(col, 0, sizeof(*col));
				col->kind = op == DW_CFA_expression ? RR_EXPR : RR_VAL_EXPR;
				col->expr = p;
				col->expr_len = len;
			}
			p += len;
			break;
		}
		case DW_CFA_GNU_args_size:
			NEED(rd_uleb(&p, end, &u), "truncated DW_CFA_GNU_args_size");
			break;
		default:
			in->why = "unknown DW_CFA opcode";
			return -1;
		}
	}
	return 0;
}

void cfa_run_cie(struct cie *c, const struct cfi_section *sec)
{
	struct interp in;

	memset(&in, 0, sizeof(in));
	in.cie = c;
	in.sec = sec;
	c->init_why = NULL;
	if (run(&in, c->insns, c->insns + c->insns_len) < 0)
		c->init_why = in.why ? in.why : "CIE instructions failed";
	c->init = in.st;
}

int cfa_run_fde(const struct fde *f, row_fn emit, void *ctx, struct diag_ctx *diag)
{
	struct interp in;
	int r;

	if (f->cie->init_why) {
		diag_add(diag, f->sec->name, f->cie->offset, "CIE instructions: %s",
			 f->cie->init_why);
		return -1;
	}
	/*
	 * Field by field, the remember stack left as it is: zeroing its 64
	 * states for every FDE was most of a large object's build (libLLVM's
	 * 98,000 FDEs: 500 M of its 870 M instructions were that memset).
	 * Only stack[0, depth) is ever read.
	 */
	in.cie = f->cie;
	in.fde = f;
	in.sec = f->sec;
	in.emit = emit;
	in.ctx = ctx;
	in.why = NULL;
	/* remember/restore does not cross from the CIE into the FDE: the stack starts empty */
	in.depth = 0;
	in.st = f->cie->init;
	in.init = &f->cie->init;
	in.loc = f->pc_begin;
	r = run(&in, f->insns, f->insns + f->insns_len);
	if (r < 0) {
		if (in.why)
			diag_add(diag, f->sec->name, f->offset, "FDE instructions: %s", in.why);
		return -1;
	}
	if (r == 0 && in.loc < f->pc_end)
		r = emit(ctx, in.loc, &in.st);
	return r < 0 ? -1 : 0;
}
