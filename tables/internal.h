/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by the table compiler's files; not part of the public API. */
#ifndef CFI_TABLES_INTERNAL_H
#define CFI_TABLES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/cfi_table.h"

/* x86-64 DWARF register numbers the rule model knows about. */
#define DW_REG_RBX 3
#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RIP 16
/* AArch64's (ARM IHI 0057, "DWARF for the Arm 64-bit Architecture") */
#define DW_REG_A64_FP 29
#define DW_REG_A64_LR 30
#define DW_REG_A64_SP 31
#define DW_REG_NONE   0xffff

/*
 * The registers of one architecture the rule model gives a column: the CFA's
 * stack and frame pointers, the register carried through a walk (x86-64's
 * rbx, for the lazy-binding trampoline; none on arm64) and the pc an
 * expression may read (x86-64's PLT rule).  ra_in_lr: an RA column no
 * instruction mentions is the link register's value, not the outermost frame.
 */
struct cfi_arch_regs {
	uint8_t arch; /* enum cfi_arch */
	uint16_t sp, fp, carried, pc;
	bool ra_in_lr;
	/*
	 * A register saved at fp + N (DW_CFA_expression DW_OP_bregFP N) is
	 * CFI_REG_AT_FP, not unsupported: rows a runtime writes for its JIT
	 * code (hotspot_rows.c), never an ELF's
	 */
	bool fp_exprs;
};

/* NULL for a machine the compiler does not read (e_machine of the ELF header). */
const struct cfi_arch_regs *cfi_arch_regs_of_machine(unsigned int e_machine);
const struct cfi_arch_regs *cfi_arch_regs(int arch);

/*
 * Addresses from here on cannot be user-space code (and would overflow the
 * page key): arm64's user space is 48 bits (a JVM's code cache is mapped
 * near its top, and its rows are absolute addresses), x86-64's 47.
 */
#define CFI_MAX_ADDR (1ull << 48)
/* One FDE covering more than this is treated as corrupt. */
#define CFI_MAX_FDE_RANGE (1ull << 30)

/* Where messages go: tables/diag.h. */
struct diag_ctx;

/* ---- one CFI section as the parser sees it ---- */
struct cfi_section {
	const uint8_t *data;
	uint64_t size;
	uint64_t vaddr;	     /* sh_addr: base for pcrel pointers */
	uint64_t datarel;    /* base for datarel pointers (.got for .eh_frame) */
	uint64_t textrel;    /* base for textrel pointers (.text) */
	bool is_eh;	     /* .eh_frame conventions (CIE id 0, relative CIE pointers) */
	const struct cfi_arch_regs *regs; /* the object's machine */
	enum cfi_source source;
	const char *name;
	/* Reads 8 bytes at a virtual address of the object, for DW_EH_PE_indirect. */
	int (*read_addr)(void *ctx, uint64_t vaddr, uint64_t *out);
	void *read_ctx;
};

/* ---- the rule state of the CFA program ---- */
enum reg_rule_kind {
	RR_UNMENTIONED = 0, /* DWARF default: callee-saved rbp "same", RA undefined */
	RR_UNDEFINED,
	RR_SAME,
	RR_OFFSET,
	RR_VAL_OFFSET,
	RR_REGISTER,
	RR_EXPR,
	RR_VAL_EXPR,
};

struct reg_rule {
	uint8_t kind;
	uint16_t reg;
	int64_t off;
	const uint8_t *expr;
	uint64_t expr_len;
};

struct cfa_state {
	struct reg_rule cfa; /* kind RR_OFFSET (reg+off), RR_EXPR, or RR_UNMENTIONED */
	struct reg_rule rbp;
	struct reg_rule ra;
	struct reg_rule rbx;
};

struct cie {
	const uint8_t *sec_data; /* identifies the section the offset is in */
	uint64_t offset;
	const uint8_t *insns;
	uint64_t insns_len;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	bool has_z;
	bool signal_frame;
	bool bad; /* parsed once and found malformed */
	/*
	 * The rules after the initial instructions, run once when the CIE is
	 * parsed: every FDE of the CIE starts from them.  init_why: why they
	 * could not be run (each FDE of the CIE is then rejected), or NULL.
	 */
	struct cfa_state init;
	const char *init_why;
};

struct fde {
	uint64_t pc_begin, pc_end;
	const uint8_t *insns;
	uint64_t insns_len;
	const struct cie *cie;
	const struct cfi_section *sec;
	uint64_t offset; /* in its section, for messages */
};

/* ---- the build's budget: struct cfi_budget with its defaults applied ---- */
struct build_budget {
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	uint64_t max_ns, max_fdes, max_raw_rows, max_section_bytes, max_bytes;
	const int *cancel;
	uint32_t ticks;
};

/* @want may be NULL: every default. */
void budget_start(struct build_budget *b, const struct cfi_budget *want);
/* Says which limit @what went past (at @section+@offset); returns CFI_ERR_BUDGET. */
int budget_exceeded(struct diag_ctx *diag, const char *section, uint64_t offset, const char *what,
		    uint64_t limit);
/* Called once per unit of work: every few thousand calls, 0 or CFI_ERR_BUDGET when time is up. */
int budget_tick(struct build_budget *b, struct diag_ctx *diag);

/* CIE cache plus the FDE list of every section. */
struct cfi_parse {
	struct cie **cies; /* individually allocated: FDEs keep pointers to them */
	uint32_t nr_cies, cap_cies;
	uint32_t *cie_hash; /* open addressing: index+1 into cies, 0 = empty */
	uint32_t cie_hash_cap;
	struct fde *fdes;
	uint64_t nr_fdes, cap_fdes;
	struct diag_ctx *diag;
	struct cfi_stats *stats;
	uint64_t entry; /* ELF entry point, 0 if none */
	struct build_budget budget;
};

int cfi_parse_section(struct cfi_parse *p, const struct cfi_section *sec);
/* Adds one FDE to the parse, within the FDE budget: 0 or a negative cfi_err. */
int cfi_push_fde(struct cfi_parse *p, const struct fde *f);
int cfi_parse_eh_frame_hdr(struct cfi_parse *p, const struct cfi_section *eh,
			   const uint8_t *hdr, uint64_t hdr_size, uint64_t hdr_vaddr);
void cfi_parse_free(struct cfi_parse *p);
int read_encoded(const struct cfi_section *sec, const uint8_t **pp, const uint8_t *end,
		 uint8_t enc, uint64_t *out);

/* ---- rule dictionary ---- */
struct rule_dict {
	struct cfi_rule *rules;
	uint32_t nr;
	uint64_t cap;
	uint32_t *slots; /* open addressing: id+1, 0 = empty */
	uint32_t nr_slots;
};
int rule_dict_init(struct rule_dict *d);
/* Returns the id (>= 0) or a negative cfi_err. */
int rule_dict_intern(struct rule_dict *d, const struct cfi_rule *r);
void rule_dict_free(struct rule_dict *d);

/* ---- CFA program evaluation ---- */
/* Called for each row: the state is in force from addr up to the next row. */
typedef int (*row_fn)(void *ctx, uint64_t addr, const struct cfa_state *st);

/* Runs the CIE's initial instructions into c->init (or sets c->init_why). */
void cfa_run_cie(struct cie *c, const struct cfi_section *sec);
int cfa_run_fde(const struct fde *f, row_fn emit, void *ctx, struct diag_ctx *diag);
/* The rows of a Go function (an FDE of .gopclntab, tables/go_input.c): 0, or -1. */
int go_run_fde(const struct fde *f, row_fn emit, void *ctx);
/* One row of an FDE, its rule interned: in force from addr to the next row. */
struct fde_row {
	uint64_t addr;
	uint16_t rule;
};

/*
 * arm64: an FDE whose return address is saved at or above its CFA (glibc's
 * _dl_runtime_resolve) gets PLT0's left-out push back in every row
 * (tables/linker_stubs.c): 0 or a negative cfi_err.
 */
int arm64_add_left_out_push(struct rule_dict *dict, struct fde_row *rows, uint64_t nr);

/* The rows of PLT and crt stubs (tables/linker_stubs.c): 0, or what emit returned. */
int linker_stubs_run_fde(const struct fde *f, row_fn emit, void *ctx);

/* Turns the DWARF state into the compact rule; signal_frame from the CIE. */
void rule_classify(const struct cfa_state *st, const struct cfi_arch_regs *regs, bool signal_frame,
		   struct cfi_rule *out);

/* ---- compaction ---- */
struct row_sink {
	struct {
		uint64_t addr;
		uint16_t rule;
	} *v;
	uint64_t nr, cap;
	uint64_t max; /* rows it may hold (0: any): twice what max_bytes keeps */
};
int build_compact(struct cfi_parse *p, struct rule_dict *dict, struct cfi_table *t,
		  struct diag_ctx *diag);
/* Occurrences of each key (tables/key_counts.c): what recurs often enough to fold. */
struct key_counts {
	uint64_t *keys; /* key + 1; 0 = empty */
	uint32_t *counts;
	uint64_t nr, mask;
};
/* 0 or CFI_ERR_NOMEM */
int key_counts_add(struct key_counts *c, uint64_t key);
uint32_t key_counts_get(const struct key_counts *c, uint64_t key);
/* The key's slot (below mask + 1): its own, or the empty one it would take; keys != NULL. */
uint64_t key_counts_slot(const struct key_counts *c, uint64_t key);
void key_counts_free(struct key_counts *c);

/*
 * The last step of build_compact: two rows a few bytes apart whose pair of
 * rules recurs become one (tables/pair_rows.c).  0 or a negative cfi_err.
 */
int pair_rows(struct cfi_table *t, struct rule_dict *d);
/* t takes dict's rules (build_compact's) and counts its bytes: rows, page index, rules. */
void table_take_rules(struct cfi_table *t, struct rule_dict *dict);

const char *dwarf_regname(int arch, unsigned int reg);

#endif
