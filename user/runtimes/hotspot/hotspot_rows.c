// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwind rows for HotSpot's code cache (x86-64).  Compiled Java code keeps
 * no frame pointer (rbp is an allocatable register unless
 * -XX:+PreserveFramePointer), so a walk through it needs what the JVM's
 * own stack walker uses: each blob's frame size.
 *
 * The rules, from JDK 17's src/hotspot/cpu/x86 (frame_x86.inline.hpp's
 * frame::sender_for_compiled_frame, MacroAssembler::verified_entry for C2,
 * C1_MacroAssembler::build_frame for C1, templateTable / the interpreter's
 * generate_fixed_frame), each checked against a live JDK 17 by the test:
 *  - a blob with a frame size (words, return address included: nmethods of
 *    C1 and C2 and native wrappers, OptoRuntime's and SharedRuntime's
 *    runtime stubs, the safepoint, deoptimization and exception blobs),
 *    from code_begin + frame_complete_offset to its code's end: CFA = rsp +
 *    frame_size * 8, the return address at CFA - 8, the caller's rbp at CFA
 *    - 16.  That is sender_for_compiled_frame: sender_sp = sp + frame_size,
 *    the return address at sender_sp[-1], the saved rbp at sender_sp[-2]
 *    (frame::sender_sp_offset 2), true wherever the frame is complete since
 *    rsp does not move in compiled code between its prologue and epilogue.
 *  - its prologue, [code_begin, code_begin + frame_complete): the rule at a
 *    function's entry, CFA = rsp + 8, the return address at CFA - 8, rbp
 *    unchanged.  The prologue is the inline-cache check of the unverified
 *    entry, alignment, the stack bang (a store below rsp), then `push rbp;
 *    sub rsp, (frame_size - 2) * 8` (C2 with a stack bang, C1), or `sub rsp,
 *    (frame_size - 1) * 8; mov [rsp + (frame_size - 2) * 8], rbp` (C2 without
 *    one: small leaf methods), or a native wrapper's `push rbp; mov rbp,
 *    rsp; sub rsp, ...`.  The entry rule holds for every byte but the last
 *    one or two instructions, which only a decoder of the code's bytes could
 *    place; a sample there is rare (a few bytes of a method's whole code) and
 *    its walk ends at a return address that is no code, not in a wrong frame
 *    named as right: the saved rbp or a frame slot is read for it.
 *  - the same rule from frame_complete on holds in the epilogue only until
 *    `add rsp; pop rbp` (then the return's safepoint poll and `ret` run with
 *    the entry's rsp): no row tells that apart without decoding, as above.
 *  - the template interpreter (its one blob "Interpreter"): every
 *    interpreted frame is a classic frame-pointer frame built by `enter`,
 *    CFA = rbp + 16, the return address at CFA - 8, the caller's rbp at CFA
 *    - 16.  The caller's rsp this gives is the interpreted frame's sender sp
 *    as the c2i adapter extended it (room for the arguments): right for an
 *    interpreted caller (its own rule is rbp's), too low by that room for a
 *    compiled caller reached through c2i, whose frame-size rule then reads
 *    a wrong slot.  The JVM's sender uses interpreter_frame_sender_sp (rbp -
 *    8) there, which no CFA-relative rule can say: a later rule kind.
 *  - a blob with a frame size whose frame is never complete (frame_complete
 *    -1, CodeOffsets::frame_never_safe: the safepoint, deoptimization,
 *    uncommon-trap and exception blobs, C2's OptoRuntime stubs such as
 *    _new_instance_Java, C1's Runtime1 stubs): the frame-size rule over all
 *    its code.  "Never safe" is for a sample's leaf pc (AsyncGetCallTrace's
 *    safe_for_sender): where the stub is a caller, at the return address
 *    of its call into the VM, its frame is complete and the JVM's own
 *    sender_for_compiled_frame uses the frame size as above.  A leaf pc in
 *    its first or last instructions, or in the deoptimization and
 *    uncommon-trap blobs' second call (unpack_frames, after they replaced
 *    the deoptimized frame by interpreted ones), gets a wrong rule; no row
 *    would be no better there (rbp is no frame pointer in C2's stubs).
 *  - a blob whose frame size is unknown (-1) or 0: no row.  BufferBlobs
 *    (StubRoutines, the i2c/c2i adapters, method handle adapters, vtable
 *    stubs) hold many stubs of as many shapes, framed by enter (call_stub,
 *    arraycopy) or frameless; the walker, finding no row in a mapping with
 *    rows, falls back to frame pointers there, as it does today for the
 *    whole code cache.
 *
 * Rows are made by the table compiler itself: each blob becomes an FDE
 * whose CFA program is written here (a CIE whose initial rule is the entry
 * rule, then advance to frame_complete and set the frame's), compacted with
 * every other into one table by build_compact, as tables/go_input.c does
 * for Go's pcsp tables.  The rules come out as the walker's cfi_rules
 * (rsp+N / rbp+16, ra c-8, rbp c-16), identical to those of an ELF's.
 *
 * Keying, for the step that loads these rows (the design this file serves):
 *  - The code cache has no ELF and no bias: its addresses are absolute in
 *    the process and its table is the process's alone.  The table's pages
 *    are keyed (obj_id, pc >> 16) as every table's; obj_id is an id the
 *    table store gives this (pid, generation of the code) table, never a
 *    file's identity, so no other process shares it.  Each code heap's
 *    reserved range [low_boundary, high_boundary) becomes one mapping key
 *    of the pid (LPM (pid, address) as any mapping), its value {obj_id,
 *    CFI_MAPPING_CFI, bias 0}: reserved, not committed, so a heap growing
 *    needs no new key, and a pc with no row falls back to frame pointers.
 *  - The code changes as the JVM compiles, deoptimizes and frees (the
 *    sweeper, class unloading): the table is rebuilt from a fresh walk,
 *    never edited in place.  hotspot_code_digest() tells a walk whose blobs
 *    differ (code range, frame, compile id, state) from the last one built;
 *    compile ids are unique in the JVM's life, so an nmethod freed and
 *    another placed at its address differ even with the same range.  A
 *    rebuild loads the new table under a new obj_id, points the heaps'
 *    mapping values at it, bumps the process's generation (the walker's
 *    rule cache is keyed by it) and then frees the old table: a walk sees
 *    one table or the other, never a mix.
 *  - When: a walk at an interval (its budget bounds the cost: 2 s, a
 *    million blocks), and sooner when samples end at a code-cache pc with
 *    no row (a blob compiled since).  Between a free and the next rebuild a
 *    pc in new code may meet the rows of the old; the walker's checks (CFA
 *    above sp, a return address in a mapping) end such a walk, the rows of
 *    not-entrant and zombie nmethods are kept while a walk finds them (their
 *    frames may still be on stacks).
 */
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tables/diag.h"
#include "tables/internal.h"
#include "user/runtimes/hotspot/hotspot_rows.h"

/* DWARF call frame instructions (DWARF 5, 6.4.2) */
#define CFA_ADVANCE_LOC4   0x04
#define CFA_DEF_CFA	   0x0c
#define CFA_DEF_CFA_OFFSET 0x0e
#define CFA_OFFSET(reg)	   (0x80 | (reg)) /* reg < 64, factored offset follows */
#define CFA_DATA_ALIGN	   (-8)
#define PROGRAM_MAX	   16	     /* bytes of one blob's program: 1 + 4, 1 + 3, 1 + 1 */
#define FRAME_WORDS_MAX	   (1 << 20) /* a frame of 8 MiB: no Java frame is near */

/* What a blob's program is read as: one section, one CIE for every blob. */
static const struct cfi_section *code_section(void)
{
	static struct cfi_section sec = {.source = CFI_SRC_EH_FRAME, .name = "hotspot code cache"};

	sec.regs = cfi_arch_regs(CFI_ARCH_X86_64);
	return &sec;
}

/* A function's entry: CFA = rsp + 8, the return address the call pushed at CFA - 8. */
static void entry_cie(struct cie *c)
{
	memset(c, 0, sizeof(*c));
	c->code_align = 1;
	c->data_align = CFA_DATA_ALIGN;
	c->ra_reg = DW_REG_RIP;
	c->addr_size = 8;
	c->init.cfa = (struct reg_rule){.kind = RR_OFFSET, .reg = DW_REG_RSP, .off = 8};
	c->init.ra = (struct reg_rule){.kind = RR_OFFSET, .off = -8};
}

enum hotspot_frame_kind hotspot_frame_kind(const struct hotspot_blob *b)
{
	if (b->is_interpreter)
		return HOTSPOT_FRAME_FP;
	if (b->frame_size > 0)
		return HOTSPOT_FRAME_SIZED;
	return HOTSPOT_FRAME_NONE;
}

static void uleb(uint8_t **p, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		*(*p)++ = byte | (v ? 0x80 : 0);
	} while (v);
}

/*
 * The CFA program of blob b into p (PROGRAM_MAX bytes): how many bytes, 0
 * when b gets no row (what the entry CIE says is then never used).
 */
static size_t blob_program(const struct hotspot_blob *b, uint8_t *p)
{
	uint8_t *start = p;
	uint32_t at;

	switch (hotspot_frame_kind(b)) {
	case HOTSPOT_FRAME_SIZED:
		/* -1: never complete for a leaf; as a caller, from its first byte */
		at = b->frame_complete > 0 ? (uint32_t)b->frame_complete : 0;
		if (at) {
			*p++ = CFA_ADVANCE_LOC4;
			memcpy(p, &at, sizeof(at)); /* the target's byte order: x86-64's */
			p += sizeof(at);
		}
		*p++ = CFA_DEF_CFA_OFFSET;
		uleb(&p, (uint64_t)b->frame_size * 8);
		break;
	case HOTSPOT_FRAME_FP:
		*p++ = CFA_DEF_CFA;
		uleb(&p, DW_REG_RBP);
		uleb(&p, 16);
		break;
	default:
		return 0;
	}
	/* the caller's rbp below its return address, as push rbp (or its mov) put it */
	*p++ = CFA_OFFSET(DW_REG_RBP);
	uleb(&p, 16 / -CFA_DATA_ALIGN);
	return (size_t)(p - start);
}

/* Whether blob b's code and frame are ones a row can hold. */
static bool blob_fits(const struct hotspot_blob *b)
{
	if (b->code_begin >= b->code_end || b->code_end > CFI_MAX_ADDR ||
	    b->code_end - b->code_begin > CFI_MAX_FDE_RANGE)
		return false;
	/* the frame complete in its code (at its end: the entry rule throughout) */
	return hotspot_frame_kind(b) != HOTSPOT_FRAME_SIZED ||
	       (b->frame_size <= FRAME_WORDS_MAX && b->frame_complete >= -1 &&
		b->frame_complete <= (int64_t)(b->code_end - b->code_begin));
}

int hotspot_code_add(const struct hotspot_blob *blob, void *arg)
{
	struct hotspot_code *c = arg;
	struct hotspot_blob *n = vec_grow(c->blob, sizeof(*n), c->n, &c->cap, 1024);

	if (!n)
		return -1;
	c->blob = n;
	c->blob[c->n++] = *blob;
	return 0;
}

void hotspot_code_free(struct hotspot_code *c)
{
	free(c->blob);
	memset(c, 0, sizeof(*c));
}

/* FNV-1a over the bytes of v */
static uint64_t mix(uint64_t h, const void *v, size_t n)
{
	const uint8_t *b = v;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t hotspot_code_digest(const struct hotspot_code *c)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < c->n; i++) {
		const struct hotspot_blob *b = &c->blob[i];
		/* what the rows depend on, and what tells a reused address apart */
		const int64_t v[] = {(int64_t)b->code_begin, (int64_t)b->code_end, b->frame_size,
				     b->frame_complete,	     b->compile_id,	   b->state,
				     b->is_interpreter};

		h = mix(h, v, sizeof(v));
	}
	return mix(h, &c->n, sizeof(c->n));
}

/* The blobs with rows as FDEs of p, their programs in prog (PROGRAM_MAX bytes each). */
static int push_blobs(struct cfi_parse *p, const struct hotspot_blob *blobs, size_t n,
		      const struct cie *cie, uint8_t *prog, struct hotspot_rows_stats *st)
{
	for (size_t i = 0; i < n; i++) {
		const struct hotspot_blob *b = &blobs[i];
		struct fde f = {.cie = cie, .sec = code_section(), .offset = i};
		enum hotspot_frame_kind kind = hotspot_frame_kind(b);
		int err;

		if (kind == HOTSPOT_FRAME_NONE) {
			st->none++;
			continue;
		}
		if (!blob_fits(b)) {
			st->bad++;
			continue;
		}
		f.pc_begin = b->code_begin;
		f.pc_end = b->code_end;
		f.insns = prog + i * PROGRAM_MAX;
		f.insns_len = blob_program(b, prog + i * PROGRAM_MAX);
		err = cfi_push_fde(p, &f);
		if (err)
			return err;
		if (kind == HOTSPOT_FRAME_SIZED)
			st->sized++;
		else
			st->fp++;
	}
	return 0;
}

int hotspot_rows_build(const struct hotspot_blob *blobs, size_t n, const struct cfi_budget *budget,
		       struct cfi_table **out, struct hotspot_rows_stats *stats,
		       struct cfi_diag *diag)
{
	struct diag_ctx dc = {diag, "hotspot code cache"};
	struct hotspot_rows_stats st = {0};
	struct cfi_parse p = {0};
	struct rule_dict dict;
	struct cfi_table *t;
	struct cie cie;
	uint8_t *prog;
	int err;

	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	t = calloc(1, sizeof(*t));
	prog = malloc(n ? n * PROGRAM_MAX : 1);
	if (!t || !prog || rule_dict_init(&dict)) {
		free(t);
		free(prog);
		return CFI_ERR_NOMEM;
	}
	entry_cie(&cie);
	t->arch = CFI_ARCH_X86_64;
	p.diag = &dc;
	p.stats = &t->stats;
	budget_start(&p.budget, budget);
	err = push_blobs(&p, blobs, n, &cie, prog, &st);
	if (!err)
		err = build_compact(&p, &dict, t, &dc);
	if (err)
		goto out;
	t->stats.sources = 1 << CFI_SRC_EH_FRAME;
	t->rules = dict.rules;
	t->nr_rules = dict.nr;
	dict.rules = NULL;
	t->stats.bytes_rows = (uint64_t)t->nr_rows * sizeof(struct cfi_row);
	t->stats.bytes_index =
	    (uint64_t)t->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
	t->stats.bytes_rules = (uint64_t)t->nr_rules * sizeof(struct cfi_rule);
	t->stats.bytes_total = t->stats.bytes_rows + t->stats.bytes_index + t->stats.bytes_rules;
	*out = t;
	t = NULL;
out:
	if (stats)
		*stats = st;
	cfi_parse_free(&p);
	rule_dict_free(&dict);
	cfi_table_free(t);
	free(prog);
	return err;
}
