/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind rows for HotSpot's code cache: the blobs a walk of it finds
 * (hotspot_codecache.h) turned into an ordinary cfi_table (tables/
 * cfi_table.h), whose addresses are the process's own (bias 0).  The rules
 * and how the table is keyed and replaced: hotspot_rows.c.
 */
#ifndef CFIPROF_HOTSPOT_ROWS_H
#define CFIPROF_HOTSPOT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "tables/cfi_table.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"

/* What the rows of one blob are, by what the blob says of its frame. */
enum hotspot_frame_kind {
	HOTSPOT_FRAME_NONE = 0, /* its frame is not known (frame size -1 or 0): rbp's rule */
	HOTSPOT_FRAME_SIZED,	/* frame size words, from frame_complete (-1: from code_begin) */
	HOTSPOT_FRAME_FP,	/* rbp is its frame pointer (the template interpreter) */
};

enum hotspot_frame_kind hotspot_frame_kind(const struct hotspot_blob *b);

/*
 * The state of a frame from an offset of a blob's code on, as its bytes
 * tell, in x86-64's registers; on arm64 (sp, x29) the CFA is sp + 0 at
 * ENTRY, and at ENTRY and UNSAVED the return address is still in x30.
 */
enum hotspot_frame_state {
	HOTSPOT_AT_ENTRY = 0, /* CFA = rsp + 8, rbp unchanged (before push rbp, after pop rbp) */
	HOTSPOT_AT_PUSHED,    /* CFA = rsp + 16, rbp at CFA - 16 (after push, before sub) */
	HOTSPOT_AT_UNSAVED,   /* CFA = rsp + frame size, rbp unchanged (after sub, before mov) */
	HOTSPOT_AT_FRAME,     /* CFA = rsp + frame size, rbp at CFA - 16 */
	HOTSPOT_AT_FP,	      /* CFA = rbp + 16, rbp at CFA - 16 (after mov rbp, rsp) */
	HOTSPOT_AT_PUSHED1,   /* CFA = rsp + frame size + 8, rbp at CFA - 16 (a push inside) */
	/*
	 * CFA = rsp + 0, the return address popped (into a register, or dropped
	 * before a jump out: JDK 25's C1 stubs): a walk from here cannot go on
	 */
	HOTSPOT_AT_RA_GONE,
};

struct hotspot_mark {
	uint32_t off; /* from code_begin */
	uint8_t state;
};

/* The most marks one blob's code gives: its prologue's, three for each return or intrinsic. */
#define HOTSPOT_MARKS_MAX (2 + 3 * 64)

/* The machine cfiprof runs on, whose JVMs it reads (struct hotspot_code's arch). */
#ifdef __aarch64__
#define HOTSPOT_NATIVE_ARCH CFI_ARCH_ARM64
#else
#define HOTSPOT_NATIVE_ARCH CFI_ARCH_X86_64
#endif

/*
 * The marks of the code (its bytes code[0, n) from code_begin) of blob b,
 * a sized one (hotspot_frame_kind): its prologue ending at its frame
 * complete offset, or at the nmethod entry barrier that ends there (push
 * rbp; sub rsp, or sub rsp; mov [rsp + ...], rbp;
 * push rbp; mov rbp, rsp; sub rsp: a frame whose rbp is its frame pointer,
 * native wrappers' or -XX:+PreserveFramePointer's) and its epilogues (add
 * rsp; pop rbp, or leave; the return's safepoint poll or pending exception
 * check; ret, or a jump out) as C1 and C2 emit them on x86-64, into out
 * (HOTSPOT_MARKS_MAX): how many, 0 when the prologue is none of those
 * shapes (then the blob keeps the rows its frame complete offset gives).
 */
size_t hotspot_frame_marks(const struct hotspot_blob *b, const uint8_t *code, size_t n,
			   struct hotspot_mark *out);

/* The same for the code C1 and C2 emit on arm64 (hotspot_marks_arm64.c). */
size_t hotspot_frame_marks_arm64(const struct hotspot_blob *b, const uint8_t *code, size_t n,
				 struct hotspot_mark *out);

/*
 * Whether b is one of C1's Runtime1 stubs (named "NAME Runtime1 stub" by
 * Runtime1::generate_blob) with a frame size, never complete for a leaf:
 * its code is read for the marks enter gives (most are framed by it).
 */
bool hotspot_runtime1_stub(const struct hotspot_blob *b);

/*
 * The blobs of one walk of a process's code cache, in the walk's (address)
 * order, with the marks their code gave (none: span[i].n 0).
 */
struct hotspot_code {
	struct hotspot_blob *blob;
	size_t n, cap;
	struct {
		uint32_t first, n; /* in mark[] */
	} * span;		   /* one per blob, NULL when no blob has marks */
	struct hotspot_mark *mark;
	size_t nmark, capmark;
	/* the machine its code is for (enum cfi_arch): which marks and rules */
	uint8_t arch;
	/* read each nmethod's code from process pid (0: never), within bytes_max bytes */
	uint32_t pid;
	uint64_t bytes_max, bytes; /* 0: 64 MiB */
	uint32_t scanned, shaped;  /* nmethods whose code was read, whose prologue had a shape */
	uint32_t stubs_shaped;	   /* Runtime1 stubs framed by enter */
	/*
	 * An earlier walk of the same process (NULL: none): an nmethod it holds
	 * with the same code range, compile id and frame keeps its marks, its
	 * code not read again, and when it was first seen.
	 */
	struct hotspot_code *prev;
	uint32_t reused; /* nmethods whose marks came from prev */
	/*
	 * When a walk first saw each blob (CLOCK_MONOTONIC ns): prev's time for
	 * the same compile, 0 for a blob new in this walk until its walker sets
	 * its end (hotspot_code_seen).
	 */
	uint64_t *seen_ns;
	/* the blobs by address (the walk goes heap by heap), made at the first lookup */
	uint32_t *order;
};

/*
 * A hotspot_blob_fn for hotspot_blobs_walk(): appends blob to the
 * struct hotspot_code arg, with the marks of its code when arg's pid is
 * set and it is an nmethod; non-zero (ending the walk) when out of memory.
 */
int hotspot_code_add(const struct hotspot_blob *blob, void *arg);
void hotspot_code_free(struct hotspot_code *c);

/* The blobs c's walk saw first: seen then (now, as the walk ended). */
void hotspot_code_seen(struct hotspot_code *c, uint64_t now_ns);

/*
 * The blob of c whose code starts at code_begin, its index + 1 (0: none or
 * out of memory).  Sorts an index of c at the first call: not concurrently.
 */
size_t hotspot_code_find(struct hotspot_code *c, uint64_t code_begin);

/*
 * Whether the code of a walk changed from another's, as the rows see it:
 * a digest of every blob's code range, frame and compile id (its state
 * not: a not entrant nmethod's rows are the same).
 */
uint64_t hotspot_code_digest(const struct hotspot_code *c);

struct hotspot_rows_stats {
	uint32_t sized; /* blobs with frame-size rows (nmethods, runtime stubs) */
	uint32_t fp;	/* ... with the frame-pointer rule */
	uint32_t none;	/* blobs whose frame is not known: the frame-pointer rule */
	uint32_t bad;	/* refused: a range or frame no rule can hold */
};

/*
 * The rows of code's blobs (disjoint, as one walk gives them) as a table of
 * absolute addresses: 0 with *out set (a table with no rows when no blob
 * has any), or a negative cfi_err (CFI_ERR_BUDGET past budget, which may be
 * NULL: the defaults).  *stats and diag may be NULL.
 */
int hotspot_rows_build(const struct hotspot_code *code, const struct cfi_budget *budget,
		       struct cfi_table **out, struct hotspot_rows_stats *stats,
		       struct cfi_diag *diag);

#endif
