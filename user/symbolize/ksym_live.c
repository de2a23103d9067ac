// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel addresses named by the kernel's own lookup (%pS in a BPF program). */
#include "user/symbolize/ksym_live.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bpf/cfiprof_abi.h"

/*
 * Functions (and addresses with no symbol) kept: more than the kernel has
 * functions, so a bound only against addresses no symbol covers.
 */
#define KSYM_LIVE_MAX 131072

/* [start, end) named name; name NULL: addr alone, which no symbol covers */
struct ksym_found {
	uint64_t start, end;
	char *name;
};

struct ksym_live {
	pthread_mutex_t lock;
	int prog_fd;
	struct cfi_ksym_io *io;
	size_t io_len;
	struct ksym_found *v; /* sorted by start, disjoint */
	size_t n, cap;
	bool failed;
	bool full; /* KSYM_LIVE_MAX reached, said once */
};

static void set_err(char *err, size_t errlen, const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "kernel symbols: %s: %s", what, strerror(errno));
}

static int run(struct ksym_live *l)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(l->prog_fd, &opts))
		return -1;
	if (opts.retval) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

struct ksym_live *ksym_live_open(int prog_fd, void *io, size_t io_len, char *err, size_t errlen)
{
	struct ksym_live *l = calloc(1, sizeof(*l));

	if (!l || io_len < sizeof(*l->io)) {
		errno = l ? EINVAL : ENOMEM;
		set_err(err, errlen, "cannot set up the kernel's lookup");
		free(l);
		return NULL;
	}
	l->prog_fd = prog_fd;
	l->io = io;
	l->io_len = io_len;
	/* address 0: only whether the program runs here */
	l->io->addr = 0;
	if (run(l)) {
		set_err(err, errlen, "the kernel's lookup does not run");
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	return l;
}

/* index of the first entry whose end is above addr */
static size_t find(const struct ksym_live *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ksym_live_parse(const char *answer, uint64_t addr, uint64_t *start, uint64_t *end, char *name,
		    size_t len)
{
	const char *plus = strrchr(answer, '+'), *mod;
	unsigned long long off, size;
	int used = 0;

	if (!plus || plus == answer || sscanf(plus, "+0x%llx/0x%llx%n", &off, &size, &used) != 2 ||
	    off > addr || !size)
		return -1;
	mod = plus + used;
	if (*mod && strncmp(mod, " [", 2))
		return -1;
	if ((size_t)snprintf(name, len, "%.*s%s", (int)(plus - answer), answer, mod) >= len)
		return -1;
	*start = addr - off;
	*end = *start + size;
	return 0;
}

/* the answer into f: false for no symbol, or no memory */
static bool parse_answer(const char *s, uint64_t addr, struct ksym_found *f)
{
	char name[KSYM_NAME_BYTES];

	if (ksym_live_parse(s, addr, &f->start, &f->end, name, sizeof(name)))
		return false;
	f->name = strdup(name);
	if (!f->name)
		f->end = (f->start = addr) + 1;
	return f->name != NULL;
}

static int insert(struct ksym_live *l, size_t at, const struct ksym_found *f)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct ksym_found *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
	l->v[at] = *f;
	l->n++;
	return 0;
}

/* the kernel's answer for addr into the table: its index, or -1 */
static long ask(struct ksym_live *l, uint64_t addr)
{
	struct ksym_found f = {addr, addr + 1, NULL};
	size_t at;

	if (l->failed)
		return -1;
	if (l->n >= KSYM_LIVE_MAX) {
		if (!l->full)
			fprintf(
			    stderr,
			    "cfiprof: kernel symbols: %d functions and unnamed addresses known: "
			    "others show as addresses from now on\n",
			    KSYM_LIVE_MAX);
		l->full = true;
		return -1;
	}
	l->io->addr = addr;
	l->io->name[0] = '\0';
	if (run(l)) {
		l->failed = true;
		fprintf(stderr,
			"cfiprof: kernel symbols: the kernel's lookup failed (%s): kernel frames "
			"show as addresses from now on\n",
			strerror(errno));
		return -1;
	}
	l->io->name[KSYM_NAME_BYTES - 1] = '\0';
	parse_answer(l->io->name, addr, &f);
	/* addr is in no entry: between at - 1 and at, cut to that gap (sizes reach the next) */
	at = find(l, addr);
	if (at < l->n && l->v[at].start < f.end)
		f.end = l->v[at].start;
	if (at > 0 && l->v[at - 1].end > f.start)
		f.start = l->v[at - 1].end;
	if (insert(l, at, &f)) {
		free(f.name);
		return -1;
	}
	return (long)at;
}

int ksym_live_lookup(struct ksym_live *l, uint64_t addr, const char **name, uint64_t *offset)
{
	long i;
	int rc = -1;

	pthread_mutex_lock(&l->lock);
	i = (long)find(l, addr);
	if ((size_t)i >= l->n || l->v[i].start > addr)
		i = ask(l, addr);
	if (i >= 0 && l->v[i].name) {
		if (name)
			*name = l->v[i].name;
		if (offset)
			*offset = addr - l->v[i].start;
		rc = 0;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

size_t ksym_live_count(const struct ksym_live *l)
{
	return l->n;
}

void ksym_live_close(struct ksym_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	munmap(l->io, l->io_len);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
