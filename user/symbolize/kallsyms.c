// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel symbols: from /proc/kallsyms, or asked of the kernel as frames need them. */
#include "user/symbolize/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/symbolize/ksym_live.h"
#include "user/symbolize/sym_table.h"

#define KALLSYMS	 "/proc/kallsyms"
#define KALLSYMS_READ_BYTES (64 * 1024)
#define KPTR_RESTRICT	 "/proc/sys/kernel/kptr_restrict"
#define LAST_SYMBOL_SPAN 4096

struct ksyms {
	struct sym_table tab;	/* kallsyms', or only the symbols added */
	struct ksym_live *live; /* past tab: the kernel's own lookup */
};

/* One kallsyms line, before sorting. */
struct kline {
	uint64_t addr;
	uint32_t name; /* arena offset of "name" or "name [module]" */
	bool text;
	int rank;
};

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * At one address prefer global text, then weak, then local, then
 * non-text (which only bounds its predecessor), like the ELF alias rule.
 */
static int type_rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 'W':
		return 1;
	case 't':
	case 'w':
		return 2;
	default:
		return 3;
	}
}

static int kline_cmp(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Sorted as kline_cmp orders them.  Root's kallsyms comes in address order,
 * with only same-address runs (aliases) left to order: those alone are sorted
 * (a full sort of 122k lines took a third of the parse).
 */
static void sort_klines(struct kline *l, size_t n)
{
	size_t i, j;

	for (i = 1; i < n && l[i - 1].addr <= l[i].addr; i++)
		;
	if (i < n) {
		qsort(l, n, sizeof(*l), kline_cmp);
		return;
	}
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && l[j].addr == l[i].addr; j++)
			;
		if (j - i > 1)
			qsort(l + i, j - i, sizeof(*l), kline_cmp);
	}
}

/* kallsyms' address: hex digits, no prefix; strtoull's locale handling was 14% of the parse. */
static uint64_t parse_hex(const char *s, char **end)
{
	uint64_t v = 0;
	int digits = 0;

	for (;; s++, digits++) {
		unsigned int c = (unsigned char)*s, d;

		if (c - '0' < 10)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (digits == 16)
			break; /* more than 64 bits: not an address */
		v = v << 4 | d;
	}
	*end = (char *)s;
	return v;
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
}

static int read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/*
 * Why the kernel hid the addresses, and what would show them: the kernel's
 * rule (kallsyms_show_value) is kptr_restrict 0 shows them to CAP_SYSLOG or
 * when perf_event_paranoid <= 1, 1 to CAP_SYSLOG only, 2 to no one.
 */
static void kptr_hint(char *buf, size_t len)
{
	int v = read_sysctl(KPTR_RESTRICT);
	int paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");

	if (v == 0)
		snprintf(
		    buf, len,
		    "kernel.kptr_restrict=0 and kernel.perf_event_paranoid=%d show them only to "
		    "CAP_SYSLOG: run as root or set kernel.perf_event_paranoid=1",
		    paranoid);
	else if (v == 1)
		snprintf(buf, len,
			 "kernel.kptr_restrict=1 shows them only to CAP_SYSLOG: run as root or set "
			 "kernel.kptr_restrict=0 with kernel.perf_event_paranoid<=1");
	else if (v >= 2)
		snprintf(buf, len,
			 "kernel.kptr_restrict=%d hides them even from root: set "
			 "kernel.kptr_restrict=1 (or 0)",
			 v);
	else
		snprintf(buf, len, "hidden by kernel.kptr_restrict or missing CAP_SYSLOG");
}

struct ksyms *ksyms_load(const char *path, char *err, size_t errlen)
{
	struct kline *lines = NULL, *tmp;
	size_t n = 0, cap = 0, i, j, linecap = 0;
	struct ksyms *k = NULL;
	char *line = NULL, *buf = NULL, hint[160];
	bool nonzero = false;
	FILE *f;

	if (!path)
		path = KALLSYMS;
	f = fopen(path, "re");
	if (!f) {
		set_err(err, errlen, "kernel symbols unavailable: %s: %s", path, strerror(errno));
		return NULL;
	}
	/*
	 * /proc says its block is 1 KiB: 120k symbols took ten thousand reads,
	 * ~25 ms of system time at every start (glibc sizes only a buffer it is
	 * given).
	 */
	buf = malloc(KALLSYMS_READ_BYTES);
	if (buf)
		setvbuf(f, buf, _IOFBF, KALLSYMS_READ_BYTES);
	k = calloc(1, sizeof(*k));
	if (!k)
		goto nomem;
	while (getline(&line, &linecap, f) > 0) {
		char type, *name, *mod, *end;
		uint64_t addr;
		int64_t off;
		size_t len;

		/* "ffffffff81000000 T _stext" or "... t foo\t[module]" */
		addr = parse_hex(line, &end);
		if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		len = strcspn(name, "\t \n");
		if (!len)
			continue;
		mod = name + len;
		mod += strspn(mod, "\t ");
		if (*mod == '[')
			mod[strcspn(mod, "\n")] = '\0';
		else
			mod = NULL;
		if (addr)
			nonzero = true;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			tmp = realloc(lines, cap * sizeof(*lines));
			if (!tmp)
				goto nomem;
			lines = tmp;
		}
		name[len] = '\0';
		if (mod) {
			/* Stored as the display form: a frame reads "name [module]". */
			name[len] = ' ';
			memmove(name + len + 1, mod, strlen(mod) + 1);
			len = strlen(name);
		}
		off = sym_table_intern(&k->tab, name, len);
		if (off < 0)
			goto nomem;
		lines[n++] = (struct kline){addr, (uint32_t)off, is_text(type), type_rank(type)};
	}
	fclose(f);
	f = NULL;
	free(buf);
	buf = NULL;
	if (n && !nonzero) {
		kptr_hint(hint, sizeof(hint));
		set_err(err, errlen, "kernel symbols unavailable: every address in %s is zero (%s)",
			path, hint);
		errno = EPERM;
		goto fail;
	}
	if (n == 0) {
		set_err(err, errlen, "kernel symbols unavailable: %s has no symbols%s", path, "");
		errno = ENOENT;
		goto fail;
	}
	sort_klines(lines, n);
	for (i = 0; i < n; i = j) {
		uint64_t end;

		for (j = i; j < n && lines[j].addr == lines[i].addr; j++)
			;
		/*
		 * No sizes in kallsyms: a function ends where the next symbol of
		 * any type starts, so data symbols bound text ones.
		 */
		end = j < n ? lines[j].addr : lines[i].addr + LAST_SYMBOL_SPAN;
		if (!lines[i].text || !lines[i].addr)
			continue;
		if (sym_table_add(&k->tab, lines[i].addr, end, lines[i].name, 0) < 0)
			goto nomem;
	}
	sym_table_finish(&k->tab);
	free(lines);
	free(line);
	return k;
nomem:
	set_err(err, errlen, "kernel symbols unavailable: %s: %s", path, strerror(ENOMEM));
	errno = ENOMEM;
fail:
	if (f)
		fclose(f);
	free(buf);
	free(lines);
	free(line);
	ksyms_free(k);
	return NULL;
}

struct ksyms *ksyms_new(void)
{
	return calloc(1, sizeof(struct ksyms));
}

int ksyms_ask_kernel(struct ksyms *k, int prog_fd, void *io, size_t io_len, char *err,
		     size_t errlen)
{
	k->live = ksym_live_open(prog_fd, io, io_len, err, errlen);
	return k->live ? 0 : -1;
}

int ksyms_lookup(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *offset)
{
	long i = sym_table_find(&k->tab, addr);

	if (i < 0)
		return k->live ? ksym_live_lookup(k->live, addr, name, offset) : -1;
	if (name)
		*name = sym_table_name(&k->tab, i);
	if (offset)
		*offset = addr - k->tab.r[i].start;
	return 0;
}

int ksyms_add(struct ksyms *k, uint64_t start, uint64_t end, const char *name)
{
	int64_t off = sym_table_intern(&k->tab, name, strlen(name));

	if (off < 0)
		return -1;
	return sym_table_add(&k->tab, start, end, (uint32_t)off, 0);
}

void ksyms_sort(struct ksyms *k)
{
	sym_table_finish(&k->tab);
}

size_t ksyms_count(const struct ksyms *k)
{
	return k->tab.n;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	sym_table_release(&k->tab);
	ksym_live_close(k->live);
	free(k);
}
