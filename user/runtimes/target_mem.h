/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading another process's memory for a runtime's names: every pointer it
 * holds is only an address to try (process_vm_readv fails on what is not
 * mapped), every length is the caller's bound.  Reader threads only
 * (code_names.h): a read may block as long as the process's memory does.
 */
#ifndef CFIPROF_TARGET_MEM_H
#define CFIPROF_TARGET_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

/* Exactly len bytes of process pid at addr: 0, or -1. */
static inline int target_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)addr, len};

	if (!addr || addr + len < addr)
		return -1;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The little-endian u64 at b + off (unaligned). */
static inline uint64_t target_u64(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* The u32 at b + off (unaligned). */
static inline uint32_t target_u32(const uint8_t *b, uint16_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

#endif
