/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The running kernel's BTF read in place, not parsed: the type ids of
 * functions and structs.  libbpf's whole parse (~5 MB read and indexed) is what a start
 * avoids.
 */
#ifndef CFIPROF_KERNEL_BTF_H
#define CFIPROF_KERNEL_BTF_H

#include <stddef.h>
#include <stdint.h>

/*
 * The type id of the type of kind kinds[i] (BTF_KIND_FUNC, BTF_KIND_STRUCT...)
 * called names[i] into ids[i] (0: none), for i < n <= 8.  Returns how many
 * were found, or -errno.
 */
int kernel_btf_ids(const char *const names[], const uint8_t kinds[], int32_t ids[], int n);
/*
 * The running kernel's GNU build ID (its ELF notes) in hex: what caches of
 * what was read from its BTF are keyed by.  0 or -errno.
 */
int kernel_build_id(char *hex, size_t len);

#endif
