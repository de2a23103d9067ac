// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwind rows for HotSpot's code cache (x86-64 below; arm64's are the same
 * states in its registers, CFA = sp + 0 and the return address in x30 at a
 * function's entry, from the shapes hotspot_marks_arm64.c reads, and
 * interp_program_arm64 for the interpreter).  Compiled Java code keeps
 * no frame pointer (rbp is an allocatable register unless
 * -XX:+PreserveFramePointer), so a walk through it needs what the JVM's
 * own stack walker uses: each blob's frame size.
 *
 * The rules, from JDK 17's src/hotspot/cpu/x86 (frame_x86.inline.hpp's
 * frame::sender_for_compiled_frame, MacroAssembler::verified_entry for C2,
 * C1_MacroAssembler::build_frame for C1, templateTable / the interpreter's
 * generate_fixed_frame); the nmethods' and the interpreter's are checked
 * on a live JDK 17 by test_hotspot_rows and test_hotspot_code:
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
 *    unchanged, through the inline-cache check of the unverified entry
 *    (virtual methods), alignment and the stack bang (a store below rsp).
 *    Then, as an nmethod's bytes show (read from the process when the
 *    caller asks: hotspot_code's pid; hotspot_frame_marks), `push rbp; sub
 *    rsp, (frame_size - 2) * 8` (C2 with a stack bang, C1): rsp + 16, rbp
 *    at CFA - 16 between the two; or `sub rsp, (frame_size - 1) * 8; mov
 *    [rsp + (frame_size - 2) * 8], rbp` (C2 without a bang: small leaf
 *    methods): the frame's CFA with rbp not yet saved between the two; or
 *    a native wrapper's (and -XX:+PreserveFramePointer's) `push rbp; mov
 *    rbp, rsp`: rbp its frame pointer from there on (CFA = rbp + 16), since
 *    a wrapper moves rsp around its calls.  Each shape must end exactly at
 *    frame_complete, or where an nmethod entry barrier ending there starts
 *    (ZGC's and Shenandoah's, every GC's from JDK 21: the frame is complete
 *    from the barrier on), with the frame's own size in its sub; code of
 *    another shape, or not read, keeps the entry rule up to
 *    frame_complete: wrong for its last one or two instructions, where a
 *    walk ends at a return address that is no code (the saved rbp or a
 *    frame slot is read for it), not in a wrong frame named as right.
 *  - its epilogues, where the bytes were read: `add rsp, (frame_size - 2) *
 *    8; pop rbp` (or a wrapper's `leave`), then the return poll (`cmp rsp,
 *    [r15 + disp]; ja`, disp32 in JDK 17, disp8 in 25) or a wrapper's
 *    pending exception check (JDK 17's), then
 *    `ret`, or a `jmp` out (the rethrow of an exception): rsp + 16 at the
 *    pop, the entry rule after it up to the return's end, the frame's rule
 *    again after it.  Any byte offset is tried (there is no decoder here):
 *    the frame's own size in the add and the exact return after the pop
 *    make a match inside another instruction's operands unlikely.  A frame
 *    of two words has no add: its returns keep the frame's rule.
 *  - the template interpreter (its one blob "Interpreter"): every
 *    interpreted frame is a frame-pointer frame built by `enter`, the
 *    return address at rbp + 8, the caller's rbp at rbp, and the caller's
 *    sp the sender sp it keeps at rbp - 8 (sender_for_interpreter_frame):
 *    rbp + 16 is too low for a compiled caller reached through c2i or
 *    deoptimization (both extend its sp for the arguments).  The walker's
 *    CFA = *(rbp - 8) with the return address and rbp AT_FP
 *    (interp_program); an interpreted method called from C2 code, stopped
 *    300 times, lost the stack after its caller 299 times with rbp + 16.
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
 *  - a blob whose frame size is unknown (-1) or 0: the frame-pointer rule,
 *    CFA = rbp + 16.  BufferBlobs (StubRoutines, the i2c/c2i adapters,
 *    method handle adapters, vtable stubs) hold many stubs of as many
 *    shapes, framed by enter (call_stub, arraycopy) or frameless; frame
 *    pointers are what the walker's fallback used there, and a row says so
 *    explicitly: a pc of the code cache with no row at all is then code
 *    the rows do not know yet (compiled since their walk), which the walker
 *    defers until the next rows (CFI_MAPPING_JIT).
 *
 * Rows are made by the table compiler itself: each blob becomes an FDE
 * whose CFA program is written here (a CIE whose initial rule is the entry
 * rule, then for each mark an advance to it and its rule), compacted with
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
 *    differ (code range, frame, compile id) from the last one built;
 *    compile ids are unique in the JVM's life, so an nmethod freed and
 *    another placed at its address differ even with the same range, and
 *    its code (so its marks) is the compile id's for its life.  Its state
 *    is left out: an nmethod made not entrant keeps its code and frames
 *    (only its first instruction is patched to a jump), and is no reason
 *    to rebuild; a walk for the digest alone need not read code (pid 0).  A
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
 *  - Cost: a walk reads every blob's header, and each nmethod's code for
 *    its prologue and epilogues (at most 64 MiB a walk, hotspot_code's
 *    bytes_max); a rebuild could keep the marks of the nmethods it already
 *    read, by address and compile id, and read only new code.  A blob's
 *    rows are 1 to a few dozen 4-byte rows; the rules are a few dozen.
 */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/vec.h"
#include "tables/diag.h"
#include "tables/internal.h"
#include "user/runtimes/hotspot/hotspot_rows.h"
#include "user/runtimes/target_mem.h"

/* DWARF call frame instructions (DWARF 5, 6.4.2) */
#define CFA_ADVANCE_LOC4   0x04
#define CFA_DEF_CFA	   0x0c
#define CFA_OFFSET(reg)	   (0x80 | (reg)) /* reg < 64, factored offset follows */
#define CFA_RESTORE(reg)   (0xc0 | (reg)) /* back to the CIE's rule */
#define CFA_SAME_VALUE	   0x08		  /* register, uleb */
#define CFA_DATA_ALIGN	   (-8)
#define MARK_PROGRAM_MAX   16	     /* bytes of one mark's instructions: 5 + 6 + 2 (+ 2) */
#define CODE_READ_MAX	   (1 << 20) /* bytes of one nmethod's code read to scan */
#define CODE_BYTES_DEFAULT (64ull << 20)

_Static_assert(HOTSPOT_MARKS_MAX < 1024, "one blob's marks fit the first growth of mark[]");

/*
 * An interpreted frame (frame_x86.cpp's sender_for_interpreter_frame): the
 * caller's sp is the sender sp the frame keeps at rbp - 8
 * (interpreter_frame_sender_sp_offset -1), which a compiled caller needs
 * (a c2i adapter, or deoptimization, extended its sp for the arguments);
 * the return address at rbp + 8, the caller's rbp at rbp.  DW_CFA_def_cfa_
 * expression (breg6 -8; deref), DW_CFA_expression rip (breg6 +8) and rbp
 * (breg6 +0): the walker's CFI_CFA_DEREF_RBP with CFI_REG_AT_FP registers.
 */
static const uint8_t interp_program[] = {0x0f, 0x03,	   0x76, 0x78, 0x06,  /* cfa = *(rbp - 8) */
					 0x10, DW_REG_RIP, 0x02, 0x76, 0x08,  /* rip at rbp + 8 */
					 0x10, DW_REG_RBP, 0x02, 0x76, 0x00}; /* rbp at rbp */
/* arm64's (frame_aarch64.hpp: the same slots above and below x29): breg29 is 0x8d */
static const uint8_t interp_program_arm64[] = {
    0x0f, 0x03,		 0x8d, 0x78, 0x06,  /* cfa = *(x29 - 8) */
    0x10, DW_REG_A64_LR, 0x02, 0x8d, 0x08,  /* x30 at x29 + 8 */
    0x10, DW_REG_A64_FP, 0x02, 0x8d, 0x00}; /* x29 at x29 */
_Static_assert(sizeof(interp_program) <= MARK_PROGRAM_MAX, "the interpreter's program fits a mark");
_Static_assert(sizeof(interp_program_arm64) == sizeof(interp_program), "one size for both");

/*
 * What differs by machine, in one place: the registers a frame's rules
 * name (its stack pointer, frame pointer and return address column), the
 * CFA at a function's entry, the interpreter's program and the reader of
 * C1's and C2's prologues and epilogues.
 */
struct rows_machine {
	uint8_t arch; /* enum cfi_arch */
	uint8_t sp, fp, ra;
	uint8_t entry_cfa; /* x86-64: the return address the call pushed; arm64: in x30 */
	const uint8_t *interp;
	size_t (*marks)(const struct hotspot_blob *b, const uint8_t *code, size_t n,
			struct hotspot_mark *out);
};

static const struct rows_machine x86_machine = {.arch = CFI_ARCH_X86_64,
						.sp = DW_REG_RSP,
						.fp = DW_REG_RBP,
						.ra = DW_REG_RIP,
						.entry_cfa = 8,
						.interp = interp_program,
						.marks = hotspot_frame_marks};
static const struct rows_machine arm64_machine = {.arch = CFI_ARCH_ARM64,
						  .sp = DW_REG_A64_SP,
						  .fp = DW_REG_A64_FP,
						  .ra = DW_REG_A64_LR,
						  .entry_cfa = 0,
						  .interp = interp_program_arm64,
						  .marks = hotspot_frame_marks_arm64};

/* The machine's, x86-64's for any but arm64. */
static const struct rows_machine *rows_machine(uint8_t arch)
{
	return arch == CFI_ARCH_ARM64 ? &arm64_machine : &x86_machine;
}

/* A function's entry: CFA = rsp + 8 and the return address at CFA - 8, or sp + 0 and in x30. */
static void entry_cie(struct cie *c, const struct rows_machine *r)
{
	memset(c, 0, sizeof(*c));
	c->code_align = 1;
	c->data_align = CFA_DATA_ALIGN;
	c->ra_reg = r->ra;
	c->addr_size = 8;
	c->init.cfa = (struct reg_rule){.kind = RR_OFFSET, .reg = r->sp, .off = r->entry_cfa};
	if (r->entry_cfa)
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

/* ---- the walk's blobs ---- */

static int by_code_begin(const void *a, const void *b, void *arg)
{
	const struct hotspot_blob *blob = arg;
	uint64_t x = blob[*(const uint32_t *)a].code_begin,
		 y = blob[*(const uint32_t *)b].code_begin;

	return x < y ? -1 : x > y;
}

size_t hotspot_code_find(struct hotspot_code *c, uint64_t code_begin)
{
	size_t lo = 0, hi;

	if (!c->n || c->n > UINT32_MAX)
		return 0;
	if (!c->order) {
		c->order = malloc(c->n * sizeof(*c->order));
		if (!c->order)
			return 0;
		for (size_t i = 0; i < c->n; i++)
			c->order[i] = (uint32_t)i;
		qsort_r(c->order, c->n, sizeof(*c->order), by_code_begin, c->blob);
	}
	hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->blob[c->order[mid]].code_begin < code_begin)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->blob[c->order[lo]].code_begin == code_begin
		   ? (size_t)c->order[lo] + 1
		   : 0;
}

/* Where c->prev holds b, the same compile (index + 1), or 0. */
static size_t prev_same(struct hotspot_code *c, const struct hotspot_blob *b)
{
	size_t at = c->prev ? hotspot_code_find(c->prev, b->code_begin) : 0;
	const struct hotspot_blob *q = at ? &c->prev->blob[at - 1] : NULL;

	return q && q->code_end == b->code_end && q->compile_id == b->compile_id &&
		       q->frame_size == b->frame_size && q->frame_complete == b->frame_complete &&
		       q->is_nmethod == b->is_nmethod
		   ? at
		   : 0;
}

/* The marks of blob i of c from its code, read from c->pid within c's bytes. */
/* ... at: where c->prev holds the same compile (index + 1), or 0 */
static int scan_code(struct hotspot_code *c, size_t i, size_t at)
{
	const struct hotspot_blob *b = &c->blob[i];
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	uint64_t len = b->code_end - b->code_begin;
	uint8_t *code;
	size_t k;

	/* nmethods, and C1's Runtime1 stubs (hotspot_marks.c's enter_marks) */
	if (!c->pid || !(b->is_nmethod || hotspot_runtime1_stub(b)) || len > CODE_READ_MAX ||
	    b->code_end < b->code_begin)
		return 0;
	if (at) {
		k = c->prev->span ? c->prev->span[at - 1].n : 0;
		if (k > HOTSPOT_MARKS_MAX)
			k = 0;
		if (k)
			memcpy(m, c->prev->mark + c->prev->span[at - 1].first, k * sizeof(*m));
		c->reused += b->is_nmethod;
	} else {
		if (c->bytes + len > (c->bytes_max ? c->bytes_max : CODE_BYTES_DEFAULT))
			return 0;
		code = malloc(len ? len : 1);
		if (!code)
			return -1;
		c->bytes += len;
		k = target_read(c->pid, b->code_begin, code, len)
			? 0
			: rows_machine(c->arch)->marks(b, code, len, m);
		free(code);
		c->scanned += b->is_nmethod;
	}
	if (!k)
		return 0;
	c->shaped += b->is_nmethod;
	c->stubs_shaped += !b->is_nmethod;
	/* room for k more: vec_grow makes room for element nmark + k - 1 (k < 1024) */
	if (VEC_RESERVE(c->mark, c->nmark + k - 1, c->capmark, 1024))
		return -1;
	c->span[i].first = (uint32_t)c->nmark;
	c->span[i].n = (uint32_t)k;
	memcpy(c->mark + c->nmark, m, k * sizeof(*m));
	c->nmark += k;
	return 0;
}

int hotspot_code_add(const struct hotspot_blob *blob, void *arg)
{
	struct hotspot_code *c = arg;
	uint64_t cap = c->cap;
	size_t at;

	if (VEC_RESERVE(c->blob, c->n, cap, 1024))
		return -1;
	if (cap != c->cap) {
		void *span = realloc(c->span, cap * sizeof(*c->span));
		void *seen = span ? realloc(c->seen_ns, cap * sizeof(*c->seen_ns)) : NULL;

		if (span)
			c->span = span;
		if (!seen)
			return -1;
		c->seen_ns = seen;
		c->cap = cap;
	}
	c->blob[c->n] = *blob;
	c->span[c->n].first = c->span[c->n].n = 0;
	/* a stub stays where it is, read once */
	at = blob->is_nmethod || hotspot_runtime1_stub(blob) ? prev_same(c, blob) : 0;
	c->seen_ns[c->n] = at ? c->prev->seen_ns[at - 1] : 0;
	if (scan_code(c, c->n, at))
		return -1;
	c->n++;
	return 0;
}

void hotspot_code_seen(struct hotspot_code *c, uint64_t now_ns)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->seen_ns[i])
			c->seen_ns[i] = now_ns;
}

void hotspot_code_free(struct hotspot_code *c)
{
	free(c->order);
	free(c->seen_ns);
	free(c->blob);
	free(c->span);
	free(c->mark);
	memset(c, 0, sizeof(*c));
}

uint64_t hotspot_code_digest(const struct hotspot_code *c)
{
	uint64_t h = HASH_FNV_OFFSET;

	for (size_t i = 0; i < c->n; i++) {
		const struct hotspot_blob *b = &c->blob[i];
		/* what the rows depend on, and what tells a reused address apart */
		const int64_t v[] = {(int64_t)b->code_begin, (int64_t)b->code_end,
				     b->frame_size,	     b->frame_complete,
				     b->compile_id,	     b->is_interpreter};

		h = hash_bytes(h, v, sizeof(v));
	}
	return hash_bytes(h, &c->n, sizeof(c->n));
}

/* ---- the rows ---- */

static void uleb(uint8_t **p, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		*(*p)++ = byte | (v ? 0x80 : 0);
	} while (v);
}

/*
 * The instructions setting state m.state of a frame of fs words from m.off
 * (after at) on, into *p, in r's registers.
 */
static void mark_program(uint8_t **p, uint32_t *at, struct hotspot_mark m, uint32_t fs,
			 const struct rows_machine *r)
{
	bool saved = m.state != HOTSPOT_AT_ENTRY && m.state != HOTSPOT_AT_UNSAVED &&
		     m.state != HOTSPOT_AT_RA_GONE;
	const uint64_t cfa[] = {r->entry_cfa,	      16, (uint64_t)fs * 8, (uint64_t)fs * 8, 16,
				(uint64_t)fs * 8 + 8, 0};

	if (m.off > *at) {
		uint32_t delta = m.off - *at;

		*(*p)++ = CFA_ADVANCE_LOC4;
		memcpy(*p, &delta, sizeof(delta)); /* the target's byte order: x86-64's */
		*p += sizeof(delta);
		*at = m.off;
	}
	*(*p)++ = CFA_DEF_CFA;
	uleb(p, m.state == HOTSPOT_AT_FP ? r->fp : r->sp);
	uleb(p, cfa[m.state < sizeof(cfa) / sizeof(cfa[0]) ? m.state : 0]);
	if (saved) {
		/* the caller's rbp below its return address, as push rbp (or its mov) put it */
		*(*p)++ = CFA_OFFSET(r->fp);
		uleb(p, 16 / -CFA_DATA_ALIGN);
	} else {
		*(*p)++ = CFA_RESTORE(r->fp);
	}
	/*
	 * arm64: the return address saved with x29 (stp), or still in x30;
	 * x86-64: at CFA - 8 (the CIE's), or gone, which the walker takes for a
	 * return address it cannot follow (same value is no rule for rip)
	 */
	if (!r->entry_cfa && saved) {
		*(*p)++ = CFA_OFFSET(r->ra);
		uleb(p, 8 / -CFA_DATA_ALIGN);
	} else if (m.state == HOTSPOT_AT_RA_GONE) {
		*(*p)++ = CFA_SAME_VALUE;
		uleb(p, r->ra);
	} else {
		*(*p)++ = CFA_RESTORE(r->ra);
	}
}

/*
 * The CFA program of blob i of c into prog (MARK_PROGRAM_MAX bytes a mark,
 * two marks without any): how many bytes.
 */
static size_t blob_program(const struct hotspot_code *c, size_t i, uint8_t *prog)
{
	const struct hotspot_blob *b = &c->blob[i];
	const struct rows_machine *r = rows_machine(c->arch);
	uint8_t *p = prog;
	uint32_t at = 0;

	if (hotspot_frame_kind(b) == HOTSPOT_FRAME_FP) {
		memcpy(p, r->interp, sizeof(interp_program));
		return sizeof(interp_program);
	}
	/* a frame not known: frame pointers */
	if (hotspot_frame_kind(b) == HOTSPOT_FRAME_NONE) {
		mark_program(&p, &at, (struct hotspot_mark){0, HOTSPOT_AT_FP}, 0, r);
		return (size_t)(p - prog);
	}
	if (c->span && c->span[i].n) {
		for (uint32_t k = 0; k < c->span[i].n; k++)
			mark_program(&p, &at, c->mark[c->span[i].first + k],
				     (uint32_t)b->frame_size, r);
		return (size_t)(p - prog);
	}
	/* -1: never complete for a leaf; as a caller, from its first byte */
	mark_program(&p, &at,
		     (struct hotspot_mark){b->frame_complete > 0 ? (uint32_t)b->frame_complete : 0,
					   HOTSPOT_AT_FRAME},
		     (uint32_t)b->frame_size, r);
	return (size_t)(p - prog);
}

/* Whether blob b's code and frame are ones a row can hold. */
static bool blob_fits(const struct hotspot_blob *b)
{
	if (b->code_begin >= b->code_end || b->code_end > CFI_MAX_ADDR ||
	    b->code_end - b->code_begin > CFI_MAX_FDE_RANGE)
		return false;
	/* the frame complete in its code (at its end: the entry rule throughout) */
	return hotspot_frame_kind(b) != HOTSPOT_FRAME_SIZED ||
	       (b->frame_size <= HOTSPOT_FRAME_WORDS_MAX && b->frame_complete >= -1 &&
		b->frame_complete <= (int64_t)(b->code_end - b->code_begin));
}

/* Bytes of the programs of c's blobs: an upper bound. */
static size_t programs_size(const struct hotspot_code *c)
{
	size_t marks = 0;

	for (size_t i = 0; i < c->n; i++)
		marks += (c->span && c->span[i].n ? c->span[i].n : 0) + 2;
	return marks * MARK_PROGRAM_MAX;
}

/* The blobs with rows as FDEs of p, their programs in prog. */
static int push_blobs(struct cfi_parse *p, const struct hotspot_code *c,
		      const struct cfi_section *sec, const struct cie *cie, uint8_t *prog,
		      struct hotspot_rows_stats *st)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct hotspot_blob *b = &c->blob[i];
		struct fde f = {.cie = cie, .sec = sec, .offset = i};
		enum hotspot_frame_kind kind = hotspot_frame_kind(b);
		int err;

		if (!blob_fits(b)) {
			st->bad++;
			continue;
		}
		f.pc_begin = b->code_begin;
		f.pc_end = b->code_end;
		f.insns = prog;
		f.insns_len = blob_program(c, i, prog);
		prog += f.insns_len;
		err = cfi_push_fde(p, &f);
		if (err)
			return err;
		if (kind == HOTSPOT_FRAME_SIZED)
			st->sized++;
		else if (kind == HOTSPOT_FRAME_FP)
			st->fp++;
		else
			st->none++;
	}
	return 0;
}

int hotspot_rows_build(const struct hotspot_code *code, const struct cfi_budget *budget,
		       struct cfi_table **out, struct hotspot_rows_stats *stats,
		       struct cfi_diag *diag)
{
	struct diag_ctx dc = {diag, "hotspot code cache"};
	const struct rows_machine *mr = rows_machine(code->arch);
	/* what every blob's program is read as: one section, one CIE */
	/* the machine's, with registers saved at rbp (x29) + N: the interpreter's */
	struct cfi_arch_regs regs = *cfi_arch_regs(mr->arch);
	const struct cfi_section sec = {
	    .source = CFI_SRC_EH_FRAME, .name = "hotspot code cache", .regs = &regs};
	struct hotspot_rows_stats st = {0};
	struct cfi_parse p = {0};
	struct rule_dict dict;
	struct cfi_table *t;
	struct cie cie;
	uint8_t *prog;
	int err;

	regs.fp_exprs = true;
	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	t = calloc(1, sizeof(*t));
	prog = malloc(programs_size(code) + 1);
	if (!t || !prog || rule_dict_init(&dict)) {
		free(t);
		free(prog);
		return CFI_ERR_NOMEM;
	}
	entry_cie(&cie, mr);
	t->arch = mr->arch;
	p.diag = &dc;
	p.stats = &t->stats;
	budget_start(&p.budget, budget);
	err = push_blobs(&p, code, &sec, &cie, prog, &st);
	if (!err)
		err = build_compact(&p, &dict, t, &dc);
	if (err)
		goto out;
	t->stats.sources = 1 << CFI_SRC_EH_FRAME;
	table_take_rules(t, &dict);
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
