// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hotspot_marks.c's marks for arm64: where a HotSpot blob's frame changes
 * inside its code, as C1 and C2 build and remove frames there (JDK 17's
 * src/hotspot/cpu/aarch64: MacroAssembler::build_frame / remove_frame,
 * enter / leave, the native wrapper's and Runtime1's frames).  Every
 * instruction is one aligned 32-bit word, so unlike x86-64 each is decoded
 * where it is and no shape can match inside another's operands.
 *
 * A frame of fs bytes (CodeBlob::_frame_size words, x29 and x30 saved at
 * its top) is built as
 *   fs < 528:  sub sp, sp, #fs;  stp x29, x30, [sp, #fs - 16]
 *   else:      stp x29, x30, [sp, #-16]!;  sub sp, sp, #fs - 16
 *              (mov x8, #fs - 16; sub sp, sp, x8 past an add's 12 bits)
 * (-XX:+PreserveFramePointer adds add x29, sp, #fs - 16, no rule's change,
 * or mov x29, sp after the stp, x29's rule from there), and removed by
 *   fs < 528:  ldp x29, x30, [sp, #fs - 16];  add sp, sp, #fs
 *   else:      add sp, sp, #fs - 16;  ldp x29, x30, [sp], #16
 * then the return poll (ldr x8, [x28, #polling_word]; cmp sp, x8; b.hi)
 * and ret, or a branch out (the rethrow).  enter (stp x29, x30, [sp,
 * #-16]!; mov x29, sp) frames native wrappers and C1's Runtime1 stubs,
 * whose sp moves around their calls: x29 is their frame pointer, and leave
 * (mov sp, x29; ldp x29, x30, [sp], #16) ends them.  The states are
 * hotspot_rows.h's; on arm64 ENTRY and UNSAVED keep the return address in
 * x30 (hotspot_rows.c writes the rules).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/runtimes/hotspot/hotspot_rows.h"

#define A64_RET		0xd65f03c0u /* ret (x30) */
#define A64_STP_FP_PRE	0xa9bf7bfdu /* stp x29, x30, [sp, #-16]! */
#define A64_LDP_FP_POST 0xa8c17bfdu /* ldp x29, x30, [sp], #16 */
#define A64_MOV_FP_SP	0x910003fdu /* mov x29, sp (add x29, sp, #0) */
#define A64_MOV_SP_FP	0x910003bfu /* mov sp, x29 */
#define A64_SUB_SP_X8	0xcb2863ffu /* sub sp, sp, x8 (uxtx) */
/* a prologue's and an epilogue's instructions past what frames them: stack bangs, the poll */
#define A64_RETURN_WINDOW 6

static uint32_t insn(const uint8_t *c, size_t off)
{
	uint32_t v;

	memcpy(&v, c + off, sizeof(v));
	return v;
}

/* add (op 0x91) or sub (0xd1) sp, sp, #v: v in an add's unshifted 12 bits */
static bool sp_imm(uint32_t i, uint32_t op, uint32_t v)
{
	return v < 4096 && i == ((op << 24) | (v << 10) | 0x3ff);
}

/* stp (0xa9) or ldp (0xa9 with L) x29, x30, [sp, #off]: off a multiple of 8 in imm7 */
static bool fp_pair(uint32_t i, bool load, uint32_t off)
{
	return off % 8 == 0 && off / 8 < 64 &&
	       i == ((load ? 0xa9407bfdu : 0xa9007bfdu) | ((off / 8) << 15));
}

/* An unconditional way out of the code: ret, b imm26 or br xN. */
static bool leaves(uint32_t i)
{
	return i == A64_RET || (i & 0xfc000000u) == 0x14000000u || (i & 0xfffffc1fu) == 0xd61f0000u;
}

/*
 * build_frame's shapes (or enter's, with the rest of a wrapper's frame) from
 * c[p] on, c[0, n) the code, a frame of fs bytes: their marks into m (after
 * the first store of x29 and x30, then where the frame is whole), how many
 * (0: none); *end past the last instruction.  With mov x29, sp after the stp
 * (enter: native wrappers, or -XX:+PreserveFramePointer) x29 is the frame
 * pointer from the mov on, as sp moves around a wrapper's calls.
 */
static size_t frame_built_at(const uint8_t *c, size_t n, size_t p, uint32_t fs,
			     struct hotspot_mark *m, size_t *end)
{
	size_t q = p + 4;
	bool fp;

	if (fs < 528 && p + 8 <= n && sp_imm(insn(c, p), 0xd1, fs) &&
	    fp_pair(insn(c, p + 4), false, fs - 16)) {
		m[0] = (struct hotspot_mark){(uint32_t)(p + 4), HOTSPOT_AT_UNSAVED};
		m[1] = (struct hotspot_mark){(uint32_t)(p + 8), HOTSPOT_AT_FRAME};
		*end = p + 8;
		return 2;
	}
	if (p + 8 > n || insn(c, p) != A64_STP_FP_PRE)
		return 0;
	fp = insn(c, q) == A64_MOV_FP_SP;
	q += fp ? 4 : 0;
	if (q + 4 <= n && sp_imm(insn(c, q), 0xd1, fs - 16))
		q += 4;
	else if (q + 8 <= n && insn(c, q + 4) == A64_SUB_SP_X8)
		q += 8; /* the mov x8 before it: one instruction for a frame below 64 KiB */
	else
		return 0;
	m[0] = (struct hotspot_mark){(uint32_t)(p + 4), HOTSPOT_AT_PUSHED};
	m[1] = fp ? (struct hotspot_mark){(uint32_t)(p + 8), HOTSPOT_AT_FP}
		  : (struct hotspot_mark){(uint32_t)q, HOTSPOT_AT_FRAME};
	*end = q;
	return 2;
}

/*
 * The prologue ending at the frame complete offset fc (a multiple of 4), a
 * frame of fs bytes, into m: how many marks, 0 when it is no shape known
 * (then the blob keeps the rows its frame complete offset gives).
 * PreserveFramePointer's add x29, sp, #fs - 16 after a small frame changes
 * no sp-based rule.
 */
static size_t prologue(const uint8_t *c, size_t fc, uint32_t fs, struct hotspot_mark *m)
{
	size_t last = fc >= 4 && insn(c, fc - 4) == (0x910003fdu | ((fs - 16) << 10)) ? fc - 4 : fc;
	size_t end = 0;

	for (size_t len = 8; len <= 16 && len <= last; len += 4) {
		size_t k = frame_built_at(c, last, last - len, fs, m, &end);

		if (k && end == last)
			return k;
	}
	return 0;
}

/*
 * The frame built again at an OSR nmethod's OSR entry q, which the
 * interpreter jumps to with its frame removed and its return address in
 * x30 (C1's LIR_Assembler::osr_entry: a stack bang, then build_frame): its
 * marks into m, how many (0: no such shape within a few instructions), *len
 * the bytes it takes.
 */
static size_t osr_prologue(const uint8_t *c, size_t n, size_t q, uint32_t fs,
			   struct hotspot_mark *m, size_t *len)
{
	size_t end = 0;

	for (size_t p = q; p < q + 4 * A64_RETURN_WINDOW; p += 4) {
		size_t k = frame_built_at(c, n, p, fs, m + 1, &end);

		if (!k)
			continue;
		m[0] = (struct hotspot_mark){(uint32_t)q, HOTSPOT_AT_ENTRY};
		*len = end - q;
		return k + 1;
	}
	return 0;
}

/* Where the return after an epilogue at c[q, n) ends (past its ret or branch), 0 for none. */
static size_t return_end(const uint8_t *c, size_t n, size_t q)
{
	for (size_t r = q; r + 4 <= n && r < q + 4 * A64_RETURN_WINDOW; r += 4) {
		uint32_t i = insn(c, r);

		if (leaves(i))
			return r + 4;
		/* a call: not the return's own instructions (the poll's ldr, cmp sp and b.hi) */
		if ((i & 0xfc000000u) == 0x94000000u || (i & 0xfffffc1fu) == 0xd63f0000u)
			return 0;
	}
	return 0;
}

/*
 * The epilogue at c[i, n) of a frame of fs bytes (fp: x29 its frame
 * pointer) as marks into m, the state after its return the body's: how
 * many bytes it takes, 0 when there is none at i.
 */
static size_t epilogue(const uint8_t *c, size_t n, size_t i, uint32_t fs, bool fp,
		       struct hotspot_mark *m, size_t *nm)
{
	uint32_t a = insn(c, i), b = i + 8 <= n ? insn(c, i + 4) : 0;
	uint8_t body = HOTSPOT_AT_FRAME;
	size_t k = 0, end;

	/* leave, or remove_frame of a large frame under -XX:+PreserveFramePointer */
	if (fp) {
		if ((a != A64_MOV_SP_FP && !sp_imm(a, 0x91, fs - 16)) || b != A64_LDP_FP_POST)
			return 0;
		body = HOTSPOT_AT_FP;
	} else if (fs < 528 && fp_pair(a, true, fs - 16) && sp_imm(b, 0x91, fs)) {
		m[k++] = (struct hotspot_mark){(uint32_t)(i + 4), HOTSPOT_AT_UNSAVED};
	} else if (sp_imm(a, 0x91, fs - 16) && b == A64_LDP_FP_POST) {
		m[k++] = (struct hotspot_mark){(uint32_t)(i + 4), HOTSPOT_AT_PUSHED};
	} else {
		return 0;
	}
	/* both instructions done: the return, then the body's state after it */
	end = return_end(c, n, i + 8);
	if (!end)
		return 0;
	m[k++] = (struct hotspot_mark){(uint32_t)(i + 8), HOTSPOT_AT_ENTRY};
	m[k++] = (struct hotspot_mark){(uint32_t)end, body};
	*nm = k;
	return end - i;
}

/* C1's Runtime1 stubs framed by enter: hotspot_marks.c's enter_marks, arm64's leave. */
static size_t enter_marks(const uint8_t *c, size_t n, struct hotspot_mark *m)
{
	size_t k = 0, end;

	if (n < 8 || insn(c, 0) != A64_STP_FP_PRE || insn(c, 4) != A64_MOV_FP_SP)
		return 0;
	m[k++] = (struct hotspot_mark){4, HOTSPOT_AT_PUSHED};
	m[k++] = (struct hotspot_mark){8, HOTSPOT_AT_FP};
	for (size_t i = 8; i + 8 <= n && k + 2 <= HOTSPOT_MARKS_MAX; i += 4) {
		if (insn(c, i) != A64_MOV_SP_FP || insn(c, i + 4) != A64_LDP_FP_POST ||
		    !(end = return_end(c, n, i + 8)))
			continue;
		m[k++] = (struct hotspot_mark){(uint32_t)(i + 8), HOTSPOT_AT_ENTRY};
		m[k++] = (struct hotspot_mark){(uint32_t)end, HOTSPOT_AT_FP};
		i = end - 4;
	}
	return k;
}

size_t hotspot_frame_marks_arm64(const struct hotspot_blob *b, const uint8_t *code, size_t n,
				 struct hotspot_mark *out)
{
	uint32_t fs = (uint32_t)b->frame_size * 8;
	size_t k, fc = (size_t)b->frame_complete;
	bool fp;

	n &= ~(size_t)3;
	if (hotspot_runtime1_stub(b))
		return enter_marks(code, n, out);
	if (hotspot_frame_kind(b) != HOTSPOT_FRAME_SIZED || b->frame_complete <= 0 || fc > n ||
	    fc % 4 || b->frame_size > HOTSPOT_FRAME_WORDS_MAX || b->frame_size < 2 || fs % 16)
		return 0;
	k = prologue(code, fc, fs, out);
	fp = k && out[k - 1].state == HOTSPOT_AT_FP;
	for (size_t i = fc; k && i + 8 <= n && k + 3 <= HOTSPOT_MARKS_MAX; i += 4) {
		struct hotspot_mark m[3];
		size_t nm = 0, len = 0;

		if (b->osr_entry > 0 && i == (size_t)b->osr_entry)
			nm = osr_prologue(code, n, i, fs, m, &len);
		if (!nm)
			len = epilogue(code, n, i, fs, fp, m, &nm);

		if (!len)
			continue;
		memcpy(out + k, m, nm * sizeof(*m));
		k += nm;
		i += len - 4;
	}
	return k;
}
