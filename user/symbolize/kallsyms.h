/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel symbols: from /proc/kallsyms, or asked of the kernel as frames need them. */
#ifndef CFIPROF_KALLSYMS_H
#define CFIPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/*
 * Loads kernel text symbols from @path (NULL: /proc/kallsyms). Module symbols
 * are named "name [module]". Returns NULL with a message in @err (may be
 * NULL) on failure, in particular when every address reads as zero because
 * kptr_restrict (or missing CAP_SYSLOG) hides them (errno EPERM).
 */
struct ksyms *ksyms_load(const char *path, char *err, size_t errlen);

/* An empty table: only the symbols added (ksyms_add), until ksyms_ask_kernel. */
struct ksyms *ksyms_new(void);

/*
 * From now on an address no symbol of k covers is named by the kernel's own
 * lookup: cfiprof's BPF program ksym_names (prog_fd) and its map ksym_io,
 * mapped at io (user/symbolize/ksym_live.h, which unmaps it).  0, or -1 with
 * a message in err when the program does not run (io then the caller's).
 */
int ksyms_ask_kernel(struct ksyms *k, int prog_fd, void *io, size_t io_len, char *err,
		     size_t errlen);

/*
 * A symbol covers up to the next kernel symbol (kallsyms has no sizes); the
 * last one covers one page. Returns 0 with the symbol's name and the offset
 * into it (either pointer may be NULL), or -1 when no symbol covers @addr.
 */
int ksyms_lookup(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *offset);

/*
 * Adds [start, end) named @name (programs loaded after kallsyms was read);
 * call ksyms_sort() after the last one, before lookups. Returns 0 or -1.
 */
int ksyms_add(struct ksyms *k, uint64_t start, uint64_t end, const char *name);
void ksyms_sort(struct ksyms *k);

size_t ksyms_count(const struct ksyms *k);
void ksyms_free(struct ksyms *k);

#endif
