// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rows hotspot_rows gives HotSpot's code on arm64 (hotspot_marks_arm64.c),
 * on code assembled here by binutils' aarch64 assembler: the prologues and
 * epilogues JDK 17's src/hotspot/cpu/aarch64 emits (MacroAssembler::
 * build_frame / remove_frame, enter / leave, the return poll), written out
 * with a label wherever the frame's rule changes.  The oracle is the
 * labels: each is where a rule must start, read from the assembler's symbol
 * table, and the rule just before it must be the one before.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "user/runtimes/hotspot/hotspot_rows.h"

/* where Debian's arm64 JDK 17 maps its code cache: above x86-64's 47 bits of user space */
#define BASE 0xffff70a00000ull

/*
 * Each blob: a frame of 48 bytes (C2's, small: sub then stp), of 1,024
 * (large: stp pre-indexed then sub), a native wrapper's (enter), a C1
 * Runtime1 stub's, and an OSR nmethod's second prologue.
 */
static const char code_s[] =
    "	.text\n"
    "small:	nop\n"
    "	sub x9, sp, #5, lsl #12\n" /* the stack bang: no sp moved */
    "	str xzr, [x9]\n"
    "	sub sp, sp, #48\n"
    "small_unsaved:\n"
    "	stp x29, x30, [sp, #32]\n"
    "small_fc:\n"
    "	bl small\n"
    "	ldp x29, x30, [sp, #32]\n"
    "small_ep_unsaved:\n"
    "	add sp, sp, #48\n"
    "small_ep_entry:\n"
    "	ldr x8, [x28, #896]\n"
    "	cmp sp, x8\n"
    "	b.hi small_stub\n"
    "	ret\n"
    "small_body:\n"
    "	mov x0, #1\n"
    "	ldp x29, x30, [sp, #32]\n"
    "	add sp, sp, #48\n"
    "small_ep2_entry:\n"
    "	b small\n" /* the rethrow: a branch out */
    "small_body2:\n"
    "	bl small\n"
    "small_stub:\n"
    "	nop\n"
    "small_end:\n"
    "	.p2align 6\n"
    "large:	nop\n"
    "	stp x29, x30, [sp, #-16]!\n"
    "large_pushed:\n"
    "	sub sp, sp, #1008\n"
    "large_fc:\n"
    "	bl large\n"
    "	add sp, sp, #1008\n"
    "large_ep_pushed:\n"
    "	ldp x29, x30, [sp], #16\n"
    "large_ep_entry:\n"
    "	ret\n"
    "large_body:\n"
    "	nop\n"
    "large_end:\n"
    "	.p2align 6\n"
    "large_pfp:	nop\n" /* -XX:+PreserveFramePointer: x29 the frame pointer from the mov */
    "	stp x29, x30, [sp, #-16]!\n"
    "large_pfp_pushed:\n"
    "	mov x29, sp\n"
    "large_pfp_fp:\n"
    "	sub sp, sp, #1008\n"
    "large_pfp_fc:\n"
    "	bl large\n"
    "	add sp, sp, #1008\n"
    "	ldp x29, x30, [sp], #16\n"
    "large_pfp_ep_entry:\n"
    "	ret\n"
    "large_pfp_body:\n"
    "	nop\n"
    "large_pfp_end:\n"
    "	.p2align 6\n"
    "wrapper:\n"
    "	stp x29, x30, [sp, #-16]!\n"
    "wrapper_pushed:\n"
    "	mov x29, sp\n"
    "wrapper_fp:\n"
    "	sub sp, sp, #64\n"
    "wrapper_fc:\n"
    "	sub sp, sp, #16\n" /* sp moves around its calls: x29 frames it */
    "	blr x8\n"
    "	add sp, sp, #16\n"
    "	mov sp, x29\n"
    "	ldp x29, x30, [sp], #16\n"
    "wrapper_ep_entry:\n"
    "	ret\n"
    "wrapper_body:\n"
    "	nop\n"
    "wrapper_end:\n"
    "	.p2align 6\n"
    "stub:	stp x29, x30, [sp, #-16]!\n"
    "stub_pushed:\n"
    "	mov x29, sp\n"
    "stub_fp:\n"
    "	bl stub\n"
    "	mov sp, x29\n"
    "	ldp x29, x30, [sp], #16\n"
    "stub_ep_entry:\n"
    "	ret\n"
    "stub_body:\n"
    "	nop\n"
    "stub_end:\n"
    "	.p2align 6\n"
    "osr:	sub sp, sp, #32\n"
    "	stp x29, x30, [sp, #16]\n"
    "osr_fc:\n"
    "	bl osr\n"
    "osr_entry:\n"
    "	sub x9, sp, #5, lsl #12\n"
    "	str xzr, [x9]\n"
    "	sub sp, sp, #32\n"
    "osr_unsaved:\n"
    "	stp x29, x30, [sp, #16]\n"
    "osr_frame:\n"
    "	bl osr\n"
    "osr_end:\n";

#define MAX_LABELS 64
static struct {
	char name[32];
	uint64_t off;
} labels[MAX_LABELS];
static size_t nlabels;
static uint8_t code[4096];
static size_t code_len;

/* The offset of label name in code[], aborting the test when there is none. */
static uint64_t at(const char *name)
{
	for (size_t i = 0; i < nlabels; i++)
		if (!strcmp(labels[i].name, name))
			return labels[i].off;
	CHECK(0, "no label %s", name);
	return 0;
}

/* code_s assembled: its bytes into code[], its labels from nm. */
static bool assemble(void)
{
	char cmd[1024], line[256];
	FILE *f = fopen(tpath("code.s"), "w");
	size_t n = 0;

	if (!f || fputs(code_s, f) < 0 || fclose(f))
		return false;
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-as -o %s %s && aarch64-linux-gnu-objcopy -O binary -j .text "
		 "%s %s",
		 tpath("code.o"), tpath("code.s"), tpath("code.o"), tpath("code.bin"));
	if (system(cmd))
		return false;
	f = fopen(tpath("code.bin"), "rb");
	if (f) {
		code_len = fread(code, 1, sizeof(code), f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "aarch64-linux-gnu-nm %s", tpath("code.o"));
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f) && n < MAX_LABELS) {
		uint64_t off;
		char kind, name[32];

		if (sscanf(line, "%" SCNx64 " %c %31s", &off, &kind, name) == 3 && kind == 't') {
			snprintf(labels[n].name, sizeof(labels[n].name), "%s", name);
			labels[n++].off = off;
		}
	}
	if (f)
		pclose(f);
	nlabels = n;
	return code_len > 0 && n > 0;
}

static struct hotspot_blob blob(const char *start, const char *end, int32_t words,
				const char *complete, bool nmethod)
{
	return (struct hotspot_blob){.addr = BASE + at(start) - 0x40,
				     .code_begin = BASE + at(start),
				     .code_end = BASE + at(end),
				     .frame_size = words,
				     .frame_complete =
					 complete ? (int32_t)(at(complete) - at(start)) : -1,
				     .is_nmethod = nmethod,
				     .compile_id = 1};
}

/* Whether the rule at label name of t (+ delta bytes) is described as want. */
static void rule_at(const struct cfi_table *t, const char *name, int delta, const char *want)
{
	char got[128];

	cfi_rule_describe(cfi_table_lookup(t, BASE + at(name) + delta), CFI_ARCH_ARM64, got,
			  sizeof(got));
	CHECK(!strcmp(got, want), "at %s%+d: %s, not %s", name, delta, got, want);
}

#define ENTRY	  "cfa=sp+0 fp=same+0 ra=same+0"
#define FP_RULE	  "cfa=x29+16 fp=at-16 ra=at-8"
#define PUSHED	  "cfa=sp+16 fp=at-16 ra=at-8"
#define FRAME48	  "cfa=sp+48 fp=at-16 ra=at-8"
#define FRAME1024 "cfa=sp+1024 fp=at-16 ra=at-8"
#define UNSAVED48 "cfa=sp+48 fp=same+0 ra=same+0"

/* The marks of blob b, read from its bytes, into code c's rows for it; the table. */
static struct cfi_table *rows_of(struct hotspot_blob *b, size_t nb)
{
	struct hotspot_code c = {.arch = CFI_ARCH_ARM64};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	uint32_t first = 0;

	c.blob = b;
	c.n = nb;
	c.span = calloc(nb, sizeof(*c.span));
	c.mark = calloc(nb * HOTSPOT_MARKS_MAX, sizeof(*c.mark));
	for (size_t i = 0; c.span && c.mark && i < nb; i++) {
		size_t k = hotspot_frame_marks_arm64(&b[i], code + (b[i].code_begin - BASE),
						     b[i].code_end - b[i].code_begin, m);

		CHECK(k > 0, "blob %zu: no marks", i);
		memcpy(c.mark + first, m, k * sizeof(*m));
		c.span[i].first = first;
		c.span[i].n = (uint32_t)k;
		first += (uint32_t)k;
	}
	CHECK(!hotspot_rows_build(&c, NULL, &t, &st, NULL) && t, "no rows");
	free(c.span);
	free(c.mark);
	return t;
}

static void test_frames(void)
{
	struct hotspot_blob b[] = {
	    blob("small", "small_end", 6, "small_fc", true),
	    blob("large", "large_end", 128, "large_fc", true),
	    blob("wrapper", "wrapper_end", 10, "wrapper_fc", true),
	    blob("osr", "osr_end", 4, "osr_fc", true),
	    blob("large_pfp", "large_pfp_end", 128, "large_pfp_fc", true),
	};
	struct cfi_table *t;

	b[3].osr_entry = (int32_t)(at("osr_entry") - at("osr"));
	t = rows_of(b, sizeof(b) / sizeof(b[0]));
	if (!t)
		return;
	/* C2's small frame: the entry's rule through the bang, x30 live until the stp */
	rule_at(t, "small", 0, ENTRY);
	rule_at(t, "small_unsaved", -4, ENTRY);
	rule_at(t, "small_unsaved", 0, UNSAVED48);
	rule_at(t, "small_fc", 0, FRAME48);
	rule_at(t, "small_ep_unsaved", -4, FRAME48);
	rule_at(t, "small_ep_unsaved", 0, UNSAVED48);
	rule_at(t, "small_ep_entry", 0, ENTRY);
	rule_at(t, "small_body", -4, ENTRY); /* the ret, after the poll */
	rule_at(t, "small_body", 0, FRAME48);
	rule_at(t, "small_ep2_entry", 0, ENTRY);
	rule_at(t, "small_body2", 0, FRAME48);
	rule_at(t, "small_stub", 0, FRAME48);
	/* the large frame: rsp + 16 between the stp and the sub, and between the add and the ldp */
	rule_at(t, "large_pushed", -4, ENTRY);
	rule_at(t, "large_pushed", 0, PUSHED);
	rule_at(t, "large_fc", 0, FRAME1024);
	rule_at(t, "large_ep_pushed", -4, FRAME1024);
	rule_at(t, "large_ep_pushed", 0, PUSHED);
	rule_at(t, "large_ep_entry", 0, ENTRY);
	rule_at(t, "large_body", 0, FRAME1024);
	/* the wrapper: x29 its frame pointer from the mov on, wherever sp goes */
	rule_at(t, "wrapper_pushed", 0, PUSHED);
	rule_at(t, "wrapper_fp", 0, FP_RULE);
	rule_at(t, "wrapper_fc", 4, FP_RULE);
	rule_at(t, "wrapper_ep_entry", -4, FP_RULE);
	rule_at(t, "wrapper_ep_entry", 0, ENTRY);
	rule_at(t, "wrapper_body", 0, FP_RULE);
	/* a large frame with a frame pointer: x29's rule from the mov to the ldp */
	rule_at(t, "large_pfp_pushed", 0, PUSHED);
	rule_at(t, "large_pfp_fp", 0, FP_RULE);
	rule_at(t, "large_pfp_ep_entry", -4, FP_RULE);
	rule_at(t, "large_pfp_ep_entry", 0, ENTRY);
	rule_at(t, "large_pfp_body", 0, FP_RULE);
	/* an OSR entry: jumped to with no frame, its return address in x30 */
	rule_at(t, "osr_fc", 0, "cfa=sp+32 fp=at-16 ra=at-8");
	rule_at(t, "osr_entry", 0, ENTRY);
	rule_at(t, "osr_unsaved", 0, "cfa=sp+32 fp=same+0 ra=same+0");
	rule_at(t, "osr_frame", 0, "cfa=sp+32 fp=at-16 ra=at-8");
	cfi_table_free(t);
}

/* C1's Runtime1 stubs: enter's rules, leave's, as on x86-64 (hotspot_runtime1_stub). */
static void test_runtime1_stub(void)
{
	struct hotspot_blob b = blob("stub", "stub_end", 2, NULL, false);
	struct cfi_table *t;

	snprintf(b.name, sizeof(b.name), "%s", "new_instance Runtime1 stub");
	t = rows_of(&b, 1);
	if (!t)
		return;
	rule_at(t, "stub", 0, ENTRY);
	rule_at(t, "stub_pushed", 0, PUSHED);
	rule_at(t, "stub_fp", 0, FP_RULE);
	rule_at(t, "stub_ep_entry", 0, ENTRY);
	rule_at(t, "stub_body", 0, FP_RULE);
	cfi_table_free(t);
}

/*
 * Code of no known shape: no marks, the rows of the frame complete offset;
 * the frame's size in the sub and the stp must be this blob's (a frame of
 * 64 bytes does not match the 48-byte prologue), and the interpreter's rule
 * is arm64's: the caller's sp kept at x29 - 8, x29 and x30 above it.
 */
static void test_other_shapes(void)
{
	struct hotspot_blob b = blob("small", "small_end", 8, "small_fc", true);
	struct hotspot_blob interp = blob("large", "large_end", 0, NULL, false);
	struct hotspot_mark m[HOTSPOT_MARKS_MAX];
	struct hotspot_code c = {.arch = CFI_ARCH_ARM64, .blob = &interp, .n = 1};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;

	CHECK(hotspot_frame_marks_arm64(&b, code + at("small"), at("small_end") - at("small"), m) ==
		  0,
	      "a 48-byte prologue taken for a 64-byte frame");
	b.frame_complete = 2; /* not an instruction's start */
	CHECK(hotspot_frame_marks_arm64(&b, code + at("small"), at("small_end") - at("small"), m) ==
		  0,
	      "marks for a frame complete inside an instruction");
	interp.is_interpreter = true;
	CHECK(!hotspot_rows_build(&c, NULL, &t, &st, NULL) && t && st.fp == 1,
	      "no interpreter rows");
	if (t)
		rule_at(t, "large", 0, "cfa=*(x29-8)+0 fp=atfp+0 ra=atfp+8");
	cfi_table_free(t);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfiprof-hsa64-XXXXXX");
	if (!mkdtemp(tmpdir) || !assemble()) {
		CHECK(0, "aarch64-linux-gnu-as could not assemble the test's code");
		return HARNESS_DONE();
	}
	RUN_TEST(test_frames);
	RUN_TEST(test_runtime1_stub);
	RUN_TEST(test_other_shapes);
	unlink(tpath("code.s"));
	unlink(tpath("code.o"));
	unlink(tpath("code.bin"));
	rmdir(tmpdir);
	return HARNESS_DONE();
}
