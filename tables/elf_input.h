/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The table compiler's ELF side: an object's CFI sections (.eh_frame with its
 * .eh_frame_hdr, .debug_frame, and the .debug_frame of its separate debug
 * file) handed to the parser.  Private to tables/.
 */
#ifndef CFI_TABLES_ELF_INPUT_H
#define CFI_TABLES_ELF_INPUT_H

#include <libelf.h>
#include <stddef.h>
#include <sys/stat.h>

#include "elf/debug_file.h"
#include "tables/internal.h"

struct gopclntab;

struct elf_obj {
	Elf *elf;
	size_t shstrndx;
	int fd;		   /* read with pread (ELF_C_READ); -1: the image below */
	const char *image; /* the object in memory (cfi_table_build_mem) */
	size_t image_len;
	uint64_t *bytes_left; /* the build's byte budget, shared with the debug file */
	const struct cfi_arch_regs *regs; /* its machine's */
};

/* Everything the parsed FDEs point into: keep it open until the table is built. */
struct elf_input {
	struct elf_obj obj;
	struct debug_file dbg; /* the separate debug file; fd -1 when none */
	struct elf_obj dbg_obj;
	struct cfi_section eh, dbg_own, dbg_sep, go_sec, stubs_sec[3];
	struct gopclntab *go; /* Go's own table, when the object has one */
	uint64_t bytes_left; /* what the build may still read: cfi_budget.max_section_bytes */
};

/*
 * Opens the object in @fd, or in @mem (@len bytes, which libelf may write to)
 * when @mem is not NULL. Returns 0 or CFI_ERR_ELF, with a message in @dc.
 */
int elf_input_open(struct elf_input *in, int fd, void *mem, size_t len, struct diag_ctx *dc);

/*
 * Hands the object's CFI sections to @p: .eh_frame (through .eh_frame_hdr
 * when there is one) and .debug_frame, and when the object has no
 * .debug_frame, the separate debug file's (found from @path, never @self).
 * Sets the table's build-id, the parser's entry point and the sources seen.
 * Returns 0 or a negative cfi_err.
 */
int elf_input_parse(struct elf_input *in, const char *path, const struct stat *self,
		    const struct cfi_build_opts *opts, struct cfi_parse *p, struct cfi_table *t);

/*
 * Hands the object's Go functions (elf/gopclntab.h) to @p as FDEs of source
 * CFI_SRC_GOPCLNTAB, the last: code CFI covers keeps its CFI (a cgo binary's
 * C code).  A table refused is a message in @p's diagnostics, not an error.
 * Returns 0 or a negative cfi_err (budget, memory).
 */
int go_input_add(struct elf_input *in, struct cfi_parse *p, struct cfi_table *t);
/* The linker's PLT and crt stubs as FDEs of CFI_SRC_STUBS (tables/linker_stubs.c); 0 or a cfi_err.
 */
int linker_stubs_add(struct elf_input *in, struct cfi_parse *p, struct cfi_table *t);

void elf_input_close(struct elf_input *in);

#endif
