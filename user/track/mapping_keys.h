/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Address ranges as LPM-trie prefixes of struct cfi_mapping_key. */
#ifndef CFIPROF_MAPPING_KEYS_H
#define CFIPROF_MAPPING_KEYS_H

#include <stdint.h>

#include "bpf/cfiprof_abi.h"

/* A range needs at most 2 prefixes per address bit. */
#define MAPPING_KEYS_MAX 128

/* Fills keys covering exactly [start, end) for pid; returns how many. */
int mapping_keys_for_range(uint32_t pid, uint64_t start, uint64_t end,
			   struct cfi_mapping_key keys[MAPPING_KEYS_MAX]);

#endif
