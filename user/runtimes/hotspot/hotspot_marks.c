// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where a HotSpot blob's frame changes inside its code (hotspot_rows.h's
 * marks): the prologues and epilogues C1 and C2 emit on x86-64, read from
 * the code's bytes, for the rows hotspot_rows.c builds from them.  The
 * shapes and why each is so: hotspot_rows.c's opening comment.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/runtimes/hotspot/hotspot_rows.h"

/* ---- the code's bytes: prologues and epilogues of C1 and C2 ---- */

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* add (op 0xc4) or sub (0xec) rsp, imm: its length at c[0, n) when imm is v, else 0 */
static size_t rsp_imm(const uint8_t *c, size_t n, uint8_t op, uint32_t v)
{
	if (n >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == op && v < 0x80 && c[3] == v)
		return 4;
	if (n >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == op && le32(c + 3) == v)
		return 7;
	return 0;
}

/* the bytes of an instruction of len bytes ending at c[end] equal to want */
static bool ends_with(const uint8_t *c, size_t end, const uint8_t *want, size_t len)
{
	return end >= len && !memcmp(c + end - len, want, len);
}

/*
 * The prologue ending at the frame complete offset fc, in fs words, into
 * m: how many marks, 0 when it is no shape known.  C2 with a stack bang,
 * C1: push rbp; sub rsp, (fs - 2) * 8 (none for 2 words); native wrappers
 * and -XX:+PreserveFramePointer: push rbp; mov rbp, rsp; sub rsp, ..., a
 * frame whose rbp is its frame pointer from then on (a native wrapper moves
 * rsp around its calls: pushes, alignment); C2 without a stack bang: sub
 * rsp, (fs - 1) * 8 (always imm32); mov [rsp + (fs - 2) * 8], rbp
 * (MacroAssembler::verified_entry).
 */
/* cmp dword [r15 + disp8 or disp32], imm32 ending at c[end]: its length, or 0 */
static size_t cmp_r15(const uint8_t *c, size_t end)
{
	if (end >= 8 && c[end - 8] == 0x41 && c[end - 7] == 0x81 && c[end - 6] == 0x7f)
		return 8;
	if (end >= 11 && c[end - 11] == 0x41 && c[end - 10] == 0x81 && c[end - 9] == 0xbf)
		return 11;
	return 0;
}

/* Back from end over the nops that align what follows (a patched instruction). */
static size_t skip_nops(const uint8_t *c, size_t end)
{
	static const uint8_t nops[][5] = {{0x90},
					  {0x66, 0x90},
					  {0x0f, 0x1f, 0x00},
					  {0x0f, 0x1f, 0x40, 0x00},
					  {0x0f, 0x1f, 0x44, 0x00, 0x00}};
	bool more = true;

	for (int n = 0; more && n < 8; n++) {
		more = false;
		for (size_t k = 0; k < sizeof(nops) / sizeof(nops[0]) && !more; k++)
			if (ends_with(c, end, nops[k], k + 1)) {
				end -= k + 1;
				more = true;
			}
	}
	return end;
}

/*
 * Where the nmethod entry barrier ending at fc starts (fc when there is
 * none): ZGC's and Shenandoah's, every GC's from JDK 21 (BarrierSetAssembler
 * ::nmethod_entry_barrier), between the frame's setup and its frame
 * complete offset: cmp dword [r15 + disarmed], imm32, then jne to an
 * out-of-line stub (C2: 0f 85 rel32, or 75 rel8) or je over a call (C1:
 * 74 05 e8 rel32), after nops that align the cmp (JDK 25's native
 * wrappers).  The frame is complete from its start.
 */
static size_t barrier_start(const uint8_t *c, size_t fc)
{
	size_t tail = 0, cmp;

	if (fc >= 6 && c[fc - 6] == 0x0f && c[fc - 5] == 0x85)
		tail = 6;
	else if (fc >= 2 && c[fc - 2] == 0x75)
		tail = 2;
	else if (fc >= 7 && c[fc - 7] == 0x74 && c[fc - 6] == 0x05 && c[fc - 5] == 0xe8)
		tail = 7;
	cmp = tail ? cmp_r15(c, fc - tail) : 0;
	return cmp ? skip_nops(c, fc - tail - cmp) : fc;
}

/* mov rbp, rsp in either of its two encodings at c[0, 3) */
static bool mov_rbp_rsp(const uint8_t *c)
{
	static const uint8_t enc[2][3] = {{0x48, 0x89, 0xe5}, {0x48, 0x8b, 0xec}};

	return !memcmp(c, enc[0], 3) || !memcmp(c, enc[1], 3);
}

static size_t prologue(const uint8_t *c, size_t fc, uint32_t fs, struct hotspot_mark *m)
{
	uint32_t below = (fs - 2) * 8;
	size_t p, len, mov = 0;

	fc = barrier_start(c, fc);
	p = fc;

	/* the sub's two lengths: imm8 (4 bytes) or imm32 (7) */
	for (len = 4; below && len <= 7; len += 3)
		if (p >= len && rsp_imm(c + p - len, len, 0xec, below) == len)
			break;
	if (!below || len <= 7) {
		p -= below ? len : 0;
		if (p >= 3 && mov_rbp_rsp(c + p - 3))
			mov = p;
		p -= mov ? 3 : 0;
		if (p >= 1 && c[p - 1] == 0x55) {
			m[0] = (struct hotspot_mark){(uint32_t)p, HOTSPOT_AT_PUSHED};
			m[1] = mov ? (struct hotspot_mark){(uint32_t)mov, HOTSPOT_AT_FP}
				   : (struct hotspot_mark){(uint32_t)fc, HOTSPOT_AT_FRAME};
			return 2;
		}
	}
	/* after sub rsp, imm32: mov [rsp], rbp, mov [rsp + disp8], rbp or mov [rsp + disp32], rbp
	 */
	for (size_t mov = 4; mov <= 8; mov++) {
		const uint8_t *at;
		bool ok;

		if (fc < mov + 7 || rsp_imm(c + fc - mov - 7, 7, 0xec, (fs - 1) * 8) != 7)
			continue;
		at = c + fc - mov;
		ok = at[0] == 0x48 && at[1] == 0x89;
		if (mov == 4)
			ok = ok && below == 0 && at[2] == 0x2c && at[3] == 0x24;
		else if (mov == 5)
			ok = ok && at[2] == 0x6c && at[3] == 0x24 && below < 0x80 && at[4] == below;
		else if (mov == 8)
			ok = ok && at[2] == 0xac && at[3] == 0x24 && le32(at + 4) == below;
		else
			ok = false;
		if (!ok)
			continue;
		m[0] = (struct hotspot_mark){(uint32_t)(fc - mov), HOTSPOT_AT_UNSAVED};
		m[1] = (struct hotspot_mark){(uint32_t)fc, HOTSPOT_AT_FRAME};
		return 2;
	}
	return 0;
}

/*
 * The prologue at an OSR nmethod's OSR entry c[q, n), where the interpreter
 * jumps as if it called the method (its return address pushed), which
 * builds the frame again (C1's LIR_Assembler::osr_entry): its stack bang
 * (mov [rsp - disp32], eax), push rbp, mov rbp, rsp (-XX:+PreserveFramePointer)
 * and sub rsp, below; its marks from q on into m, how many (0: no such
 * shape at q); *len the bytes it takes.
 */
static size_t osr_prologue(const uint8_t *c, size_t n, size_t q, uint32_t below,
			   struct hotspot_mark *m, size_t *len)
{
	size_t p = q, mov, sub;

	if (p + 7 <= n && c[p] == 0x89 && c[p + 1] == 0x84 && c[p + 2] == 0x24)
		p += 7;
	if (p >= n || c[p] != 0x55)
		return 0;
	p++;
	mov = p + 3 <= n && mov_rbp_rsp(c + p) ? 3 : 0;
	sub = below ? rsp_imm(c + p + mov, n - p - mov, 0xec, below) : 0;
	if (below && !sub)
		return 0;
	/* a frame-pointer frame is that from the mov on; the sub changes no rule of it */
	m[0] = (struct hotspot_mark){(uint32_t)q, HOTSPOT_AT_ENTRY};
	m[1] = (struct hotspot_mark){(uint32_t)p, HOTSPOT_AT_PUSHED};
	m[2] = mov ? (struct hotspot_mark){(uint32_t)(p + mov), HOTSPOT_AT_FP}
		   : (struct hotspot_mark){(uint32_t)(p + sub), HOTSPOT_AT_FRAME};
	*len = p + mov + sub - q;
	return 3;
}

/* Past the ret at c[r] ending a return that starts at q, or a jump out right at q; 0 for none. */
static size_t return_ret(const uint8_t *c, size_t n, size_t q, size_t r)
{
	if (r < n && c[r] == 0xc3)
		return r + 1;
	if (r == q && r + 5 <= n && c[r] == 0xe9)
		return r + 5;
	return 0;
}

/*
 * The end of the return at c[q, n) after an epilogue's pop rbp or leave:
 * ret, after the return poll (cmp rsp, [r15 + disp32 or disp8]; ja stub), or
 * after a native wrapper's pending exception check (cmp qword [r15 + 8],
 * 0; jne: imm32 in JDK 17, imm8 in 25, where a thread flag's test comes
 * first), or none; or a jump out (the rethrow of an exception); 0 when it
 * is neither.
 */
static size_t return_end(const uint8_t *c, size_t n, size_t q)
{
	static const uint8_t pending[] = {0x49, 0x81, 0x7f, 0x08, 0, 0, 0, 0, 0x0f, 0x85};
	static const uint8_t pending8[] = {0x49, 0x83, 0x7f, 0x08, 0x00, 0x0f, 0x85};
	size_t r = q;

	if (r + 13 <= n && c[r] == 0x49 && c[r + 1] == 0x3b && c[r + 2] == 0xa7 &&
	    c[r + 7] == 0x0f && c[r + 8] == 0x87)
		return return_ret(c, n, q, r + 13);
	if (r + 10 <= n && c[r] == 0x49 && c[r + 1] == 0x3b && c[r + 2] == 0x67 &&
	    c[r + 4] == 0x0f && c[r + 5] == 0x87)
		return return_ret(c, n, q, r + 10); /* its disp8 form: JDK 25's */
	/*
	 * JDK 25's native wrapper: a test of a thread flag (testb $1, disp8(%r15))
	 * and its slow path jumped over (movabs r10, pc; mov [r15 + disp32],
	 * r10; jmp out), then the pending exception check in its imm8 form
	 */
	if (r + 29 <= n && c[r] == 0x41 && c[r + 1] == 0xf6 && c[r + 2] == 0x47 &&
	    c[r + 4] == 0x01 && c[r + 5] == 0x74 && c[r + 6] == 22 && c[r + 7] == 0x49 &&
	    c[r + 8] == 0xba && c[r + 17] == 0x4d && c[r + 18] == 0x89 && c[r + 19] == 0x97 &&
	    c[r + 24] == 0xe9)
		r += 29;
	if (r + 14 <= n && !memcmp(c + r, pending, sizeof(pending)))
		r += 14;
	else if (r + 11 <= n && !memcmp(c + r, pending8, sizeof(pending8)))
		r += 11;
	return return_ret(c, n, q, r);
}

/*
 * The epilogue at c[i, n) of a frame of below bytes under its saved rbp
 * (fp: rbp its frame pointer): add rsp, below; pop rbp (for an rbp frame
 * also leave) and its return, as marks into m (the state after the return:
 * the body's); how many bytes it takes, 0 when there is none at i.
 */
static size_t epilogue(const uint8_t *c, size_t n, size_t i, uint32_t below, bool fp,
		       struct hotspot_mark *m)
{
	size_t len = below ? rsp_imm(c + i, n - i, 0xc4, below) : 0, end;

	if (fp && c[i] == 0xc9) {
		end = return_end(c, n, i + 1);
		if (!end)
			return 0;
		m[0] = (struct hotspot_mark){(uint32_t)(i + 1), HOTSPOT_AT_ENTRY};
		m[1] = (struct hotspot_mark){(uint32_t)end, HOTSPOT_AT_FP};
		return end - i;
	}
	if (!len || i + len >= n || c[i + len] != 0x5d)
		return 0;
	end = return_end(c, n, i + len + 1);
	if (!end)
		return 0;
	m[0] = (struct hotspot_mark){(uint32_t)(i + len), HOTSPOT_AT_PUSHED};
	m[1] = (struct hotspot_mark){(uint32_t)(i + len + 1), HOTSPOT_AT_ENTRY};
	m[2] = (struct hotspot_mark){(uint32_t)end, fp ? HOTSPOT_AT_FP : HOTSPOT_AT_FRAME};
	return end - i;
}

/*
 * C2's inlined String.compareTo (MacroAssembler::string_compare, x86_64.ad's
 * string_compare*: cnt1 in rcx, cnt2 in rdx, result in rax) keeps the
 * length difference on the stack inside the frame: mov eax, ecx; sub ecx,
 * edx; push rcx; ... pop rax; jmp DONE; ... pop rcx; DONE:.  At c[i, n):
 * its marks into m (rsp one word lower from the push to each pop, the
 * frame's rule after them: the jump between the two is the frame's too,
 * wrong only in the jump itself), how far it goes; 0 when it is none.
 */
static size_t pushed_intrinsic(const uint8_t *c, size_t n, size_t i, struct hotspot_mark *m)
{
	static const uint8_t start[] = {0x8b, 0xc1, 0x2b, 0xca, 0x51};
	size_t end = i + 4096 < n ? i + 4096 : n;

	if (i + sizeof(start) > n || memcmp(c + i, start, sizeof(start)))
		return 0;
	for (size_t j = i + sizeof(start); j + 6 <= end; j++) {
		size_t len = c[j + 1] == 0xeb ? 2 : c[j + 1] == 0xe9 ? 5 : 0;
		int64_t rel = len == 2 ? (int8_t)c[j + 2] : len ? (int32_t)le32(c + j + 2) : 0;
		int64_t t = (int64_t)(j + 1 + len) + rel;

		/* pop rax; jmp to right after a pop rcx further on */
		if (c[j] != 0x58 || !len || t <= (int64_t)(j + 1 + len) || t > (int64_t)end ||
		    c[t - 1] != 0x59)
			continue;
		m[0] = (struct hotspot_mark){(uint32_t)(i + sizeof(start)), HOTSPOT_AT_PUSHED1};
		m[1] = (struct hotspot_mark){(uint32_t)(j + 1), HOTSPOT_AT_FRAME};
		m[2] = (struct hotspot_mark){(uint32_t)(j + 1 + len), HOTSPOT_AT_PUSHED1};
		m[3] = (struct hotspot_mark){(uint32_t)t, HOTSPOT_AT_FRAME};
		return (size_t)t - i;
	}
	return 0;
}

/*
 * C1's Runtime1 stubs never complete their frame for a leaf (frame_complete
 * -1) but most are built by enter (StubFrame: push rbp; mov rbp, rsp ...
 * leave; ret): rbp is their frame pointer from the mov on while rsp moves
 * (save_live_registers, the call into the VM), so the frame pointer's rule
 * holds where the frame-size rule holds only at the calls, and a leaf in
 * their first bytes read its return address from a slot of its caller's
 * frame (a "complete" stack of one frame, its return address 0).  The
 * entry's rule before the push, rsp + 16 after it, the frame pointer's
 * after the mov, the entry's from each leave to the ret or jmp after it.
 * 0 for a stub of another shape (register_finalizer, forward_exception),
 * which keeps the frame-size rule.  Only Runtime1's: the deoptimization
 * and safepoint blobs begin with enter too, but move rbp as they rebuild
 * frames (objdump's decoding disagrees with its rule at 156 instructions of
 * the deoptimization blob, against 42 with the frame size's).
 */
static size_t enter_marks(const uint8_t *c, size_t n, struct hotspot_mark *m)
{
	size_t k = 0;

	if (n < 4 || c[0] != 0x55 || !mov_rbp_rsp(c + 1))
		return 0;
	m[k++] = (struct hotspot_mark){1, HOTSPOT_AT_PUSHED};
	m[k++] = (struct hotspot_mark){4, HOTSPOT_AT_FP};
	/*
	 * every byte offset, as for the nmethods' epilogues: leave, then ret or a
	 * jmp out; or (JDK 25) pop rcx; jmp *rcx, or add rsp, 8; jmp out, the
	 * return address gone before the jump
	 */
	for (size_t i = 4; i + 2 <= n && k + 3 <= HOTSPOT_MARKS_MAX; i++) {
		static const uint8_t pop_jmp[] = {0x59, 0xff, 0xe1},
				     drop[] = {0x48, 0x83, 0xc4, 0x08};
		size_t len = c[i + 1] == 0xc3 ? 1 : c[i + 1] == 0xeb ? 2 : c[i + 1] == 0xe9 ? 5 : 0;
		size_t gone = 0;

		if (!len && i + 4 <= n && !memcmp(c + i + 1, pop_jmp, sizeof(pop_jmp))) {
			gone = 1;
			len = 3;
		} else if (!len && i + 10 <= n && !memcmp(c + i + 1, drop, sizeof(drop)) &&
			   c[i + 5] == 0xe9) {
			gone = 4;
			len = 9;
		}
		if (c[i] != 0xc9 || !len || i + 1 + len > n)
			continue;
		m[k++] = (struct hotspot_mark){(uint32_t)(i + 1), HOTSPOT_AT_ENTRY};
		if (gone)
			m[k++] =
			    (struct hotspot_mark){(uint32_t)(i + 1 + gone), HOTSPOT_AT_RA_GONE};
		m[k++] = (struct hotspot_mark){(uint32_t)(i + 1 + len), HOTSPOT_AT_FP};
		i += len;
	}
	return k;
}

bool hotspot_runtime1_stub(const struct hotspot_blob *b)
{
	/* "new_instance Runtime1 stub" to JDK 24, "C1 Runtime new_instance_blob" in 25 */
	static const char suffix[] = " Runtime1 stub", prefix[] = "C1 Runtime ";
	size_t len = strnlen(b->name, sizeof(b->name));

	return !b->is_nmethod && b->frame_complete == -1 &&
	       hotspot_frame_kind(b) == HOTSPOT_FRAME_SIZED &&
	       ((len > sizeof(suffix) - 1 &&
		 !memcmp(b->name + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1)) ||
		!strncmp(b->name, prefix, sizeof(prefix) - 1));
}

size_t hotspot_frame_marks(const struct hotspot_blob *b, const uint8_t *code, size_t n,
			   struct hotspot_mark *out)
{
	uint32_t fs = (uint32_t)b->frame_size, below = (fs - 2) * 8;
	size_t k, fc = (size_t)b->frame_complete;
	bool fp;

	if (hotspot_runtime1_stub(b))
		return enter_marks(code, n, out);
	if (hotspot_frame_kind(b) != HOTSPOT_FRAME_SIZED || b->frame_complete <= 0 || fc > n ||
	    fs > HOTSPOT_FRAME_WORDS_MAX || fs < 2)
		return 0;
	k = prologue(code, fc, fs, out);
	fp = k && out[k - 1].state == HOTSPOT_AT_FP;
	/* every byte offset: there is no decoder here (see the top of the file) */
	for (size_t i = fc; k && i < n && k + 4 <= HOTSPOT_MARKS_MAX; i++) {
		struct hotspot_mark m[4];
		size_t len = 0, nm = 0;

		if (b->osr_entry > 0 && i == (size_t)b->osr_entry)
			nm = osr_prologue(code, n, i, below, m, &len);
		if (!nm) {
			len = epilogue(code, n, i, below, fp, m);
			nm = len ? (m[1].state == HOTSPOT_AT_FP ? 2 : 3) : 0;
		}
		if (!len && !fp) {
			len = pushed_intrinsic(code, n, i, m);
			nm = len ? 4 : 0;
		}
		if (!len)
			continue;
		memcpy(out + k, m, nm * sizeof(*m));
		k += nm;
		i += len - 1;
	}
	return k;
}
