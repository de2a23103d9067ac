/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Samples made by hand for the aggregator (the records the BPF program would
 * send), and the folded lines they come back as.
 */
#ifndef CFIPROF_TESTS_AGG_SAMPLES_H
#define CFIPROF_TESTS_AGG_SAMPLES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/profile/aggregate.h"

/* pids far above any pid_max, so no /proc entry or perf map can exist for them */
#define FAKE_PID1 999990001u
#define FAKE_PID2 999990002u
#define FAKE_PID3 999990003u

/* Room for the largest legal record; uint64_t keeps pcs[] aligned. */
static union {
	struct cfi_sample_record r;
	uint64_t raw[(sizeof(struct cfi_sample_record) +
		      (MAX_KERNEL_FRAMES + 2 + MAX_USER_FRAMES_LIMIT + 2) * 8) /
			 8 +
		     1];
} recbuf;

static inline size_t mkrec(uint32_t pid, uint32_t tid, const char *comm, uint8_t reason,
			   uint8_t flags, unsigned int nk, const uint64_t *k, unsigned int nu,
			   const uint64_t *u)
{
	struct cfi_sample_record *r = &recbuf.r;

	memset(&recbuf, 0, sizeof(recbuf));
	r->type = RECORD_SAMPLE;
	r->pid = pid;
	r->tid = tid;
	r->cpu = 1;
	r->time_ns = 123456789;
	/* not strnlen(comm, 15): on a short literal, once inlined, GCC warns (stringop-overread) */
	memcpy(r->comm, comm, strlen(comm) < COMM_LEN - 1 ? strlen(comm) : COMM_LEN - 1);
	r->reason = reason;
	r->flags = flags;
	r->nr_kernel = (uint16_t)nk;
	r->nr_user = (uint16_t)nu;
	if (nk)
		memcpy(r->pcs, k, nk * sizeof(uint64_t));
	if (nu)
		memcpy(r->pcs + nk, u, nu * sizeof(uint64_t));
	return sizeof(*r) + (nk + nu) * sizeof(uint64_t);
}

static inline const struct cfi_sample_record *rec(void)
{
	return &recbuf.r;
}

static inline void add_n(struct aggregator *a, int times, uint32_t pid, const char *comm,
			 uint8_t reason, unsigned int nk, const uint64_t *k, unsigned int nu,
			 const uint64_t *u)
{
	size_t sz = mkrec(pid, pid, comm, reason, 0, nk, k, nu, u);
	int i;

	for (i = 0; i < times; i++)
		agg_add(a, rec(), sz);
}

struct parsed_line {
	char *text;
	uint64_t count;
};

/* Splits folded output into (text, count); a line without a numeric count is malformed. */
static inline int parse_folded(char *buf, struct parsed_line *out, int max, int *malformed)
{
	char *save = NULL, *line;
	int n = 0;

	*malformed = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *end;
		uint64_t c;

		if (!sp || !sp[1]) {
			(*malformed)++;
			continue;
		}
		c = strtoull(sp + 1, &end, 10);
		if (*end || c == 0) {
			(*malformed)++;
			continue;
		}
		*sp = 0;
		if (n < max)
			out[n++] = (struct parsed_line){line, c};
	}
	return n;
}

#endif
