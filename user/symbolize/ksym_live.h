/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel addresses named by the kernel's own lookup, through cfiprof's BPF
 * program ksym_names (bpf/ksym_names.bpf.h), each function asked once.
 */
#ifndef CFIPROF_KSYM_LIVE_H
#define CFIPROF_KSYM_LIVE_H

#include <stddef.h>
#include <stdint.h>

struct ksym_live;

/*
 * The program prog_fd and its map, loaded and mapped at io (io_len bytes,
 * unmapped by ksym_live_close); NULL with a message in err when the program
 * does not run (io is then the caller's to unmap).
 */
struct ksym_live *ksym_live_open(int prog_fd, void *io, size_t io_len, char *err, size_t errlen);

/*
 * The function covering addr (its name, "name [module]" for a module's, and
 * addr's offset into it) as the kernel names it: 0, or -1 when no symbol
 * covers addr, the kernel's lookup failed (said once on stderr) or
 * KSYM_LIVE_MAX functions are known already.  Thread-safe; the name lives
 * as long as l.
 */
int ksym_live_lookup(struct ksym_live *l, uint64_t addr, const char **name, uint64_t *offset);

/*
 * The kernel's answer for addr ("name+0xOFF/0xSIZE", " [module]" after a
 * module's) as the function's range [*start, *end) and its name ("name" or
 * "name [module]") in name: 0, or -1 for no symbol ("0x..."), anything
 * else, or a name longer than len.
 */
int ksym_live_parse(const char *answer, uint64_t addr, uint64_t *start, uint64_t *end, char *name,
		    size_t len);

/* functions asked of the kernel so far */
size_t ksym_live_count(const struct ksym_live *l);

void ksym_live_close(struct ksym_live *l);

#endif
