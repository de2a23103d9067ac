/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Oracle test: every row readelf's CFA interpreter prints for a binary must
 * agree with what the table compiler answers at that address.  readelf is an
 * independent DWARF implementation, so agreement over all of /usr/bin is
 * strong evidence that the CIE/FDE parser, the CFA program interpreter, the
 * rule dictionary and the page/row encoding are all right together.
 *
 * readelf is run twice per binary and its output parsed as a stream: the
 * first pass only collects FDE ranges (needed up front to know which
 * addresses are covered twice, and which .debug_frame addresses .eh_frame
 * shadows), the second compares rows.  Buffering the text instead would cost
 * hundreds of megabytes for libLLVM.
 *
 * Each binary must: build (or have no CFI, by readelf's account too), have
 * no mismatch, see readelf exit 0, have a row compared for every FDE readelf
 * lists (bar those wholly overlapped or shadowed), compare rows when its
 * section headers hold CFI, and give each unsupported row a reason readelf's
 * row shows; unsupported rows are bounded per binary and in total.  The
 * named libraries, readelf, gcc and objcopy are required: missing is failing.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hash.h"
#include "tables/cfi_table.h"
#include "tests/lib/harness.h"

#define MAX_SHOWN 10
#define TOK_LEN	  24

enum sec { SEC_EH = 0, SEC_DEBUG = 1, SEC_OTHER = 2 };

/*
 * How readelf names the columns of the binary being compared (binutils
 * dwarf.c), from its ELF header: the stack and frame pointers, the register
 * carried through a walk (x86-64's rbx; none on arm64), register 0 (what it
 * prints for a CFA never defined).  Each binary is compared in a worker
 * process of its own, so one static holds the binary's.
 */
struct arch_names {
	int arch;
	const char *sp, *fp, *carried, *reg0;
};

static const struct arch_names x86_64_names = {CFI_ARCH_X86_64, "rsp", "rbp", "rbx", "rax"};
static const struct arch_names arm64_names = {CFI_ARCH_ARM64, "sp", "x29", NULL, "x0"};
static const struct arch_names *names = &x86_64_names;

struct range {
	uint64_t lo, hi;
};

struct rangeset {
	struct range *v;
	size_t n, cap;
};

/*
 * arm64's .plt, .init and .fini, x86-64's .init and .fini: cfiprof gives them
 * rows no FDE holds (tables/linker_stubs.c, checked by test_tables_rules), so
 * an FDE ending where one starts is no gap.  From the section headers; 0 for
 * none.
 */
static struct range stub_sections[3];

struct row {
	uint64_t addr;
	char cfa[TOK_LEN], rbp[TOK_LEN], ra[TOK_LEN], rbx[TOK_LEN];
	int odd; /* token count did not match the column header */
};

struct cie_row {
	uint64_t off;
	struct row row;
};

/* Fixed size so a child can send it through a pipe in one write. */
struct result {
	char path[PATH_MAX];
	int done;	       /* the child got to the end */
	int arch;	       /* enum cfi_arch, from its ELF header */
	int build_rc;	       /* cfi_table_build_file() */
	int readelf_rc;	       /* readelf's worst exit status over both passes */
	int readelf_nolink_rc; /* without following debug links, when readelf_rc != 0 */
	int readelf_nobits;    /* READELF_NOBITS lines on its stdout */
	char readelf_err[160]; /* readelf's first stderr line */
	int built_ok;	       /* table built, or both sides agree there is no CFI */
	uint64_t sec_bytes[2]; /* .eh_frame / .debug_frame bytes, from the section headers */
	uint64_t fdes[2];
	uint64_t fdes_nonempty[2]; /* FDEs covering at least one byte */
	uint64_t fdes_compared[2]; /* ... with at least one row compared */
	uint64_t fdes_excused[2];  /* ... all of whose rows were skipped as overlapped / shadowed */
	uint64_t rows;		   /* rows compared */
	uint64_t rows_sec[2];
	uint64_t mismatches;
	uint64_t unsup[CFI_UNSUP_MAX];
	uint64_t unsup_wrong_reason; /* unsupported rows readelf's row does not explain */
	uint64_t cie_only;	     /* FDEs without rows, checked against their CIE's row */
	uint64_t overlap_fdes;
	uint64_t skipped_overlap; /* rows at addresses two FDEs of a section cover */
	uint64_t skipped_shadow;  /* .debug_frame rows under an .eh_frame FDE */
	uint64_t skipped_outside; /* rows at or past their FDE's end */
	uint64_t skipped_odd;	  /* rows whose columns could not be parsed */
	uint64_t gaps;		  /* FDE ends covered by no FDE: must be CFI_CFA_NONE */
	double build_ms, total_ms;
};

static void *xrealloc(void *p, size_t sz)
{
	p = realloc(p, sz);
	if (!p) {
		perror("realloc");
		exit(2);
	}
	return p;
}

static void rs_add(struct rangeset *rs, uint64_t lo, uint64_t hi)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 256;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	rs->v[rs->n].lo = lo;
	rs->v[rs->n].hi = hi;
	rs->n++;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return 0;
}

/* Sorted, disjoint union of the (sorted) input ranges. */
static void rs_union(const struct rangeset *in, struct rangeset *out)
{
	size_t i;

	for (i = 0; i < in->n; i++) {
		if (out->n && in->v[i].lo <= out->v[out->n - 1].hi) {
			if (in->v[i].hi > out->v[out->n - 1].hi)
				out->v[out->n - 1].hi = in->v[i].hi;
			continue;
		}
		rs_add(out, in->v[i].lo, in->v[i].hi);
	}
}

/*
 * Addresses covered by two or more of the (sorted) input ranges, as a sorted
 * disjoint set; returns how many ranges overlap some other one.
 */
static uint64_t rs_overlaps(const struct rangeset *in, struct rangeset *out)
{
	uint64_t maxhi = 0, nfdes = 0;
	size_t i;

	for (i = 0; i < in->n; i++) {
		const struct range *r = &in->v[i];
		int hit = i && r->lo < maxhi;

		if (hit) {
			uint64_t hi = r->hi < maxhi ? r->hi : maxhi;

			if (out->n && r->lo <= out->v[out->n - 1].hi) {
				if (hi > out->v[out->n - 1].hi)
					out->v[out->n - 1].hi = hi;
			} else {
				rs_add(out, r->lo, hi);
			}
		}
		/* sorted by start, so only the next range can be the first to overlap */
		if (hit || (i + 1 < in->n && in->v[i + 1].lo < r->hi))
			nfdes++;
		if (r->hi > maxhi)
			maxhi = r->hi;
	}
	return nfdes;
}

static int rs_contains(const struct rangeset *rs, uint64_t addr)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < rs->v[mid].lo)
			hi = mid;
		else if (addr >= rs->v[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* ---- readelf as a stream ---- */

/*
 * readelf follows .gnu_debuglink / build-id links into detached debug files,
 * whose .eh_frame is NOBITS (objcopy --only-keep-debug, libc6-dbg's copies of
 * libc.so.6 and ld.so).  readelf 2.40 then prints this line on stdout and
 * exits 1 after dumping everything else.  Only that, with nothing on stderr
 * and a clean exit when readelf does not follow links, is accepted: it
 * concerns no CFI either side compares.
 */
#define READELF_NOBITS "section '.eh_frame' has the NOBITS type - its contents are unreliable."

struct readelf {
	FILE *out;
	FILE *err; /* its stderr, read back at the end */
	pid_t pid;
};

/* follow_links 0: readelf -wN (do not follow links to separate debug files) */
static int readelf_open(const char *path, int follow_links, struct readelf *re)
{
	int fds[2];

	re->err = tmpfile();
	if (!re->err || pipe(fds)) {
		if (re->err)
			fclose(re->err);
		return -1;
	}
	re->pid = fork();
	if (re->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		fclose(re->err);
		return -1;
	}
	if (re->pid == 0) {
		dup2(fds[1], 1);
		dup2(fileno(re->err), 2);
		close(fds[0]);
		close(fds[1]);
		execlp("readelf", "readelf", follow_links ? "-wK" : "-wN",
		       "--debug-dump=frames-interp", "--", path, (char *)NULL);
		fprintf(stderr, "readelf: cannot run it: %s\n", strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	re->out = fdopen(fds[0], "r");
	if (!re->out) {
		close(fds[0]);
		fclose(re->err);
		return -1;
	}
	return 0;
}

/* Exit status (128 + signal if killed); res gets the worst status and the first stderr line. */
static int readelf_close(struct readelf *re, struct result *res)
{
	char line[256];
	int status = 0, rc;

	fclose(re->out);
	if (waitpid(re->pid, &status, 0) < 0)
		rc = -1;
	else
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	rewind(re->err);
	while (fgets(line, sizeof(line), re->err)) {
		line[strcspn(line, "\n")] = '\0';
		if (!res->readelf_err[0])
			snprintf(res->readelf_err, sizeof(res->readelf_err), "%.*s",
				 (int)sizeof(res->readelf_err) - 1, line);
	}
	fclose(re->err);
	if (rc && !res->readelf_rc)
		res->readelf_rc = rc;
	return rc;
}

static enum sec section_of(const char *line)
{
	if (!strncmp(line, "Contents of the .eh_frame section", 33))
		return SEC_EH;
	if (!strncmp(line, "Contents of the .debug_frame section", 36))
		return SEC_DEBUG;
	return SEC_OTHER;
}

/* Length of the first whitespace-delimited token if it is all hex digits, else 0. */
static size_t hex_token_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))
		n++;
	return s[n] == ' ' ? n : 0;
}

struct entry_hdr {
	int is_fde, is_cie;
	uint64_t off, cie, lo, hi;
};

/* "00000018 0000000000000024 0000001c FDE cie=00000000 pc=...26000..26360" */
static int parse_entry_header(const char *line, struct entry_hdr *e)
{
	const char *p;

	memset(e, 0, sizeof(*e));
	e->off = strtoull(line, NULL, 16);
	if (strstr(line, " CIE")) {
		e->is_cie = 1;
		return 1;
	}
	if (!strstr(line, " FDE "))
		return 0;
	p = strstr(line, "cie=");
	if (!p)
		return 0;
	e->cie = strtoull(p + 4, NULL, 16);
	p = strstr(line, "pc=");
	if (!p)
		return 0;
	e->lo = strtoull(p + 3, (char **)&p, 16);
	if (strncmp(p, "..", 2))
		return 0;
	e->hi = strtoull(p + 2, NULL, 16);
	e->is_fde = 1;
	return 1;
}

/* ---- the comparison ---- */

static int is_offset_token(const char *t, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;

	if (strncmp(t, prefix, n))
		return 0;
	p = t + n;
	if (*p != '+' && *p != '-')
		return 0;
	p++;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* CFA forms the rule model can always express: the stack or frame pointer plus a constant. */
static int cfa_simple(const char *t)
{
	return is_offset_token(t, names->sp) || is_offset_token(t, names->fp);
}

/* Register forms the rule model can always express. */
static int reg_simple(const char *t)
{
	return !strcmp(t, "u") || !strcmp(t, "s") || is_offset_token(t, "c") ||
	       is_offset_token(t, "v");
}

enum verdict { V_OK, V_UNSUP, V_MISMATCH };

/* A c/v offset readelf prints that the rule's 16-bit field cannot hold. */
static int reg_offset_too_big(const char *t)
{
	long v;

	if (!is_offset_token(t, "c") && !is_offset_token(t, "v"))
		return 0;
	v = strtol(t + 1, NULL, 10);
	return v < INT16_MIN || v > INT16_MAX;
}

/*
 * V_UNSUP only when readelf's column shows why the rule model cannot hold it:
 * an expression or another register, an RA that "stays in rip", or an offset
 * past 16 bits.
 */
static enum verdict compare_reg(int kind, int off, const char *theirs, int is_rbp)
{
	char ours[64];

	if (!strcmp(theirs, "u"))
		return kind == CFI_REG_SAME || kind == CFI_REG_UNDEFINED ? V_OK : V_MISMATCH;
	if (!strcmp(theirs, "s")) {
		if (kind == CFI_REG_SAME)
			return V_OK;
		/* an RA that "stays in rip" is nothing a walker can use */
		return kind == CFI_REG_UNSUPPORTED && !is_rbp ? V_UNSUP : V_MISMATCH;
	}
	if (reg_simple(theirs)) {
		cfi_rule_format_reg(kind, off, ours, sizeof(ours));
		if (kind != CFI_REG_UNSUPPORTED && !strcmp(ours, theirs))
			return V_OK;
		return kind == CFI_REG_UNSUPPORTED && reg_offset_too_big(theirs) ? V_UNSUP
										 : V_MISMATCH;
	}
	/* DW_CFA_register rbp, rbp is a roundabout same_value */
	if (is_rbp && !strcmp(theirs, names->fp) && kind == CFI_REG_SAME)
		return V_OK;
	/* exp, vexp, another register: nothing the walker can evaluate */
	return kind == CFI_REG_UNSUPPORTED ? V_UNSUP : V_MISMATCH;
}

/*
 * rbx gives a row no reason (only a later CFA-in-rbx rule reads it), but where
 * the rule says it is must be where readelf says, or "lost" for anything else.
 */
static enum verdict compare_rbx(const struct cfi_rule *r, const char *theirs)
{
	char ours[64];

	if (!strcmp(theirs, "u") || !strcmp(theirs, "s") ||
	    (names->carried && !strcmp(theirs, names->carried)))
		return r->rbx_kind == CFI_REG_SAME ? V_OK : V_MISMATCH;
	if (reg_simple(theirs) && !reg_offset_too_big(theirs)) {
		cfi_rule_format_reg(r->rbx_kind, r->rbx_off, ours, sizeof(ours));
		return r->rbx_kind != CFI_REG_UNSUPPORTED && !strcmp(ours, theirs) ? V_OK
										    : V_MISMATCH;
	}
	return r->rbx_kind == CFI_REG_UNSUPPORTED ? V_OK : V_MISMATCH;
}

/*
 * An unusable CFA makes the whole row unusable: its reason must be what
 * readelf's CFA column shows.
 *   cfa-other-register:     the same register and offset ("r10+8");
 *   cfa-unknown-expression: "exp";
 *   cfa-undefined:          "rax+0", what readelf prints when no instruction
 *                           ever set the CFA (its register 0, offset 0);
 *   offset-out-of-range:    "exp" (a dereference whose addend needs more than
 *                           16 bits), or rsp/rbp plus an offset past 32 bits,
 *                           which readelf prints cast to int.
 */
static int cfa_reason_explained(const struct cfi_rule *r, const struct row *w)
{
	char ours[64];

	switch (r->reason) {
	case CFI_UNSUP_CFA_REG:
		cfi_rule_format_cfa(r, names->arch, ours, sizeof(ours));
		return !strcmp(ours, w->cfa);
	case CFI_UNSUP_CFA_EXPR:
		return !strcmp(w->cfa, "exp");
	case CFI_UNSUP_CFA_UNDEF:
		snprintf(ours, sizeof(ours), "%s+0", names->reg0);
		return !strcmp(w->cfa, ours);
	case CFI_UNSUP_RANGE:
		return !strcmp(w->cfa, "exp") || cfa_simple(w->cfa);
	default:
		return 0;
	}
}

/* *wrong_reason: the row is unsupported, but not for the reason the rule gives */
static enum verdict compare_row(const struct cfi_rule *r, const struct row *w, int *wrong_reason)
{
	enum verdict rbp, ra;
	char ours[64];

	*wrong_reason = 0;
	cfi_rule_format_cfa(r, names->arch, ours, sizeof(ours));
	if (r->cfa_kind == CFI_CFA_UNSUPPORTED) {
		if (cfa_reason_explained(r, w))
			return V_UNSUP;
		*wrong_reason = 1;
		return V_MISMATCH;
	}
	if (strcmp(ours, w->cfa))
		return V_MISMATCH;
	/* the kernel's rt_sigframe, not CFI columns, says where registers are */
	if (r->cfa_kind == CFI_CFA_SIGNAL)
		return V_OK;
	rbp = compare_reg(r->rbp_kind, r->rbp_off, w->rbp, 1);
	ra = compare_reg(r->ra_kind, r->ra_off, w->ra, 0);
	if (rbp == V_MISMATCH || ra == V_MISMATCH || compare_rbx(r, w->rbx) == V_MISMATCH)
		return V_MISMATCH;
	if (rbp == V_OK && ra == V_OK)
		return r->reason == CFI_UNSUP_NONE ? V_OK : (*wrong_reason = 1, V_MISMATCH);
	/* one reason per rule, the RA's before rbp's (tables/rule_classify.c) */
	if (r->reason != (ra == V_UNSUP ? CFI_UNSUP_RA : CFI_UNSUP_RBP)) {
		*wrong_reason = 1;
		return V_MISMATCH;
	}
	return V_UNSUP;
}

struct ctx {
	const char *path;
	struct cfi_table *t;
	struct result *res;
	FILE *log;
	struct rangeset fde[2];	    /* sorted FDE ranges per section */
	struct rangeset overlap[2]; /* addresses covered twice within a section */
	struct rangeset covered;    /* union of all FDEs of both sections */
	struct rangeset eh_covered; /* union of .eh_frame FDEs */
	struct cie_row *cies[2];
	size_t ncies[2], capcies[2];
};

static void check_addr(struct ctx *c, enum sec s, const struct row *w)
{
	const struct cfi_rule *r;
	enum verdict v;
	int wrong_reason;

	if (rs_contains(&c->overlap[s], w->addr)) {
		c->res->skipped_overlap++;
		return;
	}
	if (s == SEC_DEBUG && rs_contains(&c->eh_covered, w->addr)) {
		c->res->skipped_shadow++;
		return;
	}
	if (w->odd) {
		c->res->skipped_odd++;
		return;
	}
	c->res->rows++;
	c->res->rows_sec[s]++;
	r = cfi_table_lookup(c->t, w->addr);
	v = compare_row(r, w, &wrong_reason);
	c->res->unsup_wrong_reason += wrong_reason;
	if (v == V_UNSUP) {
		c->res->unsup[r->reason < CFI_UNSUP_MAX ? r->reason : 0]++;
	} else if (v == V_MISMATCH) {
		if (c->res->mismatches++ < MAX_SHOWN) {
			char cfa[64], rbp[64], ra[64], desc[256];

			cfi_rule_format_cfa(r, names->arch, cfa, sizeof(cfa));
			cfi_rule_format_reg(r->rbp_kind, r->rbp_off, rbp, sizeof(rbp));
			cfi_rule_format_reg(r->ra_kind, r->ra_off, ra, sizeof(ra));
			cfi_rule_describe(r, names->arch, desc, sizeof(desc));
			fprintf(c->log,
				"  MISMATCH %s 0x%llx [%s]: readelf cfa=%s rbp=%s ra=%s rbx=%s; ours "
				"cfa=%s rbp=%s ra=%s (%s, reason %s)\n",
				c->path, (unsigned long long)w->addr,
				s == SEC_EH ? ".eh_frame" : ".debug_frame", w->cfa, w->rbp, w->ra,
				w->rbx, cfa, rbp, ra, desc, cfi_unsupported_name(r->reason));
		}
	}
}

/* An FDE's end that no FDE of either section covers must not inherit a rule. */
static void check_gap(struct ctx *c, uint64_t addr)
{
	const struct cfi_rule *r;

	if (rs_contains(&c->covered, addr))
		return;
	c->res->gaps++;
	r = cfi_table_lookup(c->t, addr);
	if (r->cfa_kind != CFI_CFA_NONE) {
		char desc[256];

		cfi_rule_describe(r, names->arch, desc, sizeof(desc));
		if (c->res->mismatches++ < MAX_SHOWN)
			fprintf(c->log,
				"  MISMATCH %s 0x%llx: no FDE covers it, ours %s (want none)\n",
				c->path, (unsigned long long)addr, desc);
	}
}

static const struct row *cie_find(struct ctx *c, enum sec s, uint64_t off)
{
	size_t lo = 0, hi = c->ncies[s];

	/* readelf prints entries in section order, so CIE offsets ascend */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->cies[s][mid].off == off)
			return &c->cies[s][mid].row;
		if (c->cies[s][mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void cie_remember(struct ctx *c, enum sec s, uint64_t off, const struct row *w)
{
	if (c->ncies[s] && c->cies[s][c->ncies[s] - 1].off >= off)
		return;
	if (c->ncies[s] == c->capcies[s]) {
		c->capcies[s] = c->capcies[s] ? c->capcies[s] * 2 : 64;
		c->cies[s] = xrealloc(c->cies[s], c->capcies[s] * sizeof(*c->cies[s]));
	}
	c->cies[s][c->ncies[s]].off = off;
	c->cies[s][c->ncies[s]].row = *w;
	c->ncies[s]++;
}

struct block {
	enum sec sec;
	struct entry_hdr e;
	int open;
	int cfa_col, rbp_col, ra_col, rbx_col, ncols; /* indexes into a row's tokens */
	struct row *rows;
	size_t n, cap;
};

/* "c+8" / "c-16" / "v-8" moved by -shift; other tokens as they are. */
static void token_shift(char *t, long shift)
{
	if ((t[0] == 'c' || t[0] == 'v') && is_offset_token(t, t[0] == 'c' ? "c" : "v"))
		snprintf(t + 1, TOK_LEN - 1, "%+ld", strtol(t + 1, NULL, 10) - shift);
}

/*
 * arm64: glibc's _dl_runtime_resolve leaves PLT0's 16-byte push out of its
 * CFA (x30 at CFA + 8), and the compiler puts it back in every row of such
 * an FDE (tables/compact.c); readelf's rows of that FDE are moved the same
 * way before they are compared, no other.
 */
static void add_left_out_push(struct block *b)
{
	long shift = 0, v;
	size_t i;

	for (i = 0; i < b->n; i++)
		if (b->rows[i].ra[0] == 'c' && is_offset_token(b->rows[i].ra, "c") &&
		    (v = strtol(b->rows[i].ra + 1, NULL, 10)) >= 0 && v + 8 > shift)
			shift = v + 8;
	for (i = 0; shift && i < b->n; i++) {
		struct row *w = &b->rows[i];
		size_t n = strcspn(w->cfa, "+-");

		if (!(is_offset_token(w->cfa, names->sp) || is_offset_token(w->cfa, names->fp)))
			continue;
		snprintf(w->cfa + n, TOK_LEN - n, "%+ld", strtol(w->cfa + n, NULL, 10) + shift);
		token_shift(w->ra, shift);
		token_shift(w->rbp, shift);
	}
}

static void block_flush(struct ctx *c, struct block *b)
{
	size_t i;

	if (!b->open || b->sec == SEC_OTHER) {
		b->open = 0;
		b->n = 0;
		return;
	}
	if (b->e.is_cie) {
		if (b->n)
			cie_remember(c, b->sec, b->e.off, &b->rows[b->n - 1]);
	} else if (b->e.lo < b->e.hi) {
		struct result *res = c->res;

		if (names->arch == CFI_ARCH_ARM64)
			add_left_out_push(b);
		uint64_t rows0 = res->rows, excused0 = res->skipped_overlap + res->skipped_shadow;

		res->fdes_nonempty[b->sec]++;
		if (!b->n) {
			/* no instructions of its own: the CIE's initial row holds */
			const struct row *cr = cie_find(c, b->sec, b->e.cie);

			if (cr) {
				struct row w = *cr;

				w.addr = b->e.lo;
				c->res->cie_only++;
				check_addr(c, b->sec, &w);
			}
		}
		for (i = 0; i < b->n; i++) {
			/* only the last of several rows at one address is in force */
			if (i + 1 < b->n && b->rows[i + 1].addr == b->rows[i].addr)
				continue;
			if (b->rows[i].addr < b->e.lo || b->rows[i].addr >= b->e.hi) {
				c->res->skipped_outside++;
				continue;
			}
			check_addr(c, b->sec, &b->rows[i]);
		}
		/* readelf prints every FDE's row at its start: one must have been compared */
		if (res->rows > rows0)
			res->fdes_compared[b->sec]++;
		else if (res->skipped_overlap + res->skipped_shadow > excused0)
			res->fdes_excused[b->sec]++;
		else if (res->fdes_nonempty[b->sec] - res->fdes_compared[b->sec] -
			     res->fdes_excused[b->sec] <=
			 MAX_SHOWN)
			fprintf(c->log, "  UNCOMPARED %s FDE 0x%llx..0x%llx [%s]: no row checked\n",
				c->path, (unsigned long long)b->e.lo, (unsigned long long)b->e.hi,
				b->sec == SEC_EH ? ".eh_frame" : ".debug_frame");
		check_gap(c, b->e.hi);
	}
	b->open = 0;
	b->n = 0;
}

static void parse_col_header(struct block *b, char *line)
{
	char *save = NULL, *tok;
	int i = 0;

	b->cfa_col = b->rbp_col = b->ra_col = b->rbx_col = -1;
	/* tokens: LOC CFA name...; a row's tokens: addr cfa value... */
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++) {
		if (!strcmp(tok, "CFA"))
			b->cfa_col = i;
		else if (!strcmp(tok, names->fp))
			b->rbp_col = i;
		else if (!strcmp(tok, "ra"))
			b->ra_col = i;
		else if (names->carried && !strcmp(tok, names->carried))
			b->rbx_col = i;
	}
	b->ncols = i;
}

static void parse_row(struct block *b, char *line)
{
	char *save = NULL, *tok;
	struct row *w;
	int i = 0;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->rows = xrealloc(b->rows, b->cap * sizeof(*b->rows));
	}
	w = &b->rows[b->n++];
	memset(w, 0, sizeof(*w));
	strcpy(w->rbp, "u");
	strcpy(w->ra, "u");
	strcpy(w->rbx, "u");
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++) {
		/* a register value prints as two words, "r9 (r9)": the second is no column */
		if (tok[0] == '(' && i > 1) {
			i--;
			continue;
		}
		if (i == 0)
			w->addr = strtoull(tok, NULL, 16);
		else if (i == b->cfa_col)
			snprintf(w->cfa, TOK_LEN, "%s", tok);
		else if (i == b->rbp_col)
			snprintf(w->rbp, TOK_LEN, "%s", tok);
		else if (i == b->ra_col)
			snprintf(w->ra, TOK_LEN, "%s", tok);
		else if (i == b->rbx_col)
			snprintf(w->rbx, TOK_LEN, "%s", tok);
	}
	/*
	 * readelf can drop a column mid-FDE (DW_CFA_restore of a register the
	 * CIE never mentioned); then the tokens no longer line up.
	 */
	w->odd = i != b->ncols || b->cfa_col < 0;
}

/* Pass 1: FDE ranges per section. */
static int collect_ranges(struct ctx *c)
{
	enum sec s = SEC_OTHER;
	struct readelf re;
	char *line = NULL;
	size_t cap = 0;
	int i;

	if (readelf_open(c->path, 1, &re))
		return -1;
	while (getline(&line, &cap, re.out) > 0) {
		struct entry_hdr e;

		if (line[0] == 'C') {
			s = section_of(line);
			continue;
		}
		if (!strncmp(line, READELF_NOBITS, sizeof(READELF_NOBITS) - 1)) {
			c->res->readelf_nobits++;
			continue;
		}
		if (s == SEC_OTHER || hex_token_len(line) != 8)
			continue;
		if (parse_entry_header(line, &e) && e.is_fde) {
			c->res->fdes[s]++;
			if (e.lo < e.hi)
				rs_add(&c->fde[s], e.lo, e.hi);
		}
	}
	free(line);
	readelf_close(&re, c->res);

	for (i = 0; i < 2; i++) {
		qsort(c->fde[i].v, c->fde[i].n, sizeof(struct range), range_cmp);
		c->res->overlap_fdes += rs_overlaps(&c->fde[i], &c->overlap[i]);
	}
	rs_union(&c->fde[SEC_EH], &c->eh_covered);
	{
		struct rangeset all = {0};

		for (i = 0; i < 2; i++)
			for (size_t k = 0; k < c->fde[i].n; k++)
				rs_add(&all, c->fde[i].v[k].lo, c->fde[i].v[k].hi);
		for (i = 0; i < 3; i++)
			if (stub_sections[i].hi > stub_sections[i].lo)
				rs_add(&all, stub_sections[i].lo, stub_sections[i].hi);
		if (all.n)
			qsort(all.v, all.n, sizeof(struct range), range_cmp);
		rs_union(&all, &c->covered);
		free(all.v);
	}
	return 0;
}

/* Pass 2: every row against the table. */
static int compare_rows(struct ctx *c)
{
	struct block b = {.sec = SEC_OTHER};
	struct readelf re;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	size_t hl;

	if (readelf_open(c->path, 1, &re))
		return -1;
	while ((len = getline(&line, &cap, re.out)) > 0) {
		if (line[0] == 'C') {
			block_flush(c, &b);
			b.sec = section_of(line);
			continue;
		}
		if (b.sec == SEC_OTHER)
			continue;
		if (!strncmp(line, "   LOC", 6)) {
			parse_col_header(&b, line);
			continue;
		}
		hl = hex_token_len(line);
		if (hl == 16) {
			if (b.open)
				parse_row(&b, line);
		} else if (hl == 8) {
			block_flush(c, &b);
			if (parse_entry_header(line, &b.e)) {
				b.open = 1;
				b.cfa_col = b.rbp_col = b.ra_col = -1;
				b.ncols = 0;
			}
		}
	}
	block_flush(c, &b);
	free(b.rows);
	free(line);
	return readelf_close(&re, c->res);
}

/* readelf -wN's exit status: does the file itself dump cleanly? */
static int readelf_nolink_status(const char *path)
{
	struct result scratch = {0};
	struct readelf re;
	char buf[65536];

	if (readelf_open(path, 0, &re))
		return -1;
	while (fread(buf, 1, sizeof(buf), re.out) > 0)
		;
	return readelf_close(&re, &scratch);
}

/* EM_X86_64 or EM_AARCH64 for a 64-bit ELF of those, 0: other ELF, -1: not ELF / unreadable */
static int elf_machine(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return -1;
	if (h[EI_CLASS] != ELFCLASS64 || h[EI_DATA] != ELFDATA2LSB || h[19] != 0)
		return 0;
	return h[18] == EM_X86_64 || h[18] == EM_AARCH64 ? h[18] : 0;
}

/*
 * Bytes of .eh_frame / .debug_frame with contents (not NOBITS), from the
 * section headers: whether CFI exists, known without readelf or the compiler.
 */
static void frame_section_bytes(const char *path, uint64_t bytes[2])
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *e;

	bytes[0] = bytes[1] = 0;
	memset(stub_sections, 0, sizeof(stub_sections));
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			for (int k = names->arch == CFI_ARCH_ARM64 ? 0 : 1; name && k < 3; k++)
				if (!strcmp(name, (const char *[]){".plt", ".init", ".fini"}[k]))
					stub_sections[k] =
					    (struct range){sh.sh_addr, sh.sh_addr + sh.sh_size};
			if (name && !strcmp(name, ".eh_frame"))
				bytes[SEC_EH] += sh.sh_size;
			else if (name && !strcmp(name, ".debug_frame"))
				bytes[SEC_DEBUG] += sh.sh_size;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

static const struct cfi_build_opts cfi_only = {.no_gopclntab = 1};

static void run_one(const char *path, struct result *res, FILE *log)
{
	struct ctx c = {.path = path, .res = res, .log = log};
	struct cfi_diag diag = {0};
	double t0 = mono_ms();
	int i;

	snprintf(res->path, sizeof(res->path), "%s", path);
	names = elf_machine(path) == EM_AARCH64 ? &arm64_names : &x86_64_names;
	res->arch = names->arch;
	frame_section_bytes(path, res->sec_bytes);
	/* readelf speaks for DWARF CFI only: Go's pcsp rows have test_gopclntab's oracle */
	res->build_rc = cfi_table_build_file(path, &cfi_only, &c.t, &diag);
	res->build_ms = mono_ms() - t0;
	if (collect_ranges(&c)) {
		fprintf(log, "  %s: cannot run readelf\n", path);
		res->readelf_rc = -1;
		goto out;
	}
	if (res->build_rc != CFI_OK || !c.t) {
		/* no CFI at all is only right if readelf found none either */
		res->built_ok = res->build_rc == CFI_ERR_NO_CFI && !res->fdes[0] && !res->fdes[1];
		if (!res->built_ok)
			fprintf(log, "  %s: build failed: %s%s%s\n", path,
				cfi_strerror(res->build_rc), diag.count ? ": " : "",
				diag.count ? diag.msg[0] : "");
		goto out;
	}
	res->built_ok = 1;
	compare_rows(&c);
out:
	if (res->readelf_rc)
		res->readelf_nolink_rc = readelf_nolink_status(path);
	cfi_table_free(c.t);
	for (i = 0; i < 2; i++) {
		free(c.fde[i].v);
		free(c.overlap[i].v);
		free(c.cies[i]);
	}
	free(c.covered.v);
	free(c.eh_covered.v);
	res->total_ms = mono_ms() - t0;
	res->done = 1;
}

static void print_result(FILE *log, const struct result *r)
{
	int k;

	fprintf(log,
		"oracle: %s: %llu rows (%llu .debug_frame), %llu mismatches, %llu+%llu FDEs "
		"(%llu via CIE row)",
		r->path, (unsigned long long)r->rows, (unsigned long long)r->rows_sec[SEC_DEBUG],
		(unsigned long long)r->mismatches, (unsigned long long)r->fdes[0],
		(unsigned long long)r->fdes[1], (unsigned long long)r->cie_only);
	for (k = 1; k < CFI_UNSUP_MAX; k++)
		if (r->unsup[k])
			fprintf(log, ", unsup %s=%llu", cfi_unsupported_name(k),
				(unsigned long long)r->unsup[k]);
	if (r->overlap_fdes)
		fprintf(log, ", %llu overlapping FDEs (%llu rows skipped)",
			(unsigned long long)r->overlap_fdes,
			(unsigned long long)r->skipped_overlap);
	if (r->skipped_shadow)
		fprintf(log, ", %llu .debug_frame rows under .eh_frame",
			(unsigned long long)r->skipped_shadow);
	if (r->skipped_outside)
		fprintf(log, ", %llu rows past FDE end", (unsigned long long)r->skipped_outside);
	if (r->skipped_odd)
		fprintf(log, ", %llu unparsable rows", (unsigned long long)r->skipped_odd);
	if (r->readelf_rc)
		fprintf(log, ", readelf exit %d (%d without following links; %d NOBITS notes): %s",
			r->readelf_rc, r->readelf_nolink_rc, r->readelf_nobits, r->readelf_err);
	for (k = 0; k < 2; k++)
		if (r->fdes_excused[k])
			fprintf(log, ", %llu %s FDEs only overlapped/shadowed rows",
				(unsigned long long)r->fdes_excused[k],
				k == SEC_EH ? ".eh_frame" : ".debug_frame");
	fprintf(log, ", build %.1f ms, total %.0f ms\n", r->build_ms, r->total_ms);
}

/* ---- the job list: named binaries first, then ELF files of /usr/bin ---- */

struct job {
	char *path;
};

static struct job *jobs;
static size_t njobs, capjobs;
static struct {
	dev_t dev;
	ino_t ino;
} * seen;
static size_t nseen;
static unsigned int skipped_foreign;

/* 1: queued, 0: already queued or not x86-64 or arm64, -1: not a readable ELF file */
static int add_job(const char *path)
{
	struct stat st;
	size_t i;
	int k;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	for (i = 0; i < nseen; i++)
		if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino)
			return 0;
	k = elf_machine(path);
	if (k < 0)
		return -1;
	seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
	seen[nseen].dev = st.st_dev;
	seen[nseen].ino = st.st_ino;
	nseen++;
	if (k == 0) {
		skipped_foreign++;
		return 0;
	}
	if (njobs == capjobs) {
		capjobs = capjobs ? capjobs * 2 : 1024;
		jobs = xrealloc(jobs, capjobs * sizeof(*jobs));
	}
	jobs[njobs++].path = strdup(path);
	return 1;
}

/*
 * Whether make test compares the file named name: an eighth of /usr/bin,
 * the same eighth on every machine that has the same names (FNV-1a of
 * the name), so that a failure repeats (the named objects above are
 * compared whole every time); make test-oracle compares all of it
 * (CFIPROF_ORACLE_ALL=1).
 */
static bool in_share(const char *name, bool all)
{
	return all || hash_str(name) % 8 == 0;
}

/*
 * make test also leaves /usr/bin's largest files to make test-oracle: the
 * LLVM tools that link all of libLLVM (c-index-test, clangd, llvm-exegesis:
 * a third of the suite's CPU time), whose code libLLVM-14, compared by name,
 * already is.
 */
#define SHARE_MAX_BYTES (12L << 20)

static bool small_enough(const char *path, bool all)
{
	struct stat st;

	return all || (stat(path, &st) == 0 && st.st_size <= SHARE_MAX_BYTES);
}

/* The files of dir (those in_share); how many of its files were left out into *left. */
static void add_dir(const char *dir, bool all, unsigned int *left)
{
	struct dirent **ents;
	char path[PATH_MAX];
	int n, i;

	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && in_share(ents[i]->d_name, all) &&
		    small_enough(path, all)) {
			add_job(path);
		} else if (ents[i]->d_name[0] != '.') {
			(*left)++;
		}
		free(ents[i]);
	}
	free(ents);
}

/* Files the run must compare: a missing one, or one without a result, is a failure. */
#define MAX_EXPECTED 16
static struct {
	char path[PATH_MAX];
	int done;
} expected[MAX_EXPECTED];
static int nexpected;

static void add_expected(const char *path)
{
	int rc = add_job(path);

	CHECK(rc == 1, "%s: %s", path,
	      rc < 0 ? "missing or not an ELF file (make test-deps installs it)"
		     : "not a new x86-64 or arm64 ELF file");
	if (rc == 1 && nexpected < MAX_EXPECTED)
		snprintf(expected[nexpected++].path, PATH_MAX, "%s", path);
}

/* The libraries and interpreters profiles spend their time in, whatever /usr/bin holds. */
static void add_named(void)
{
	static const char *const named[] = {
	    "/lib/x86_64-linux-gnu/libc.so.6",
	    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	    "/usr/bin/python3.11",
	    "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	    "/lib64/ld-linux-x86-64.so.2",
	    /* arm64's, from Debian's cross packages: binutils reads any machine's CFI */
	    "/usr/aarch64-linux-gnu/lib/libc.so.6",
	    "/usr/aarch64-linux-gnu/lib/libstdc++.so.6",
	    "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1",
	};
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char py[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		add_expected(named[i]);
	/* Debian's arm64 python3.11, which make test unpacks for the arm64 guest */
	snprintf(py, sizeof(py), "%s/arm64-guest/debs/usr/bin/python3.11", out);
	CHECK(access(py, R_OK) == 0, "%s is missing (make %s/arm64-guest/debs/.done)", py, out);
	if (!access(py, R_OK))
		add_expected(py);
}

/*
 * No system binary here carries .debug_frame, so build some: the table
 * compiler's own sources (real code, a few thousand lines) plus a few
 * shapes GCC only emits on request, as .debug_frame only, as both sections
 * at once, and with the .debug_frame in a separate file behind a
 * .gnu_debuglink (readelf follows it too).
 */
static const char extra_src[] =
    "#include <stdarg.h>\n"
    "#include <string.h>\n"
    "extern void sink(void *p, int n);\n"
    "void drap(int n) { char b[64] __attribute__((aligned(64))); char v[n];\n"
    "	memset(b, n, sizeof(b)); memset(v, n, n); sink(b, v[n / 2]); }\n"
    "int va(int n, ...) { va_list ap; int s = 0; va_start(ap, n);\n"
    "	while (n--) s += va_arg(ap, int); va_end(ap); return s; }\n"
    "int rec(int n) { return n < 2 ? n : rec(n - 1) * 3 + rec(n - 2); }\n"
    "int many(int a, int b, int c, int d, int e, int f, int g, int h, int i) {\n"
    "	char *p = __builtin_alloca(a + 16); sink(p, b);\n"
    "	return a + b * c + d * e + f * g + h * i + va(3, a, b, c) + rec(a); }\n";

/*
 * No compiler emits the rows the rule model cannot hold on purpose: one
 * function per reason, so each reason's check against readelf's row runs on
 * a real case (x_unsup.so must show every reason).
 */
static const char unsup_asm[] =
    "	.text\n"
    /* a CIE with no initial instructions: the CFA is undefined until set */
    "u_undef:\n"
    "	.cfi_startproc simple\n"
    "	.cfi_offset rip, -8\n"
    "	nop\n"
    "	.cfi_def_cfa rsp, 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_cfa_reg:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    /* DWARF register 17 (xmm0): a general register (r10, rbx) would be a rule */
    "	.cfi_def_cfa 17, 8\n"
    "	nop\n"
    "	.cfi_def_cfa rsp, 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_cfa_expr:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    /* DW_CFA_def_cfa_expression: DW_OP_breg7 8; DW_OP_breg6 0; DW_OP_plus */
    "	.cfi_escape 0x0f, 0x05, 0x77, 0x08, 0x76, 0x00, 0x22\n"
    "	nop\n"
    "	.cfi_def_cfa rsp, 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_range:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    /* *(rsp) + 32768: the addend does not fit 16 bits */
    "	.cfi_escape 0x0f, 0x07, 0x77, 0x00, 0x06, 0x0a, 0x00, 0x80, 0x22\n"
    "	nop\n"
    /* DW_CFA_def_cfa_offset 2^32 + 16: past 32 bits */
    "	.cfi_escape 0x0e, 0x90, 0x80, 0x80, 0x80, 0x10\n"
    "	nop\n"
    "	.cfi_def_cfa_offset 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_ra:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    "	.cfi_register rip, r11\n"
    "	nop\n"
    "	.cfi_same_value rip\n"
    "	nop\n"
    "	.cfi_offset rip, -40000\n"
    "	nop\n"
    "	.cfi_offset rip, -8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_rbp:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    "	.cfi_register rbp, rbx\n"
    "	nop\n"
    "	.cfi_offset rbp, -40000\n"
    "	nop\n"
    "	.cfi_same_value rbp\n"
    "	ret\n"
    "	.cfi_endproc\n";

/*
 * arm64's: each reason on AArch64 registers.  A CFA in x20 (past the 16
 * registers a rule may name), one scaled by the SVE vector granule VG
 * (DWARF 46, in no register set a sample carries), an RA in x9 or past 16
 * bits, x29 likewise.
 */
static const char unsup_asm_arm64[] =
    "	.text\n"
    "u_undef:\n"
    "	.cfi_startproc simple\n"
    "	.cfi_offset x30, -8\n"
    "	nop\n"
    "	.cfi_def_cfa sp, 16\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_cfa_reg:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    "	.cfi_def_cfa x20, 16\n"
    "	nop\n"
    "	.cfi_def_cfa sp, 0\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_cfa_expr:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    /* DW_CFA_def_cfa_expression: DW_OP_breg31 16; DW_OP_bregx 46 0; DW_OP_plus */
    "	.cfi_escape 0x0f, 0x06, 0x8f, 0x10, 0x92, 0x2e, 0x00, 0x22\n"
    "	nop\n"
    "	.cfi_def_cfa sp, 0\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_range:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    /* *(sp) + 32768: the addend does not fit 16 bits */
    "	.cfi_escape 0x0f, 0x07, 0x8f, 0x00, 0x06, 0x0a, 0x00, 0x80, 0x22\n"
    "	nop\n"
    /* DW_CFA_def_cfa_offset 2^32 + 16: past 32 bits */
    "	.cfi_escape 0x0e, 0x90, 0x80, 0x80, 0x80, 0x10\n"
    "	nop\n"
    "	.cfi_def_cfa_offset 0\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_ra:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    "	.cfi_register x30, x9\n"
    "	nop\n"
    "	.cfi_offset x30, -40000\n"
    "	nop\n"
    "	.cfi_same_value x30\n"
    "	ret\n"
    "	.cfi_endproc\n"
    "u_rbp:\n"
    "	.cfi_startproc\n"
    "	nop\n"
    "	.cfi_register x29, x9\n"
    "	nop\n"
    "	.cfi_offset x29, -40000\n"
    "	nop\n"
    "	.cfi_same_value x29\n"
    "	ret\n"
    "	.cfi_endproc\n";

static char extra_dir[64];

/*
 * The sources of tables/ the made-up objects are compiled from, seven times
 * each (one run of gcc or clang after another, make test's CPU): four
 * files give each object hundreds of functions of every shape the compilers
 * make of this code, well past the hundred .debug_frame rows asked of them.
 */
#define EXTRA_SOURCES "compact.c cie_fde.c cfa_program.c rule_classify.c"

static void add_extras(void)
{
	char tmpl[] = "/tmp/cfiprof-oracle-XXXXXX", cmd[6 * PATH_MAX + 2048], src[PATH_MAX];
	const char *objs[] = {"x_dbg.so",   "x_dbg_O0.so",  "x_both.so",
			      "x_sep.so",   "x_unsup.so",   "a64_eh.so",
			      "a64_dbg.so", "a64_clang.so", "a64_unsup.so"};
	char root[PATH_MAX];
	FILE *f;
	int i;

	/* the library's own sources: the test runs from the repository root */
	if (!realpath(".", root) || access("tables/cfi_table.h", R_OK)) {
		CHECK(0, "the .debug_frame test objects are built from tables/*.c: run from the "
			 "repository root");
		return;
	}
	if (!mkdtemp(tmpl)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(extra_dir, sizeof(extra_dir), "%s", tmpl);
	snprintf(src, sizeof(src), "%s/extra.c", extra_dir);
	f = fopen(src, "w");
	if (f) {
		fputs(extra_src, f);
		fclose(f);
	}
	snprintf(src, sizeof(src), "%s/unsup.s", extra_dir);
	f = fopen(src, "w");
	if (f) {
		fputs(unsup_asm, f);
		fclose(f);
	}
	snprintf(src, sizeof(src), "%s/unsup_arm64.s", extra_dir);
	f = fopen(src, "w");
	if (f) {
		fputs(unsup_asm_arm64, f);
		fclose(f);
	}
	snprintf(
	    cmd, sizeof(cmd),
	    "cd %s && S=\"extra.c $(cd %s/tables && realpath " EXTRA_SOURCES ")\" && "
	    "F='-shared -fPIC -g -fno-asynchronous-unwind-tables -fno-unwind-tables -w "
	    "-D_GNU_SOURCE -I%s' && "
	    "gcc -O2 $F -o x_dbg.so $S && gcc -O0 $F -o x_dbg_O0.so $S && "
	    "n=0 && for s in $S; do n=$((n+1)); gcc -O2 -fPIC -w -D_GNU_SOURCE -I%s -S -o a$n.s "
	    "$s && { printf '\\t.cfi_sections .eh_frame, .debug_frame\\n'; cat a$n.s; } > b$n.s "
	    "|| exit 1; done && "
	    "gcc -shared -o x_both.so b*.s && "
	    "cp x_dbg.so x_sep.so && objcopy --only-keep-debug x_sep.so x_sep.debug && "
	    "objcopy --strip-debug --add-gnu-debuglink=x_sep.debug x_sep.so && "
	    "gcc -shared -nostdlib -o x_unsup.so unsup.s && "
	    /*
	     * arm64: GCC's sp-based CFA with return addresses signed by the B
	     * key (CIE augmentation "B", DW_CFA_AARCH64_negate_ra_state), the
	     * same as .debug_frame alone, and clang's x29-based CFA
	     */
	    "A='aarch64-linux-gnu-gcc -shared -fPIC -w -D_GNU_SOURCE -I%s' && "
	    "$A -O2 -mbranch-protection=pac-ret+b-key -o a64_eh.so $S && "
	    "$A -O2 -g -mbranch-protection=standard -fno-asynchronous-unwind-tables "
	    "-fno-unwind-tables -o a64_dbg.so $S && "
	    "mkdir c && n=0 && for s in $S; do n=$((n+1)); clang --target=aarch64-linux-gnu "
	    "--sysroot=/usr/aarch64-linux-gnu -idirafter /usr/include -O2 -fPIC -w "
	    "-D_GNU_SOURCE -I%s -c -o c/$n.o $s || exit 1; done && $A -o a64_clang.so c/*.o && "
	    "aarch64-linux-gnu-gcc -shared -nostdlib -o a64_unsup.so unsup_arm64.s",
	    extra_dir, root, root, root, root, root);
	if (system(cmd)) {
		CHECK(
		    0,
		    "could not build the test objects in %s (gcc, objcopy, aarch64-linux-gnu-gcc, "
		    "clang): %s",
		    extra_dir, cmd);
		return;
	}
	for (i = 0; i < (int)(sizeof(objs) / sizeof(objs[0])); i++) {
		snprintf(src, sizeof(src), "%s/%s", extra_dir, objs[i]);
		add_expected(src);
	}
}

static int is_extra(const char *path, const char *name)
{
	size_t n = strlen(extra_dir);

	return n && !strncmp(path, extra_dir, n) && !strcmp(path + n + 1, name);
}

/*
 * Unsupported rows, system binaries only (the objects above are made to hold
 * them).  Measured on this image (Debian 12, 2026-11, a CFA in any general
 * register being a rule): cfa-other-register 0, cfa-unknown-expression 7,
 * ra-elsewhere 82, rbp-elsewhere 68 (DRAP prologues: CFA in r10, rbp saved
 * through an expression), the others 0; the bounds leave about 20% room.  A binary may hold at most
 * UNSUP_MAX_BINARY of them (node: 808) and at most 16 + UNSUP_PERMILLE per
 * mille of its compared rows (local-extract: 361 of 35361, 10 per mille).
 */
#define RA_BOUND_ARM64 100
static const uint64_t unsup_total_max[CFI_ARCH_MAX][CFI_UNSUP_MAX] = {
    [CFI_ARCH_X86_64] = {[CFI_UNSUP_CFA_REG] = 10,
			 [CFI_UNSUP_CFA_EXPR] = 9,
			 [CFI_UNSUP_RA] = 125,
			 [CFI_UNSUP_RBP] = 85},
    /* arm64: RA_BOUND_ARM64 */
    [CFI_ARCH_ARM64] = {[CFI_UNSUP_RA] = RA_BOUND_ARM64, [CFI_UNSUP_RBP] = RA_BOUND_ARM64},
};
#define UNSUP_MAX_BINARY 1000
#define UNSUP_PERMILLE	 20

static uint64_t unsup_system[CFI_ARCH_MAX][CFI_UNSUP_MAX];

static int is_any_extra(const char *path)
{
	size_t n = strlen(extra_dir);

	return n && !strncmp(path, extra_dir, n);
}

/* readelf's exit status: 0, or READELF_NOBITS alone while the file itself dumps cleanly */
static int readelf_ok(const struct result *r)
{
	return r->readelf_rc == 0 || (r->readelf_rc == 1 && r->readelf_nobits &&
				      !r->readelf_err[0] && r->readelf_nolink_rc == 0);
}

static void check_result(const struct result *res)
{
	uint64_t unsup = 0;
	int k;

	CHECK(res->built_ok && res->mismatches == 0, "%s: built %s (%s), %llu mismatches",
	      res->path, res->built_ok ? "ok" : "FAILED", cfi_strerror(res->build_rc),
	      (unsigned long long)res->mismatches);
	CHECK(readelf_ok(res),
	      "%s: readelf exited %d (%d without following links; %d NOBITS notes), stderr: %s",
	      res->path, res->readelf_rc, res->readelf_nolink_rc, res->readelf_nobits,
	      res->readelf_err);
	/*
	 * The minimum compared: one row per FDE readelf lists with a non-empty
	 * range (readelf prints each FDE's row at its start), except FDEs all of
	 * whose rows sit where two FDEs overlap or under .eh_frame.
	 */
	for (k = 0; k < 2; k++)
		CHECK(res->fdes_compared[k] + res->fdes_excused[k] == res->fdes_nonempty[k],
		      "%s: %s: %llu of %llu FDEs had no row compared", res->path,
		      k == SEC_EH ? ".eh_frame" : ".debug_frame",
		      (unsigned long long)(res->fdes_nonempty[k] - res->fdes_compared[k] -
					   res->fdes_excused[k]),
		      (unsigned long long)res->fdes_nonempty[k]);
	/*
	 * CFI in the section headers (more than the 4-byte terminator crtend.o
	 * adds to every link): readelf and the compiler must both have seen it.
	 */
	if (res->sec_bytes[SEC_EH] > 4)
		CHECK(res->fdes[SEC_EH] > 0 && res->rows_sec[SEC_EH] > 0,
		      "%s: %llu bytes of .eh_frame, but %llu FDEs and %llu rows compared",
		      res->path, (unsigned long long)res->sec_bytes[SEC_EH],
		      (unsigned long long)res->fdes[SEC_EH],
		      (unsigned long long)res->rows_sec[SEC_EH]);
	if (res->sec_bytes[SEC_DEBUG] > 4)
		CHECK(res->fdes[SEC_DEBUG] > 0 &&
			  res->rows_sec[SEC_DEBUG] + res->skipped_shadow > 0,
		      "%s: %llu bytes of .debug_frame, but %llu FDEs and %llu rows compared",
		      res->path, (unsigned long long)res->sec_bytes[SEC_DEBUG],
		      (unsigned long long)res->fdes[SEC_DEBUG],
		      (unsigned long long)res->rows_sec[SEC_DEBUG]);
	CHECK(res->unsup_wrong_reason == 0,
	      "%s: %llu unsupported rows whose reason readelf's row does not show", res->path,
	      (unsigned long long)res->unsup_wrong_reason);
	for (k = 1; k < CFI_UNSUP_MAX; k++)
		unsup += res->unsup[k];
	/* the made-up objects exist to exercise .debug_frame: make sure they did */
	if (is_extra(res->path, "x_dbg.so") || is_extra(res->path, "x_sep.so") ||
	    is_extra(res->path, "a64_dbg.so"))
		CHECK(res->rows_sec[SEC_DEBUG] > 100, "%s: only %llu .debug_frame rows compared",
		      res->path, (unsigned long long)res->rows_sec[SEC_DEBUG]);
	if (is_extra(res->path, "x_both.so"))
		CHECK(res->skipped_shadow > 100,
		      "%s: only %llu .debug_frame rows shadowed by .eh_frame", res->path,
		      (unsigned long long)res->skipped_shadow);
	if (is_extra(res->path, "x_unsup.so") || is_extra(res->path, "a64_unsup.so")) {
		/* CFI_UNSUP_REG_LOST is the walker's, never a table's */
		for (k = 1; k < CFI_UNSUP_REG_LOST; k++)
			CHECK(res->unsup[k] >= 1, "%s: no %s row", res->path,
			      cfi_unsupported_name(k));
	} else if (!is_any_extra(res->path)) {
		CHECK(unsup <= UNSUP_MAX_BINARY &&
			  unsup * 1000 <= 16000 + res->rows * UNSUP_PERMILLE,
		      "%s: %llu unsupported rows of %llu (bound %d, and 16 + %d per mille)",
		      res->path, (unsigned long long)unsup, (unsigned long long)res->rows,
		      UNSUP_MAX_BINARY, UNSUP_PERMILLE);
		for (k = 1; k < CFI_UNSUP_MAX; k++)
			unsup_system[res->arch][k] += res->unsup[k];
	}
	for (k = 0; k < nexpected; k++)
		if (!strcmp(expected[k].path, res->path))
			expected[k].done = 1;
}

static void check_totals(void)
{
	int a, k;

	for (a = 0; a < CFI_ARCH_MAX; a++)
		for (k = 1; k < CFI_UNSUP_MAX; k++)
			CHECK(unsup_system[a][k] <= unsup_total_max[a][k],
			      "%s system binaries: %llu %s rows (bound %llu)", cfi_arch_name(a),
			      (unsigned long long)unsup_system[a][k], cfi_unsupported_name(k),
			      (unsigned long long)unsup_total_max[a][k]);
	for (k = 0; k < nexpected; k++)
		CHECK(expected[k].done, "%s: no result", expected[k].path);
}

struct slot {
	pid_t pid;
	int fd;
	size_t job;
};

static pid_t start_job(size_t j, int *fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		static struct result res;
		char *buf = NULL;
		size_t len = 0;
		FILE *log;
		ssize_t w;

		close(p[0]);
		log = open_memstream(&buf, &len);
		if (!log)
			_exit(2);
		run_one(jobs[j].path, &res, log);
		print_result(log, &res);
		fclose(log);
		/* one write, so the two workers' reports do not interleave */
		w = write(1, buf, len);
		(void)w;
		if (write(p[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct slot slots[8];
	int nslots = 2, running = 0, i;
	uint64_t rows = 0, mism = 0, unsup[CFI_UNSUP_MAX] = {0}, overlap = 0, bins = 0;
	size_t next = 0;
	double t0 = mono_ms();
	const char *env = getenv("CFIPROF_ORACLE_JOBS"), *all = getenv("CFIPROF_ORACLE_ALL");
	unsigned int left = 0;

	if (env && atoi(env) > 0)
		nslots = atoi(env) < 8 ? atoi(env) : 8;
	if (argc > 1) {
		/* explicit files replace the default list, for debugging one case */
		for (i = 1; i < argc; i++)
			add_job(argv[i]);
	} else {
		add_named();
		add_extras();
		add_dir("/usr/bin", all && !strcmp(all, "1"), &left);
	}
	printf("oracle: %zu x86-64 and arm64 ELF files (%u other ELF skipped), %d workers; "
	       "%u entries of /usr/bin left to make test-oracle\n",
	       njobs, skipped_foreign, nslots, left);

	while (next < njobs || running) {
		struct result res;
		int status, k;
		pid_t pid;

		if (next < njobs && running < nslots) {
			slots[running].job = next;
			slots[running].pid = start_job(next, &slots[running].fd);
			if (slots[running].pid < 0) {
				CHECK(0, "%s: fork failed", jobs[next].path);
				next++;
				continue;
			}
			running++;
			next++;
			continue;
		}
		pid = wait(&status);
		if (pid < 0)
			break;
		for (k = 0; k < running && slots[k].pid != pid; k++)
			;
		if (k == running)
			continue;
		memset(&res, 0, sizeof(res));
		if (read_full(slots[k].fd, &res, sizeof(res)) || !res.done) {
			CHECK(0, "%s: worker died (status 0x%x)", jobs[slots[k].job].path, status);
		} else {
			bins++;
			rows += res.rows;
			mism += res.mismatches;
			overlap += res.overlap_fdes;
			for (i = 0; i < CFI_UNSUP_MAX; i++)
				unsup[i] += res.unsup[i];
			check_result(&res);
		}
		close(slots[k].fd);
		slots[k] = slots[--running];
	}

	printf("oracle: total %llu binaries, %llu rows checked, %llu mismatches, "
	       "%llu overlapping FDEs, unsupported:",
	       (unsigned long long)bins, (unsigned long long)rows, (unsigned long long)mism,
	       (unsigned long long)overlap);
	for (i = 1; i < CFI_UNSUP_MAX; i++)
		printf(" %s=%llu", cfi_unsupported_name(i), (unsigned long long)unsup[i]);
	printf(", %.1f s\n", (mono_ms() - t0) / 1e3);
	check_totals();
	if (extra_dir[0] && !getenv("CFIPROF_KEEP_TMP")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", extra_dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", extra_dir);
	}
	return HARNESS_DONE();
}
