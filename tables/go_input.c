// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go's .gopclntab as an unwind source: a stripped Go binary has no CFI, but
 * every Go function has a pc -> SP-delta table (pcsp) for the runtime's own
 * unwinder.  Each function becomes an FDE of source CFI_SRC_GOPCLNTAB whose
 * rows are the rules that table implies on amd64:
 *  - CFA = rsp + delta + 8, the return address at CFA - 8 (a call pushed it);
 *  - rbp saved at CFA - 16 wherever the frame has room (delta > 0): Go's
 *    prologue stores the caller's BP at the top of every frame it allocates
 *    (SUBQ $n, SP; MOVQ BP, n-8(SP)), else unchanged.  The instruction between
 *    SUBQ and the store is the one pc where that is not yet so;
 *  - the bottoms of goroutine and thread stacks (runtime.goexit, under every
 *    goroutine's first function; runtime.mstart and runtime.rt0_go, under
 *    every thread's) have no caller: the walk ends there complete, as at _start.
 *    So do the switches to the system stack (runtime.systemstack, mcall,
 *    morestack, and asmcgocall, which runs a cgo binary's C code there): their
 *    frame there is a call on g0, above it nothing but what
 *    an earlier switch left (the goroutine's frames are found through g.sched,
 *    which Go's traceback reads and these rules cannot).
 * On arm64 the return address is in x30 (LR) at entry and wherever the
 * frame is empty (delta 0: leaves, after the epilogue), and the prologue
 * stores it at the bottom of the frame it allocates (MOVD.W R30, -n(RSP)),
 * the caller's frame pointer just below (MOVD R29, -8(RSP)):
 *  - CFA = sp + delta, the return address at CFA - delta (in x30 at 0),
 *    x29 at CFA - delta - 8.
 * Go's linker writes the same CFA and return-address rules into the
 * .debug_frame of an unstripped build (test_gopclntab's oracle); it says
 * nothing of rbp or x29.
 */
#include <string.h>

#include "elf/gopclntab.h"
#include "tables/diag.h"
#include "tables/elf_input.h"

/* Every Go FDE's CIE: nothing is read from it but signal_frame. */
static struct cie go_cie, go_signal_cie = {.signal_frame = true};

/*
 * Go's own signal return trampoline (the sa_restorer of its handlers: SIGURG
 * preempts goroutines, SIGPROF): the kernel pushed its address as the
 * handler's return address and the interrupted registers above it, as for
 * glibc's __restore_rt, whose FDE starts a byte early for the walker's
 * return-address lookup at pc - 1.
 */
static const char *const sigreturns[] = {"runtime.sigreturn", "runtime.sigreturn__sigaction"};

static const char *const bottoms[] = {
    "runtime.goexit", "runtime.mstart",	   "runtime.rt0_go",	 "runtime.systemstack",
    "runtime.mcall",  "runtime.morestack", "runtime.asmcgocall", "runtime.asmcgocall_no_g"};

static bool listed(const char *name, const char *const *list, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (!strcmp(name, list[k]))
			return true;
	return false;
}

bool go_func_is_bottom(const char *name)
{
	return listed(name, bottoms, sizeof(bottoms) / sizeof(bottoms[0]));
}

bool go_func_is_sigreturn(const char *name)
{
	return listed(name, sigreturns, sizeof(sigreturns) / sizeof(sigreturns[0]));
}

/* The entry of the signal trampoline; 0 when there is none. */
static uint64_t sigreturn_entry(const struct gopclntab *g)
{
	uint64_t i, start, end;
	const char *name;

	for (i = 0; i < gopclntab_nfunc(g); i++)
		if (!gopclntab_func(g, i, &start, &end, &name) && go_func_is_sigreturn(name))
			return start;
	return 0;
}

int go_input_add(struct elf_input *in, struct cfi_parse *p, struct cfi_table *t)
{
	const char *why = NULL;
	uint64_t i, n, sig;
	int r, err = 0;

	r = in->obj.image ? gopclntab_read_mem(in->obj.image, in->obj.image_len, &in->go, &why)
			  : gopclntab_read_names(in->obj.elf, in->obj.fd, &in->go, &why);
	if (r < 0)
		diag_add(p->diag, ".gopclntab", 0, "%s: not used", why ? why : "refused");
	if (r)
		return 0;
	in->go_sec = (struct cfi_section){.source = CFI_SRC_GOPCLNTAB,
					  .name = ".gopclntab",
					  .read_ctx = in->go,
					  .regs = in->obj.regs};
	n = gopclntab_nfunc(in->go);
	sig = sigreturn_entry(in->go);
	for (i = 0; i < n && !err; i++) {
		struct fde f = {.cie = &go_cie, .sec = &in->go_sec, .offset = i};
		const char *name;

		/* a record that does not read is skipped: a gap, as a bad FDE leaves */
		if (gopclntab_func(in->go, i, &f.pc_begin, &f.pc_end, &name) ||
		    f.pc_end <= f.pc_begin || f.pc_end > CFI_MAX_ADDR ||
		    f.pc_end - f.pc_begin > CFI_MAX_FDE_RANGE)
			continue;
		/* the byte before the trampoline (alignment padding) is the trampoline's */
		if (sig && f.pc_begin == sig) {
			f.pc_begin--;
			f.cie = &go_signal_cie;
		} else if (sig && f.pc_end == sig && f.pc_end - f.pc_begin > 1) {
			f.pc_end--;
		}
		err = cfi_push_fde(p, &f);
	}
	if (!err)
		t->stats.sources |= 1 << CFI_SRC_GOPCLNTAB;
	return err;
}

struct go_rows {
	row_fn emit;
	void *ctx;
	bool bottom;
	bool arm64; /* the frame layout of an LR machine */
	int32_t pushed; /* bytes below the caller's sp before the function's own frame */
};

/*
 * arm64: the preemption signal enters runtime.asyncPreempt as if the
 * interrupted code had called it, x30 the resume pc, after pushing that
 * code's x30 in 16 bytes of its own (sigctxt.pushCall: "this extra space is
 * known to gentraceback"); the function's pcsp starts below them.
 */
#define GO_ARM64_PUSHCALL 16
static const char go_async_preempt[] = "runtime.asyncPreempt";

static int go_row(void *ctx, uint64_t pc, int32_t sp)
{
	struct go_rows *gr = ctx;
	struct cfa_state st = {0};

	/*
	 * Below its own return address (syscall.rawVforkSyscall pops it around
	 * vfork): no rule says where the caller is, an unsupported row, counted
	 */
	if (sp < 0)
		return gr->emit(gr->ctx, pc, &st);
	if (gr->arm64) {
		int64_t cfa = (int64_t)sp + gr->pushed;

		st.cfa = (struct reg_rule){.kind = RR_OFFSET, .reg = DW_REG_A64_SP, .off = cfa};
		if (gr->bottom)
			st.ra = (struct reg_rule){.kind = RR_UNDEFINED};
		else if (sp > 0)
			st.ra = (struct reg_rule){.kind = RR_OFFSET, .off = -cfa};
		if (sp > 0)
			st.rbp = (struct reg_rule){.kind = RR_OFFSET, .off = -cfa - 8};
		return gr->emit(gr->ctx, pc, &st);
	}
	st.cfa = (struct reg_rule){.kind = RR_OFFSET, .reg = DW_REG_RSP, .off = (int64_t)sp + 8};
	st.ra = gr->bottom ? (struct reg_rule){.kind = RR_UNDEFINED}
			   : (struct reg_rule){.kind = RR_OFFSET, .off = -8};
	if (sp > 0)
		st.rbp = (struct reg_rule){.kind = RR_OFFSET, .off = -16};
	return gr->emit(gr->ctx, pc, &st);
}

int go_run_fde(const struct fde *f, row_fn emit, void *ctx)
{
	const struct gopclntab *g = f->sec->read_ctx;
	struct go_rows gr = {
	    .emit = emit, .ctx = ctx, .arm64 = f->sec->regs->arch == CFI_ARCH_ARM64};
	uint64_t start, end;
	const char *name;

	if (gopclntab_func(g, f->offset, &start, &end, &name))
		return -1;
	gr.bottom = go_func_is_bottom(name);
	if (gr.arm64 && !strcmp(name, go_async_preempt))
		gr.pushed = GO_ARM64_PUSHCALL;
	return gopclntab_pcsp(g, f->offset, go_row, &gr) ? -1 : 0;
}
