/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the libFuzzer targets: the parsers under test read files,
 * so an input becomes an anonymous memory file (memfd) that they open by
 * /proc/self/fd/N.  Everything is static, and each target declares its own
 * LLVMFuzzerTestOneInput: test_fuzz_regressions.c includes every target into
 * one binary, renaming each entry point.
 */
#ifndef CFIPROF_FUZZ_UTIL_H
#define CFIPROF_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Replaces the whole content of fd by data; aborts on failure (not the parser's fault). */
static inline void fuzz_fill_fd(int fd, const void *data, size_t size)
{
	const uint8_t *p = data;
	size_t done = 0;

	if (ftruncate(fd, 0) < 0)
		abort();
	while (done < size) {
		ssize_t n = pwrite(fd, p + done, size - done, (off_t)done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		abort();
}

/* A memfd holding data, its /proc/self/fd path in path (>= 32 bytes). */
static inline int fuzz_memfd(const char *name, const void *data, size_t size, char *path,
			     size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		abort();
	fuzz_fill_fd(fd, data, size);
	if (path)
		snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* A malloc'd, NUL-terminated copy of data[0..size) (exact size: ASan sees overreads). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Little-endian 64-bit value from up to 8 bytes at data[off..), 0-padded. */
static inline uint64_t fuzz_u64(const uint8_t *data, size_t size, size_t off)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8 && off + i < size; i++)
		v |= (uint64_t)data[off + i] << (8 * i);
	return v;
}

#endif
