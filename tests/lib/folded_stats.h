/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading a folded profile as the end-to-end tests judge it: per comm, the
 * samples, the complete ones (reaching an entry point), the incomplete ones
 * by reason, and whether complete stacks have exactly a known call chain.
 */
#ifndef CFIPROF_TEST_FOLDED_STATS_H
#define CFIPROF_TEST_FOLDED_STATS_H

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/crt_frames.h"

#ifndef MAX_FRAMES
#define MAX_FRAMES 2048
#endif
#define LD_SO "/lib64/ld-linux-x86-64.so.2"

struct stats {
	uint64_t samples, complete;
	uint64_t reasons[16]; /* incomplete samples by reason, names below */
	char reason_names[16][40];
	int nr_reasons;
	uint64_t with_leaf, chain_ok, chain_bad, other_comm;
	uint64_t reach_root;	    /* same "reaches the root" test as the peers */
	uint64_t complete_rootless; /* called complete, yet the root frame is no entry point */
	char first_bad[1024], first_rootless[1024];
};

/* Incomplete samples of st stopped for reason name. */
static inline uint64_t stats_reason(const struct stats *st, const char *name)
{
	for (int i = 0; i < st->nr_reasons; i++)
		if (!strcmp(st->reason_names[i], name))
			return st->reasons[i];
	return 0;
}

/*
 * Samples of st that had a user stack to walk, as cfiprof's summary counts
 * them: not those taken in do_exit after the address space went ("exiting")
 * or inside execve between two images ("in-execve"), which no unwinder can
 * walk (tests/e2e/test_process_edges.c checks those).
 */
static inline uint64_t stats_walkable(const struct stats *st)
{
	return st->samples - stats_reason(st, "exiting") - stats_reason(st, "in-execve");
}

static inline void add_reason(struct stats *st, const char *name, uint64_t count)
{
	int i;

	for (i = 0; i < st->nr_reasons; i++) {
		if (!strcmp(st->reason_names[i], name)) {
			st->reasons[i] += count;
			return;
		}
	}
	if (st->nr_reasons < 16) {
		snprintf(st->reason_names[st->nr_reasons], sizeof(st->reason_names[0]), "%s", name);
		st->reasons[st->nr_reasons++] = count;
	}
}

/* The peers' completeness test, on user frames root first or leaf first (order does not matter). */
static inline bool reaches_root(char **frames, int n)
{
	bool has_main = false, has_libc = false, has_thread = false;
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(frames[i], "main"))
			has_main = true;
		else if (!strcmp(frames[i], "__libc_start_call_main") ||
			 !strcmp(frames[i], "_start"))
			has_libc = true;
		else if (!strcmp(frames[i], "start_thread") || !strcmp(frames[i], "clone3"))
			has_thread = true;
	}
	return (has_main && has_libc) || has_thread;
}

/* The ELF entry point of the file at path, read from its header; 0 if unreadable. */
static inline uint64_t elf_entry(const char *path)
{
	uint64_t entry = 0;
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG))
		entry = eh.e_entry;
	if (fd >= 0)
		close(fd);
	return entry;
}

/* The ELF entry point of the dynamic loader; 0 if unreadable. */
static inline uint64_t ld_so_entry(void)
{
	static uint64_t entry = 1;

	if (entry == 1)
		entry = elf_entry(LD_SO);
	return entry;
}

/*
 * Is the root frame of a stack an entry point: _start (the program's, or
 * ld.so's), a thread's clone?  ld.so's _start and RTLD_START's
 * _dl_start_user, whose CFI also ends the stack and which calls _dl_init 48
 * bytes in (glibc 2.36), are NOTYPE labels: cfiprof names them as perf does
 * when ld.so's debug file is there, else they are "ld-linux-x86-64.so.2+0xOFF"
 * just past the ELF entry.  A sample in a library constructor is rooted
 * there; such samples are complete since deferred unwinding: before, they
 * were taken while those libraries' tables were still pending.
 */
#define RTLD_START_BYTES 64

static inline bool is_entry_frame(const char *f)
{
	unsigned long off;

	if (!strcmp(f, "_start") || !strcmp(f, "clone3") || !strcmp(f, "clone") ||
	    !strcmp(f, "_dl_start_user"))
		return true;
	return sscanf(f, "ld-linux-x86-64.so.2+0x%lx", &off) == 1 && ld_so_entry() &&
	       off - ld_so_entry() < RTLD_START_BYTES;
}

/*
 * The samples of comm in a folded file: how many, complete or not by reason,
 * and of the complete ones that reach leaf, how many have exactly the chain
 * exp[] (root first, nexp frames, ending with leaf).
 */
static inline int folded_stats_read(const char *path, const char *comm, const char *leaf,
				    const char *const *exp, int nexp, struct stats *st)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *frames[MAX_FRAMES];
	size_t cap = 0;
	ssize_t len;

	if (!f)
		return -1;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *sp, *tok, *save = NULL, *rest;
		uint64_t count;
		bool incomplete = false;
		int n = 0, i, leaf_at = -1;

		if (line[len - 1] == '\n')
			line[--len] = 0;
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		count = strtoull(sp + 1, NULL, 10);
		rest = line;
		tok = strtok_r(rest, ";", &save);
		if (!tok)
			continue;
		if (strcmp(tok, comm)) {
			st->other_comm += count;
			continue;
		}
		st->samples += count;
		while ((tok = strtok_r(NULL, ";", &save))) {
			size_t tl = strlen(tok);

			if (!strncmp(tok, "[incomplete: ", 13)) {
				char reason[40];

				snprintf(reason, sizeof(reason), "%.*s", (int)(tl - 14), tok + 13);
				add_reason(st, reason, count);
				incomplete = true;
				continue;
			}
			if (tl >= 4 && !strcmp(tok + tl - 4, "_[k]"))
				continue; /* kernel frame */
			if (n < MAX_FRAMES)
				frames[n++] = tok;
		}
		if (reaches_root(frames, n))
			st->reach_root += count;
		if (incomplete)
			continue;
		st->complete += count;
		/* cfiprof's word for complete, checked against where the walk ended */
		if (!n || !is_entry_frame(frames[0])) {
			st->complete_rootless += count;
			if (!st->first_rootless[0])
				join_frames(st->first_rootless, sizeof(st->first_rootless), frames,
					    n);
		}
		for (i = 0; i < n; i++) {
			if (!strcmp(frames[i], leaf)) {
				leaf_at = i;
				break;
			}
		}
		if (leaf_at < 0)
			continue;
		st->with_leaf += count;
		/* root .. leaf exactly as expected; below the leaf only what the leaf calls */
		if (chain_is(frames, n, leaf_at, exp, nexp)) {
			st->chain_ok += count;
		} else {
			st->chain_bad += count;
			if (!st->first_bad[0])
				join_frames(st->first_bad, sizeof(st->first_bad), frames, n);
		}
	}
	free(line);
	fclose(f);
	return 0;
}

/* The samples of a folded file whose stack holds the text needle anywhere. */
static inline uint64_t folded_count_with(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t n = 0;

	while (f && getline(&line, &cap, f) > 0) {
		const char *sp = strrchr(line, ' ');

		if (sp && strstr(line, needle))
			n += strtoull(sp + 1, NULL, 10);
	}
	free(line);
	if (f)
		fclose(f);
	return n;
}

#endif
