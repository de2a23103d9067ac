/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Everything that crosses the kernel/user boundary: rule encoding, table
 * layout, map keys and values, the ring-buffer record, stop reasons and
 * counter ids.  Included by the BPF program, the user-space loader, the
 * table compiler and the replay tests, so they cannot disagree.
 */
#ifndef CFIPROF_ABI_H
#define CFIPROF_ABI_H

#if defined(__bpf__) || defined(__BPF__)
/* vmlinux.h supplies __u8 .. __u64 / __s16 / __s32 */
#else
#include <linux/types.h>
#endif

/* Rows are stored per 64 KiB page: (16-bit offset in page, 16-bit rule id). */
#define CFI_PAGE_SHIFT 16
#define CFI_PAGE_SIZE (1u << CFI_PAGE_SHIFT)

/* Rule id 0 is reserved for "no CFI covers this address" in every table. */
#define CFI_RULE_NONE 0

/* How to compute the canonical frame address. */
enum cfi_cfa_kind {
	CFI_CFA_NONE = 0,	 /* gap between FDEs: no information */
	CFI_CFA_RSP = 1,	 /* CFA = rsp + cfa_off */
	CFI_CFA_RBP = 2,	 /* CFA = rbp + cfa_off */
	CFI_CFA_PLT = 3,	 /* CFA = rsp + cfa_off + (((rip & 15) >= aux) << 3) */
	CFI_CFA_DEREF_RSP = 4,	 /* CFA = *(rsp + cfa_off) + aux (realigned stack) */
	CFI_CFA_DEREF_RBP = 5,	 /* CFA = *(rbp + cfa_off) + aux (DRAP) */
	CFI_CFA_SIGNAL = 6,	 /* signal trampoline: regs from the rt_sigframe */
	CFI_CFA_UNSUPPORTED = 7, /* see cfi_rule.reason */
	/*
	 * CFA = reg[aux] + cfa_off, aux a DWARF register number below CFI_DW_NR_REGS:
	 * rbx is carried through the walk (lazy-binding trampoline), any other only
	 * at the leaf, from the sample's registers (DRAP prologues: r10).
	 */
	CFI_CFA_REG = 8,
	CFI_CFA_KIND_MAX,
};

/* DWARF x86-64 register numbers 0..15: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 */
#define CFI_DW_NR_REGS 16
#define CFI_DW_RBX 3

/* How to recover rbp, rbx or the return address of the caller. */
enum cfi_reg_kind {
	CFI_REG_SAME = 0,	 /* unchanged (callee-saved, never spilled) */
	CFI_REG_UNDEFINED = 1,	 /* RA undefined = outermost frame */
	CFI_REG_AT_CFA = 2,	 /* value = *(CFA + off) */
	CFI_REG_VAL_CFA = 3,	 /* value = CFA + off */
	CFI_REG_UNSUPPORTED = 4, /* in another register or an expression */
	/*
	 * value = *(rbp + off), rbp the frame's own: a frame whose caller's sp
	 * it keeps (CFI_CFA_DEREF_RBP) with its return address and the caller's
	 * rbp at its frame pointer, not at that sp (HotSpot's interpreter)
	 */
	CFI_REG_AT_FP = 5,
	CFI_REG_KIND_MAX,
};

/* Why a row (or part of it) cannot be expressed in the rule model. */
enum cfi_unsupported_reason {
	CFI_UNSUP_NONE = 0,
	CFI_UNSUP_CFA_REG = 1,	/* CFA based on a register other than rsp/rbp */
	CFI_UNSUP_CFA_EXPR = 2, /* CFA expression of an unknown shape */
	CFI_UNSUP_RA = 3,	/* return address in a register or expression */
	CFI_UNSUP_RBP = 4,	/* rbp in a register or expression (row still usable) */
	CFI_UNSUP_CFA_UNDEF = 5, /* no CFA rule was ever defined */
	CFI_UNSUP_RANGE = 6,	 /* offset does not fit the encoding */
	/* walker only: the CFA is in a register no longer known (not the leaf, rbx/rbp lost) */
	CFI_UNSUP_REG_LOST = 7,
	CFI_UNSUP_MAX,
};

/*
 * One distinct rule; stored once per table in a dictionary (24 bytes).
 *
 * hole_off/hole_len fold the "no info" gap after a function into its last
 * row, so padding between FDEs never inherits a rule yet costs no row.  With
 * the row at offset R and the next row of the page at N (CFI_PAGE_SIZE if
 * none), no CFI exists in
 *   [R + hole_off, R + hole_off + hole_len)   when hole_off != 0,
 *   [N - hole_len, N)                         when hole_off == 0.
 *
 * next_at/next_rule fold the next row into this one (tables/compact.c): from
 * R + next_at on, rule next_rule is in force, as if it had a row there (its
 * hole counted from that offset).  A prologue's pushes are rows a few bytes
 * apart whose rule pairs recur all over an object: one row and one rule
 * per recurring pair instead of two rows.  A paired rule has no hole, and
 * next_rule has no pair and an id below the paired rule's (a dictionary
 * keeps it first), so one step is all a lookup takes.
 */
struct cfi_rule {
	__u8 cfa_kind;	/* enum cfi_cfa_kind */
	__u8 rbp_kind;	/* enum cfi_reg_kind */
	__u8 ra_kind;	/* enum cfi_reg_kind: AT_CFA, UNDEFINED or UNSUPPORTED */
	__u8 reason;	/* enum cfi_unsupported_reason */
	__s32 cfa_off;
	__s16 aux;	/* PLT: (rip & 15) threshold; DEREF: addend after the load */
	__u8 hole_off;
	__u8 hole_len;
	__s16 rbp_off;
	__s16 ra_off;
	/* rbx, callee-saved: only a CFI_CFA_REG rule on rbx ever reads it */
	__u8 rbx_kind; /* enum cfi_reg_kind: SAME, AT_CFA, VAL_CFA or UNSUPPORTED */
	__u8 pad;
	__s16 rbx_off;
	__u8 next_at; /* 0: no pair */
	__u8 pad2;    /* zero */
	__u16 next_rule;
};

/* BPF array elements are 8-byte aligned: user space writes the rules map through mmap */
_Static_assert(sizeof(struct cfi_rule) % 8 == 0, "cfi_rule must fill whole array elements");

/* One compact row: the rule in force from this offset of its page onwards. */
struct cfi_row {
	__u16 off;
	__u16 rule;
};

/* Element of the BPF rows array (array elements are 8-byte aligned). */
struct cfi_row_pair {
	struct cfi_row row[2];
};

/* Page index, keyed by (object, pc >> CFI_PAGE_SHIFT). */
struct cfi_page_key {
	__u32 obj_id;
	__u32 page;
};

struct cfi_page_val {
	__u32 first_row; /* index into the global rows array */
	__u32 nr_rows;	 /* >= 1; the first row is at offset 0 */
};

/* -------- process / mapping state -------- */

/* LPM trie key: prefixlen counts bits of pid (32) + address (64, big endian). */
struct cfi_mapping_key {
	__u32 prefixlen;
	__u32 pid;
	__u64 addr_be;
};

enum cfi_mapping_flags {
	CFI_MAPPING_CFI = 1 << 0,     /* object has tables: walk with CFI */
	CFI_MAPPING_FP = 1 << 1,      /* JIT / anonymous exec / no CFI: frame pointers */
	CFI_MAPPING_PENDING = 1 << 2, /* object known, tables still being built */
	CFI_MAPPING_VDSO = 1 << 3,
	/*
	 * JIT code whose runtime gives rows for all it knows of it (with CFI):
	 * a pc with no row is code newer than the rows, and the walk waits for
	 * the next ones (tables-pending, deferred) rather than guess
	 */
	CFI_MAPPING_JIT = 1 << 4,
	/*
	 * a file's code (not the vDSO, not anonymous or memfd memory): never a
	 * JIT's, even with no object (its tables refused or unbuilt)
	 */
	CFI_MAPPING_FILE = 1 << 5,
};

struct cfi_mapping_val {
	__u32 obj_id;
	__u32 flags; /* enum cfi_mapping_flags */
	__u64 bias;  /* pc - bias = address in the object's own ELF vaddr space */
};

enum cfi_proc_flags {
	/* user space is rewriting this pid's mapping keys: a missing one may be on its way */
	CFI_PROC_UPDATING = 1 << 0,
	/*
	 * keys of its mappings were refused by the per-process quota: a walk
	 * stopping at no mapping does not ask for its maps again (they would be
	 * refused again); a change of its mappings still does
	 */
	CFI_PROC_KEYS_QUOTA = 1 << 1,
};

struct cfi_proc_val {
	__u32 generation; /* bumped whenever this pid's mappings change */
	__u32 flags;	  /* enum cfi_proc_flags */
	__u64 loaded_ns; /* bpf clock when user space read the mappings it loaded */
};

/* Per-CPU direct-mapped rule cache (Valgrind-style); a power of two: the index is a shift. */
#define RULE_CACHE_SHIFT 10
#define RULE_CACHE_SLOTS (1 << RULE_CACHE_SHIFT)

/* The rule dictionary's and the sample ring's sizes, unless record sets the ring's */
#define RULES_MAX	  65536
#define EVENTS_RING_BYTES (8 * 1024 * 1024)
/* The samples' ring (bpf/cfiprof.bpf.c's samples): at least, and per CPU sampled */
#define SAMPLES_RING_BYTES	   (512 * 1024)
#define SAMPLES_RING_BYTES_PER_CPU (256 * 1024)

struct cfi_rule_cache_entry {
	__u64 pc;
	__u32 pid;
	__u32 generation;
	__u32 mapping_flags;
	__u32 valid;
	struct cfi_rule rule;
};

/*
 * Bytes of user stack one read brings in.  One bpf_probe_read_user costs
 * about as much as the rest of a cached frame; a window serves every frame
 * whose saved registers lie in it (a shallow stack, _start's frames included,
 * in one read; small frames 60 a read), and the copy of 2048 bytes costs
 * little more than the copy of 16.
 */
#define WALKER_WINDOW 2048
/* a window that cannot be read whole is read again up to the end of this page */
#define WALKER_WINDOW_PAGE 4096
/* a window starts this far below the first address asked for: a frame's lower slots */
#define WALKER_WINDOW_BELOW 32

/*
 * The last window read (per CPU in the BPF build).  walks counts the walks
 * that started here; a walk uses the window only while walks still holds its
 * own tag, so a walk interrupted by another one (an NMI) never reads the
 * other's bytes: it reads user memory directly for the rest of its frames.
 */
struct walker_window {
	__u64 base;  /* user address of bytes[0] */
	__u32 tag;   /* the walk that filled it; 0: empty */
	__u32 walks; /* walks started with this window */
	__u32 len;   /* bytes valid: WALKER_WINDOW, or less at the stack's top */
	__u32 pad;
	/* the tail lets the verifier see a masked offset plus 16 stay inside */
	__u8 bytes[WALKER_WINDOW + 16];
};

/* -------- walker results -------- */

/*
 * The one list of stop reasons: X(ENUM, VALUE, NAME, WALKABLE).  NAME is what
 * every output, summary, metric label and recording says; WALKABLE 0 marks
 * samples with no user stack any profiler could walk (kernel threads, a
 * process past exit_mm() or inside execve), which the summary leaves out of
 * its completeness figure.  Values are part of the recording format: a new
 * reason takes the next value, none is reused; a reader that meets a value
 * it does not know calls it "unknown(N)" (stop_reason_name).
 */
#define CFI_STOP_REASONS(X)                                                                        \
	X(STOP_COMPLETE, 0, "complete", 1)	      /* reached the outermost frame */            \
	X(STOP_TRUNCATED, 1, "truncated", 1)	      /* depth limit reached; stack kept */        \
	X(STOP_NO_MAPPING, 2, "no-mapping", 1)	      /* pc in no known mapping */                 \
	X(STOP_NO_RULE, 3, "no-rule", 1)	      /* pc in an object but not covered by CFI */ \
	X(STOP_UNSUPPORTED, 4, "unsupported-rule", 1) /* rule kind the walker cannot evaluate */   \
	X(STOP_UNREADABLE, 5, "unreadable-memory", 1) /* user memory read failed */                \
	X(STOP_FP_BROKEN, 6, "fp-chain-broken", 1)    /* frame-pointer chain left the stack */     \
	X(STOP_TABLES_PENDING, 7, "tables-pending", 1) /* tables not loaded yet */                 \
	X(STOP_NO_USER, 8, "kernel-thread", 0)	       /* kernel thread: no user stack */          \
	X(STOP_STACK_COPY, 9, "stack-copy-short", 1)   /* deferred walk left the copied bytes */   \
	X(STOP_EXITING, 10, "exiting", 0)     /* exit_mm() has run: only the leaf is known */      \
	X(STOP_IN_EXECVE, 11, "in-execve", 0) /* the image is being replaced */                    \
	X(STOP_RUNTIME_PENDING, 12, "runtime-pending", 1) /* needed its runtime, found later */

enum cfi_stop_reason {
#define CFI_STOP_ENUM(e, v, name, walkable) e = v,
	CFI_STOP_REASONS(CFI_STOP_ENUM)
#undef CFI_STOP_ENUM
	STOP_REASON_MAX,
};

/* -------- ring-buffer records -------- */

enum cfi_record_type {
	RECORD_SAMPLE = 1,
	RECORD_REQUEST = 2, /* unknown pid or mapping: please load it */
	RECORD_EXEC = 3,
	RECORD_EXIT = 4,
	RECORD_DEFERRED = 5, /* struct cfi_deferred_record: user space finishes the walk */
	RECORD_MAPS_ENTRY = 6, /* an exiting process's code mapping (struct cfi_maps_entry_record) */
	RECORD_MAPS_END = 7,   /* ... the last one came (struct cfi_maps_end_record) */
};

enum cfi_sample_flags {
	SAMPLE_IN_KERNEL = 1 << 0, /* sample interrupted kernel mode */
	SAMPLE_SIGNAL = 1 << 1,	   /* the walk crossed a signal frame */
	SAMPLE_IN_EXECVE = 1 << 2, /* inside execve: the registers may be the old image's */
	SAMPLE_DEFERRED = 1 << 3,  /* finished in user space from a stack copy */
	SAMPLE_EXITING = 1 << 4,   /* the task had released its address space (in do_exit) */
	/*
	 * Bits 5-6: an off-CPU time sum with no stack (enum cfi_unwalked_cause),
	 * made by user space from offcpu_unwalked; 0 in records the kernel walked.
	 */
	SAMPLE_UNWALKED_SHIFT = 5,
	SAMPLE_UNWALKED_MASK = 3 << 5,
	/*
	 * Taken by a program on a kernel function, tracepoint or sched_switch: its
	 * kernel stack starts in that program, and the frames up to the probed code
	 * (the program, bpf_trace_run*, a trampoline: more or fewer by kernel
	 * version) are dropped by name in user space (frame_is_bpf_glue).
	 */
	SAMPLE_PROBE_STACK = 1 << 7,
};

#define MAX_KERNEL_FRAMES 127
/* tgids are below the kernel's PID_MAX_LIMIT (64-bit): the pid filter's bitmap, target_bits */
#define TARGET_PID_LIMIT      (1U << 22)
#define MAX_USER_FRAMES_LIMIT 1024 /* upper bound for --max-frames */
/*
 * --max-frames by default (record, top, the agent; their --help say so):
 * template-heavy C++ in clang-14 reaches ~450 frames, and a frame past the
 * walk's end costs nothing (tests/bench/NOTES.md, "Default depth").
 */
#define DEFAULT_USER_FRAMES 512
#define COMM_LEN 16

struct cfi_sample_record {
	__u32 type; /* RECORD_SAMPLE */
	__u32 pid;  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u64 time_ns;
	__u64 cgroup_id;
	char comm[COMM_LEN];
	__u8 reason;	  /* enum cfi_stop_reason */
	__u8 flags;	  /* enum cfi_sample_flags */
	__u16 nr_fp;	  /* frames recovered with frame pointers */
	__u16 nr_kernel;
	__u16 nr_user;
	__u32 generation; /* the pid's mapping generation the walk used (0: unknown pid) */
	__u16 nr_rt;	  /* runtime units after the PCs: RT_UNIT_BYTES each, runtime's format */
	__u8 rt_status;	  /* the runtime's own status of this sample (enum in its ABI) */
	__u8 runtime;	  /* enum cfi_runtime: whose units follow the PCs */
	__u32 event;	  /* which of the session's events (0: the sampling event, see EVENT_*) */
	__u32 thinned;	  /* 1: weight estimates hits past the event budget (bpf/events.bpf.h) */
	/* what the sample weighs: the perf event's period, a probe hit's 1, off-CPU nanoseconds */
	__u64 weight;
	/*
	 * nr_kernel kernel PCs (leaf first), then nr_user user PCs, then
	 * nr_rt units of the runtime's (an interpreter's: struct
	 * cfi_interp_frame, leaf first; others their own)
	 */
	__u64 pcs[];
};

/*
 * -------- language runtimes: what they share; each one's own part is its
 * bpf/NAME_abi.h, and bpf/runtime_table.h lists them --------
 */

/* a runtime's data after a sample's PCs comes in units of this many bytes */
#define RT_UNIT_BYTES 16

/*
 * One frame of an interpreted language as the kernel saw it: the units of
 * a runtime whose FRAMES is 1, leaf first.  What each field holds is the
 * runtime's (its BPF file fills them, its user-space folder names them).
 */
struct cfi_interp_frame {
	__u64 code;    /* the code it runs (Python: its code object) */
	__u32 instr;   /* where in it (Python: instruction pointer - code, 0xffffffff: unknown) */
	__u8 is_entry; /* raw: whether an evaluation-loop call began with it (per version) */
	__u8 owner;    /* raw: who owns the frame (Python: generator, C stack...) */
	/*
	 * A digest of what the code belongs to (Python: its module's globals),
	 * 0 when unknown.  A freed code object's address is soon another's:
	 * one of another module is told apart from the one that was there before.
	 */
	__u16 scope;
};

/* bytes of a runtime's own part of its runtime_procs entries */
#define RT_PROC_BYTES 120

/*
 * A process that runs one of the runtimes, keyed by tgid
 * (bpf/runtimes.bpf.h's runtime_procs): which one, and that runtime's own
 * per-process struct in data (its ABI header's struct, which has a
 * maps_read_ns: when user space read the mappings it was found in (bpf
 * clock); an exec of the process after it (pid_times PT_EXEC) makes it the
 * old image's, whatever a load finishing late wrote).  One
 * lookup tells any sample whether it needs a runtime's part.
 */
struct cfi_runtime_proc {
	__u8 runtime; /* enum cfi_runtime */
	__u8 keep_bp; /* its runtime reads frames by their rbp: the walk keeps each one's */
	__u8 pad[6];
	__u64 data[RT_PROC_BYTES / 8];
};

/*
 * Where a shared object's thread-local variable is for a thread
 * (bpf/runtimes.bpf.h's tls_var_addr): the GOT slot its global-dynamic
 * accesses read, which the dynamic loader fills.
 */
struct cfi_tls_var {
	__u64 slot;   /* DTPMOD64: the module id; TLSDESC: the descriptor pair */
	__u64 offset; /* DTPMOD64: the variable's offset in its module's block */
	__u8 desc;    /* slot is a TLSDESC pair (arm64's default dialect, x86-64's gnu2) */
	__u8 pad[7];
};

/* each runtime's own part and the one list of them */
#include "runtime_table.h"

enum cfi_runtime {
	RT_NONE = 0,
#define CFI_RUNTIME_ENUM(id, value, name, tag, frames, type) id = value,
	CFI_RUNTIMES(CFI_RUNTIME_ENUM)
#undef CFI_RUNTIME_ENUM
	    RT_MAX,
};

/* the most any runtime appends to a record (each runtime's BPF file checks its own fits) */
#define RT_RECORD_BYTES 2048
#define RT_MAX_UNITS	(RT_RECORD_BYTES / RT_UNIT_BYTES)

struct cfi_event_record {
	__u32 type; /* RECORD_REQUEST, RECORD_EXEC, RECORD_EXIT */
	__u32 pid;
	__u64 addr; /* REQUEST: the pc that had no mapping (0: whole pid) */
	__u64 time_ns;
	char comm[COMM_LEN];
};

/*
 * A sample whose walk stopped for lack of tables (tables-pending): the walker
 * state where it stopped and a copy of the user stack, so that user space can
 * finish the walk with the same walker once the tables are loaded.  Layout:
 *   struct cfi_deferred_record
 *   __u8 stack[stack_max]             stack_len valid bytes from stack_base
 *   struct cfi_sample_record + pcs    the sample as far as the kernel walked it
 * stack_max is the program's setting, so the sample sits at a fixed offset.
 */
#define DEFER_CHUNK 4096		 /* stack bytes are copied a page at a time */
#define DEFER_STACK_MAX (256 * 1024) /* upper bound for --defer-stack */
/* Chunks from the copy's start that may be holes; past them the first unreadable one ends it. */
#define DEFER_HOLE_CHUNKS 16

struct cfi_deferred_record {
	__u32 type; /* RECORD_DEFERRED */
	__u32 stack_max;
	__u64 stack_base; /* user address of stack[0], page aligned, <= sp */
	__u32 stack_len;  /* bytes copied (holes too): a multiple of DEFER_CHUNK, 0 if none */
	__u16 nr_signal;  /* walker state where the kernel stopped ... */
	__u8 bp_valid;
	__u8 ip_is_ra;
	__u64 ip; /* already emitted as the last user pc (unless nr_user == 0) */
	__u64 sp;
	__u64 bp;
	/* the process's mappings last changed then: the walk can finish once read after it */
	__u64 changed_ns;
	__u64 rbx; /* ... rbx as the walker carries it (struct walker_state) */
	__u64 rbx_at;
	__u8 rbx_valid;
	__u8 at_leaf;
	__u8 ip_from_fp;
	__u8 lr_valid; /* arm64: lr holds the frame's x30 */
	__u8 pad[4];
	__u64 lr;
	/*
	 * Bit i: the chunk at stack_base + i * DEFER_CHUNK could not be read (its
	 * bytes are zero): a page the stack is growing into, its fault under way
	 * (only in the first DEFER_HOLE_CHUNKS).
	 */
	__u64 stack_holes;
	__u64 leaf[CFI_DW_NR_REGS]; /* the sample's registers, when at_leaf */
};

/*
 * The executable file mappings of a process exiting with deferred samples its
 * mappings were never read for (a build's as, sh, mkdir: gone before the
 * consumer saw their first deferred sample).  Taken at sched_process_exit,
 * where the address space is still whole: one RECORD_MAPS_ENTRY per mapping,
 * in address order, then one RECORD_MAPS_END.  User space loads the process
 * from them with the files it already holds for the same inodes.  (One record
 * per mapping: a count indexing one big record made the verifier follow each
 * of its values through the VMA loop.)
 */
#define CFI_MAPS_MAX 64 /* entries user space takes of one process */

enum cfi_maps_entry_flags {
	CFI_MAPS_ENTRY_VDSO = 1 << 0, /* the process's vDSO: no file (ino, dev, pgoff 0) */
};

struct cfi_maps_entry {
	__u64 start, end;
	__u64 pgoff; /* bytes */
	__u64 ino;
	__u32 dev;   /* the kernel's encoding: major << 20 | minor */
	__u32 flags; /* enum cfi_maps_entry_flags */
};

struct cfi_maps_entry_record {
	__u32 type; /* RECORD_MAPS_ENTRY */
	__u32 pid;
	struct cfi_maps_entry e;
};

struct cfi_maps_end_record {
	__u32 type; /* RECORD_MAPS_END */
	__u32 pid;
	__u64 time_ns;
	__u64 start_boottime_ns; /* /proc/PID/stat's start time, in ns: a reused pid is another */
	__u32 lost; /* some entries found no ring-buffer room: the list is not whole */
	__u32 pad;
};

/*
 * Table load requests, all processes together: each CPU sends at most
 * request_budget (a setting) per slot of this length.
 */
#define REQUEST_SLOT_NS 100000000ull

struct cfi_request_slot {
	__u64 slot; /* time / REQUEST_SLOT_NS */
	__u32 used;
	__u32 pad;
};

/*
 * Stacks on other events (bpf/events.bpf.h): every hit of a probe, tracepoint
 * or off-CPU block passes a budget first, per process and per CPU, in slots of
 * this length, so a process calling a probed function in a tight loop spends
 * its own share and no one else's.
 */
#define EVENT_SLOT_NS 100000000ull

struct cfi_event_slot {
	__u64 slot;	 /* time / EVENT_SLOT_NS */
	__u32 used;	 /* hits sampled in this slot */
	__u32 hits;	 /* hits in this slot, sampled or not */
	__u32 prev_hits; /* hits in the slot before (0 if it had none) */
	__u32 pad;
};

/*
 * Off-CPU blocks whose stack is not in the profile still have their time
 * there: each blocked thread's entry (offcpu_blocked, by tid) says when it
 * blocked and why its stack was not walked or sent, and at its switch-in
 * the block's nanoseconds are added to its process's sum for that cause
 * (offcpu_unwalked), which user space turns into a stack of one frame,
 * "[not walked: CAUSE]" under the process.  A process that finds that map
 * full adds to the entry of tgid 0, which user space creates for each cause.
 */
enum cfi_unwalked_cause {
	UNWALKED_NONE = 0,   /* walked: its sample waits in offcpu_pending */
	UNWALKED_BUDGET = 1, /* over the event budget: its process's share or all processes' */
	UNWALKED_FULL = 2,   /* too many threads blocked at once for a pending sample each */
	UNWALKED_LOST = 3,   /* walked, but no ring-buffer room at the switch-in */
	UNWALKED_MAX,
};

struct cfi_offcpu_block {
	__u64 start_ns;
	__u64 exec_ns; /* the thread's CPU time when it blocked (se.sum_exec_runtime) */
	__u64 cgroup_id;
	__u32 tgid;
	__u8 cause;  /* enum cfi_unwalked_cause */
	__u8 reason; /* the walk's stop reason and unsupported rule, counted when it is sent */
	__u8 unsup;
	__u8 pad;
	char comm[COMM_LEN];
};

struct cfi_unwalked_key {
	__u32 tgid;
	__u32 cause; /* enum cfi_unwalked_cause */
};

struct cfi_unwalked_val {
	__u64 ns;     /* blocked time, never reset: user space takes the growth */
	__u64 blocks;
	__u64 cgroup_id; /* of the thread that made the entry */
	char comm[COMM_LEN];
};

/*
 * Raw tracepoints take no cookie before Linux 6.10, fentry / fexit none
 * before 6.4: one program per slot, its event index a setting.
 */
/*
 * A kernel address named by the kernel itself: user space writes it into the
 * mmapable map ksym_io and runs the syscall program ksym_names, which writes
 * its "%pS" ("name+0xOFF/0xSIZE", " [module]" after a module's; "0x..." for
 * no symbol) as the kernel's own lookup gives it.  No /proc/kallsyms to read
 * and parse at every start.
 */
#define KSYM_NAME_BYTES 256

struct cfi_ksym_io {
	__u64 addr;
	char name[KSYM_NAME_BYTES];
};

#define EVENT_TP_SLOTS 4
#define EVENT_FUNC_SLOTS 4

/* -------- per-CPU counters -------- */

/*
 * The one list of the BPF side's counters: X(ENUM, METRIC, LABEL, HELP).  The
 * agent's /metrics renders each as METRIC{LABEL} (user/agent/metrics.c), those
 * of one METRIC next to each other under the first one's HELP; METRIC "" is a
 * counter user space renders in a family beside values of its own (the
 * deferred samples' outcomes).  A new counter is one line here and its
 * increment (walker_count) in bpf/; tests/unit/test_counters.c checks the list.
 */
#define CFI_COUNTERS(X)                                                                            \
	X(CNT_SAMPLES, "cfiprof_samples_total", "",                                                \
	  "Samples taken by the BPF program (perf events that passed the filter).")                \
	X(CNT_WRITTEN, "cfiprof_samples_written_total", "",                                        \
	  "Sample records written to the ring buffer.")                                            \
	X(CNT_LOST_RINGBUF, "cfiprof_samples_lost_total", "",                                      \
	  "Samples lost because the ring buffer was full.")                                        \
	X(CNT_EVENTS_LOST, "cfiprof_events_lost_total", "",                                        \
	  "Exec, exit and table requests lost because the ring buffer was full.")                  \
	X(CNT_CACHE_HIT, "cfiprof_rule_cache_hits_total", "", "Per-CPU rule cache hits.")          \
	X(CNT_CACHE_MISS, "cfiprof_rule_cache_misses_total", "", "Per-CPU rule cache misses.")     \
	X(CNT_FRAMES, "cfiprof_user_frames_total", "", "User frames unwound.")                     \
	X(CNT_FP_FRAMES, "cfiprof_fp_frames_total", "",                                            \
	  "User frames unwound with frame pointers.")                                              \
	X(CNT_REQUESTS, "cfiprof_table_requests_total", "",                                        \
	  "Table load requests the BPF side sent: unknown processes, new or changed mappings.")    \
	X(CNT_REQUESTS_LIMITED, "cfiprof_table_requests_limited_total", "",                        \
	  "Table load requests held back by the per-process rate limit.")                          \
	X(CNT_REQUESTS_THROTTLED, "cfiprof_table_requests_throttled_total", "",                    \
	  "Table load requests refused by the global budget (all processes together); the "        \
	  "process's next sample asks again.")                                                     \
	X(CNT_FILTERED, "cfiprof_samples_filtered_total", "",                                      \
	  "Perf events of processes outside the target (pid, cgroup): not sampled.")               \
	X(CNT_NO_SAMPLE_PROG, "cfiprof_samples_unsampled_total", "",                               \
	  "Perf events that found no sampling program in place (between its two loads): not "      \
	  "sampled.")                                                                              \
	X(CNT_RT_WALK_PENDING, "cfiprof_runtime_walk_pending_total", "",                           \
	  "Samples of a language runtime's process taken before the runtimes' walks were "         \
	  "verified and in place: its frames not read.")                                           \
	X(CNT_UNWALKED, "cfiprof_samples_unwalked_total", "",                                      \
	  "Samples taken before the sampling walk was verified and in place: sent with a copy "    \
	  "of their stack for user space to walk (deferred), within its budget.")                  \
	X(CNT_DEFERRED, "cfiprof_deferred_copies_total", "",                                       \
	  "Tables-pending samples sent with a copy of their user stack, to be finished later.")    \
	X(CNT_DEFER_BUDGET, "", "outcome=\"over_budget\"",                                         \
	  "... sent without one: over the bytes-per-second budget "                                \
	  "(cfiprof_deferred_samples_total)")                                                      \
	X(CNT_DEFER_LOST, "", "outcome=\"no_ring_room\"",                                          \
	  "... sent without one: no ring-buffer room (cfiprof_deferred_samples_total)")            \
	X(CNT_DEFER_BYTES, "cfiprof_deferred_stack_bytes_total", "",                               \
	  "User stack bytes copied for deferred samples.")                                         \
	X(CNT_DEFER_HOLES, "cfiprof_deferred_stack_holes_total", "",                               \
	  "Pages of deferred samples' stack copies that could not be read (pages the stack was "   \
	  "growing into).")                                                                        \
	X(CNT_EVENT_HITS, "cfiprof_event_hits_total", "outcome=\"sampled\"",                       \
	  "Probe, tracepoint, off-CPU and -e hits: sampled, or refused by the process's share or " \
	  "all processes' budget (counted; off-CPU time summed without a stack).")                 \
	X(CNT_EVENT_PROC_LIMITED, "cfiprof_event_hits_total", "outcome=\"process_share\"", "")     \
	X(CNT_EVENT_THROTTLED, "cfiprof_event_hits_total", "outcome=\"all_processes\"", "")        \
	X(CNT_OFFCPU_SHORT, "cfiprof_offcpu_blocks_unsampled_total", "cause=\"short\"",            \
	  "Off-CPU blocks not sampled: shorter than min-block, too many threads blocked (their "   \
	  "time still in the profile), or more than its maps hold (untracked: time not in it).")   \
	X(CNT_OFFCPU_FULL, "cfiprof_offcpu_blocks_unsampled_total", "cause=\"full\"", "")          \
	X(CNT_OFFCPU_UNTRACKED, "cfiprof_offcpu_blocks_unsampled_total", "cause=\"untracked\"",    \
	  "")                                                                                      \
	X(CNT_OFFCPU_END_UNSEEN, "cfiprof_offcpu_blocks_end_unseen_total", "",                     \
	  "Off-CPU blocks whose switch-in no program saw: their time is the wall time to the "     \
	  "thread's next block or exit less its CPU time meanwhile.")                              \
	X(CNT_EXIT_MAPS, "cfiprof_exit_mappings_total", "outcome=\"sent\"",                        \
	  "Exiting processes' code mappings sent from the kernel: all sent, some not (no "         \
	  "ring-buffer room), none (the address space was gone).")                                 \
	X(CNT_EXIT_MAPS_LOST, "cfiprof_exit_mappings_total", "outcome=\"incomplete\"", "")         \
	X(CNT_EXIT_MAPS_NO_MM, "cfiprof_exit_mappings_total", "outcome=\"no_address_space\"", "")

/*
 * Each runtime's counters: its samples by the status its BPF file gave
 * them (the runtime's own enum, below RT_STATUS_SLOTS), then what it
 * recorded (Python's frames, Go's labels).  Its user-space folder names them in the summary and
 * /metrics.
 */
#define RT_STATUS_SLOTS		  7
#define RT_COUNTERS		  (RT_STATUS_SLOTS + 1)
#define CNT_RT_STATUS(rt, status) (CNT_RT_BASE + (rt)*RT_COUNTERS + (status))
#define CNT_RT_UNITS(rt)	  (CNT_RT_BASE + (rt)*RT_COUNTERS + RT_STATUS_SLOTS)

enum cfi_counter_id {
#define CFI_COUNTER_ENUM(e, metric, label, help) e,
	CFI_COUNTERS(CFI_COUNTER_ENUM)
#undef CFI_COUNTER_ENUM
	/* each runtime's RT_COUNTERS, by enum cfi_runtime (CNT_RT_STATUS, CNT_RT_UNITS) */
	CNT_RT_BASE,
	/* + enum cfi_stop_reason */
	CNT_STOP_BASE = CNT_RT_BASE + RT_MAX * RT_COUNTERS,
	/* + enum cfi_unsupported_reason: why STOP_UNSUPPORTED walks stopped */
	CNT_UNSUP_BASE = CNT_STOP_BASE + STOP_REASON_MAX,
	CNT_MAX = CNT_UNSUP_BASE + CFI_UNSUP_MAX,
};

#endif /* CFIPROF_ABI_H */
