/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CFI table compiler: one ELF file's .eh_frame / .debug_frame turned into
 * the compact tables of bpf/cfiprof_abi.h (rule dictionary, 4-byte rows in
 * 64 KiB pages, page index).  Plain C, no BPF dependency.
 */
#ifndef CFI_TABLE_H
#define CFI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "elf/build_id.h"

/* Error codes (negative return values). */
enum cfi_err {
	CFI_OK = 0,
	CFI_ERR_IO = -1,	/* cannot open / read the file */
	CFI_ERR_ELF = -2,	/* not a usable ELF (libelf error, wrong class/machine) */
	CFI_ERR_NO_CFI = -3,	/* neither .eh_frame nor .debug_frame */
	CFI_ERR_MALFORMED = -4, /* every FDE was rejected */
	CFI_ERR_NOMEM = -5,
	CFI_ERR_TOO_BIG = -6,	/* more distinct rules or rows than the encoding holds */
	CFI_ERR_BUDGET = -7,	/* over the build budget (struct cfi_budget): skipped */
};

/*
 * The instruction set a table's rules are for: which DWARF registers are the
 * stack and frame pointers, where a return address lives.  A table is built
 * for its object's machine, whatever the host's (the oracle reads arm64
 * objects on x86-64); a walker uses only tables of its own (CFI_ARCH_NATIVE).
 */
enum cfi_arch {
	CFI_ARCH_X86_64 = 0,
	CFI_ARCH_ARM64 = 1,
	CFI_ARCH_MAX,
};

#if defined(__aarch64__)
#define CFI_ARCH_NATIVE CFI_ARCH_ARM64
#else
#define CFI_ARCH_NATIVE CFI_ARCH_X86_64
#endif

/* Where a rule came from, for overlap resolution and statistics. */
enum cfi_source {
	CFI_SRC_EH_FRAME = 0,
	CFI_SRC_DEBUG_FRAME = 1,     /* in the file itself */
	CFI_SRC_DEBUG_FRAME_SEP = 2, /* in a separate debug file */
	CFI_SRC_GOPCLNTAB = 3,	     /* Go's pc -> SP-delta tables, where no CFI covers */
	CFI_SRC_STUBS = 4, /* the PLT (arm64) and crt code no FDE covers (linker_stubs.c) */
	CFI_SRC_MAX,
};

struct cfi_page {
	uint64_t page; /* address >> CFI_PAGE_SHIFT */
	uint32_t first_row;
	uint32_t nr_rows;
};

struct cfi_stats {
	uint64_t cies;
	uint64_t fdes;			/* FDEs used */
	uint64_t fdes_bad;		/* FDEs rejected as malformed */
	uint64_t fdes_overlap;		/* FDEs clipped or dropped by overlap */
	uint64_t raw_rows;		/* rows as the CFA programs produce them */
	uint64_t unsupported[CFI_UNSUP_MAX]; /* raw rows by reason */
	uint64_t build_ns;
	uint64_t bytes_rows, bytes_index, bytes_rules, bytes_total;
	int sources;			/* bitmask of 1 << enum cfi_source */
};

struct cfi_table {
	struct cfi_rule *rules; /* rules[0] is CFI_CFA_NONE */
	uint32_t nr_rules;
	struct cfi_row *rows;	/* sorted by (page, off) */
	uint32_t nr_rows;
	struct cfi_page *pages; /* sorted by page */
	uint32_t nr_pages;
	uint64_t min_addr, max_addr; /* covered range [min, max) */
	char build_id[ELF_BUILD_ID_HEX_LEN]; /* hex, "" when the file has none */
	uint8_t arch;			     /* enum cfi_arch */
	struct cfi_stats stats;
};

/* Diagnostics: every problem is counted; the first few are kept as text. */
#define CFI_DIAG_KEEP 16
struct cfi_diag {
	unsigned int count;
	char msg[CFI_DIAG_KEEP][192];
};

/*
 * What one build may cost; a zero field takes its default.  An object over any
 * of them is refused with CFI_ERR_BUDGET (and a diagnostic naming the limit),
 * so no input costs unbounded time or memory: memory is linear in FDEs and raw
 * rows (at the defaults, crafted inputs peak under 400 MB).  The defaults leave
 * room: the largest objects on a development machine (libLLVM, CUDA, rustc)
 * have up to 171k FDEs and 1.3M raw rows and build in under a second.
 */
struct cfi_budget {
	uint64_t max_ns;       /* wall time of the build */
	uint64_t max_fdes;     /* FDEs parsed (each FDE once, whatever points at it) */
	uint64_t max_raw_rows; /* rows the CFA programs produce */
	/* non-zero (read atomically) while it runs: give up now, the caller is stopping */
	const int *cancel;
	/*
	 * bytes of sections read (declared sizes, and inflated ones for
	 * SHF_COMPRESSED), charged before they are read or inflated
	 */
	uint64_t max_section_bytes;
	/*
	 * Bytes of rows and page index the table may hold, as the table store
	 * counts them (0: no bound): a table it could never load is given up as
	 * it grows past them, not once built.
	 */
	uint64_t max_bytes;
};
#define CFI_BUDGET_NS_DEFAULT	    (10ull * 1000 * 1000 * 1000)
#define CFI_BUDGET_FDES_DEFAULT	    (1ull << 20)
#define CFI_BUDGET_RAW_ROWS_DEFAULT (8ull << 20)
/* 12 times libLLVM's .eh_frame with its .eh_frame_hdr (5.9 MiB) */
#define CFI_BUDGET_BYTES_DEFAULT (64ull << 20)

struct cfi_build_opts {
	int no_debug_frame;	  /* ignore .debug_frame */
	int no_separate_debug;	  /* do not look for a separate debug file */
	int no_gopclntab;	  /* ignore Go's .gopclntab (DWARF CFI only) */
	const char *debug_root;	  /* default "/usr/lib/debug" */
	const char *display_name; /* name used in messages (default: path) */
	uint32_t root_pid; /* the object is a process's: its debug files are in /proc/PID/root */
	/* refuse an object of another machine (CFI_ERR_ELF): a process's, for this walker */
	int native_only;
	struct cfi_budget budget;
};

/* Build from a file path, an open fd (e.g. /proc/PID/map_files/...) or memory. */
int cfi_table_build_file(const char *path, const struct cfi_build_opts *opts,
			 struct cfi_table **out, struct cfi_diag *diag);
int cfi_table_build_fd(int fd, const struct cfi_build_opts *opts,
		       struct cfi_table **out, struct cfi_diag *diag);
int cfi_table_build_mem(const void *buf, size_t len, const struct cfi_build_opts *opts,
			struct cfi_table **out, struct cfi_diag *diag);
void cfi_table_free(struct cfi_table *t);

/* [start, end) of one FDE: the function whose CFI it is. */
struct cfi_range {
	uint64_t start, end;
};

/*
 * The ranges of the FDEs of the object in @fd (.eh_frame and its own
 * .debug_frame, not a separate debug file's), sorted by start, one per start
 * (the longest). Bounded like a build (@budget may be NULL: the defaults).
 * Returns 0 with *@out malloc'd (NULL when there are none) or a negative cfi_err.
 */
int cfi_fde_ranges_fd(int fd, const struct cfi_budget *budget, struct cfi_range **out,
		      uint64_t *nr, struct cfi_diag *diag);

/*
 * Whether Go function @name ends a walk: the bottom of a goroutine's or a
 * thread's stack, or a switch to the system stack (tables/go_input.c).
 */
bool go_func_is_bottom(const char *name);
/* Whether Go function @name is the runtime's signal return trampoline: a signal frame. */
bool go_func_is_sigreturn(const char *name);

/* The rule in force at addr (ELF virtual address), or rules[0] if none. */
const struct cfi_rule *cfi_table_lookup(const struct cfi_table *t, uint64_t addr);

/* Text forms shared by --dump, --json and the oracle test. */
const char *cfi_strerror(int err);
const char *cfi_unsupported_name(int reason);
/* "x86-64", "arm64" */
const char *cfi_arch_name(int arch);
/*
 * readelf-compatible columns: CFA ("rsp+16", "sp+16", "exp"), the frame
 * pointer ("u", "c-16"), ra ("c-8", "u"); registers named as arch names them.
 */
void cfi_rule_format_cfa(const struct cfi_rule *r, int arch, char *buf, size_t len);
void cfi_rule_format_reg(int kind, int off, char *buf, size_t len);
/* full description, e.g. "cfa=plt(rsp+8,>=11) rbp=same ra=c-8" ("fp=" on arm64) */
void cfi_rule_describe(const struct cfi_rule *r, int arch, char *buf, size_t len);

#endif /* CFI_TABLE_H */
