/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GNU build-id of an ELF object: the key the symbolizer, the table loader and
 * the process tracker share to recognise one binary across processes.
 */
#ifndef CFIPROF_ELF_BUILD_ID_H
#define CFIPROF_ELF_BUILD_ID_H

#include <stddef.h>

/* libelf's handle, declared here so table headers need not pull in all of libelf.h */
typedef struct Elf Elf;

/* Longest build-id accepted; SHA-1 (20) is usual, some linkers emit 32. */
#define ELF_BUILD_ID_MAX 64
/* Hex form plus NUL. */
#define ELF_BUILD_ID_HEX_LEN (2 * ELF_BUILD_ID_MAX + 1)

/*
 * Copies the raw build-id bytes of @e into @out (room for @cap bytes).
 * Returns the length (> 0), or -1 when there is none or it does not fit.
 */
int elf_build_id(Elf *e, unsigned char *out, size_t cap);

/*
 * Writes the build-id of @e as lower-case hex into @out (@len bytes, NUL
 * terminated). Returns 0, or -1 when there is none or @len is too small.
 */
int elf_build_id_hex(Elf *e, char *out, size_t len);

/* Same for an open file descriptor; the descriptor is left open. */
int elf_build_id_hex_fd(int fd, char *out, size_t len);

#endif
