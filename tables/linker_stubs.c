// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Code the linker writes without an FDE, as an unwind source: GNU ld
 * describes no .plt on arm64 (it does on x86-64), and crti.o's _init and
 * _fini have none on either.  A sample in a PLT stub (every call into a
 * shared library passes one) or in a library's _init or _fini (its first
 * page fault as ld.so runs the constructors, or at exit) had no rule.  Their
 * shapes are fixed:
 *  - arm64's PLTn (adrp x16; ldr x17; add x16; br x17, after a "bti c" under
 *    BTI) touches neither sp nor x30: CFA = sp, the return address still in
 *    x30;
 *  - arm64's PLT0 pushes x16 and x30 ("stp x16, x30, [sp, #-16]!") before
 *    branching to the resolver: from the next instruction, CFA = sp + 16 and
 *    the return address at CFA - 8;
 *  - _init and _fini (crti.o/crtn.o around the calls other objects add)
 *    make room, call, give it back and return: on arm64 a frame record
 *    ("stp x29, x30, [sp, #-16]!" ... "ldp x29, x30, [sp], #16; ret"), on
 *    x86-64 eight bytes ("sub $8,%rsp" ... "add $8,%rsp; ret", after an
 *    endbr64 under CET).
 * A section whose bytes are none of these is left without rows: a gap, not
 * a guess.  Rows only where no FDE covers: CFI_SRC_STUBS is the last source.
 */
#include <stdbool.h>
#include <string.h>

#include "elf/elf_read.h"
#include "elf/sections.h"
#include "tables/diag.h"
#include "tables/elf_input.h"

#define PLT0_SIZE	32
#define A64_NOP		0xd503201fu
#define A64_BTI_C	0xd503245fu
#define A64_STP_X16_X30 0xa9bf7bf0u /* stp x16, x30, [sp, #-16]! */
#define A64_STP_FRAME	0xa9bf7bfdu /* stp x29, x30, [sp, #-16]! */
#define A64_LDP_FRAME	0xa8c17bfdu /* ldp x29, x30, [sp], #16 */
#define A64_RET		0xd65f03c0u

/* One CIE per shape: the FDE's offset says where its push (and pop) are. */
static struct cie plt0_cie, pltn_cie, crt_cie, x86_crt_cie;

/* Offset of push (after a nop or "bti c"), or -1. */
static int find_push(const uint8_t *code, uint64_t len, uint32_t push)
{
	uint32_t w[2];

	if (len < sizeof(w))
		return -1;
	memcpy(w, code, sizeof(w));
	if (w[0] == push)
		return 0;
	if ((w[0] == A64_BTI_C || w[0] == A64_NOP) && w[1] == push)
		return 4;
	return -1;
}

/* _init/_fini: offsets of the push and of "ldp; ret" at the end, or -1. */
static int64_t crt_shape(const uint8_t *code, uint64_t len)
{
	int push = find_push(code, len, A64_STP_FRAME);
	uint32_t w[2];

	if (push < 0 || len < (uint64_t)push + 16 || len > 0xffff || len % 4)
		return -1;
	memcpy(w, code + len - 8, sizeof(w));
	if (w[0] != A64_LDP_FRAME || w[1] != A64_RET)
		return -1;
	/* push in the low 16 bits, the pop's offset above */
	return (int64_t)push | (int64_t)(len - 8) << 16;
}

/* x86-64's _init/_fini: the same, "sub $8,%rsp" first and "add $8,%rsp; ret" last. */
static int64_t x86_crt_shape(const uint8_t *code, uint64_t len)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa},
			     sub[4] = {0x48, 0x83, 0xec, 0x08},
			     tail[5] = {0x48, 0x83, 0xc4, 0x08, 0xc3};
	uint64_t push = len >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)) ? 4 : 0;

	if (len > 0xffff || len < push + sizeof(sub) + sizeof(tail) ||
	    memcmp(code + push, sub, sizeof(sub)) ||
	    memcmp(code + len - sizeof(tail), tail, sizeof(tail)))
		return -1;
	return (int64_t)push | (int64_t)(len - sizeof(tail)) << 16;
}

/* The bytes of section name, within the build's byte budget; NULL (and *err) if none. */
static Elf_Data *stub_section(struct elf_input *in, struct cfi_parse *p, const char *name,
			      GElf_Shdr *sh, int *err)
{
	uint64_t before = in->bytes_left;
	const char *why = NULL;
	Elf_Scn *scn = elf_section_by_name(in->obj.elf, name, sh);
	Elf_Data *d;

	*err = 0;
	if (!scn || sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
	    sh->sh_size > CFI_MAX_FDE_RANGE || sh->sh_addr >= CFI_MAX_ADDR ||
	    sh->sh_size > CFI_MAX_ADDR - sh->sh_addr)
		return NULL;
	d = elf_read_section(scn, &in->bytes_left, &why);
	if (!d && elf_read_why_budget(why))
		*err =
		    budget_exceeded(p->diag, name, 0, "bytes of sections read or inflated", before);
	return d && d->d_buf && d->d_size == sh->sh_size ? d : NULL;
}

static int push_stub(struct cfi_parse *p, struct cfi_section *sec, uint64_t start, uint64_t end,
		     struct cie *cie, uint64_t shape)
{
	return cfi_push_fde(
	    p, &(struct fde){
		   .pc_begin = start, .pc_end = end, .cie = cie, .sec = sec, .offset = shape});
}

int linker_stubs_add(struct elf_input *in, struct cfi_parse *p, struct cfi_table *t)
{
	static const char *const crt[] = {".init", ".fini"};
	bool arm64 = in->obj.regs->arch == CFI_ARCH_ARM64;
	int64_t shape;
	GElf_Shdr sh;
	Elf_Data *d = NULL;
	int err = 0, push, i, added = 0;

	/* an object without CFI stays one: its mappings walk with frame pointers */
	if (!t->stats.sources)
		return 0;
	for (i = 0; i < 3; i++)
		in->stubs_sec[i] = (struct cfi_section){
		    .source = CFI_SRC_STUBS, .name = i ? crt[i - 1] : ".plt", .regs = in->obj.regs};
	/* x86-64's .plt has the FDEs ld writes for it */
	if (arm64)
		d = stub_section(in, p, ".plt", &sh, &err);
	if (err)
		return err;
	if (d && sh.sh_size >= PLT0_SIZE) {
		push = find_push(d->d_buf, d->d_size, A64_STP_X16_X30);
		if (push >= 0) {
			err = push_stub(p, &in->stubs_sec[0], sh.sh_addr, sh.sh_addr + PLT0_SIZE,
					&plt0_cie, (uint64_t)push);
			added += !err;
		}
		if (!err && sh.sh_size > PLT0_SIZE) {
			err = push_stub(p, &in->stubs_sec[0], sh.sh_addr + PLT0_SIZE,
					sh.sh_addr + sh.sh_size, &pltn_cie, 0);
			added += !err;
		}
		if (err)
			return err;
	}
	for (i = 0; i < 2; i++) {
		d = stub_section(in, p, crt[i], &sh, &err);
		if (err)
			return err;
		shape = !d	? -1
			: arm64 ? crt_shape(d->d_buf, d->d_size)
				: x86_crt_shape(d->d_buf, d->d_size);
		if (shape < 0)
			continue;
		err = push_stub(p, &in->stubs_sec[i + 1], sh.sh_addr, sh.sh_addr + sh.sh_size,
				arm64 ? &crt_cie : &x86_crt_cie, (uint64_t)shape);
		if (err)
			return err;
		added++;
	}
	if (added)
		t->stats.sources |= 1 << CFI_SRC_STUBS;
	return 0;
}

/* x86-64's _init/_fini: CFA rsp + 8 (16 between the sub and the add), the return address at -8. */
static int x86_crt_run_fde(const struct fde *f, row_fn emit, void *ctx)
{
	struct cfa_state st = {.cfa = {.kind = RR_OFFSET, .reg = DW_REG_RSP, .off = 8},
			       .ra = {.kind = RR_OFFSET, .off = -8}};
	uint64_t push = f->offset & 0xffff, pop = f->offset >> 16;
	int err = emit(ctx, f->pc_begin, &st);

	if (err)
		return err;
	st.cfa.off = 16;
	err = emit(ctx, f->pc_begin + push + 4, &st);
	if (err)
		return err;
	st.cfa.off = 8;
	return emit(ctx, f->pc_begin + pop + 4, &st);
}

int linker_stubs_run_fde(const struct fde *f, row_fn emit, void *ctx)
{
	struct cfa_state st = {.cfa = {.kind = RR_OFFSET, .reg = DW_REG_A64_SP}};
	uint64_t push = f->offset & 0xffff, pop = f->offset >> 16;
	int err;

	if (f->cie == &x86_crt_cie)
		return x86_crt_run_fde(f, emit, ctx);
	err = emit(ctx, f->pc_begin, &st);

	if (err || f->cie == &pltn_cie)
		return err;
	/* after the push: CFA = sp + 16, x30 at CFA - 8 (and x29 at CFA - 16 for a frame record) */
	st.cfa.off = 16;
	st.ra = (struct reg_rule){.kind = RR_OFFSET, .off = -8};
	if (f->cie == &crt_cie)
		st.rbp = (struct reg_rule){.kind = RR_OFFSET, .off = -16};
	err = emit(ctx, f->pc_begin + push + 4, &st);
	if (err || f->cie != &crt_cie)
		return err;
	/* after the pop, at the ret: as on entry */
	return emit(ctx, f->pc_begin + pop + 4,
		    &(struct cfa_state){.cfa = {.kind = RR_OFFSET, .reg = DW_REG_A64_SP}});
}

/* A saved slot's offset moved by shift, if it is one and the result fits. */
static bool slot_shift(uint8_t kind, int16_t *off, int64_t shift)
{
	int64_t v = *off - shift;

	if (kind != CFI_REG_AT_CFA && kind != CFI_REG_VAL_CFA)
		return true;
	if (v < INT16_MIN || v > INT16_MAX)
		return false;
	*off = (int16_t)v;
	return true;
}

/*
 * glibc's _dl_runtime_resolve on arm64, where PLT0 jumps after pushing x16
 * and x30, describes its CFA as the sp it starts with and x30 at CFA + 8:
 * the push is left out, and the caller's sp, which the CFA must be, is 16
 * bytes further (its caller's rules then read the wrong slots).  A return
 * address saved at or above the CFA can be nothing else: every row of such
 * an FDE gets the push back, CFA + 16 and each slot 16 lower.
 */
int arm64_add_left_out_push(struct rule_dict *dict, struct fde_row *rows, uint64_t nr)
{
	int64_t shift = 0;
	uint64_t k;
	int id;

	for (k = 0; k < nr; k++) {
		const struct cfi_rule *r = &dict->rules[rows[k].rule];

		if (r->ra_kind == CFI_REG_AT_CFA && r->ra_off >= 0 && r->ra_off + 8 > shift)
			shift = r->ra_off + 8;
	}
	for (k = 0; shift && k < nr; k++) {
		struct cfi_rule r = dict->rules[rows[k].rule];

		if ((r.cfa_kind != CFI_CFA_RSP && r.cfa_kind != CFI_CFA_RBP) ||
		    r.cfa_off > INT32_MAX - shift || !slot_shift(r.ra_kind, &r.ra_off, shift) ||
		    !slot_shift(r.rbp_kind, &r.rbp_off, shift) ||
		    !slot_shift(r.rbx_kind, &r.rbx_off, shift))
			continue;
		r.cfa_off += (int32_t)shift;
		id = rule_dict_intern(dict, &r);
		if (id < 0)
			return id;
		rows[k].rule = (uint16_t)id;
	}
	return 0;
}
