/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Corrupted input: the table compiler reads files of every process on the
 * machine, so a truncated, bit-rotten or hostile ELF must give an error or a
 * partial table, never a crash, a hang or an out-of-bounds read.  Real
 * sections are truncated and bit-flipped, and hand-made CIE/FDE byte strings
 * aim at each length, pointer, LEB128 and state-stack path.  Also built with
 * ASan+UBSan by the Makefile, so it only uses tables/, libc and libelf.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "tables/cfi_table.h"
#include "tests/lib/harness.h"
#include "tests/lib/cfi_bytes.h"
#include "tests/lib/mini_elf.h"

/* Generous: ASan and a busy machine; a hang is what this catches. */
#define CASE_TIMEOUT 30

static char cur_case[160];

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: timeout (hang?) in case: ";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, cur_case, strlen(cur_case)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

/* ---- one build, with every property the contract promises ---- */

struct phase {
	char name[96];
	unsigned int cases, ok, errors;
	unsigned int bad_rc, bad_diag, bad_table;
	unsigned int shown;
	double max_ms;
	char max_case[160];
};

static int diag_names_place(const struct cfi_diag *d)
{
	const char *m = d->msg[0];

	return (strstr(m, ".eh_frame") || strstr(m, ".debug_frame") || strstr(m, "ELF")) &&
	       (strstr(m, "offset") || strstr(m, "0x"));
}

/* Structural invariants the walker relies on without checking. */
static int table_sane(const struct cfi_table *t, char *why, size_t len)
{
	uint32_t p, i;

	if (!t->nr_rules || t->rules[0].cfa_kind != CFI_CFA_NONE) {
		snprintf(why, len, "rules[0] is not the none rule");
		return 0;
	}
	for (i = 0; i < t->nr_rules; i++)
		if (t->rules[i].cfa_kind >= CFI_CFA_KIND_MAX ||
		    t->rules[i].rbp_kind >= CFI_REG_KIND_MAX ||
		    t->rules[i].ra_kind >= CFI_REG_KIND_MAX ||
		    t->rules[i].reason >= CFI_UNSUP_MAX) {
			snprintf(why, len, "rule %u has an out-of-range kind", i);
			return 0;
		}
	for (p = 0; p < t->nr_pages; p++) {
		const struct cfi_page *pg = &t->pages[p];

		if ((p && t->pages[p - 1].page >= pg->page) || !pg->nr_rows ||
		    (uint64_t)pg->first_row + pg->nr_rows > t->nr_rows) {
			snprintf(why, len, "page %u (0x%llx) malformed", p,
				 (unsigned long long)pg->page);
			return 0;
		}
		if (t->rows[pg->first_row].off != 0) {
			snprintf(why, len, "page 0x%llx has no row at offset 0",
				 (unsigned long long)pg->page);
			return 0;
		}
		for (i = pg->first_row; i < pg->first_row + pg->nr_rows; i++) {
			if (t->rows[i].rule >= t->nr_rules ||
			    (i > pg->first_row && t->rows[i - 1].off >= t->rows[i].off)) {
				snprintf(why, len, "page 0x%llx row %u bad",
					 (unsigned long long)pg->page, i - pg->first_row);
				return 0;
			}
		}
	}
	/* lookups anywhere must stay inside the table */
	(void)cfi_table_lookup(t, 0);
	(void)cfi_table_lookup(t, t->min_addr);
	(void)cfi_table_lookup(t, t->max_addr - 1);
	(void)cfi_table_lookup(t, t->min_addr + (t->max_addr - t->min_addr) / 2);
	(void)cfi_table_lookup(t, UINT64_MAX);
	return 1;
}

/*
 * Builds from a private copy of exactly len bytes (so ASan sees any read past
 * the end) and checks the contract; returns rc, and the table if keep is set.
 */
/*
 * buf copied into a block of exactly len bytes, so that a sanitizer sees a
 * read past the input's end.  The block is kept for the next case of the
 * same length (a phase's flips are all one image's): a fresh one per case
 * is a fresh mapping under ASan, hundreds of thousands of page faults.
 */
static void *case_copy(const void *buf, size_t len)
{
	static void *copy;
	static size_t copy_len = SIZE_MAX;

	if (len != copy_len) {
		free(copy);
		copy = malloc(len ? len : 1);
		if (!copy) {
			perror("malloc");
			exit(2);
		}
		copy_len = len;
	}
	memcpy(copy, buf, len);
	return copy;
}

static int run_case(struct phase *ph, const char *name, const void *buf, size_t len,
		    struct cfi_table **keep)
{
	struct cfi_table *t = NULL;
	struct cfi_diag diag;
	char why[160];
	void *copy = case_copy(buf, len);
	double t0, ms;
	int rc;

	memset(&diag, 0, sizeof(diag));
	snprintf(cur_case, sizeof(cur_case), "%s: %s", ph->name, name);
	alarm(CASE_TIMEOUT);
	t0 = mono_ms();
	rc = cfi_table_build_mem(copy, len, NULL, &t, &diag);
	ms = mono_ms() - t0;
	alarm(0);

	ph->cases++;
	if (ms > ph->max_ms) {
		ph->max_ms = ms;
		snprintf(ph->max_case, sizeof(ph->max_case), "%s", name);
	}
	/* counted for the phase's figures too; here for the test that made the case */
	CHECK(rc <= 0 && rc >= CFI_ERR_BUDGET && (rc == CFI_OK) == (t != NULL),
	      "%s/%s: rc %d with table %p", ph->name, name, rc, (void *)t);
	if (rc > 0 || rc < CFI_ERR_BUDGET || (rc == CFI_OK) != (t != NULL)) {
		ph->bad_rc++;
		if (ph->shown++ < 5)
			fprintf(stderr, "  %s/%s: rc %d with table %p\n", ph->name, name, rc,
				(void *)t);
	} else if (rc == CFI_OK) {
		ph->ok++;
		if (!table_sane(t, why, sizeof(why))) {
			ph->bad_table++;
			if (ph->shown++ < 5)
				fprintf(stderr, "  %s/%s: %s\n", ph->name, name, why);
		}
	} else {
		ph->errors++;
		if (diag.count > 0 && !diag_names_place(&diag)) {
			ph->bad_diag++;
			if (ph->shown++ < 5)
				fprintf(stderr, "  %s/%s: %s: message names no place: '%s'\n",
					ph->name, name, cfi_strerror(rc), diag.msg[0]);
		}
	}
	if (keep)
		*keep = t;
	else
		cfi_table_free(t);
	return rc;
}

static void phase_done(struct phase *ph)
{
	printf("malformed: %s: %u cases: %u ok, %u errors; slowest %.1f ms (%s)\n", ph->name,
	       ph->cases, ph->ok, ph->errors, ph->max_ms, ph->max_case);
	CHECK(ph->bad_rc == 0, "%s: %u builds returned a bad code / table pair", ph->name,
	      ph->bad_rc);
	CHECK(ph->bad_diag == 0, "%s: %u error messages name no section and offset", ph->name,
	      ph->bad_diag);
	CHECK(ph->bad_table == 0, "%s: %u tables break the page/row invariants", ph->name,
	      ph->bad_table);
}

/* ---- real files ---- */

struct image {
	const char *path;
	uint8_t *buf;
	size_t len;
	struct {
		const char *name;
		size_t off, size;
		size_t shdr; /* file offset of its Elf64_Shdr */
	} sec[3];
	int nsec;
};

static int load_image(struct image *im, const char *path)
{
	static const char *names[] = {".eh_frame", ".eh_frame_hdr", ".debug_frame"};
	struct stat st;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	Elf *e;
	FILE *f;
	int i;

	memset(im, 0, sizeof(*im));
	im->path = path;
	f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st)) {
		if (f)
			fclose(f);
		return -1;
	}
	im->len = st.st_size;
	im->buf = malloc(im->len);
	if (!im->buf || fread(im->buf, 1, im->len, f) != im->len) {
		fclose(f);
		return -1;
	}
	fclose(f);
	e = elf_memory((char *)im->buf, im->len);
	if (!e || elf_getshdrstrndx(e, &shstrndx) || !gelf_getehdr(e, &eh))
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(e, shstrndx, sh.sh_name);
		for (i = 0; nm && i < 3; i++) {
			if (strcmp(nm, names[i]) || !sh.sh_size ||
			    sh.sh_offset + sh.sh_size > im->len)
				continue;
			im->sec[im->nsec].name = names[i];
			im->sec[im->nsec].off = sh.sh_offset;
			im->sec[im->nsec].size = sh.sh_size;
			im->sec[im->nsec].shdr = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize;
			im->nsec++;
		}
	}
	elf_end(e);
	return 0;
}

static void test_truncate(struct image *im)
{
	struct phase ph = {0};
	char name[300];
	int i;

	snprintf(ph.name, sizeof(ph.name), "truncate %s", im->path);
	for (i = 0; i <= 200; i++) {
		size_t len = i == 200 ? im->len - 1 : im->len / 200 * i;

		snprintf(name, sizeof(name), "%s[0..%zu)", im->path, len);
		run_case(&ph, name, im->buf, len, NULL);
	}
	/*
	 * Cutting the file loses the section headers at its end, so that mostly
	 * tests libelf: also shrink each CFI section in place (sh_size), which
	 * ends it mid-entry with everything else intact.
	 */
	for (i = 0; i < im->nsec; i++) {
		Elf64_Shdr *sh = (Elf64_Shdr *)(im->buf + im->sec[i].shdr);
		uint64_t full = sh->sh_size;

		for (int k = 0; k < 50; k++) {
			sh->sh_size = full / 50 * k + (uint64_t)k % 7;
			snprintf(name, sizeof(name), "%s %s sh_size 0x%llx of 0x%llx", im->path,
				 im->sec[i].name, (unsigned long long)sh->sh_size,
				 (unsigned long long)full);
			run_case(&ph, name, im->buf, im->len, NULL);
		}
		sh->sh_size = full;
	}
	/* and at each CFI section's own end and middle, where parsers stop */
	for (i = 0; i < im->nsec; i++) {
		size_t ends[] = {im->sec[i].off + 1, im->sec[i].off + im->sec[i].size / 2,
				 im->sec[i].off + im->sec[i].size - 1};

		for (size_t k = 0; k < 3; k++) {
			snprintf(name, sizeof(name), "%s[0..%zu) in %s", im->path, ends[k],
				 im->sec[i].name);
			run_case(&ph, name, im->buf, ends[k], NULL);
		}
	}
	phase_done(&ph);
}

/* Small, fixed PRNG: the same corruptions on every machine and every run. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_bitflips(struct image *im, unsigned int iters)
{
	struct phase ph = {0};
	unsigned int i, k;
	char name[300];

	if (!im->nsec)
		return;
	snprintf(ph.name, sizeof(ph.name), "bitflip %s", im->path);
	for (i = 0; i < iters; i++) {
		int s = (int)(rng() % im->nsec);
		unsigned int nflips = 1 + rng() % 4;
		size_t offs[4];
		uint8_t bits[4];

		for (k = 0; k < nflips; k++) {
			offs[k] = im->sec[s].off + rng() % im->sec[s].size;
			bits[k] = (uint8_t)(1u << (rng() % 8));
			im->buf[offs[k]] ^= bits[k];
		}
		snprintf(name, sizeof(name), "%s %s+0x%zx ^0x%02x (%u flips)", im->path,
			 im->sec[s].name, offs[0] - im->sec[s].off, bits[0], nflips);
		run_case(&ph, name, im->buf, im->len, NULL);
		/* undo in reverse, in case two flips hit one byte */
		for (k = nflips; k-- > 0;)
			im->buf[offs[k]] ^= bits[k];
	}
	phase_done(&ph);
}

/*
 * One corrupted byte in .eh_frame should cost at most the entry it lands in
 * (and, for a CIE, that CIE's FDEs); the rest of the object must still load.
 */
static void test_survival(struct image *im, unsigned int iters)
{
	struct phase ph = {0};
	struct cfi_table *base = NULL, *t;
	unsigned int i, survived = 0, tried = 0;
	size_t eh_off = 0, eh_size = 0;
	uint64_t base_fdes;
	char name[300];
	int s;

	snprintf(ph.name, sizeof(ph.name), "survival %s", im->path);
	for (s = 0; s < im->nsec; s++)
		if (!strcmp(im->sec[s].name, ".eh_frame")) {
			eh_off = im->sec[s].off;
			eh_size = im->sec[s].size;
		}
	if (!eh_size || run_case(&ph, "baseline", im->buf, im->len, &base) || !base) {
		CHECK(0, "%s: baseline table does not build", im->path);
		return;
	}
	base_fdes = base->stats.fdes;
	cfi_table_free(base);
	for (i = 0; i < iters; i++) {
		size_t off = eh_off + rng() % eh_size;
		uint8_t old = im->buf[off], nv = (uint8_t)(old ^ (1 + rng() % 255));

		im->buf[off] = nv;
		snprintf(name, sizeof(name), "%s .eh_frame+0x%zx %02x->%02x", im->path,
			 off - eh_off, old, nv);
		t = NULL;
		run_case(&ph, name, im->buf, im->len, &t);
		tried++;
		if (t && t->nr_rows > 0 && t->stats.fdes * 10 >= base_fdes * 9)
			survived++;
		cfi_table_free(t);
		im->buf[off] = old;
	}
	printf("malformed: survival %s: %u of %u single-byte corruptions keep >= 90%% of %llu "
	       "FDEs\n",
	       im->path, survived, tried, (unsigned long long)base_fdes);
	CHECK(survived * 10 >= tried * 9, "%s: only %u of %u corruptions kept most FDEs", im->path,
	      survived, tried);
	phase_done(&ph);
}

#define TXT MINI_TEXT_ADDR

static struct phase crafted = {.name = "crafted CIE/FDE/ELF"};
/*
 * What each test hands on to the next, as when they all ran in one process:
 * the crafted cases' counts and the PRNG (the same corruptions as before).
 */
static struct carried {
	struct phase crafted;
	uint64_t rng_state;
} *carried;

#define RUN_CARRIED(name, stmt)                                                                    \
	RUN_TEST_AS(name, {                                                                        \
		crafted = carried->crafted;                                                        \
		rng_state = carried->rng_state;                                                    \
		stmt;                                                                              \
		carried->crafted = crafted;                                                        \
		carried->rng_state = rng_state;                                                    \
	})
#define RUN_CRAFTED(fn) RUN_CARRIED(harness_short_name(#fn), fn())

/* Wraps CFI bytes in a minimal ELF and runs them; keep returns the table. */
static int run_cfi(const char *name, const struct bb *b, int debug, struct cfi_table **keep)
{
	size_t len;
	uint8_t *img = mini_elf_cfi(b->p, b->n, debug, &len);
	int rc;

	if (!img) {
		perror("mini_elf");
		exit(2);
	}
	rc = run_case(&crafted, name, img, len, keep);
	free(img);
	return rc;
}

static void expect_rule(const char *name, const struct cfi_table *t, uint64_t addr, int kind,
			int off)
{
	const struct cfi_rule *r;
	char d[192];

	if (!t) {
		CHECK(0, "%s: no table", name);
		return;
	}
	r = cfi_table_lookup(t, addr);
	cfi_rule_describe(r, CFI_ARCH_X86_64, d, sizeof(d));
	CHECK(r->cfa_kind == kind && r->cfa_off == off, "%s at 0x%llx: want kind %d off %d, got %s",
	      name, (unsigned long long)addr, kind, off, d);
}

/* A well-formed pair first: proves the builders make input the library accepts. */
static void test_crafted_good(void)
{
	struct cfi_table *t = NULL;
	struct bb b = {0};
	size_t cie;

	cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, cie, TXT, 0x100, INSNS(0x44, 0x0e, 0x10)); /* advance 4; cfa_offset 16 */
	CHECK(run_cfi("good .eh_frame", &b, 0, &t) == CFI_OK, "hand-made .eh_frame rejected");
	expect_rule("good .eh_frame", t, TXT, CFI_CFA_RSP, 8);
	expect_rule("good .eh_frame", t, TXT + 4, CFI_CFA_RSP, 16);
	expect_rule("good .eh_frame", t, TXT + 0x100, CFI_CFA_NONE, 0);
	cfi_table_free(t);

	b.n = 0;
	t = NULL;
	cie = dbg_cie(&b, 1, NULL, 0);
	dbg_fde(&b, cie, TXT, 0x100, INSNS(0x44, 0x0e, 0x10));
	CHECK(run_cfi("good .debug_frame v1", &b, 1, &t) == CFI_OK,
	      "hand-made .debug_frame rejected");
	expect_rule("good .debug_frame", t, TXT + 4, CFI_CFA_RSP, 16);
	cfi_table_free(t);

	b.n = 0;
	t = NULL;
	cie = dbg_cie(&b, 4, NULL, 0);
	dbg_fde(&b, cie, TXT, 0x100, INSNS(0x44, 0x0e, 0x10));
	CHECK(run_cfi("good .debug_frame v4", &b, 1, &t) == CFI_OK,
	      "hand-made .debug_frame v4 rejected");
	expect_rule("good .debug_frame v4", t, TXT + 4, CFI_CFA_RSP, 16);
	cfi_table_free(t);

	/* a zero terminator ends .eh_frame; what came before must still load */
	b.n = 0;
	t = NULL;
	cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, cie, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
	put32(&b, 0);
	eh_fde(&b, cie, TXT + 0x80, 0x40, INSNS(0x41, 0x0e, 0x20));
	CHECK(run_cfi("zero terminator mid-section", &b, 0, &t) == CFI_OK,
	      "zero terminator: the FDE before it was lost");
	expect_rule("zero terminator", t, TXT + 1, CFI_CFA_RSP, 16);
	cfi_table_free(t);
	free(b.p);
}

static void test_crafted_lengths(void)
{
	struct bb b = {0};
	size_t cie, f;

	cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
	f = eh_fde(&b, cie, TXT, 0x40, NULL, 0);
	patch32(&b, f, 0x7ffffff0u);
	run_cfi("FDE length past the end", &b, 0, NULL);
	patch32(&b, f, 0xfffffff0u);
	run_cfi("FDE reserved length 0xfffffff0", &b, 0, NULL);
	patch32(&b, f, 3);
	run_cfi("FDE length 3 (shorter than its id)", &b, 0, NULL);
	patch32(&b, cie, 0x7ffffff0u);
	run_cfi("CIE length past the end", &b, 0, NULL);

	/* 64-bit lengths: 0xffffffff then 8 bytes */
	for (int i = 0; i < 3; i++) {
		static const uint64_t lens[] = {0x7fffffffffffffffull, 0xffffffffffffffffull, 16};

		b.n = 0;
		cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
		put32(&b, 0xffffffffu);
		put64(&b, lens[i]);
		put32(&b, (uint32_t)(b.n - cie));
		put32(&b, 0);
		put32(&b, 0x10);
		put8(&b, 0);
		run_cfi(i == 0	 ? "64-bit length 2^63-1"
			: i == 1 ? "64-bit length 2^64-1"
				 : "64-bit length 16",
			&b, 0, NULL);
		run_cfi("64-bit length in .debug_frame", &b, 1, NULL);
	}
	/* 0xffffffff with its 8-byte length cut off */
	b.n = 0;
	put32(&b, 0xffffffffu);
	put32(&b, 0x10);
	run_cfi("truncated 64-bit length", &b, 0, NULL);
	/* section too short for even a length */
	b.n = 0;
	put8(&b, 0x10);
	put8(&b, 0x00);
	put8(&b, 0x00);
	run_cfi("3-byte section", &b, 0, NULL);
	b.n = 0;
	run_cfi("empty .eh_frame", &b, 0, NULL);
	run_cfi("empty .debug_frame", &b, 1, NULL);
	free(b.p);
}

static void test_crafted_pointers(void)
{
	static const uint32_t ciep[] = {0x7ffffff0u, 0xfffffff0u, 4, 1, 8, 0x24};
	static const uint8_t encs[] = {0x0f, 0x7f, 0x50, 0x9b, 0x80, 0x0d, 0x0e, 0x01, 0x09,
				       0x00, 0x04, 0x30, 0x20, 0x40, 0x60, 0x70, 0xff};
	struct bb b = {0};
	char name[96];
	size_t cie, f;
	unsigned int i;

	/* CIE pointers outside the section, into itself, into another FDE */
	for (i = 0; i < sizeof(ciep) / sizeof(ciep[0]); i++) {
		b.n = 0;
		cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
		eh_fde(&b, cie, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		f = eh_fde(&b, cie, TXT + 0x40, 0x40, INSNS(0x41, 0x0e, 0x10));
		patch32(&b, f + 4, ciep[i]);
		snprintf(name, sizeof(name), "CIE pointer 0x%x", ciep[i]);
		run_cfi(name, &b, 0, NULL);

		b.n = 0;
		cie = dbg_cie(&b, 3, NULL, 0);
		dbg_fde(&b, cie, TXT, 0x40, NULL, 0);
		f = dbg_fde(&b, cie, TXT + 0x40, 0x40, NULL, 0);
		patch32(&b, f + 4, ciep[i] == 0x24 ? (uint32_t)(f - 0x20) : ciep[i]);
		snprintf(name, sizeof(name), ".debug_frame CIE pointer 0x%x", ciep[i]);
		run_cfi(name, &b, 1, NULL);
	}
	/* pointer encodings the parser must refuse or handle */
	for (i = 0; i < sizeof(encs); i++) {
		b.n = 0;
		cie = eh_cie(&b, "zR", encs[i], NULL, 0);
		eh_fde(&b, cie, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		snprintf(name, sizeof(name), "FDE encoding 0x%02x", encs[i]);
		run_cfi(name, &b, 0, NULL);

		/* personality pointer and LSDA encoding with the same byte */
		b.n = 0;
		put32(&b, 0);
		put32(&b, 0);
		put8(&b, 1);
		put(&b, "zPLR", 5);
		uleb(&b, 1);
		sleb(&b, -8);
		uleb(&b, 16);
		uleb(&b, 7);
		put8(&b, encs[i]); /* personality encoding */
		put32(&b, 0x7ffff000u);
		put8(&b, encs[i]); /* LSDA encoding */
		put8(&b, 0x1b);
		put(&b, (const uint8_t[]){0x0c, 0x07, 0x08, 0x90, 0x01}, 5);
		entry_end(&b, 0);
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		snprintf(name, sizeof(name), "personality/LSDA encoding 0x%02x", encs[i]);
		run_cfi(name, &b, 0, NULL);
	}
	/* addresses: empty, huge, wrapping, above user space */
	{
		static const struct {
			uint64_t pc;
			uint32_t range;
		} r[] = {{TXT, 0},
			 {TXT, 0xffffffffu},
			 {TXT, 0x40000001u},
			 {0, 0x10},
			 {0xfffffffffffff000ull, 0x2000},
			 {1ull << 47, 0x10},
			 {(1ull << 47) - 8, 0x10}};

		for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
			b.n = 0;
			cie = dbg_cie(&b, 1, NULL, 0);
			dbg_fde(&b, cie, r[i].pc, r[i].range, INSNS(0x41, 0x0e, 0x10));
			snprintf(name, sizeof(name), "FDE pc 0x%llx range 0x%x",
				 (unsigned long long)r[i].pc, r[i].range);
			run_cfi(name, &b, 1, NULL);
			b.n = 0;
			cie = dbg_cie(&b, 1, NULL, 0);
			put32(&b, 0x14);
			put32(&b, (uint32_t)cie);
			put64(&b, r[i].pc);
			put64(&b, 0xffffffffffffffffull);
			run_cfi("FDE range 2^64-1", &b, 1, NULL);
		}
	}
	free(b.p);
}

static void test_crafted_cie_fields(void)
{
	static const uint8_t versions[] = {0, 2, 3, 4, 5, 255};
	struct bb b = {0};
	char name[64];
	unsigned int i;

	for (i = 0; i < sizeof(versions); i++) {
		b.n = 0;
		eh_cie(&b, "zR", 0x1b, NULL, 0);
		b.p[8] = versions[i];
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		snprintf(name, sizeof(name), "CIE version %u", versions[i]);
		run_cfi(name, &b, 0, NULL);
		b.n = 0;
		dbg_cie(&b, versions[i], NULL, 0);
		dbg_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi(name, &b, 1, NULL);
	}
	/* augmentation strings: unknown, unterminated, long, 'S' without 'z' */
	{
		static const char *augs[] = {"zRX", "X",	   "eh", "zzzzzzzzzzzzzzzzzzzzzzzz",
					     "S",   "zRSSSSSSSSS", "zB", "zG"};

		for (i = 0; i < sizeof(augs) / sizeof(augs[0]); i++) {
			b.n = 0;
			eh_cie(&b, augs[i], 0x1b, NULL, 0);
			eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
			snprintf(name, sizeof(name), "augmentation \"%s\"", augs[i]);
			run_cfi(name, &b, 0, NULL);
		}
		b.n = 0;
		put32(&b, 12);
		put32(&b, 0);
		put8(&b, 1);
		put(&b, "zRRRRRR", 7); /* no NUL before the end of the CIE */
		eh_fde(&b, 0, TXT, 0x40, NULL, 0);
		run_cfi("unterminated augmentation", &b, 0, NULL);
	}
	/* LEB128 fields that overflow or never end */
	{
		uint8_t ff[24];
		size_t start;

		memset(ff, 0xff, sizeof(ff));
		b.n = 0;
		put32(&b, 0);
		put32(&b, 0);
		put8(&b, 1);
		put(&b, "zR", 3);
		put(&b, ff, 20);
		put8(&b, 1); /* code alignment: 21-byte LEB128 */
		sleb(&b, -8);
		uleb(&b, 16);
		uleb(&b, 1);
		put8(&b, 0x1b);
		entry_end(&b, 0);
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi("huge code alignment", &b, 0, NULL);

		b.n = 0;
		put32(&b, 0);
		put32(&b, 0);
		put8(&b, 1);
		put(&b, "zR", 3);
		uleb(&b, 1);
		sleb(&b, -8);
		uleb(&b, 0xffffffffffffull); /* return address register */
		uleb(&b, 1);
		put8(&b, 0x1b);
		entry_end(&b, 0);
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi("huge RA register", &b, 0, NULL);

		b.n = 0;
		put32(&b, 0);
		put32(&b, 0);
		put8(&b, 1);
		put(&b, "zR", 3);
		uleb(&b, 1);
		sleb(&b, -8);
		uleb(&b, 16);
		uleb(&b, 0xfffffffffffull); /* augmentation data length */
		put8(&b, 0x1b);
		entry_end(&b, 0);
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi("huge augmentation length", &b, 0, NULL);

		b.n = 0;
		eh_cie(&b, "zR", 0x1b, NULL, 0);
		start = b.n;
		put32(&b, 0);
		put32(&b, (uint32_t)b.n); /* the CIE is at 0 */
		put32(&b, (uint32_t)(TXT - (MINI_EH_ADDR + b.n)));
		put32(&b, 0x40);
		uleb(&b, 0xfffffffffffull); /* FDE augmentation data length */
		entry_end(&b, start);
		run_cfi("huge FDE augmentation length", &b, 0, NULL);

		b.n = 0;
		eh_cie(&b, "zR", 0x1b, NULL, 0);
		start = b.n;
		put32(&b, 0);
		put32(&b, (uint32_t)b.n);
		put(&b, ff, 16); /* pc_begin, range, augmentation length: 0xff to the end */
		patch32(&b, start, (uint32_t)(b.n - start - 4));
		run_cfi("unterminated LEB128", &b, 0, NULL);
	}
	free(b.p);
}

/* CFA programs: each is run as the instructions of one FDE. */
static void test_crafted_programs(void)
{
	static const struct {
		const char *name;
		uint8_t ins[40];
		size_t n;
	} progs[] = {
	    {"restore_state without remember", {0x41, 0x0b, 0x41, 0x0e, 0x10}, 5},
	    {"restore_state twice", {0x0a, 0x41, 0x0b, 0x0b, 0x41}, 5},
	    {"unknown opcode 0x3f", {0x41, 0x0e, 0x10, 0x3f, 0x41, 0x0e, 0x18}, 7},
	    {"unknown opcodes 0x17..0x1f",
	     {0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f},
	     9},
	    {"GNU opcodes 0x2e 0x2f", {0x2e, 0x10, 0x2f, 0x06, 0x02, 0x41}, 6},
	    {"advance_loc4 huge", {0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 0x10}, 7},
	    {"advance past the end", {0x02, 0xff, 0x0e, 0x10, 0x02, 0x01, 0x0e, 0x20}, 8},
	    {"set_loc backwards", {0x41, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x0e, 0x10}, 12},
	    {"set_loc forward", {0x01, 0x20, 0x10, 0, 0, 0, 0, 0, 0, 0x0e, 0x10}, 11},
	    {"set_loc truncated", {0x01, 0x20, 0x10}, 3},
	    {"def_cfa huge register", {0x0c, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08}, 7},
	    {"def_cfa huge offset",
	     {0x0c, 0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	     12},
	    {"def_cfa_sf negative", {0x12, 0x07, 0x7f, 0x41, 0x13, 0x40}, 6},
	    {"def_cfa_offset_sf huge", {0x13, 0xff, 0xff, 0xff, 0xff, 0x7f}, 6},
	    {"offset_extended huge register", {0x05, 0xff, 0xff, 0xff, 0x7f, 0x02}, 6},
	    {"register huge", {0x09, 0x10, 0xff, 0xff, 0xff, 0x7f}, 6},
	    {"restore_extended huge", {0x06, 0xff, 0xff, 0xff, 0x7f}, 5},
	    {"def_cfa_expression huge length", {0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x77}, 7},
	    {"def_cfa_expression truncated", {0x0f, 0x08, 0x77, 0x08}, 4},
	    {"expression huge length", {0x10, 0x06, 0xff, 0xff, 0xff, 0xff, 0x0f}, 7},
	    {"val_expression rip truncated", {0x16, 0x10, 0x05, 0x77}, 4},
	    {"def_cfa_expression 20 ops",
	     {0x0f, 0x14, 0x77, 0x08, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06,
	      0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06, 0x06},
	     22},
	    {"def_cfa_expression bad sleb", {0x0f, 0x02, 0x77, 0x80}, 4},
	    {"def_cfa_expression const8 cut", {0x0f, 0x04, 0x77, 0x00, 0x0e, 0x01}, 6},
	    {"PLT shape with K=200",
	     {0x0f, 0x0c, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x08, 0xc8, 0x2a, 0x33, 0x24, 0x22},
	     14},
	    {"DRAP with huge addend",
	     {0x0f, 0x0d, 0x76, 0x78, 0x06, 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
	      0x22},
	     15},
	    {"offset rbp beyond int16", {0x86, 0xff, 0xff, 0x03}, 4},
	    {"cfa offset beyond int32", {0x0e, 0xff, 0xff, 0xff, 0xff, 0x1f}, 6},
	    {"ends mid-instruction", {0x41, 0x0e}, 2},
	};
	struct bb b = {0};
	unsigned int i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		b.n = 0;
		eh_cie(&b, "zR", 0x1b, NULL, 0);
		eh_fde(&b, 0, TXT, 0x40, progs[i].ins, progs[i].n);
		eh_fde(&b, 0, TXT + 0x40, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi(progs[i].name, &b, 0, NULL);
		/* the same program as a CIE's initial instructions */
		b.n = 0;
		eh_cie(&b, "zR", 0x1b, progs[i].ins, progs[i].n);
		eh_fde(&b, 0, TXT, 0x40, INSNS(0x41, 0x0e, 0x10));
		run_cfi(progs[i].name, &b, 0, NULL);
		b.n = 0;
		dbg_cie(&b, 3, NULL, 0);
		dbg_fde(&b, 0, TXT, 0x40, progs[i].ins, progs[i].n);
		run_cfi(progs[i].name, &b, 1, NULL);
	}
	free(b.p);
}

/* Sizes that make a naive implementation allocate or recurse without bound. */
static void test_crafted_big(void)
{
	struct cfi_table *t = NULL;
	struct bb b = {0}, ins = {0};
	size_t i, f;
	double t0;
	int rc;

	/* DW_CFA_remember_state 1,000,000 times */
	for (i = 0; i < 1000000; i++)
		put8(&ins, 0x0a);
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, 0, TXT, 0x40, ins.p, ins.n);
	eh_fde(&b, 0, TXT + 0x40, 0x40, INSNS(0x41, 0x0e, 0x10));
	t0 = mono_ms();
	rc = run_cfi("remember_state x1000000", &b, 0, &t);
	printf("malformed: remember_state x1000000: %s in %.0f ms\n", cfi_strerror(rc),
	       mono_ms() - t0);
	/* the neighbour FDE is not the victim's fault */
	if (t)
		expect_rule("remember_state x1000000 neighbour", t, TXT + 0x41, CFI_CFA_RSP, 16);
	cfi_table_free(t);

	/* ... each followed by a restore: a million pushes and pops */
	for (i = 0; i < 1000000; i++)
		put8(&ins, 0x0b);
	b.n = 0;
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, 0, TXT, 0x40, ins.p, ins.n);
	run_cfi("remember x1e6 then restore x1e6", &b, 0, NULL);

	/* remember + advance: a row per byte, each with a deeper stack */
	ins.n = 0;
	for (i = 0; i < 200000; i++) {
		put8(&ins, 0x0a);
		put8(&ins, 0x41);
	}
	b.n = 0;
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	f = eh_fde(&b, 0, TXT, 0x40, ins.p, ins.n);
	(void)f;
	run_cfi("remember+advance x200000", &b, 0, NULL);

	/* 70000 distinct CFA offsets: more rules than a 16-bit id holds */
	ins.n = 0;
	for (i = 0; i < 70000; i++) {
		put8(&ins, 0x0e);
		uleb(&ins, 16 + 8 * i);
		put8(&ins, 0x41);
	}
	b.n = 0;
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, 0, TXT, 80000, ins.p, ins.n);
	t = NULL;
	rc = run_cfi("70000 distinct rules", &b, 0, &t);
	CHECK(rc == CFI_OK || rc == CFI_ERR_TOO_BIG, "70000 rules: %s", cfi_strerror(rc));
	if (t)
		CHECK(t->nr_rules <= 65536, "70000 rules: table claims %u rules", t->nr_rules);
	cfi_table_free(t);

	/* 50000 FDEs over the same 16 bytes: overlap resolution at scale */
	b.n = 0;
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	for (i = 0; i < 50000; i++)
		eh_fde(&b, 0, TXT + (i % 7), 16, INSNS(0x41, 0x0e, 0x10));
	run_cfi("50000 overlapping FDEs", &b, 0, NULL);

	/* 200000 FDEs of one byte each, spread over many pages */
	b.n = 0;
	eh_cie(&b, "zR", 0x1b, NULL, 0);
	for (i = 0; i < 200000; i++)
		eh_fde(&b, 0, TXT + i * 3, 1, NULL, 0);
	run_cfi("200000 tiny FDEs", &b, 0, NULL);
	free(b.p);
	free(ins.p);
}

/* ELF-level damage around otherwise good CFI. */
static void test_crafted_elf(void)
{
	struct bb b = {0};
	uint8_t *img;
	size_t len = 0, cie;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	int i;

	cie = eh_cie(&b, "zR", 0x1b, NULL, 0);
	eh_fde(&b, cie, TXT, 0x100, INSNS(0x44, 0x0e, 0x10));

	for (i = 0; i < 9; i++) {
		static const char *names[] = {
		    "sh_size past EOF",	 "sh_offset past EOF", "sh_offset+size wraps",
		    "e_shoff past EOF",	 "e_shnum huge",       "e_shstrndx invalid",
		    "e_shentsize wrong", "ELFCLASS32 header",  "big-endian header",
		};

		img = mini_elf_cfi(b.p, b.n, 0, &len);
		eh = (Elf64_Ehdr *)img;
		sh = (Elf64_Shdr *)(img + eh->e_shoff);
		switch (i) {
		case 0:
			sh[2].sh_size = 0x7fffffff;
			break;
		case 1:
			sh[2].sh_offset = 0x7fffffff;
			break;
		case 2:
			sh[2].sh_offset = 0xfffffffffffffff0ull;
			sh[2].sh_size = 0x20;
			break;
		case 3:
			eh->e_shoff = 0x7fffffff;
			break;
		case 4:
			eh->e_shnum = 0xffff;
			break;
		case 5:
			eh->e_shstrndx = 0x7777;
			break;
		case 6:
			eh->e_shentsize = 12;
			break;
		case 7:
			eh->e_ident[EI_CLASS] = ELFCLASS32;
			break;
		case 8:
			eh->e_ident[EI_DATA] = ELFDATA2MSB;
			break;
		}
		run_case(&crafted, names[i], img, len, NULL);
		free(img);
	}

	/* .eh_frame_hdr tables pointing anywhere */
	for (i = 0; i < 6; i++) {
		struct bb h = {0};
		struct mini_sec secs[3];
		static const char *names[] = {
		    "hdr fde_count huge", "hdr bad encodings",	    "hdr entries outside .eh_frame",
		    "hdr version 2",	  "hdr entry into the CIE", "hdr truncated"};
		uint32_t count = 2;

		put8(&h, i == 3 ? 2 : 1);
		put8(&h, 0x1b);			/* eh_frame_ptr enc */
		put8(&h, i == 1 ? 0x0f : 0x03); /* fde_count enc */
		put8(&h, i == 1 ? 0x7f : 0x3b); /* table enc: datarel sdata4 */
		put32(&h, (uint32_t)(MINI_EH_ADDR - (MINI_EH_ADDR + 0x800 + 4))); /* eh_frame_ptr */
		put32(&h, i == 0 ? 0x7fffffffu : count);
		/* (initial location, FDE address) relative to the header start */
		put32(&h, (uint32_t)(TXT - (MINI_EH_ADDR + 0x800)));
		put32(&h, i == 2   ? 0x7ffff000u
			  : i == 4 ? (uint32_t)-0x800
				   : (uint32_t)(0x18 - 0x800));
		put32(&h, (uint32_t)(TXT + 0x80 - (MINI_EH_ADDR + 0x800)));
		put32(&h, i == 2 ? (uint32_t)-0x10000000 : (uint32_t)(0x18 - 0x800 + 3));
		secs[0] = (struct mini_sec){".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					    TXT,     NULL,	   MINI_TEXT_SIZE};
		secs[1] =
		    (struct mini_sec){".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, b.p, b.n};
		secs[2] = (struct mini_sec){".eh_frame_hdr",	  SHT_PROGBITS, SHF_ALLOC,
					    MINI_EH_ADDR + 0x800, h.p,		i == 5 ? 10 : h.n};
		img = mini_elf_build(secs, 3, &len);
		run_case(&crafted, names[i], img, len, NULL);
		free(img);
		free(h.p);
	}

	/* compressed .debug_frame: garbage, and a header that lies about the size */
	for (i = 0; i < 3; i++) {
		struct bb z = {0};
		struct mini_sec secs[2];
		static const char *names[] = {"compressed garbage", "compressed 1 TiB claim",
					      "compressed unknown type"};
		Elf64_Chdr ch = {.ch_type = i == 2 ? 77 : ELFCOMPRESS_ZLIB,
				 .ch_size = i == 1 ? 1ull << 40 : 4096,
				 .ch_addralign = 1};

		put(&z, &ch, sizeof(ch));
		/* a valid zlib stream of 8 zero bytes, then junk */
		put(&z,
		    (const uint8_t[]){0x78, 0x9c, 0x63, 0x60, 0x80, 0x00, 0x00, 0x00, 0x08, 0x00,
				      0x01},
		    11);
		put32(&z, 0xdeadbeef);
		secs[0] = (struct mini_sec){".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					    TXT,     NULL,	   MINI_TEXT_SIZE};
		secs[1] =
		    (struct mini_sec){".debug_frame", SHT_PROGBITS, SHF_COMPRESSED, 0, z.p, z.n};
		img = mini_elf_build(secs, 2, &len);
		run_case(&crafted, names[i], img, len, NULL);
		free(img);
		free(z.p);
	}

	/* not ELF at all */
	run_case(&crafted, "zero bytes", "", 0, NULL);
	run_case(&crafted, "ELF magic only", "\177ELF", 4, NULL);
	free(b.p);
}

static int compile_small(char *path, size_t len)
{
	char dir[] = "/tmp/cfiprof-malformed-XXXXXX", cmd[512];
	FILE *f;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, len, "%s/small", dir);
	snprintf(cmd, sizeof(cmd), "%s/small.c", dir);
	f = fopen(cmd, "w");
	if (!f)
		return -1;
	fputs("#include <stdio.h>\n"
	      "static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
	      "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", fib(argc + 20));"
	      " return 0; }\n",
	      f);
	fclose(f);
	/* .debug_frame for main/fib, .eh_frame and .eh_frame_hdr from the crt files */
	snprintf(cmd, sizeof(cmd),
		 "gcc -O1 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o %s %s/small.c "
		 ">/dev/null 2>&1",
		 path, dir);
	return system(cmd) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct image libc, small;
	char small_path[256];
	unsigned int flips_small = 2000, flips_libc = 1000, survive = 500;
	double t0 = mono_ms();

	harness_init(argc, argv);
	/*
	 * Every case copies the image: from the heap, not a fresh mmap (page faults
	 * on 2 MB a case), as once crafted_big had raised glibc's dynamic mmap
	 * threshold when all ran in one process.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	elf_version(EV_CURRENT);
	signal(SIGALRM, on_alarm);
	/*
	 * A sample of the corruptions, not a search (make fuzz searches): a libc
	 * case compiles all of libc's CFI, and this suite's rounds were the most
	 * CPU of any unit suite in make test.  Fewer under the sanitizers (~10x
	 * slower a case) or when asked to hurry.  The survival bound (90% of the
	 * cases) is 5 standard deviations below the 97.9% seen, at 100 cases.
	 */
	if (harness_under_asan()) {
		flips_libc = 150;
		survive = 100;
	}
	if (getenv("CFIPROF_MALFORMED_QUICK")) {
		flips_small = 300;
		flips_libc = 50;
		survive = 100;
	}

	carried = harness_shared(sizeof(*carried));
	carried->crafted = crafted;
	carried->rng_state = rng_state;
	RUN_CRAFTED(test_crafted_good);
	RUN_CRAFTED(test_crafted_lengths);
	RUN_CRAFTED(test_crafted_pointers);
	RUN_CRAFTED(test_crafted_cie_fields);
	RUN_CRAFTED(test_crafted_programs);
	RUN_CRAFTED(test_crafted_big);
	RUN_CRAFTED(test_crafted_elf);
	crafted = carried->crafted;
	phase_done(&crafted);

	if (compile_small(small_path, sizeof(small_path)) || load_image(&small, small_path)) {
		printf("malformed: cannot build a small test binary, using /usr/bin/true\n");
		CHECK(!load_image(&small, "/usr/bin/true"), "cannot load /usr/bin/true");
	}
	CHECK(!load_image(&libc, "/lib/x86_64-linux-gnu/libc.so.6"), "cannot load libc.so.6");

	if (small.buf) {
		RUN_CARRIED("small_truncate", test_truncate(&small));
		RUN_CARRIED("small_bitflips", test_bitflips(&small, flips_small));
	}
	if (libc.buf) {
		RUN_CARRIED("libc_truncate", test_truncate(&libc));
		RUN_CARRIED("libc_bitflips", test_bitflips(&libc, flips_libc));
		RUN_CARRIED("libc_survival", test_survival(&libc, survive));
	}
	if (small.buf && strncmp(small_path, "/tmp/cfiprof-malformed-", 23) == 0) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf \"$(dirname '%s')\"", small_path);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", small_path);
	}
	free(small.buf);
	free(libc.buf);
	printf("malformed: %.1f s\n", (mono_ms() - t0) / 1e3);
	return HARNESS_DONE();
}
