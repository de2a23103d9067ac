// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF walker (bpf/walker.h) built as ordinary C and run without a kernel:
 *
 *  - synthetic cases: a hand-built table and fake stack for every stop reason,
 *    the rule cache, signal frames, PLT and dereferenced CFAs;
 *  - replays: each test program of tests/progs is started, stopped with ptrace
 *    while it spins in its leaf, and its registers, stack bytes and mappings
 *    are saved to build/replay/NAME.snap.  Tables are built from the mapped
 *    files, the snapshot is walked, and the symbolized chain must be exactly
 *    the known one.  The saved file is then replayed again: same result.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/replay.h"
#include "user/unwind/deferred_walk.h"

#define PROGS_DIR  "build/progs"
#define SNAP_DIR   "build/replay"
#define MAX_FRAMES 512

/* ------------------------------------------------------------------ */
/* synthetic cases                                                     */
/* ------------------------------------------------------------------ */

#define SYN_PID	  42
#define SB	  0x7ff000000000ull /* base of the fake stack */
#define F_LEAF	  0x401010ull	    /* cfa = rsp+8 */
#define F_MID	  0x402010ull	    /* cfa = rsp+24 */
#define F_OUT	  0x403010ull	    /* outermost: ra undefined */
#define F_GAP	  0x404010ull	    /* between FDEs */
#define F_UNSUP	  0x405010ull	    /* cfa in another register */
#define F_RBP	  0x406010ull	    /* cfa = rbp+16, rbp at cfa-16 */
#define F_RBPU	  0x407010ull	    /* cfa = rsp+16, rbp clobbered */
#define F_SIGRET  0x408001ull	    /* __restore_rt; its FDE starts one byte earlier, as glibc's */
#define F_DEREF	  0x409010ull	    /* cfa = *(rsp+0) + 0 */
#define F_PLT	  0x40a000ull	    /* PLT entry: cfa = rsp+8 (+8 once rip&15 >= 11) */
#define F_BAD	  0x40b010ull	    /* cfa = rsp+0: not above rsp */
#define F_TRAMP	  0x40c010ull	    /* cfa = rbx+24, rbx at cfa-24: _dl_runtime_resolve */
#define F_PUSHRBX 0x40d010ull	    /* cfa = rsp+16, rbx at cfa-16 */
#define F_DRAP	  0x40e010ull	    /* cfa = r10+0: a DRAP prologue */
#define F_REC	  0x410020ull	    /* second page: cfa = rsp+16 */
#define F_NOPAGE  0x450010ull	    /* inside the mapping, no page */
#define F_FP	  0x500010ull	    /* frame-pointer mapping */
#define F_PENDING 0x600010ull

static struct cfi_rule mkrule(int cfa_kind, int cfa_off, int ra_kind, int rbp_kind, int rbp_off,
			      int aux)
{
	struct cfi_rule r = {
	    .cfa_kind = cfa_kind,
	    .rbp_kind = rbp_kind,
	    .ra_kind = ra_kind,
	    .cfa_off = cfa_off,
	    .aux = aux,
	    .rbp_off = rbp_off,
	    .ra_off = -8,
	};

	return r;
}

/*
 * A table as tables/ produces it (local rule ids, deliberately not in the
 * global order) loaded through the same remap as the real ones.
 */
static void syn_env(struct replay_env *env, uint64_t *stk, size_t stk_len)
{
	static struct cfi_rule rules[15];
	static struct cfi_row rows[32];
	static struct cfi_page pages[2];
	struct cfi_table t;
	uint32_t n = 0;
	int err;

	rules[0] = mkrule(CFI_CFA_NONE, 0, 0, 0, 0, 0);
	rules[1] = mkrule(CFI_CFA_RSP, 24, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);	       /* MID */
	rules[2] = mkrule(CFI_CFA_RSP, 8, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);	       /* LEAF */
	rules[3] = mkrule(CFI_CFA_RSP, 8, CFI_REG_UNDEFINED, CFI_REG_SAME, 0, 0);      /* OUT */
	rules[4] = mkrule(CFI_CFA_UNSUPPORTED, 0, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0); /* UNSUP */
	rules[4].reason = CFI_UNSUP_CFA_REG;
	rules[5] = mkrule(CFI_CFA_RBP, 16, CFI_REG_AT_CFA, CFI_REG_AT_CFA, -16, 0);    /* RBP */
	rules[6] = mkrule(CFI_CFA_RSP, 16, CFI_REG_AT_CFA, CFI_REG_UNSUPPORTED, 0, 0); /* RBPU */
	rules[7] = mkrule(CFI_CFA_SIGNAL, 0, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);      /* SIG */
	rules[8] = mkrule(CFI_CFA_DEREF_RSP, 0, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);   /* DEREF */
	rules[9] = mkrule(CFI_CFA_PLT, 8, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 11);	       /* PLT */
	rules[10] = mkrule(CFI_CFA_RSP, 0, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);	       /* BAD */
	rules[11] = mkrule(CFI_CFA_RSP, 16, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0);       /* REC */
	rules[12] = mkrule(CFI_CFA_REG, 24, CFI_REG_AT_CFA, CFI_REG_SAME, 0, CFI_DW_RBX); /* TRAMP */
	rules[12].rbx_kind = CFI_REG_AT_CFA;
	rules[12].rbx_off = -24;
	rules[13] = mkrule(CFI_CFA_RSP, 16, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 0); /* PUSHRBX */
	rules[13].rbx_kind = CFI_REG_AT_CFA;
	rules[13].rbx_off = -16;
	rules[14] = mkrule(CFI_CFA_REG, 0, CFI_REG_AT_CFA, CFI_REG_SAME, 0, 10); /* DRAP: r10 */

#define ROW(o, r) (rows[n].off = (o), rows[n].rule = (r), n++)
	ROW(0x0000, 0);
	ROW(0x1000, 2);
	ROW(0x1100, 0);
	ROW(0x2000, 1);
	ROW(0x2100, 0);
	ROW(0x3000, 3);
	ROW(0x3100, 0);
	ROW(0x5000, 4);
	ROW(0x5100, 0);
	ROW(0x6000, 5);
	ROW(0x6100, 0);
	ROW(0x7000, 6);
	ROW(0x7100, 0);
	ROW(0x8000, 7);
	ROW(0x8100, 0);
	ROW(0x9000, 8);
	ROW(0x9100, 0);
	ROW(0xa000, 9);
	ROW(0xa100, 0);
	ROW(0xb000, 10);
	ROW(0xb100, 0);
	ROW(0xc000, 12);
	ROW(0xc100, 0);
	ROW(0xd000, 13);
	ROW(0xd100, 0);
	ROW(0xe000, 14);
	ROW(0xe100, 0);
	pages[0].page = 0x40;
	pages[0].first_row = 0;
	pages[0].nr_rows = n;
	pages[1].page = 0x41;
	pages[1].first_row = n;
	ROW(0x0000, 11);
	ROW(0x0100, 0);
	pages[1].nr_rows = n - pages[1].first_row;
#undef ROW

	memset(&t, 0, sizeof(t));
	t.rules = rules;
	t.nr_rules = 15;
	t.rows = rows;
	t.nr_rows = n;
	t.pages = pages;
	t.nr_pages = 2;

	replay_env_init(env, SYN_PID);
	/* another object first, so global row indexes and rule ids differ from local ones */
	{
		struct cfi_rule r2[2] = {rules[0], rules[11]};
		struct cfi_row rw[1] = {{0, 1}};
		struct cfi_page pg[1] = {{0x7, 0, 1}};
		struct cfi_table other = {.rules = r2,
					  .nr_rules = 2,
					  .rows = rw,
					  .nr_rows = 1,
					  .pages = pg,
					  .nr_pages = 1};

		err = replay_add_table(env, 9, &other);
		CHECK(err == 0, "add other table: %d", err);
	}
	err = replay_add_table(env, 1, &t);
	CHECK(err == 0, "add synthetic table: %d", err);
	replay_add_mapping(env, 0x400000, 0x460000, 1, CFI_MAPPING_CFI, 0);
	replay_add_mapping(env, 0x500000, 0x510000, 0, CFI_MAPPING_FP, 0);
	replay_add_mapping(env, 0x600000, 0x610000, 1, CFI_MAPPING_PENDING, 0);
	replay_add_mem(env, SB, stk, stk_len);
}

struct syn_result {
	__u64 pcs[64];
	unsigned int nr;
	struct walker_state st;
};

static void syn_walk(struct replay_env *env, uint64_t ip, uint64_t sp, uint64_t bp,
		     unsigned int max, struct syn_result *r)
{
	memset(r, 0, sizeof(*r));
	r->nr = replay_walk(env, ip, sp, bp, r->pcs, max, &r->st);
}

static void expect_pcs(const char *name, const struct syn_result *r, int reason, unsigned int nr,
		       const uint64_t *want)
{
	unsigned int i;

	CHECK(r->st.reason == reason, "%s: reason %d, want %d", name, r->st.reason, reason);
	CHECK(r->nr == nr, "%s: %u frames, want %u", name, r->nr, nr);
	for (i = 0; i < nr && i < r->nr; i++)
		CHECK(r->pcs[i] == want[i], "%s: frame %u pc %#llx, want %#llx", name, i,
		      (unsigned long long)r->pcs[i], (unsigned long long)want[i]);
}

static void test_synthetic(void)
{
	static struct replay_env env;
	uint64_t stk[64];
	struct syn_result r;

	memset(stk, 0, sizeof(stk));
	syn_env(&env, stk, sizeof(stk));
	CHECK(env.nr_rules == 15, "global dictionary has %u rules, want 15", env.nr_rules);

	/* leaf (rsp+8) -> mid (rsp+24) -> outermost */
	stk[0] = F_MID;
	stk[3] = F_OUT;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("complete", &r, STOP_COMPLETE, 3, (uint64_t[]){F_LEAF, F_MID, F_OUT});
	CHECK(r.st.nr_fp == 0, "complete: nr_fp %u", r.st.nr_fp);

	/* the same stack again: every frame from the rule cache */
	memset(env.cache, 0, sizeof(env.cache));
	memset(env.counters, 0, sizeof(env.counters));
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	CHECK(env.counters[CNT_CACHE_MISS] == 3 && env.counters[CNT_CACHE_HIT] == 0,
	      "cold cache: %llu misses %llu hits", (unsigned long long)env.counters[CNT_CACHE_MISS],
	      (unsigned long long)env.counters[CNT_CACHE_HIT]);
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("cached", &r, STOP_COMPLETE, 3, (uint64_t[]){F_LEAF, F_MID, F_OUT});
	CHECK(env.counters[CNT_CACHE_MISS] == 3 && env.counters[CNT_CACHE_HIT] == 3,
	      "warm cache: %llu misses %llu hits, want 3 / 3",
	      (unsigned long long)env.counters[CNT_CACHE_MISS],
	      (unsigned long long)env.counters[CNT_CACHE_HIT]);
	/* new mappings (generation bump) must not use stale entries */
	env.proc.generation++;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	CHECK(env.counters[CNT_CACHE_MISS] == 6, "after generation bump: %llu misses, want 6",
	      (unsigned long long)env.counters[CNT_CACHE_MISS]);
	CHECK(env.counters[CNT_STOP_BASE + STOP_COMPLETE] == 3 && env.counters[CNT_FRAMES] == 9,
	      "counters: %llu complete, %llu frames",
	      (unsigned long long)env.counters[CNT_STOP_BASE + STOP_COMPLETE],
	      (unsigned long long)env.counters[CNT_FRAMES]);

	/* return address 0 ends the walk too */
	stk[0] = 0;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("rip 0", &r, STOP_COMPLETE, 1, (uint64_t[]){F_LEAF});

	stk[0] = 0x1234;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("no mapping", &r, STOP_NO_MAPPING, 2, (uint64_t[]){F_LEAF, 0x1234});
	CHECK(r.st.missing_pc == 0x1234, "no mapping: missing_pc %#llx",
	      (unsigned long long)r.st.missing_pc);

	stk[0] = F_GAP;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("gap", &r, STOP_NO_RULE, 2, (uint64_t[]){F_LEAF, F_GAP});
	stk[0] = F_NOPAGE;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("no page", &r, STOP_NO_RULE, 2, (uint64_t[]){F_LEAF, F_NOPAGE});

	stk[0] = F_UNSUP;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("unsupported cfa", &r, STOP_UNSUPPORTED, 2, (uint64_t[]){F_LEAF, F_UNSUP});

	/* rbp clobbered in one frame only matters when a later frame needs it */
	stk[0] = F_RBPU; /* leaf cfa SB+8 */
	stk[2] = F_RBP;	 /* rbpu: cfa SB+24, ra at SB+16 */
	syn_walk(&env, F_LEAF, SB, SB + 32, 64, &r);
	expect_pcs("rbp needed after clobber", &r, STOP_UNSUPPORTED, 3,
		   (uint64_t[]){F_LEAF, F_RBPU, F_RBP});
	stk[2] = F_OUT;
	syn_walk(&env, F_LEAF, SB, SB + 32, 64, &r);
	expect_pcs("rbp clobber unused", &r, STOP_COMPLETE, 3, (uint64_t[]){F_LEAF, F_RBPU, F_OUT});
	CHECK(!r.st.bp_valid, "rbp clobber: bp still marked valid");

	/* rbp-based CFA and a saved rbp */
	memset(stk, 0, sizeof(stk));
	stk[2] = 0xabcdef0; /* saved rbp at cfa-16 */
	stk[3] = F_OUT;	    /* ra at cfa-8 */
	syn_walk(&env, F_RBP, SB, SB + 16, 64, &r);
	expect_pcs("rbp cfa", &r, STOP_COMPLETE, 2, (uint64_t[]){F_RBP, F_OUT});
	CHECK(r.st.bp == 0xabcdef0 && r.st.sp == SB + 32, "rbp cfa: bp %#llx sp %#llx",
	      (unsigned long long)r.st.bp, (unsigned long long)r.st.sp);

	/* the CFA or return address off the readable stack */
	syn_walk(&env, F_LEAF, SB + sizeof(stk), 0, 64, &r);
	expect_pcs("unreadable", &r, STOP_UNREADABLE, 1, (uint64_t[]){F_LEAF});
	syn_walk(&env, F_BAD, SB, 0, 64, &r);
	expect_pcs("cfa not above rsp", &r, STOP_UNREADABLE, 1, (uint64_t[]){F_BAD});

	/*
	 * frame pointers: bp -> {saved bp, ra} until ra == 0.  A zero return address
	 * read through rbp proves nothing (garbage rbp often points at zeros): the
	 * frames are kept, but the walk is not "complete"; only CFI can say that.
	 */
	memset(stk, 0, sizeof(stk));
	stk[2] = SB + 48;
	stk[3] = F_FP + 0x10;
	stk[6] = 0;
	stk[7] = 0;
	syn_walk(&env, F_FP, SB, SB + 16, 64, &r);
	expect_pcs("fp chain", &r, STOP_FP_BROKEN, 2, (uint64_t[]){F_FP, F_FP + 0x10});
	/* F_FP + 0x10 only: the zero return address is no frame (it was counted until 2026-11) */
	CHECK(r.st.nr_fp == 1, "fp chain: nr_fp %u, want 1", r.st.nr_fp);
	/* a cycle: the second saved rbp points back down */
	stk[6] = SB + 16;
	stk[7] = F_FP + 0x20;
	syn_walk(&env, F_FP, SB, SB + 16, 64, &r);
	expect_pcs("fp cycle", &r, STOP_FP_BROKEN, 3, (uint64_t[]){F_FP, F_FP + 0x10, F_FP + 0x20});
	syn_walk(&env, F_FP, SB, SB + 17, 64, &r);
	expect_pcs("fp misaligned", &r, STOP_FP_BROKEN, 1, (uint64_t[]){F_FP});
	syn_walk(&env, F_FP, SB + 64, SB + 16, 64, &r);
	expect_pcs("fp below rsp", &r, STOP_FP_BROKEN, 1, (uint64_t[]){F_FP});
	/* FP frame then a CFI frame */
	stk[7] = F_OUT;
	syn_walk(&env, F_FP, SB, SB + 16, 64, &r);
	expect_pcs("fp then cfi", &r, STOP_COMPLETE, 3, (uint64_t[]){F_FP, F_FP + 0x10, F_OUT});

	/* tables not loaded yet: for a mapping, and for the whole pid */
	memset(stk, 0, sizeof(stk));
	stk[0] = F_PENDING;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("pending mapping", &r, STOP_TABLES_PENDING, 2, (uint64_t[]){F_LEAF, F_PENDING});
	env.proc_known = 0;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("unknown pid", &r, STOP_TABLES_PENDING, 1, (uint64_t[]){F_LEAF});
	CHECK(!r.st.proc_known, "unknown pid: proc_known set");
	env.proc_known = 1;

	/* endless recursion in the second page: truncated at the limit, stack kept */
	{
		uint64_t want[5];
		int i;

		for (i = 1; i < 64; i += 2)
			stk[i] = F_REC;
		for (i = 0; i < 5; i++)
			want[i] = F_REC;
		syn_walk(&env, F_REC, SB, 0, 5, &r);
		expect_pcs("truncated", &r, STOP_TRUNCATED, 5, want);
		/* exactly at the limit with nothing beyond is complete, not truncated */
		memset(stk, 0, sizeof(stk));
		stk[1] = F_REC;
		stk[3] = F_OUT;
		syn_walk(&env, F_REC, SB, 0, 3, &r);
		expect_pcs("limit reached exactly", &r, STOP_COMPLETE, 3,
			   (uint64_t[]){F_REC, F_REC, F_OUT});
		syn_walk(&env, F_REC, SB, 0, 2, &r);
		expect_pcs("one over the limit", &r, STOP_TRUNCATED, 2, (uint64_t[]){F_REC, F_REC});
	}

	/*
	 * Signal: leaf returns to __restore_rt (looked up at pc-1, inside its FDE);
	 * the ucontext at rsp holds the interrupted rip, rsp, rbp; the interrupted
	 * pc is looked up at pc itself (F_MID - 0x10 is the first byte of MID's rule).
	 */
	memset(stk, 0, sizeof(stk));
	stk[0] = F_SIGRET;
	stk[(8 + WALKER_SIG_PC) / 8] = F_MID - 0x10;
	stk[(8 + WALKER_SIG_SP) / 8] = SB + 200;
	stk[(8 + WALKER_SIG_FP) / 8] = 0x1111;
	stk[(200 + 16) / 8] = F_OUT;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("signal", &r, STOP_COMPLETE, 4,
		   (uint64_t[]){F_LEAF, F_SIGRET, F_MID - 0x10, F_OUT});
	CHECK(r.st.flags & SAMPLE_SIGNAL, "signal: SAMPLE_SIGNAL not set");
	CHECK(r.st.bp == 0x1111, "signal: rbp %#llx from the ucontext",
	      (unsigned long long)r.st.bp);
	CHECK(WALKER_SIG_FP == 120 && WALKER_SIG_SP == 160 && WALKER_SIG_PC == 168,
	      "ucontext offsets %d %d %d", WALKER_SIG_FP, WALKER_SIG_SP, WALKER_SIG_PC);

	/*
	 * A ucontext that restores the signal frame itself (rip in the trampoline,
	 * rsp at the ucontext): every step lands where it started.  It must stop
	 * as garbage within the signal-frame budget, not run to the frame limit.
	 */
	memset(stk, 0, sizeof(stk));
	stk[0] = F_SIGRET;
	stk[(8 + WALKER_SIG_PC) / 8] = F_SIGRET - 1;
	stk[(8 + WALKER_SIG_SP) / 8] = SB + 8;
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	CHECK(r.st.reason == STOP_UNREADABLE && r.nr <= WALKER_MAX_SIGNAL_FRAMES + 2,
	      "self-referencing signal frame: reason %d after %u frames (want %d within %d)",
	      r.st.reason, r.nr, STOP_UNREADABLE, WALKER_MAX_SIGNAL_FRAMES + 2);

	/* realigned stack: cfa loaded from the stack */
	memset(stk, 0, sizeof(stk));
	stk[0] = SB + 80;
	stk[9] = F_OUT;
	syn_walk(&env, F_DEREF, SB, 0, 64, &r);
	expect_pcs("deref cfa", &r, STOP_COMPLETE, 2, (uint64_t[]){F_DEREF, F_OUT});

	/* PLT: before the push (rip&15 < 11) the ra is at rsp, after it at rsp+8 */
	memset(stk, 0, sizeof(stk));
	stk[0] = F_OUT;
	stk[1] = F_MID;
	stk[4] = F_OUT;
	syn_walk(&env, F_PLT + 6, SB, 0, 64, &r);
	expect_pcs("plt before push", &r, STOP_COMPLETE, 2, (uint64_t[]){F_PLT + 6, F_OUT});
	syn_walk(&env, F_PLT + 11, SB, 0, 64, &r);
	expect_pcs("plt after push", &r, STOP_COMPLETE, 3, (uint64_t[]){F_PLT + 11, F_MID, F_OUT});

	replay_env_free(&env);
}

/*
 * User memory is read a window at a time (struct walker_window): one read
 * serves many small frames, a window that would reach past the readable
 * stack falls back to reading just the value, and a walk never reads bytes
 * another walk (an interrupting one) left in the window.
 */
#define WIN_FRAMES 200
/* frames below the top of a one-page stack: more than one window holds */
#define TOP_FRAMES 100

static void test_stack_window(void)
{
	static struct replay_env env;
	static uint64_t stk[512], garbage[512];
	static __u64 pcs[WIN_FRAMES + 8];
	struct walker_state st, other;
	unsigned int nr, i;
	size_t top;

	memset(stk, 0, sizeof(stk));
	syn_env(&env, stk, sizeof(stk));
	/* WIN_FRAMES frames of 16 bytes (cfa = rsp+16), then the outermost */
	for (i = 0; i < WIN_FRAMES; i++)
		stk[2 * i + 1] = F_REC;
	stk[2 * WIN_FRAMES + 1] = F_OUT;
	nr = replay_walk(&env, F_REC, SB, 0, pcs, WIN_FRAMES + 8, &st);
	CHECK(st.reason == STOP_COMPLETE && nr == WIN_FRAMES + 2,
	      "window walk: reason %d, %u frames", st.reason, nr);
	for (i = 0; i + 1 < nr; i++)
		CHECK(pcs[i] == F_REC, "window walk: frame %u pc %#llx", i,
		      (unsigned long long)pcs[i]);
	/* 3216 bytes of stack in windows of WALKER_WINDOW bytes, each starting a little below */
	CHECK(env.reads <= 3216 / (WALKER_WINDOW - WALKER_WINDOW_BELOW) + 1,
	      "window walk: %llu reads of user memory for %u frames, want <= %u",
	      (unsigned long long)env.reads, nr, 3216 / (WALKER_WINDOW - WALKER_WINDOW_BELOW) + 1);

	/*
	 * The readable stack ends right after the last return address: the last
	 * window cannot be read whole, the values it would have held still are.
	 */
	top = (2 * WIN_FRAMES + 2) * sizeof(uint64_t);
	env.mem[0].len = top;
	nr = replay_walk(&env, F_REC, SB, 0, pcs, WIN_FRAMES + 8, &st);
	CHECK(st.reason == STOP_COMPLETE && nr == WIN_FRAMES + 2,
	      "stack ends at the last ra: reason %d, %u frames", st.reason, nr);
	/* one byte less: that return address is unreadable, as with one read per value */
	env.mem[0].len = top - 1;
	nr = replay_walk(&env, F_REC, SB, 0, pcs, WIN_FRAMES + 8, &st);
	CHECK(st.reason == STOP_UNREADABLE && nr == WIN_FRAMES + 1,
	      "stack ends inside the last ra: reason %d, %u frames", st.reason, nr);
	env.mem[0].len = sizeof(stk);

	/*
	 * Another walk between two frames of this one fills the window with its own
	 * stack at the same addresses (garbage here): this walk reads its own again.
	 */
	for (i = 0; i < 512; i++)
		garbage[i] = 0x4242424242424242ull;
	replay_cur = &env;
	walker_init(&st, SYN_PID, F_REC, SB, 0);
	for (i = 0; i < 10; i++)
		CHECK(!walker_frame(&st, pcs, WIN_FRAMES + 8),
		      "interrupted walk: ended at frame %u", i);
	env.mem[0].bytes = (const uint8_t *)garbage;
	replay_walk(&env, F_REC, SB, 0, pcs + WIN_FRAMES, 4, &other);
	env.mem[0].bytes = (const uint8_t *)stk;
	for (i = 0; i < WIN_FRAMES + 8; i++)
		if (walker_frame(&st, pcs, WIN_FRAMES + 8))
			break;
	CHECK(st.reason == STOP_COMPLETE && st.nr == WIN_FRAMES + 2,
	      "interrupted walk: reason %d, %u frames", st.reason, st.nr);

	/*
	 * Interrupted between filling the window and copying from it: the tag is
	 * still this walk's but another walk has started since.  Not read.
	 */
	walker_init(&st, SYN_PID, F_REC, SB, 0);
	CHECK(!walker_frame(&st, pcs, WIN_FRAMES + 8), "refilled walk: ended at once");
	CHECK(env.window.tag == st.win_tag && env.window.base <= SB + 16,
	      "refilled walk: window tag %u base %#llx", env.window.tag,
	      (unsigned long long)env.window.base);
	memset(env.window.bytes, 0x42, sizeof(env.window.bytes));
	env.window.walks++;
	for (i = 0; i < WIN_FRAMES + 8; i++)
		if (walker_frame(&st, pcs, WIN_FRAMES + 8))
			break;
	CHECK(st.reason == STOP_COMPLETE && st.nr == WIN_FRAMES + 2,
	      "window taken by another walk: reason %d, %u frames", st.reason, st.nr);

	/*
	 * The readable stack ends at a page's end (the main thread's: above its
	 * environment strings, nothing): the window that would reach past it is
	 * read again up to that end, once, where every frame left would otherwise
	 * try the whole window again and then read its own value (2 reads each).
	 */
	_Static_assert((SB & (WALKER_WINDOW_PAGE - 1)) == 0 && sizeof(stk) == WALKER_WINDOW_PAGE,
		       "stk is one page");
	memset(stk, 0, sizeof(stk));
	top = 512 - 2 * (TOP_FRAMES + 1); /* the walk's sp, in words */
	for (i = 0; i < TOP_FRAMES; i++)
		stk[top + 2 * i + 1] = F_REC;
	stk[top + 2 * TOP_FRAMES + 1] = F_OUT;
	env.reads = 0;
	nr = replay_walk(&env, F_REC, SB + top * sizeof(uint64_t), 0, pcs, WIN_FRAMES + 8, &st);
	CHECK(st.reason == STOP_COMPLETE && nr == TOP_FRAMES + 2,
	      "walk to the page's end: reason %d, %u frames", st.reason, nr);
	/* one window, then at the top one that fails and its part up to the page's end */
	CHECK(env.reads <= 3, "walk to the page's end: %llu reads of user memory, want <= 3",
	      (unsigned long long)env.reads);
	replay_env_free(&env);
}

static void syn_walk_regs(struct replay_env *env, const __u64 *regs, uint64_t ip, uint64_t sp,
			  uint64_t bp, struct syn_result *r)
{
	memset(r, 0, sizeof(*r));
	r->nr = replay_walk_regs(env, regs, ip, sp, bp, r->pcs, 64, &r->st);
}

/*
 * Rules with the CFA in another register: rbx through the walk (the lazy-binding
 * trampoline _dl_runtime_resolve, CFA = rbx + 24), r10 at the leaf only (DRAP).
 */
static void test_cfa_register(void)
{
	static struct replay_env env;
	uint64_t stk[64];
	__u64 regs[CFI_DW_NR_REGS];
	struct syn_result r;

	memset(stk, 0, sizeof(stk));
	memset(regs, 0, sizeof(regs));
	syn_env(&env, stk, sizeof(stk));

	/* a callee pushed the trampoline's rbx: the CFI says where, the register is its own */
	stk[0] = SB + 40; /* the trampoline's rbx, saved at cfa-16 */
	stk[1] = F_TRAMP;
	stk[7] = F_OUT; /* trampoline: cfa = SB+40+24, ra at cfa-8 */
	regs[CFI_DW_RBX] = 0xdead;
	syn_walk_regs(&env, regs, F_PUSHRBX, SB, 0, &r);
	expect_pcs("rbx saved by a callee", &r, STOP_COMPLETE, 3,
		   (uint64_t[]){F_PUSHRBX, F_TRAMP, F_OUT});
	/* rbx untouched by the callee: the sample's own register */
	stk[0] = F_TRAMP;
	regs[CFI_DW_RBX] = SB + 40;
	syn_walk_regs(&env, regs, F_LEAF, SB, 0, &r);
	expect_pcs("rbx from the sample", &r, STOP_COMPLETE, 3,
		   (uint64_t[]){F_LEAF, F_TRAMP, F_OUT});
	/* the trampoline itself at the leaf */
	syn_walk_regs(&env, regs, F_TRAMP, SB + 8, 0, &r);
	expect_pcs("rbx at the leaf", &r, STOP_COMPLETE, 2, (uint64_t[]){F_TRAMP, F_OUT});
	/* without the sample's registers (and so on the old walker): unsupported, counted */
	syn_walk(&env, F_LEAF, SB, 0, 64, &r);
	expect_pcs("rbx unknown", &r, STOP_UNSUPPORTED, 2, (uint64_t[]){F_LEAF, F_TRAMP});
	CHECK(r.st.unsup == CFI_UNSUP_REG_LOST, "rbx unknown: unsupported reason %d, want %d",
	      r.st.unsup, CFI_UNSUP_REG_LOST);
	CHECK(env.counters[CNT_UNSUP_BASE + CFI_UNSUP_REG_LOST] == 1,
	      "rbx unknown: counted %llu times under cfa-register-lost",
	      (unsigned long long)env.counters[CNT_UNSUP_BASE + CFI_UNSUP_REG_LOST]);
	/* a frame-pointer frame in between may have used rbx: lost, not guessed */
	memset(stk, 0, sizeof(stk));
	stk[2] = 0;
	stk[3] = F_TRAMP;
	syn_walk_regs(&env, regs, F_FP, SB, SB + 16, &r);
	expect_pcs("rbx after fp", &r, STOP_UNSUPPORTED, 2, (uint64_t[]){F_FP, F_TRAMP});

	/* DRAP prologue: CFA = r10 at the leaf; above the leaf r10 is long gone */
	memset(stk, 0, sizeof(stk));
	stk[1] = F_OUT;
	regs[10] = SB + 16;
	syn_walk_regs(&env, regs, F_DRAP, SB, 0, &r);
	expect_pcs("r10 at the leaf", &r, STOP_COMPLETE, 2, (uint64_t[]){F_DRAP, F_OUT});
	stk[0] = F_DRAP;
	syn_walk_regs(&env, regs, F_LEAF, SB, 0, &r);
	expect_pcs("r10 above the leaf", &r, STOP_UNSUPPORTED, 2, (uint64_t[]){F_LEAF, F_DRAP});
	CHECK(r.st.unsup == CFI_UNSUP_REG_LOST, "r10 above the leaf: reason %d", r.st.unsup);
	replay_env_free(&env);
}

/*
 * Code no FDE covers inside an object with CFI (V8's builtins, hand-written
 * assembly) and JIT code: frame pointers where rbp is plausible, back to CFI
 * at the first pc CFI covers, and nothing kept that a frame pointer made up.
 */
static void test_fp_fallback(void)
{
	static struct replay_env env;
	uint64_t stk[64];
	struct syn_result r;

	memset(stk, 0, sizeof(stk));
	syn_env(&env, stk, sizeof(stk));

	/* no FDE, rbp a frame: its caller, then CFI again */
	stk[2] = 0x1234; /* saved rbp */
	stk[3] = F_MID;	 /* cfa = SB+32+24 */
	stk[6] = F_OUT;
	syn_walk(&env, F_GAP, SB, SB + 16, 64, &r);
	expect_pcs("no fde, fp", &r, STOP_COMPLETE, 3, (uint64_t[]){F_GAP, F_MID, F_OUT});
	CHECK(r.st.nr_fp == 1, "no fde, fp: nr_fp %u, want 1", r.st.nr_fp);

	/* CFI -> no FDE -> JIT (frame-pointer mapping) -> CFI */
	memset(stk, 0, sizeof(stk));
	stk[0] = F_GAP;	  /* leaf's ra */
	stk[2] = SB + 32; /* the no-FDE frame's saved rbp: the JIT frame's */
	stk[3] = F_FP;
	stk[4] = 0x5678;
	stk[5] = F_MID; /* sp SB+48: cfa SB+72 */
	stk[8] = F_OUT;
	syn_walk(&env, F_LEAF, SB, SB + 16, 64, &r);
	expect_pcs("cfi, no fde, jit, cfi", &r, STOP_COMPLETE, 5,
		   (uint64_t[]){F_LEAF, F_GAP, F_FP, F_MID, F_OUT});
	CHECK(r.st.nr_fp == 2, "cfi, no fde, jit, cfi: nr_fp %u, want 2", r.st.nr_fp);

	/* the frame pointer leads to no code: that frame is not kept */
	memset(stk, 0, sizeof(stk));
	stk[3] = 0x1234;
	syn_walk(&env, F_GAP, SB, SB + 16, 64, &r);
	expect_pcs("fp to nowhere", &r, STOP_FP_BROKEN, 1, (uint64_t[]){F_GAP});
	CHECK(r.st.nr_fp == 0, "fp to nowhere: nr_fp %u, want 0", r.st.nr_fp);
	CHECK(r.st.missing_pc == 0, "fp to nowhere: asks for a mapping at %#llx",
	      (unsigned long long)r.st.missing_pc);
	/* rbp not a frame (below rsp, misaligned, megabytes away): no rule, as before */
	syn_walk(&env, F_GAP, SB + 32, SB + 16, 64, &r);
	expect_pcs("no fde, rbp below rsp", &r, STOP_NO_RULE, 1, (uint64_t[]){F_GAP});
	syn_walk(&env, F_GAP, SB, SB + 17, 64, &r);
	expect_pcs("no fde, rbp misaligned", &r, STOP_NO_RULE, 1, (uint64_t[]){F_GAP});
	syn_walk(&env, F_GAP, SB, SB + WALKER_FP_MAX_FRAME + 16, 64, &r);
	expect_pcs("no fde, rbp far away", &r, STOP_NO_RULE, 1, (uint64_t[]){F_GAP});
	replay_env_free(&env);
}

/*
 * JIT code whose runtime gives rows for all it knows of it (CFI_MAPPING_JIT,
 * HotSpot's code cache): a pc with no row is code compiled since the rows
 * were built, and the walk stops there as tables-pending (deferred until
 * the next rows) rather than guess; once rows newer than the sample say
 * nothing of it (jit_final, the deferred walk's), frame pointers as in any
 * code no row covers.  A pc with a row is walked by it either way.
 */
static void test_jit_rows(void)
{
	static struct replay_env env;
	const uint64_t jit = 0x300000; /* the JIT mapping: obj 1's rows, 0x300000 higher */
	uint64_t stk[64];
	struct syn_result r;

	memset(stk, 0, sizeof(stk));
	syn_env(&env, stk, sizeof(stk));
	replay_add_mapping(&env, 0x700000, 0x760000, 1, CFI_MAPPING_CFI | CFI_MAPPING_JIT, jit);
	/* rbp a frame, as in test_fp_fallback's "no fde, fp" */
	stk[2] = 0x1234;
	stk[3] = F_MID;
	stk[6] = F_OUT;
	syn_walk(&env, F_GAP + jit, SB, SB + 16, 64, &r);
	expect_pcs("jit, no row", &r, STOP_TABLES_PENDING, 1, (uint64_t[]){F_GAP + jit});
	memset(&r, 0, sizeof(r));
	replay_cur = &env;
	walker_init(&r.st, env.pid, F_GAP + jit, SB, SB + 16);
	r.st.jit_final = 1;
	r.nr = replay_run(&r.st, r.pcs, 64);
	expect_pcs("jit, no row, rows newer", &r, STOP_COMPLETE, 3,
		   (uint64_t[]){F_GAP + jit, F_MID, F_OUT});
	syn_walk(&env, F_OUT + jit, SB, SB + 16, 64, &r);
	expect_pcs("jit, a row", &r, STOP_COMPLETE, 1, (uint64_t[]){F_OUT + jit});
	replay_env_free(&env);
}

/* A rule without its pair fields: a pair's successor id is the table's or the walker's. */
static struct cfi_rule unpaired(struct cfi_rule r)
{
	r.next_at = 0;
	r.next_rule = 0;
	return r;
}

/*
 * Paired rows (struct cfi_rule's next_at): the walker's own lookup, through
 * the global ids user space gives the rules, answers as the table compiler's
 * does on each side of every pair's seam and inside its successor's hole.
 */
static void test_paired_rows(void)
{
	static struct replay_env env;
	struct cfi_table *t = NULL;
	uint32_t p, i, pairs = 0, bad = 0, checked = 0;

	CHECK(cfi_table_build_file("/lib/x86_64-linux-gnu/libc.so.6", NULL, &t, NULL) == 0,
	      "libc's table");
	if (!t)
		return;
	replay_env_init(&env, 42);
	CHECK(replay_add_table(&env, 7, t) == 0, "loaded");
	replay_cur = &env;
	for (p = 0; p < t->nr_pages; p++) {
		const struct cfi_page *pg = &t->pages[p];

		for (i = 0; i < pg->nr_rows; i++) {
			const struct cfi_row *row = &t->rows[pg->first_row + i];
			const struct cfi_rule *r = &t->rules[row->rule];
			uint64_t base = (pg->page << CFI_PAGE_SHIFT) + row->off;
			uint32_t end = i + 1 < pg->nr_rows ? t->rows[pg->first_row + i + 1].off
							   : CFI_PAGE_SIZE;

			if (!r->next_at)
				continue;
			pairs++;
			for (uint32_t d = 0; d < end - row->off; d++) {
				const struct cfi_rule *want = cfi_table_lookup(t, base + d);
				struct cfi_rule got, w = unpaired(*want);
				int rc = walker_find_rule(7, base + d, &got);

				/* the seam, its neighbours and the successor's hole; not every byte
				 */
				if (d > 2 && d + 2 < r->next_at && d + 2 < end - row->off)
					continue;
				checked++;
				got = unpaired(got);
				/* no rule: -1 (a hole) or rule 0 (a "no info" row) */
				if (want->cfa_kind == CFI_CFA_NONE
					? rc == 0 && got.cfa_kind != CFI_CFA_NONE
					: rc != 0 || memcmp(&got, &w, sizeof(w)))
					bad++;
			}
		}
	}
	CHECK(pairs > 100 && checked > 4 * pairs && !bad,
	      "%u pairs, %u addresses checked, %u where the walker disagrees", pairs, checked, bad);
	replay_env_free(&env);
	cfi_table_free(t);
}

/*
 * A frame that keeps its caller's sp (HotSpot's interpreted frame: the
 * sender sp at rbp - 8) with its return address and the caller's rbp at
 * its rbp: CFI_CFA_DEREF_RBP with CFI_REG_AT_FP registers.  Its compiled
 * caller (a frame-size rule) came through a c2i adapter that extended its
 * sp for the arguments: rbp + 16 would be 0x30 bytes short of it.
 */
static void test_sender_sp(void)
{
	static struct replay_env env;
	static struct cfi_rule rules[4];
	static struct cfi_row rows[6] = {{0, 0},      {0x1000, 1}, {0x1100, 0},
					 {0x2000, 2}, {0x2100, 3}, {0x2200, 0}};
	static struct cfi_page page = {.page = 0x80, .first_row = 0, .nr_rows = 6};
	struct cfi_table t = {.rules = rules,
			      .nr_rules = 4,
			      .rows = rows,
			      .nr_rows = 6,
			      .pages = &page,
			      .nr_pages = 1};
	const uint64_t interp = 0x801010, compiled = 0x802010, out = 0x802110;
	uint64_t stk[32];
	struct syn_result r;

	rules[0] = mkrule(CFI_CFA_NONE, 0, 0, 0, 0, 0);
	/* cfa = *(rbp - 8), ra at rbp + 8, rbp at rbp */
	rules[1] = mkrule(CFI_CFA_DEREF_RBP, -8, CFI_REG_AT_FP, CFI_REG_AT_FP, 0, 0);
	rules[1].ra_off = 8;
	rules[2] = mkrule(CFI_CFA_RSP, 48, CFI_REG_AT_CFA, CFI_REG_AT_CFA, -16, 0); /* compiled */
	rules[3] = mkrule(CFI_CFA_RSP, 8, CFI_REG_UNDEFINED, CFI_REG_SAME, 0, 0);   /* outermost */
	memset(stk, 0, sizeof(stk));
	stk[0x38 / 8] = SB + 0x80; /* rbp - 8: the sender sp, the compiled caller's */
	stk[0x40 / 8] = 0x1234;	   /* rbp: the caller's rbp */
	stk[0x48 / 8] = compiled;  /* rbp + 8 */
	stk[0xa8 / 8] = out;	   /* the compiled frame's return address: its cfa SB+0xb0, -8 */
	replay_env_init(&env, SYN_PID);
	CHECK(replay_add_table(&env, 3, &t) == 0, "add the table");
	replay_add_mapping(&env, 0x800000, 0x810000, 3, CFI_MAPPING_CFI, 0);
	replay_add_mem(&env, SB, stk, sizeof(stk));
	syn_walk(&env, interp, SB, SB + 0x40, 64, &r);
	expect_pcs("sender sp", &r, STOP_COMPLETE, 3, (uint64_t[]){interp, compiled, out});
	/* a frame pointer lost before the frame: nothing at it to read */
	memset(&r, 0, sizeof(r));
	replay_cur = &env;
	walker_init(&r.st, env.pid, interp, SB, SB + 0x40);
	r.st.bp_valid = 0;
	r.nr = replay_run(&r.st, r.pcs, 64);
	CHECK(r.st.reason == STOP_UNSUPPORTED && r.nr == 1,
	      "sender sp, rbp lost: reason %d, %u frames", r.st.reason, r.nr);
	replay_env_free(&env);
}

#include "tests/lib/replay_world.h"

static pid_t pick_thread(pid_t pid, int want_thread)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t tid = want_thread ? 0 : pid;

	if (!want_thread)
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t t = atoi(de->d_name);

		if (t > 0 && t != pid && (!tid || t < tid))
			tid = t;
	}
	closedir(d);
	return tid;
}

/* Stop tid in a ptrace interrupt-stop, passing on any signal that arrives first. */
static int interrupt_stop(pid_t tid)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0))
		return -errno;
	for (;;) {
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status))
			return -ESRCH;
		if ((status >> 16) == PTRACE_EVENT_STOP)
			return 0;
		/* a signal-delivery stop (e.g. SIGALRM): deliver it and wait for our stop */
		if (ptrace(PTRACE_CONT, tid, 0, WSTOPSIG(status)))
			return -errno;
	}
}

/* Find symbol name among the executable mappings: [lo, hi) at run time. */
static int leaf_range(const struct snapshot *s, const char *name, uint64_t *lo, uint64_t *hi)
{
	uint32_t i;
	size_t k;

	for (i = 0; i < s->nr_maps; i++) {
		const struct snap_map *m = &s->maps[i];
		struct object o;
		uint64_t bias;
		int found = 0;

		if (!m->exec || m->path[0] != '/' || strstr(m->path, "/libc.so"))
			continue;
		memset(&o, 0, sizeof(o));
		snprintf(o.path, sizeof(o.path), "%s", m->path);
		object_load_elf(&o);
		for (k = 0; k < o.nr_syms; k++) {
			if (!strcmp(o.syms[k].name, name) && !object_bias(&o, m, &bias)) {
				*lo = o.syms[k].addr + bias;
				*hi = *lo + o.syms[k].size;
				found = 1;
				break;
			}
		}
		object_free(&o);
		if (found)
			return 0;
	}
	return -1;
}

static int capture(char *const argv[], const char *leaf, int want_thread, struct snapshot *s)
{
	struct user_regs_struct regs;
	uint64_t lo = 0, hi = 0;
	pid_t pid, tid = 0;
	int attempt, err = -1, seized = 0, fd;
	char path[64];
	uint32_t i;

	memset(s, 0, sizeof(*s));
	pid = spawn(argv, NULL, "-");
	if (pid < 0)
		return -errno;
	/* let it reach its leaf (threads started, library loaded, signal delivered) */
	for (attempt = 0; attempt < 100; attempt++) {
		usleep(20000);
		if (attempt < 15)
			continue;
		tid = pick_thread(pid, want_thread);
		if (!tid || read_maps(pid, s) || leaf_range(s, leaf, &lo, &hi))
			continue;
		break;
	}
	if (!tid || !hi) {
		fprintf(stderr, "%s: leaf %s not found\n", argv[0], leaf);
		goto out;
	}
	if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
		fprintf(stderr, "PTRACE_SEIZE %d: %s\n", tid, strerror(errno));
		goto out;
	}
	seized = 1;
	for (attempt = 0; attempt < 500; attempt++) {
		if (interrupt_stop(tid))
			goto out;
		if (ptrace(PTRACE_GETREGS, tid, 0, &regs))
			goto out;
		if (regs.rip >= lo && regs.rip < hi)
			break;
		ptrace(PTRACE_CONT, tid, 0, 0);
		usleep(3000 + (attempt % 7) * 1000);
	}
	if (attempt == 500) {
		fprintf(stderr, "%s: never stopped inside %s\n", argv[0], leaf);
		goto out;
	}
	s->pid = pid;
	s->tid = tid;
	s->rip = regs.rip;
	s->rsp = regs.rsp;
	s->rbp = regs.rbp;
	if (read_maps(pid, s))
		goto out;
	for (i = 0; i < s->nr_maps; i++)
		if (s->rsp >= s->maps[i].start && s->rsp < s->maps[i].end)
			break;
	if (i == s->nr_maps)
		goto out;
	/* the stack from rsp to the top of its mapping: all the walker may read */
	s->stack_addr = s->rsp;
	s->stack_len = s->maps[i].end - s->rsp;
	s->stack = malloc(s->stack_len);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !s->stack ||
	    pread(fd, s->stack, s->stack_len, s->stack_addr) != (ssize_t)s->stack_len) {
		fprintf(stderr, "reading the stack: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	err = 0;
out:
	if (seized)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return err;
}

struct walk_result {
	__u64 pcs[MAX_FRAMES];
	unsigned int nr;
	struct walker_state st;
};

static void replay_check(const char *name, const struct snapshot *s, const struct expect *e,
			 unsigned int max, int want_reason, int want_signal,
			 struct walk_result *res)
{
	static struct world w;
	char chain[8192], why[256];
	int ok;

	if (world_build(&w, s)) {
		CHECK(0, "%s: building the replay world failed", name);
		world_free(&w);
		return;
	}
	memset(res, 0, sizeof(*res));
	res->nr = replay_walk(&w.env, s->rip, s->rsp, s->rbp, res->pcs, max, &res->st);
	ok = chain_match(&w, s, res->pcs, res->nr, e, chain, sizeof(chain), why, sizeof(why));
	CHECK(ok, "%s: chain mismatch (%u frames, want %d; %s): %s", name, res->nr, expect_len(e),
	      why, chain);
	CHECK(res->st.reason == want_reason, "%s: stop reason %d, want %d; chain: %s", name,
	      res->st.reason, want_reason, chain);
	CHECK(!!(res->st.flags & SAMPLE_SIGNAL) == want_signal, "%s: signal flag %d, want %d", name,
	      !!(res->st.flags & SAMPLE_SIGNAL), want_signal);
	printf("  %-10s %3u frames, stop %d, %llu cache misses: %s\n", name, res->nr,
	       res->st.reason, (unsigned long long)w.env.counters[CNT_CACHE_MISS], chain);
	world_free(&w);
}

/*
 * A RECORD_DEFERRED as the BPF program builds it: the walker state where the
 * walk stopped, stack bytes from base, and the partial sample.  buf must hold
 * sizeof(header) + stack_max + DEFERRED_RECORD_MAX bytes.
 */
static size_t make_deferred(uint64_t *buf, const struct snapshot *s, uint32_t stack_len,
			    const struct walker_state *st, const __u64 *pcs)
{
	struct cfi_deferred_record *d = (struct cfi_deferred_record *)buf;
	struct cfi_sample_record *r;
	uint32_t stack_max = (stack_len + DEFER_CHUNK - 1) & ~(DEFER_CHUNK - 1);

	memset(d, 0, sizeof(*d));
	d->type = RECORD_DEFERRED;
	d->stack_max = stack_max;
	d->stack_base = s->stack_addr;
	d->stack_len = stack_len;
	d->nr_signal = st->nr_signal;
	d->bp_valid = st->bp_valid;
	d->ip_is_ra = st->ip_is_ra;
	d->ip = st->ip;
	d->sp = st->sp;
	d->bp = st->bp;
	d->rbx = st->rbx;
	d->rbx_at = st->rbx_at;
	d->rbx_valid = st->rbx_valid;
	d->at_leaf = st->at_leaf;
	d->ip_from_fp = st->ip_from_fp;
	memcpy(d->leaf, st->leaf, sizeof(d->leaf));
	memcpy(d + 1, s->stack, stack_len);
	r = (struct cfi_sample_record *)((char *)(d + 1) + stack_max);
	memset(r, 0, sizeof(*r));
	r->type = RECORD_SAMPLE;
	r->pid = s->pid;
	r->tid = s->tid;
	r->reason = st->reason;
	r->flags = st->flags;
	r->nr_fp = st->nr_fp;
	r->nr_user = st->nr;
	memcpy(r->pcs, pcs, st->nr * sizeof(__u64));
	return sizeof(*d) + stack_max + sizeof(*r) + st->nr * sizeof(__u64);
}

/*
 * Deferred unwinding: the kernel's walk stops at a frame whose object's tables
 * are still pending; user space finishes it from the stack copy once they are
 * in (user/unwind/deferred_walk.c, the same walker.h).  The result must be the
 * whole walk, pc for pc.  A copy too short for the stack ends stack-copy-short.
 */
static void deferred_check(const char *name, const struct snapshot *s,
			   const struct walk_result *full)
{
	static uint64_t buf[(DEFER_STACK_MAX + DEFERRED_RECORD_MAX) / 8 + 64];
	static uint64_t out[DEFERRED_RECORD_MAX / 8];
	static struct world w;
	static struct walk_result part;
	struct cfi_sample_record *fin = (struct cfi_sample_record *)out;
	struct cfi_mapping_val *m;
	struct deferred_view v;
	struct walk_maps maps;
	uint32_t stack_len = s->stack_len < DEFER_STACK_MAX ? (uint32_t)s->stack_len : DEFER_STACK_MAX;
	unsigned int at = full->nr / 2;
	size_t size, fin_size;

	if (full->nr < 3 || world_build(&w, s)) {
		CHECK(0, "%s: no world to defer in (%u frames)", name, full->nr);
		world_free(&w);
		return;
	}
	/* the object of a middle frame has no tables yet: the kernel stops there */
	m = replay_find_mapping(&w.env, s->pid, full->pcs[at] - 1);
	CHECK(m != NULL, "%s: frame %u in no mapping", name, at);
	if (!m)
		goto out;
	m->flags |= CFI_MAPPING_PENDING;
	memset(&part, 0, sizeof(part));
	part.nr = replay_walk(&w.env, s->rip, s->rsp, s->rbp, part.pcs, MAX_FRAMES, &part.st);
	CHECK(part.st.reason == STOP_TABLES_PENDING && part.nr >= 1 && part.nr <= at + 1 &&
		  !memcmp(part.pcs, full->pcs, part.nr * sizeof(__u64)),
	      "%s: the pending walk is not a prefix ending tables-pending (%u frames, reason %d)",
	      name, part.nr, part.st.reason);
	m->flags &= ~CFI_MAPPING_PENDING;

	size = make_deferred(buf, s, stack_len, &part.st, part.pcs);
	CHECK(deferred_parse(buf, size, &v), "%s: the deferred record does not parse", name);
	replay_walk_maps(&w.env, &maps);
	CHECK(deferred_walk(&maps, &v, MAX_FRAMES, false, fin, &fin_size, NULL) ==
		  DEFERRED_FINISHED,
	      "%s: the deferred walk did not finish", name);
	CHECK(fin->nr_user == full->nr && fin->reason == full->st.reason &&
		  !memcmp(fin->pcs, full->pcs, full->nr * sizeof(__u64)),
	      "%s: finished deferred walk differs from the whole walk (%u frames, reason %d; want "
	      "%u, %d)",
	      name, fin->nr_user, fin->reason, full->nr, full->st.reason);
	CHECK(fin->flags & SAMPLE_DEFERRED, "%s: finished sample not flagged deferred", name);
	CHECK(fin_size == sizeof(*fin) + fin->nr_user * sizeof(__u64), "%s: record size %zu", name,
	      fin_size);

	/* tables pending again (a reload in progress, a new generation): wait, do not finish */
	m->flags |= CFI_MAPPING_PENDING;
	w.env.proc.generation++;
	CHECK(deferred_walk(&maps, &v, MAX_FRAMES, false, fin, &fin_size, NULL) == DEFERRED_WAIT,
	      "%s: finished a walk whose tables are still pending", name);
	m->flags &= ~CFI_MAPPING_PENDING;

	/* only the first page copied, as if that were the whole copy budget */
	if (!strcmp(name, "recurse")) {
		size = make_deferred(buf, s, DEFER_CHUNK, &part.st, part.pcs);
		CHECK(deferred_parse(buf, size, &v), "%s: the short record does not parse", name);
		CHECK(deferred_walk(&maps, &v, MAX_FRAMES, false, fin, &fin_size, NULL) ==
			      DEFERRED_FINISHED &&
			  fin->reason == STOP_STACK_COPY && fin->nr_user < full->nr &&
			  !memcmp(fin->pcs, full->pcs, fin->nr_user * sizeof(__u64)),
		      "%s: a short copy gives reason %d with %u frames, want stack-copy-short and "
		      "a prefix",
		      name, fin->reason, fin->nr_user);
	}
	/* the record is checked before anything reads it */
	CHECK(!deferred_parse(buf, sizeof(struct cfi_deferred_record) - 1, &v) &&
		  !deferred_parse(buf, size - 8, &v),
	      "%s: truncated deferred records parse", name);
	printf("  %-10s deferred at frame %u of %u: finished from a %u-byte copy\n", name, part.nr,
	       full->nr, stack_len);
out:
	world_free(&w);
}

struct replay_case {
	const char *name;
	const char *prog;
	const char *args[4];
	const char *leaf;
	int want_thread;
	struct expect e;
	int want_signal;
};

static void run_case(const struct replay_case *c)
{
	struct snapshot s, s2;
	struct walk_result r1, r2;
	char prog[256], snap_path[256];
	char *argv[8];
	int i, err;

	snprintf(prog, sizeof(prog), PROGS_DIR "/%s", c->prog);
	if (access(prog, X_OK)) {
		CHECK(0, "%s: %s not built (make %s)", c->name, prog, prog);
		return;
	}
	argv[0] = prog;
	for (i = 0; c->args[i]; i++)
		argv[i + 1] = (char *)c->args[i];
	argv[i + 1] = NULL;

	err = capture(argv, c->leaf, c->want_thread, &s);
	if (err) {
		CHECK(0, "%s: capture failed", c->name);
		snap_free(&s);
		return;
	}
	snprintf(snap_path, sizeof(snap_path), SNAP_DIR "/%s.snap", c->name);
	err = snap_write(&s, snap_path);
	if (err)
		CHECK(0, "%s: writing %s: %d", c->name, snap_path, err);
	replay_check(c->name, &s, &c->e, MAX_FRAMES, STOP_COMPLETE, c->want_signal, &r1);
	deferred_check(c->name, &s, &r1);

	/* the saved file alone gives the same walk */
	err = snap_read(&s2, snap_path);
	if (err)
		CHECK(0, "%s: reading %s back: %d", c->name, snap_path, err);
	if (!err) {
		replay_check(c->name, &s2, &c->e, MAX_FRAMES, STOP_COMPLETE, c->want_signal, &r2);
		CHECK(r1.nr == r2.nr && !memcmp(r1.pcs, r2.pcs, r1.nr * sizeof(__u64)) &&
			  r1.st.reason == r2.st.reason,
		      "%s: replay from file differs", c->name);
	}
	/* the recursion at the default depth limit: truncated, the 127 frames kept */
	if (!strcmp(c->name, "recurse") && !err) {
		struct expect t = c->e;

		t.nr_repeat = 126;
		t.nr_tok = 1;
		replay_check("recurse127", &s2, &t, 127, STOP_TRUNCATED, 0, &r2);
		CHECK(r2.nr == 127 && !memcmp(r1.pcs, r2.pcs, 127 * sizeof(__u64)),
		      "recurse127: truncated stack is not the prefix of the full one");
	}
	snap_free(&s2);
	snap_free(&s);
}

#define TOKS(...)                                                                                  \
	.tok = {__VA_ARGS__}, .nr_tok = sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)

static const struct replay_case cases[] = {
    {"chain",
     "chain",
     {"20"},
     "leaf",
     0,
     {TOKS("leaf", "d", "c", "b", "a", "main", "@libc", "@libc", "_start")},
     0},
    /* CFI, code no FDE covers and JIT code (frame pointers, no CFI) in one stack */
    {"jit_frames",
     "jit_frames",
     {"20"},
     "jf_leaf",
     0,
     {TOKS("jf_leaf", "@jit", "jf_nocfi", "jf_run", "main", "@libc", "@libc", "_start")},
     0},
    {"recurse",
     "recurse",
     {"20", "300"},
     "leaf",
     0,
     {TOKS("leaf", "main", "@libc", "@libc", "_start"), .repeat = "rec", .nr_repeat = 300},
     0},
    {"threads",
     "threads",
     {"20"},
     "t_leaf",
     1,
     {TOKS("t_leaf", "t_b", "t_a", "worker", "@libc", "@libc")},
     0},
    {"signal",
     "signal",
     {"20"},
     "h_leaf",
     0,
     {TOKS("h_leaf", "h_a", "handler", "@sig", "!s_work", "s_a", "main", "@libc", "@libc",
	   "_start")},
     1},
    {"plt",
     "plt",
     {"20"},
     "pltlib_leaf",
     0,
     {TOKS("pltlib_leaf", "pltlib_entry", "p_a", "main", "@libc", "@libc", "_start")},
     0},
    {"dlopen",
     "dlopen",
     {"20"},
     "dl_leaf",
     0,
     {TOKS("dl_leaf", "dl_entry", "d_a", "main", "@libc", "@libc", "_start")},
     0},
    {"drap",
     "drap",
     {"20"},
     "drap_leaf",
     0,
     {TOKS("drap_leaf", "drap_fn", "main", "@libc", "@libc", "_start")},
     0},
    {"cxx_throw",
     "cxx_throw",
     {"20"},
     "x_leaf",
     0,
     {TOKS("x_leaf", "x_b", "x_a", "main", "@libc", "@libc", "_start")},
     0},
    /*
     * Go: the main goroutine, its frames by their pcsp rows down to the
     * goroutine's bottom, whose return address (runtime.goexit + 1, pushed
     * by newproc) follows no call by Go's design
     */
    {"go",
     "gofib",
     {"20", "0"},
     "main.work",
     0,
     {TOKS("main.work", "main.main", "runtime.main", "!runtime.goexit.abi0")},
     0},
};

int main(int argc, char **argv)
{
	size_t i;

	/* test_walker_replay chain signal: those cases only */
	harness_init(argc, argv);
	RUN_TEST(test_synthetic);
	RUN_TEST(test_stack_window);
	RUN_TEST(test_cfa_register);
	RUN_TEST(test_fp_fallback);
	RUN_TEST(test_jit_rows);
	RUN_TEST(test_sender_sp);
	RUN_TEST(test_paired_rows);
	mkdir("build", 0755);
	mkdir(SNAP_DIR, 0755);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		RUN_TEST_AS(cases[i].name, run_case(&cases[i]));
	return HARNESS_DONE();
}
