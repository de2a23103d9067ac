// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rules hotspot_rows gives HotSpot's code blobs, on blobs and code made
 * here (test_hotspot_rows walks a live JVM's): each kind of blob's rules at
 * its edges, and the prologues and epilogues read from an nmethod's bytes,
 * those bytes copied from what JDK 17's C2 and C1 emitted for Rows.fib and
 * Rows.leaf (test_hotspot_rows' program) and a native wrapper, as objdump
 * decodes them:
 *   C2 fib (8 words):  mov [rsp-0x14000], eax; push rbp; sub rsp, 0x30 ...
 *                      add rsp, 0x30; pop rbp; cmp rsp, [r15+0x340]; ja; ret
 *                      add rsp, 0x30; pop rbp; jmp rethrow
 *   C2 leaf (4 words): sub rsp, 0x18 (imm32); mov [rsp+0x10], rbp ...
 *   C1 fib (18 words): mov [rsp-0x14000], eax; push rbp; sub rsp, 0x80 (imm32)
 *   native wrapper (10 words): ...; push rbp; mov rbp, rsp; sub rsp, 0x40 ...
 *                      leave; cmp qword [r15+8], 0; jne; ret
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/xorshift.h"
#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/hotspot/hotspot_rows.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"

static struct hotspot_blob blob(uint64_t begin, uint64_t end, int32_t frame, int32_t complete,
				bool nmethod, bool interp, int32_t id)
{
	return (struct hotspot_blob){.addr = begin - 0x100,
				     .code_begin = begin,
				     .code_end = end,
				     .frame_size = frame,
				     .frame_complete = complete,
				     .is_nmethod = nmethod,
				     .is_interpreter = interp,
				     .compile_id = id};
}

#define NONE  "cfa=none rbp=same+0 ra=same+0 rbx=same+0"
#define ENTRY "cfa=rsp+8 rbp=same+0 ra=at-8 rbx=same+0"
/* a frame-pointer frame's: the caller's rbp and return address above rbp */
#define FP_RULE "cfa=rbp+16 rbp=at-16 ra=at-8 rbx=same+0"
#define RA_GONE "cfa=rsp+0 rbp=same+0 ra=unsupported+0 rbx=same+0 unsupported=ra-elsewhere"

/* Whether the rule at addr of t is described (cfi_rule_describe) as want. */
static bool rule_is(const struct cfi_table *t, uint64_t addr, const char *want)
{
	char got[128];

	cfi_rule_describe(cfi_table_lookup(t, addr), CFI_ARCH_X86_64, got, sizeof(got));
	CHECK(!strcmp(got, want), "at %#" PRIx64 ": %s, not %s", addr, got, want);
	return !strcmp(got, want);
}

/*
 * An nmethod of 6 words whose frame is complete 0x20 bytes in, one complete
 * at its first byte, the interpreter, a BufferBlob (frame size 0), a stub
 * of unknown frame (-1), one never complete (its frame's rule from its
 * first byte: it is found as a caller): each kind's rules at its first
 * byte, around its frame-complete offset, at its last byte and just past.
 */
static void test_synthetic(void)
{
	const uint64_t base = 0x7f0012340000ull;
	struct hotspot_blob b[] = {
	    blob(base + 0x100, base + 0x400, 6, 0x20, true, false, 7),
	    blob(base + 0x500, base + 0x600, 2, 0, true, false, 8),
	    blob(base + 0x700, base + 0x10700, 0, -1, false, true, 0),
	    blob(base + 0x10800, base + 0x10900, 0, -1, false, false, 0),
	    blob(base + 0x10a00, base + 0x10b00, -1, -1, false, false, 0),
	    blob(base + 0x10c00, base + 0x10d00, 4, -1, false, false, 0),
	};
	struct hotspot_code code = {.blob = b, .n = sizeof(b) / sizeof(b[0])};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;
	uint64_t digest;
	int rc;

	rc = hotspot_rows_build(&code, NULL, &t, &st, NULL);
	CHECK(rc == 0 && t, "build: %d", rc);
	if (rc || !t)
		return;
	CHECK(st.sized == 3 && st.fp == 1 && st.none == 2 && st.bad == 0,
	      "stats: %u sized, %u fp, %u none, %u bad", st.sized, st.fp, st.none, st.bad);
	rule_is(t, base + 0xff, NONE);
	rule_is(t, base + 0x100, ENTRY);
	rule_is(t, base + 0x11f, ENTRY);
	rule_is(t, base + 0x120, "cfa=rsp+48 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x3ff, "cfa=rsp+48 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x400, NONE);
	rule_is(t, base + 0x500, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0");
	/* the interpreter: the caller's sp its frame keeps at rbp - 8, the rest at rbp */
	rule_is(t, base + 0x700, "cfa=*(rbp-8)+0 rbp=atfp+0 ra=atfp+8 rbx=same+0");
	/* past a page's edge */
	rule_is(t, base + 0x106ff, "cfa=*(rbp-8)+0 rbp=atfp+0 ra=atfp+8 rbx=same+0");
	/* frames not known: frame pointers, as the walker's fallback, said by a row */
	rule_is(t, base + 0x10800, "cfa=rbp+16 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x10a00, "cfa=rbp+16 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x10b00, NONE);
	rule_is(t, base + 0x10c00, "cfa=rsp+32 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x10d00, NONE);
	cfi_table_free(t);

	/* a freed nmethod's address reused by another compile: another digest */
	digest = hotspot_code_digest(&code);
	b[0].compile_id = 9;
	CHECK(hotspot_code_digest(&code) != digest, "a new compile id, the same digest");
	b[0].compile_id = 7;
	CHECK(hotspot_code_digest(&code) == digest, "the digest is not a function of the blobs");
	b[0].state = 2; /* not entrant: the same code, the same rows */
	CHECK(hotspot_code_digest(&code) == digest, "a not entrant nmethod, another digest");
	b[0].frame_size = 8;
	CHECK(hotspot_code_digest(&code) != digest, "another frame, the same digest");
	b[0].frame_size = 6;

	/*
	 * A frame complete past its code, a range no row holds, a frame of 16
	 * GiB, code above user space: refused, not guessed
	 */
	b[0].frame_complete = 0x301;
	b[1].code_end = b[1].code_begin;
	b[5].frame_size = INT32_MAX;
	b[2].code_begin = 1ull << 48;
	b[2].code_end = b[2].code_begin + 0x100;
	rc = hotspot_rows_build(&code, NULL, &t, &st, NULL);
	CHECK(rc == 0 && t && st.bad == 4 && st.sized == 0 && st.fp == 0,
	      "bad blobs: rc %d, %u bad", rc, st.bad);
	if (t)
		CHECK(cfi_table_lookup(t, base + 0x120)->cfa_kind == CFI_CFA_NONE,
		      "a refused blob has rows");
	cfi_table_free(t);
}

/* C2's fib as it ran: its prologue, a return, the rethrow of an exception */
static const uint8_t c2_bang[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe,
				  0xff, 0x55, 0x48, 0x83, 0xec, 0x30};
static const uint8_t c2_ret[] = {0x48, 0x83, 0xc4, 0x30, 0x5d, 0x49, 0x3b, 0xa7, 0x40, 0x03,
				 0x00, 0x00, 0x0f, 0x87, 0x84, 0x02, 0x00, 0x00, 0xc3};
static const uint8_t c2_rethrow[] = {0x48, 0x83, 0xc4, 0x30, 0x5d, 0xe9, 0x08, 0xae, 0xad, 0xff};
static const uint8_t c2_leaf[] = {0x48, 0x81, 0xec, 0x18, 0x00, 0x00,
				  0x00, 0x48, 0x89, 0x6c, 0x24, 0x10};
static const uint8_t c1_bang[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55,
				  0x48, 0x81, 0xec, 0x80, 0x00, 0x00, 0x00};
static const uint8_t wrapper[] = {0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55,
				  0x48, 0x8b, 0xec, 0x48, 0x83, 0xec, 0x40};
/* leave; cmp qword [r15+8], 0 (a pending exception); jne; ret */
static const uint8_t wrapper_ret[] = {0xc9, 0x49, 0x81, 0x7f, 0x08, 0x00, 0x00, 0x00,
				      0x00, 0x0f, 0x85, 0x01, 0x00, 0x00, 0x00, 0xc3};

/* code: the prologue, nops, then each of the tails at 0x40, 0x80... */
static size_t make_code(uint8_t *code, size_t size, const uint8_t *pro, size_t npro,
			const uint8_t *const *tails, const size_t *ntails, int n)
{
	memset(code, 0x90, size);
	memcpy(code, pro, npro);
	for (int i = 0; i < n; i++)
		memcpy(code + 0x40 * (i + 1), tails[i], ntails[i]);
	return 0x40 * (size_t)(n + 2);
}

/* Whether marks m[0, k) are want[0, nwant) ({offset, state} pairs). */
static bool marks_are(const struct hotspot_mark *m, size_t k, const uint32_t (*want)[2],
		      size_t nwant, const char *what)
{
	bool same = k == nwant;

	for (size_t i = 0; same && i < k; i++)
		same = m[i].off == want[i][0] && m[i].state == want[i][1];
	CHECK(same, "%s: %zu marks, not %zu (first %#x state %d)", what, k, nwant, k ? m[0].off : 0,
	      k ? m[0].state : -1);
	return same;
}

/* The rows of blob b with its k marks m (NULL: a failed check). */
static struct cfi_table *rows_of(const struct hotspot_blob *b, struct hotspot_mark *m, size_t k)
{
	struct hotspot_code code = {.blob = (struct hotspot_blob *)b, .n = 1, .mark = m};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;

	code.span = calloc(1, sizeof(*code.span));
	if (code.span)
		code.span[0].n = (uint32_t)k;
	CHECK(code.span && !hotspot_rows_build(&code, NULL, &t, &st, NULL) && t, "no rows");
	free(code.span);
	return t;
}

/*
 * Marks from each prologue and epilogue, then the rows they give C2's fib
 * at every instruction boundary of its prologue and return.
 */
static void test_code(void)
{
	const uint64_t base = 0x7f0028ec8240ull;
	const uint8_t *tails[] = {c2_ret, c2_rethrow};
	const size_t ntails[] = {sizeof(c2_ret), sizeof(c2_rethrow)};
	const uint32_t fib[][2] = {{8, HOTSPOT_AT_PUSHED},    {12, HOTSPOT_AT_FRAME},
				   {0x44, HOTSPOT_AT_PUSHED}, {0x45, HOTSPOT_AT_ENTRY},
				   {0x53, HOTSPOT_AT_FRAME},  {0x84, HOTSPOT_AT_PUSHED},
				   {0x85, HOTSPOT_AT_ENTRY},  {0x8a, HOTSPOT_AT_FRAME}};
	const uint32_t leaf[][2] = {{7, HOTSPOT_AT_UNSAVED}, {12, HOTSPOT_AT_FRAME}};
	const uint32_t c1[][2] = {{8, HOTSPOT_AT_PUSHED}, {15, HOTSPOT_AT_FRAME}};
	const uint32_t wrap[][2] = {{8, HOTSPOT_AT_PUSHED},
				    {11, HOTSPOT_AT_FP},
				    {0x41, HOTSPOT_AT_ENTRY},
				    {0x50, HOTSPOT_AT_FP}};
	const uint8_t *wrap_tail[] = {wrapper_ret};
	const size_t nwrap_tail[] = {sizeof(wrapper_ret)};
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct hotspot_blob b = blob(base, base + 0x100, 8, 12, true, false, 10);
	struct cfi_table *t = NULL;
	uint8_t bytes[0x100];
	size_t n, k;

	n = make_code(bytes, sizeof(bytes), c2_bang, sizeof(c2_bang), tails, ntails, 2);
	k = hotspot_frame_marks(&b, bytes, n, m);
	marks_are(m, k, fib, sizeof(fib) / sizeof(fib[0]), "C2 fib");

	/* the rows at each instruction: entry, after push, the frame, add, pop, poll, ret */
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base, ENTRY);
		rule_is(t, base + 7, ENTRY); /* at push rbp */
		rule_is(t, base + 8, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 12, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x40, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0"); /* add */
		rule_is(t, base + 0x44, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0"); /* pop */
		rule_is(t, base + 0x45, ENTRY);					    /* poll */
		rule_is(t, base + 0x52, ENTRY);					    /* ret */
		rule_is(t, base + 0x53, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x85, ENTRY); /* jmp rethrow */
		rule_is(t, base + 0x8a, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0xff, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0");
	}
	cfi_table_free(t);

	b = blob(base, base + 0x100, 4, 12, true, false, 9);
	n = make_code(bytes, sizeof(bytes), c2_leaf, sizeof(c2_leaf), NULL, NULL, 0);
	marks_are(m, hotspot_frame_marks(&b, bytes, n, m), leaf, 2, "C2 leaf");
	b = blob(base, base + 0x100, 18, 15, true, false, 7);
	n = make_code(bytes, sizeof(bytes), c1_bang, sizeof(c1_bang), NULL, NULL, 0);
	marks_are(m, hotspot_frame_marks(&b, bytes, n, m), c1, 2, "C1 fib");
	b = blob(base, base + 0x100, 10, 15, true, false, 4);
	n = make_code(bytes, sizeof(bytes), wrapper, sizeof(wrapper), wrap_tail, nwrap_tail, 1);
	marks_are(m, hotspot_frame_marks(&b, bytes, n, m), wrap, 4, "native wrapper");

	/* another frame size than the sub's, a frame complete past the sub: no shape */
	b = blob(base, base + 0x100, 6, 12, true, false, 10);
	n = make_code(bytes, sizeof(bytes), c2_bang, sizeof(c2_bang), tails, ntails, 2);
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 0, "a shape of the wrong frame size");
	b = blob(base, base + 0x100, 8, 16, true, false, 10);
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 0, "a shape ending before its frame");
	/* a pop with no return after it is no epilogue */
	b = blob(base, base + 0x100, 8, 12, true, false, 10);
	bytes[0x45] = 0x90;
	bytes[0x85] = 0x90;
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 2, "an epilogue without its return");
}

/*
 * An OSR nmethod of C1 (tier 3, as Code.main's loop gets): its verified
 * entry's prologue, then at its OSR entry (nmethod::_osr_entry_point) the
 * same prologue again, jumped to by the interpreter with a return address
 * pushed: the rows there are an entry's until push rbp, then rsp+16, then
 * the frame.  Without an OSR entry (or with one past no prologue) the
 * same bytes are the body's.  test_hotspot_code's objdump check of a live
 * JVM failed in a clean clone on such an nmethod still in use: 8 rules of
 * its OSR prologue the body's (rsp+224 for rsp+16).
 */
static void test_osr_entry(void)
{
	const uint64_t base = 0x7f0028ec8240ull;
	const uint8_t *tails[] = {c1_bang};
	const size_t ntails[] = {sizeof(c1_bang)};
	const uint32_t osr[][2] = {{8, HOTSPOT_AT_PUSHED},
				   {15, HOTSPOT_AT_FRAME},
				   {0x40, HOTSPOT_AT_ENTRY},
				   {0x48, HOTSPOT_AT_PUSHED},
				   {0x4f, HOTSPOT_AT_FRAME}};
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct hotspot_blob b = blob(base, base + 0x100, 18, 15, true, false, 12);
	struct cfi_table *t = NULL;
	uint8_t bytes[0x100];
	size_t n, k;

	b.entry_bci = 7;
	b.osr_entry = 0x40;
	n = make_code(bytes, sizeof(bytes), c1_bang, sizeof(c1_bang), tails, ntails, 1);
	k = hotspot_frame_marks(&b, bytes, n, m);
	marks_are(m, k, osr, sizeof(osr) / sizeof(osr[0]), "C1 OSR nmethod");
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base + 0x3f, "cfa=rsp+144 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x40, ENTRY); /* the stack bang */
		rule_is(t, base + 0x47, ENTRY); /* push rbp */
		rule_is(t, base + 0x48, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x4f, "cfa=rsp+144 rbp=at-16 ra=at-8 rbx=same+0");
	}
	cfi_table_free(t);
	b.osr_entry = 0;
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 2, "a prologue's bytes in the body marked");
	b.osr_entry = 0x44;
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 2, "an OSR entry at no prologue marked");
}

/*
 * C2's inlined String.compareTo (string_compare) inside the frame of C2's
 * fib prologue, its shape as JDK 17 emits it (a live nmethod's bytes, the
 * body between its push and pops nops here): mov eax, ecx; sub ecx, edx;
 * push rcx; ... pop rax; jmp DONE; ... pop rcx; DONE:.  rsp is a word
 * lower between the push and each pop; a pop rax whose jump lands
 * elsewhere is no such shape.
 */
static void test_pushed_intrinsic(void)
{
	const uint64_t base = 0x7f0028ec8240ull;
	static const uint8_t start[] = {0x8b, 0xc1, 0x2b, 0xca, 0x51};
	const uint32_t want[][2] = {{8, HOTSPOT_AT_PUSHED},	{12, HOTSPOT_AT_FRAME},
				    {0x45, HOTSPOT_AT_PUSHED1}, {0x61, HOTSPOT_AT_FRAME},
				    {0x63, HOTSPOT_AT_PUSHED1}, {0x7f, HOTSPOT_AT_FRAME}};
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct hotspot_blob b = blob(base, base + 0x100, 8, 12, true, false, 10);
	struct cfi_table *t = NULL;
	uint8_t bytes[0x100];
	size_t k;

	memset(bytes, 0x90, sizeof(bytes));
	memcpy(bytes, c2_bang, sizeof(c2_bang));
	memcpy(bytes + 0x40, start, sizeof(start));
	/* pop rax; jmp +0x1c (to 0x7f), and pop rcx right before it */
	bytes[0x60] = 0x58;
	bytes[0x61] = 0xeb;
	bytes[0x62] = 0x1c;
	bytes[0x7e] = 0x59;
	k = hotspot_frame_marks(&b, bytes, sizeof(bytes), m);
	marks_are(m, k, want, sizeof(want) / sizeof(want[0]), "string_compare");
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base + 0x44, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0"); /* push */
		rule_is(t, base + 0x45, "cfa=rsp+72 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x60, "cfa=rsp+72 rbp=at-16 ra=at-8 rbx=same+0"); /* pop rax */
		rule_is(t, base + 0x61, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0"); /* jmp */
		rule_is(t, base + 0x70, "cfa=rsp+72 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 0x7e, "cfa=rsp+72 rbp=at-16 ra=at-8 rbx=same+0"); /* pop rcx */
		rule_is(t, base + 0x7f, "cfa=rsp+64 rbp=at-16 ra=at-8 rbx=same+0");
	}
	cfi_table_free(t);
	/* the jump lands after no pop rcx: not the intrinsic, the frame's rule throughout */
	bytes[0x7e] = 0x90;
	CHECK(hotspot_frame_marks(&b, bytes, sizeof(bytes), m) == 2,
	      "a push without the intrinsic's pops");
}

/*
 * Blobs added as a walk adds them, their code read from this process (the
 * C2 fib's prologue and a return: 5 marks, which 1024 is no multiple of):
 * each gets its marks, however many blobs and marks.
 */
static void test_code_add(void)
{
	const uint8_t *tails[] = {c2_ret};
	const size_t ntails[] = {sizeof(c2_ret)};
	struct hotspot_code code = {.pid = (uint32_t)getpid()};
	static uint8_t bytes[0x100];
	size_t n = make_code(bytes, sizeof(bytes), c2_bang, sizeof(c2_bang), tails, ntails, 1);
	struct hotspot_blob b = blob((uintptr_t)bytes, (uintptr_t)bytes + n, 8, 12, true, false, 1);
	bool same = true;

	for (int i = 0; i < 3000; i++)
		CHECK(!hotspot_code_add(&b, &code), "blob %d not added", i);
	b.is_nmethod = false; /* a stub's code is not read */
	CHECK(!hotspot_code_add(&b, &code), "a stub not added");
	for (size_t i = 1; i < 3000 && same; i++) {
		same = code.span[i].n == 5 && code.span[i].first == 5 * i;
		for (size_t k = 0; k < 5 && same; k++)
			same = code.mark[5 * i + k].off == code.mark[k].off &&
			       code.mark[5 * i + k].state == code.mark[k].state;
	}
	CHECK(code.n == 3001 && code.scanned == 3000 && code.shaped == 3000 &&
		  code.nmark == 15000 && same && code.span[3000].n == 0,
	      "%zu blobs, %u read, %u shaped, %zu marks", code.n, code.scanned, code.shaped,
	      code.nmark);
	hotspot_code_free(&code);
}

/*
 * C1's Runtime1 stubs never complete their frame for a leaf (frame_complete
 * -1) and are built by enter: counter_overflow's shape (push rbp; mov rbp,
 * rsp; sub rsp; a call into the VM; leave; ret; leave; jmp).  A leaf in its
 * first bytes must find its return address at rsp, not in a slot of its
 * caller's frame (a stress round's "complete" stack of one frame in
 * counter_overflow); a Runtime1 stub of another shape, and another blob
 * never complete, keep the frame-size rule over all their code.
 */
static void test_runtime1_stub(void)
{
	static const uint8_t pro[] = {0x55, 0x48, 0x8b, 0xec, 0x48, 0x81, 0xec, 0x80, 0, 0, 0};
	static const uint8_t call[] = {0xe8, 0x10, 0x20, 0x30, 0x00};
	static const uint8_t leave_ret[] = {0xc9, 0xc3};
	static const uint8_t leave_jmp[] = {0xc9, 0xe9, 0x10, 0x20, 0x30, 0x00};
	static const uint8_t c2_stub[] = {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0x6c, 0x24, 0x10};
	const uint8_t *tails[] = {call, leave_ret, leave_jmp};
	const size_t ntails[] = {sizeof(call), sizeof(leave_ret), sizeof(leave_jmp)};
	const uint32_t want[][2] = {{1, HOTSPOT_AT_PUSHED},   {4, HOTSPOT_AT_FP},
				    {0x81, HOTSPOT_AT_ENTRY}, {0x82, HOTSPOT_AT_FP},
				    {0xc1, HOTSPOT_AT_ENTRY}, {0xc6, HOTSPOT_AT_FP}};
	const uint64_t base = 0x7f0028ec8240ull;
	struct hotspot_blob b = blob(base, base + 0x140, 20, -1, false, false, 0);
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct cfi_table *t;
	uint8_t bytes[0x140];
	size_t n, k;

	snprintf(b.name, sizeof(b.name), "counter_overflow Runtime1 stub");
	n = make_code(bytes, sizeof(bytes), pro, sizeof(pro), tails, ntails, 3);
	k = hotspot_frame_marks(&b, bytes, n, m);
	marks_are(m, k, want, sizeof(want) / sizeof(want[0]), "Runtime1 stub");
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base, ENTRY); /* at push rbp */
		rule_is(t, base + 1, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0");
		rule_is(t, base + 4, FP_RULE);	  /* at sub rsp */
		rule_is(t, base + 0x45, FP_RULE); /* the call's return address */
		rule_is(t, base + 0x81, ENTRY);	  /* at ret */
		rule_is(t, base + 0x82, FP_RULE);
		rule_is(t, base + 0xc1, ENTRY); /* at the jmp out */
		rule_is(t, base + 0xc6, FP_RULE);
	}
	cfi_table_free(t);

	/* no enter (register_finalizer's shape, C2's stubs'): no marks, the frame's size */
	n = make_code(bytes, sizeof(bytes), c2_stub, sizeof(c2_stub), tails, ntails, 3);
	CHECK(hotspot_frame_marks(&b, bytes, n, m) == 0, "marks in a stub without enter");
	/* enter, but not Runtime1's: the deoptimization blob moves rbp as it rebuilds frames */
	n = make_code(bytes, sizeof(bytes), pro, sizeof(pro), tails, ntails, 3);
	snprintf(b.name, sizeof(b.name), "DeoptimizationBlob");
	CHECK(!hotspot_runtime1_stub(&b) && hotspot_frame_marks(&b, bytes, n, m) == 0,
	      "marks in the deoptimization blob");
	snprintf(b.name, sizeof(b.name), "new_instance Runtime1 stub");
	b.frame_complete = 0x10;
	CHECK(!hotspot_runtime1_stub(&b), "a Runtime1 stub complete at 0x10 taken for one never");
}

/*
 * Code of random bytes (and of the shapes' bytes in random places, so that
 * some match): marks inside the code, in order, never more than the
 * bound, and rows built from them; ASan watches every read.
 */
static void test_random_code(void)
{
	const uint8_t *parts[] = {c2_bang, c2_ret,  c2_rethrow, c2_leaf,
				  c1_bang, wrapper, wrapper_ret};
	const size_t lens[] = {sizeof(c2_bang),	   sizeof(c2_ret),  sizeof(c2_rethrow),
			       sizeof(c2_leaf),	   sizeof(c1_bang), sizeof(wrapper),
			       sizeof(wrapper_ret)};
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	int bad = 0, shaped = 0;

	for (int i = 0; i < 20000; i++) {
		size_t n = rnd_below(400), k;
		uint8_t *code = malloc(n ? n : 1);
		struct hotspot_blob b =
		    blob(0x7f0000000000ull, 0x7f0000000000ull + (n ? n : 1),
			 (int32_t)rnd_below(40) - 1, (int32_t)rnd_below(n + 3) - 1, true, false, i);
		struct hotspot_code code1 = {.blob = &b, .n = 1};
		struct cfi_table *t = NULL;

		for (size_t j = 0; j < n; j++)
			code[j] = (uint8_t)rnd();
		/* every other one starts with a prologue of its frame */
		if ((i & 1) && n >= 16) {
			static const int32_t frame[][3] = {
			    {0, 8, 12}, {3, 4, 12}, {4, 18, 15}, {5, 10, 15}};
			const int32_t *f = frame[rnd_below(4)];

			memcpy(code, parts[f[0]], lens[f[0]]);
			b.frame_size = f[1];
			b.frame_complete = f[2];
		}
		for (int p = (int)rnd_below(6); p > 0 && n; p--) {
			size_t w = rnd_below(7), at = rnd_below(n);

			memcpy(code + at, parts[w], lens[w] < n - at ? lens[w] : n - at);
		}
		k = hotspot_frame_marks(&b, code, n, m);
		shaped += k > 0;
		for (size_t j = 0; j < k; j++)
			bad += m[j].off > n || (j && m[j].off < m[j - 1].off) || m[j].state > 4;
		bad += k > HOTSPOT_MARKS_MAX;
		code1.span = calloc(1, sizeof(*code1.span));
		code1.mark = m;
		code1.span[0].n = (uint32_t)k;
		bad += hotspot_rows_build(&code1, NULL, &t, NULL, NULL) != 0;
		cfi_table_free(t);
		free(code1.span);
		free(code);
	}
	printf("  20000 random codes: %d with marks\n", shaped);
	CHECK(!bad && shaped > 0, "%d random codes' marks out of their code or order", bad);
}

/*
 * A compiled frame is named from the nmethod BPF found only while that
 * nmethod is still the compile BPF saw (its compile id in the unit's code):
 * one of another id (its memory reused by a later compile) is stale,
 * counted and not named.  The nmethod here is this process's own memory.
 */
static void test_stale_nmethod(void)
{
	static const struct hotspot_layout l = {
	    .nm_compile_id = {.off = 8, .size = 4, .flags = HOTSPOT_F_FOUND | HOTSPOT_F_SIGNED},
	    .nm_method = {.off = 16, .size = 8, .flags = HOTSPOT_F_FOUND}};
	static uint64_t method_body[8]; /* no Method: its name cannot be read */
	static uint8_t nm[32];
	const int32_t id = 0x12345;
	const uint64_t method = (uintptr_t)method_body;
	const struct code_proc proc = {.offsets = &l};
	uint64_t before = hotspot_names_stale();
	size_t bytes = 0;
	void *obj = NULL;
	bool ok;

	memcpy(nm + 8, &id, sizeof(id));
	memcpy(nm + 16, &method, sizeof(method));
	/* the compile BPF saw: read on (to a Method that is none: unnamed, not stale) */
	ok = hotspot_name_ops.read(&proc, (uint32_t)getpid(),
				   (uintptr_t)nm | (uint64_t)(uint16_t)id << HOTSPOT_CODE_ID_SHIFT,
				   HOTSPOT_FRAME_COMPILED, (uint16_t)id, &obj, &bytes);
	CHECK(!ok && !obj && hotspot_names_stale() == before, "the same compile: stale %" PRIu64,
	      hotspot_names_stale() - before);
	/* another compile at that address since: stale */
	ok = hotspot_name_ops.read(&proc, (uint32_t)getpid(),
				   (uintptr_t)nm | (uint64_t)(uint16_t)(id + 1)
						       << HOTSPOT_CODE_ID_SHIFT,
				   HOTSPOT_FRAME_COMPILED, (uint16_t)(id + 1), &obj, &bytes);
	CHECK(!ok && !obj && hotspot_names_stale() == before + 1, "another compile: stale %" PRIu64,
	      hotspot_names_stale() - before);
}

/*
 * JDK 25's shapes, bytes as objdump decoded them from Temurin 25.0.3: C1's
 * stubs, now "C1 Runtime NAME_blob", leaving by leave; pop rcx; jmp *rcx and
 * leave; add rsp, 8; jmp (the return address gone before the jump: no rule
 * can follow it), and a native wrapper's return: leave, a thread flag's test
 * over its slow path, the pending exception check's imm8 form, ret.
 */
static void test_jdk25_shapes(void)
{
	static const uint8_t pro[] = {0x55, 0x48, 0x8b, 0xec, 0x48, 0x81, 0xec, 0x80, 0, 0, 0};
	static const uint8_t pop_jmp[] = {0xc9, 0x59, 0xff, 0xe1};
	static const uint8_t drop_jmp[] = {0xc9, 0x48, 0x83, 0xc4, 0x08,
					   0xe9, 0x1f, 0xef, 0xf1, 0xff};
	static const uint8_t wrapper_ret25[] = {
	    0xc9, 0x41, 0xf6, 0x47, 0x28, 0x01, 0x74, 0x16, 0x49, 0xba, 0x0a, 0x75, 0xec, 0x1b,
	    0x1b, 0x7f, 0x00, 0x00, 0x4d, 0x89, 0x97, 0x38, 0x05, 0x00, 0x00, 0xe9, 0x39, 0x26,
	    0xac, 0xff, 0x49, 0x83, 0x7f, 0x08, 0x00, 0x0f, 0x85, 0x01, 0x00, 0x00, 0x00, 0xc3};
	const uint8_t *tails[] = {pop_jmp, drop_jmp};
	const size_t ntails[] = {sizeof(pop_jmp), sizeof(drop_jmp)};
	const uint32_t want[][2] = {{1, HOTSPOT_AT_PUSHED},	{4, HOTSPOT_AT_FP},
				    {0x41, HOTSPOT_AT_ENTRY},	{0x42, HOTSPOT_AT_RA_GONE},
				    {0x44, HOTSPOT_AT_FP},	{0x81, HOTSPOT_AT_ENTRY},
				    {0x85, HOTSPOT_AT_RA_GONE}, {0x8a, HOTSPOT_AT_FP}};
	const uint64_t base = 0x7f0028ec8240ull;
	struct hotspot_blob b = blob(base, base + 0x100, 20, -1, false, false, 0);
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct cfi_table *t;
	uint8_t bytes[0x100];
	size_t n, k;

	snprintf(b.name, sizeof(b.name), "C1 Runtime new_instance_blob");
	CHECK(hotspot_runtime1_stub(&b), "JDK 25's C1 stub not taken for one");
	n = make_code(bytes, sizeof(bytes), pro, sizeof(pro), tails, ntails, 2);
	k = hotspot_frame_marks(&b, bytes, n, m);
	marks_are(m, k, want, sizeof(want) / sizeof(want[0]), "JDK 25's C1 stub");
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base + 0x41, ENTRY); /* at pop rcx */
		/* at jmp *rcx: rsp + 0, and no return address a walk can follow */
		rule_is(t, base + 0x42, RA_GONE);
		rule_is(t, base + 0x44, FP_RULE);
		rule_is(t, base + 0x85, RA_GONE); /* at the jmp after add rsp, 8 */
		rule_is(t, base + 0x8a, FP_RULE);
	}
	cfi_table_free(t);

	b = blob(base, base + 0x100, 10, sizeof(wrapper), true, false, 7);
	tails[0] = wrapper_ret25;
	n = make_code(bytes, sizeof(bytes), wrapper, sizeof(wrapper), tails,
		      (const size_t[]){sizeof(wrapper_ret25)}, 1);
	k = hotspot_frame_marks(&b, bytes, n, m);
	t = rows_of(&b, m, k);
	if (t) {
		rule_is(t, base + 0x40, FP_RULE); /* at leave */
		rule_is(t, base + 0x41, ENTRY);	  /* the flag's test */
		rule_is(t, base + 0x5e, ENTRY);	  /* the pending exception check */
		rule_is(t, base + 0x69, ENTRY);	  /* at ret */
		rule_is(t, base + 0x6a, FP_RULE);
	}
	cfi_table_free(t);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_synthetic);
	RUN_TEST(test_code);
	RUN_TEST(test_osr_entry);
	RUN_TEST(test_pushed_intrinsic);
	RUN_TEST(test_runtime1_stub);
	RUN_TEST(test_jdk25_shapes);
	RUN_TEST(test_code_add);
	RUN_TEST(test_random_code);
	RUN_TEST(test_stale_nmethod);
	return HARNESS_DONE();
}
