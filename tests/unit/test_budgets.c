/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * No input may cost unbounded memory or time (issue 12 item 4): each crafted
 * input below made some step super-linear in its size.  Each case runs in a
 * forked child under RLIMIT_AS (what the child already uses plus a bound) and
 * an alarm, so an allocation blow-up shows as a failed build and a blow-up in
 * time as a killed child; counters that grew with the square of the input
 * are checked as well (tests/lib/bounded.h: BUDGETS_UNBOUNDED=1 measures what
 * an input costs).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi_table.h"
#include "tests/lib/cfi_bytes.h"
#include "tests/lib/bounded.h"
#include "tests/lib/harness.h"
#include "tests/lib/mini_elf.h"
#include "user/symbolize/sym_cache.h"
#include "user/track/proc_maps.h"

/* ---- tables ---- */

struct build_case {
	const uint8_t *img;
	size_t len;
	struct cfi_build_opts opts;
};

static void build_case(void *arg, struct outcome *o)
{
	struct build_case *bc = arg;
	struct cfi_table *t = NULL;
	struct cfi_diag diag = {0};
	double t0;

	bound_start();
	t0 = now_ms();
	o->rc = cfi_table_build_mem(bc->img, bc->len, &bc->opts, &t, &diag);
	o->ms = now_ms() - t0;
	if (t) {
		o->val[0] = t->stats.fdes;
		o->val[1] = t->stats.fdes_overlap;
		o->val[2] = t->stats.raw_rows;
		o->val[3] = t->nr_rows;
	}
	cfi_table_free(t);
}

/* Code addresses of the crafted FDEs: past every section, as code never needs to be there. */
#define CODE 0x1000000u

static uint8_t *elf_of(const struct mini_sec *secs, int n, size_t *len)
{
	uint8_t *img = mini_elf_build(secs, n, len);

	if (!img) {
		fprintf(stderr, "mini_elf_build failed\n");
		exit(2);
	}
	return img;
}

/*
 * .eh_frame with one FDE and an .eh_frame_hdr whose @n entries all point at
 * it: the parser used to copy the FDE once per entry.
 */
static uint8_t *hdr_dups(uint32_t n, size_t *len)
{
	struct bb eh = {0}, hdr = {0};
	uint64_t hdr_addr, fde;
	uint8_t *img;
	uint32_t i;

	eh_cie(&eh, "zR", 0x1b, NULL, 0);
	fde = eh_fde(&eh, 0, CODE, 0x40, INSNS(0x41, 0x0e, 0x10));
	hdr_addr = mini_align(MINI_EH_ADDR + eh.n, 0x1000);
	put8(&hdr, 1);	  /* version */
	put8(&hdr, 0x1b); /* eh_frame_ptr: pcrel sdata4 */
	put8(&hdr, 0x03); /* fde_count: udata4 */
	put8(&hdr, 0x3b); /* table: datarel sdata4 */
	put32(&hdr, (uint32_t)(MINI_EH_ADDR - (hdr_addr + 4)));
	put32(&hdr, n);
	for (i = 0; i < n; i++) {
		put32(&hdr, (uint32_t)(CODE - hdr_addr));
		put32(&hdr, (uint32_t)(MINI_EH_ADDR + fde - hdr_addr));
	}
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, eh.p, eh.n},
		    {".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC, hdr_addr, hdr.p, hdr.n},
		};

		img = elf_of(secs, 3, len);
	}
	free(eh.p);
	free(hdr.p);
	return img;
}

static void test_hdr_dups(void)
{
	struct build_case bc = {0};
	struct outcome o;

	bc.img = hdr_dups(100000, &bc.len);
	o = run_bounded("100k .eh_frame_hdr entries, one FDE", build_case, &bc, 512, 20);
	CHECK(o.rc == CFI_OK, "100k hdr entries: %s", cfi_strerror(o.rc));
	CHECK(o.val[0] == 1 && o.val[1] == 0,
	      "100k hdr entries at one FDE: %llu FDEs used, %llu clipped (want 1, 0)",
	      (unsigned long long)o.val[0], (unsigned long long)o.val[1]);
	free((void *)bc.img);

	/* 4M entries (32 MB of table): a copy of the FDE per entry does not fit 192 MB */
	bc.img = hdr_dups(4000000, &bc.len);
	o = run_bounded("4M .eh_frame_hdr entries, one FDE", build_case, &bc, 192, 30);
	CHECK(o.rc == CFI_OK, "4M hdr entries under RLIMIT_AS: %s", cfi_strerror(o.rc));
	free((void *)bc.img);
}

/*
 * @n FDEs sharing one CIE whose initial instructions are @prog bytes long:
 * the CIE program used to run once per FDE.
 */
static void test_cie_program(void)
{
	const uint32_t n = 50000, prog = 256 << 10;
	struct bb eh = {0}, ins = {0};
	struct build_case bc = {0};
	struct outcome o;
	uint32_t i;

	for (i = 0; i < prog; i++)
		put8(&ins, 0x00); /* DW_CFA_nop */
	eh_cie(&eh, "zR", 0x1b, ins.p, ins.n);
	for (i = 0; i < n; i++)
		eh_fde(&eh, 0, CODE + 16 * i, 16, INSNS(0x41, 0x0e, 0x10));
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, eh.p, eh.n},
		};

		bc.img = elf_of(secs, 2, &bc.len);
	}
	o = run_bounded("50k FDEs, one CIE with a 256 KiB program", build_case, &bc, 512, 10);
	CHECK(o.rc == CFI_OK && o.val[0] == n, "CIE program: %s, %llu FDEs", cfi_strerror(o.rc),
	      (unsigned long long)o.val[0]);
	free((void *)bc.img);
	free(eh.p);
	free(ins.p);
}

/*
 * One .debug_frame FDE spanning @n .eh_frame FDEs with gaps between them: the
 * overlap clipping rescanned the accepted pieces for every gap, and the
 * spanning FDE was run (and counted) once per piece.
 */
static void test_debug_frame_span(void)
{
	const uint32_t n = 50000;
	struct bb eh = {0}, dbg = {0};
	struct build_case bc = {0};
	struct outcome o;
	uint32_t i;

	eh_cie(&eh, "zR", 0x1b, NULL, 0);
	for (i = 0; i < n; i++)
		eh_fde(&eh, 0, CODE + 32 * i, 16, INSNS(0x41, 0x0e, 0x10));
	dbg_cie(&dbg, 1, NULL, 0);
	dbg_fde(&dbg, 0, CODE, 32ull * n, INSNS(0x41, 0x0e, 0x20));
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, eh.p, eh.n},
		    {".debug_frame", SHT_PROGBITS, 0, 0, dbg.p, dbg.n},
		};

		bc.img = elf_of(secs, 3, &bc.len);
	}
	o = run_bounded("one .debug_frame FDE over 50k .eh_frame FDEs", build_case, &bc, 512, 3);
	CHECK(o.rc == CFI_OK, "debug_frame span: %s", cfi_strerror(o.rc));
	CHECK(o.val[0] == n + 1 && o.val[1] == 1,
	      "debug_frame span: %llu FDEs used, %llu clipped (want %u, 1)",
	      (unsigned long long)o.val[0], (unsigned long long)o.val[1], n + 1);
	/* rows: each .eh_frame FDE's program runs once, the spanning one once */
	CHECK(o.val[2] <= 2ull * n + 4, "debug_frame span: %llu raw rows for %u FDEs",
	      (unsigned long long)o.val[2], n + 1);
	free((void *)bc.img);
	free(eh.p);
	free(dbg.p);
}

/*
 * DW_EH_PE_indirect reads 8 bytes at an address: with a section at address
 * 0, an address of -7 wrapped the bounds check and read the 7 bytes before
 * the section (here: ".pad"'s last bytes, which spell a code address).
 */
static void test_read_vaddr_before_section(void)
{
	static const uint8_t pad_tail[7] = {0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00};
	uint8_t pad[0x1000] = {0}, data[16] = {0};
	struct cfi_table *t = NULL;
	struct bb eh = {0};
	size_t len, start, i;
	const struct cfi_rule *r;
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *sh;
	uint8_t *img;
	int rc;

	memcpy(pad + sizeof(pad) - sizeof(pad_tail), pad_tail, sizeof(pad_tail));
	eh_cie(&eh, "zR", 0x80, NULL, 0); /* FDE addresses: indirect absptr */
	start = eh.n;
	put32(&eh, 0);
	put32(&eh, (uint32_t)(eh.n - 0));
	put64(&eh, (uint64_t)-7); /* pc_begin: the 8 bytes at address -7 */
	put64(&eh, 0x40);
	uleb(&eh, 0);
	put(&eh, INSNS(0x41, 0x0e, 0x10));
	entry_end(&eh, start);
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, eh.p, eh.n},
		    {".pad", SHT_PROGBITS, SHF_ALLOC, 0x3000, pad, sizeof(pad)},
		    {".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 0x4000, data, sizeof(data)},
		};

		img = elf_of(secs, 4, &len);
	}
	/* .data's header: its bytes stay at file offset 0x4000, its address becomes 0 */
	ehdr = (Elf64_Ehdr *)img;
	sh = (Elf64_Shdr *)(img + ehdr->e_shoff);
	for (i = 1; i < ehdr->e_shnum; i++)
		if (sh[i].sh_offset == 0x4000 && sh[i].sh_size == sizeof(data))
			sh[i].sh_addr = 0;
	rc = cfi_table_build_mem(img, len, NULL, &t, NULL);
	r = t ? cfi_table_lookup(t, 0x5000) : NULL;
	CHECK(!r || r->cfa_kind == CFI_CFA_NONE,
	      "indirect pointer at -7 read the bytes before the section: rule at 0x5000 (rc %s)",
	      cfi_strerror(rc));
	cfi_table_free(t);
	free(img);
	free(eh.p);
}

/* .eh_frame with @n FDEs of 16 bytes and the instructions @ins each. */
static uint8_t *many_fdes(uint32_t n, const uint8_t *ins, size_t ins_len, size_t *len)
{
	struct bb eh = {0};
	uint8_t *img;
	uint32_t i;

	eh_cie(&eh, "zR", 0x1b, NULL, 0);
	for (i = 0; i < n; i++)
		eh_fde(&eh, 0, CODE + 16ull * i, 16, ins, ins_len);
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, eh.p, eh.n},
		};

		img = elf_of(secs, 2, len);
	}
	free(eh.p);
	return img;
}

/* Builds in this process; returns the code, with the first message in @msg. */
static int build_with(const uint8_t *img, size_t len, const struct cfi_budget *b, char *msg,
		      size_t msg_len)
{
	struct cfi_build_opts opts = {.budget = *b};
	struct cfi_table *t = NULL;
	struct cfi_diag diag = {0};
	int rc = cfi_table_build_mem(img, len, &opts, &t, &diag);

	snprintf(msg, msg_len, "%s", diag.count ? diag.msg[0] : "");
	cfi_table_free(t);
	return rc;
}

/* Each limit refuses the object with CFI_ERR_BUDGET and a message naming the limit. */
static void test_budget_limits(void)
{
	static const int cancelled = 1, not_cancelled = 0;
	static const struct {
		const char *name;
		struct cfi_budget b;
		int rc;
		const char *says;
	} cases[] = {
	    {"defaults", {0, 0, 0, NULL, 0, 0}, CFI_OK, ""},
	    {"1000 FDEs", {0, 1000, 0, NULL, 0, 0}, CFI_ERR_BUDGET, "more than 1000 FDEs"},
	    {"1000 raw rows", {0, 0, 1000, NULL, 0, 0}, CFI_ERR_BUDGET, "more than 1000 raw rows"},
	    {"1 ns", {1, 0, 0, NULL, 0, 0}, CFI_ERR_BUDGET, "ms of build time"},
	    {"room to spare", {60ull * 1000000000, 50000, 100000, NULL, 0, 0}, CFI_OK, ""},
	    {"cancelled", {0, 0, 0, &cancelled, 0, 0}, CFI_ERR_BUDGET, "cancelled (stopping)"},
	    {"not cancelled", {0, 0, 0, &not_cancelled, 0, 0}, CFI_OK, ""},
	    {"64 section bytes", {.max_section_bytes = 64}, CFI_ERR_BUDGET, "bytes of sections read"},
	    {"64 KiB of table", {.max_bytes = 65536}, CFI_ERR_BUDGET, "more than 65536 bytes of table"},
	};
	char msg[256];
	size_t len, i;
	uint8_t *img = many_fdes(50000, INSNS(0x41, 0x0e, 0x10), &len);

	CHECK(!strcmp(cfi_strerror(CFI_ERR_BUDGET),
		      "over the build budget (time, FDEs, rows or section bytes)"),
	      "CFI_ERR_BUDGET text: %s", cfi_strerror(CFI_ERR_BUDGET));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = build_with(img, len, &cases[i].b, msg, sizeof(msg));

		CHECK(rc == cases[i].rc && strstr(msg, cases[i].says),
		      "budget %s: %s (want %s), message '%s' (want '%s')", cases[i].name,
		      cfi_strerror(rc), cfi_strerror(cases[i].rc), msg, cases[i].says);
	}
	free(img);
}

/* The table store's bytes of a table (user/track/table_store.c: rows and page index). */
static uint64_t store_bytes(const struct cfi_table *t)
{
	return (uint64_t)t->nr_rows * sizeof(struct cfi_row) +
	       (uint64_t)t->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
}

/*
 * max_bytes (the agent's max_table_bytes) bounds the build itself: a table
 * of exactly that many bytes is built, one byte less and it is given up
 * while it grows, as the store would have refused it once built.
 */
static void test_budget_bytes(void)
{
	struct cfi_budget b = {0};
	struct cfi_table *t = NULL;
	char msg[256];
	uint64_t bytes;
	size_t len;
	uint8_t *img = many_fdes(50000, INSNS(0x41, 0x0e, 0x10), &len);
	int rc = cfi_table_build_mem(img, len, NULL, &t, NULL);

	bytes = t ? store_bytes(t) : 0;
	CHECK(rc == CFI_OK && bytes > 65536, "unbounded build: %s, %" PRIu64 " bytes",
	      cfi_strerror(rc), bytes);
	cfi_table_free(t);
	b.max_bytes = bytes;
	rc = build_with(img, len, &b, msg, sizeof(msg));
	CHECK(rc == CFI_OK, "max_bytes = its %" PRIu64 " bytes: %s (%s)", bytes, cfi_strerror(rc),
	      msg);
	b.max_bytes = bytes - 1;
	rc = build_with(img, len, &b, msg, sizeof(msg));
	CHECK(rc == CFI_ERR_BUDGET && strstr(msg, "bytes of table"),
	      "max_bytes one short of %" PRIu64 ": %s, '%s'", bytes, cfi_strerror(rc), msg);
	free(img);
}

/*
 * Inputs just past the default limits are refused within a memory bound, and
 * the largest real objects fit the defaults.
 */
static void test_budget_defaults(void)
{
	static const char *real[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
				     "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"};
	struct build_case bc = {0};
	struct bb ins = {0};
	struct outcome o;
	uint64_t i;
	size_t k;

	bc.img = many_fdes((uint32_t)CFI_BUDGET_FDES_DEFAULT + 1, INSNS(0x41, 0x0e, 0x10), &bc.len);
	o = run_bounded("default FDE budget + 1", build_case, &bc, 512, 60);
	CHECK(o.rc == CFI_ERR_BUDGET, "%llu FDEs: %s, want over budget",
	      (unsigned long long)CFI_BUDGET_FDES_DEFAULT + 1, cfi_strerror(o.rc));
	free((void *)bc.img);

	/* one FDE whose rows alternate between two rules: nothing merges */
	for (i = 0; i <= CFI_BUDGET_RAW_ROWS_DEFAULT; i++) {
		put8(&ins, 0x41);
		put8(&ins, 0x0e);
		put8(&ins, i & 1 ? 0x10 : 0x18);
	}
	{
		struct bb eh = {0};
		struct mini_sec secs[2] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE},
		    {".eh_frame", SHT_PROGBITS, SHF_ALLOC, MINI_EH_ADDR, NULL, 0},
		};

		eh_cie(&eh, "zR", 0x1b, NULL, 0);
		eh_fde(&eh, 0, CODE, (uint32_t)CFI_BUDGET_RAW_ROWS_DEFAULT * 2, ins.p, ins.n);
		secs[1].data = eh.p;
		secs[1].size = eh.n;
		bc.img = elf_of(secs, 2, &bc.len);
		free(eh.p);
	}
	o = run_bounded("default raw row budget + 1, one FDE", build_case, &bc, 512, 60);
	CHECK(o.rc == CFI_ERR_BUDGET, "%llu raw rows: %s, want over budget",
	      (unsigned long long)CFI_BUDGET_RAW_ROWS_DEFAULT + 1, cfi_strerror(o.rc));
	free((void *)bc.img);
	free(ins.p);

	for (k = 0; k < sizeof(real) / sizeof(real[0]); k++) {
		struct cfi_table *t = NULL;
		int rc;

		if (access(real[k], R_OK))
			continue;
		rc = cfi_table_build_file(real[k], NULL, &t, NULL);
		CHECK(rc == CFI_OK, "%s does not fit the default budget: %s", real[k],
		      cfi_strerror(rc));
		if (t)
			printf(
			    "budgets: %s: %llu FDEs, %llu raw rows, %.1f ms within the defaults\n",
			    real[k], (unsigned long long)t->stats.fdes,
			    (unsigned long long)t->stats.raw_rows, t->stats.build_ns / 1e6);
		cfi_table_free(t);
	}
}

/* ---- symbols ---- */

/*
 * An object with one .symtab of @nsym functions and @ncopies more SHT_SYMTAB
 * headers over the same bytes: every copy used to be read again.
 */
static char *symtab_copies(uint32_t nsym, uint32_t ncopies)
{
	static char path[] = "/tmp/cfiprof-budgets-symtab-XXXXXX";
	struct bb syms = {0}, strs = {0};
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *sh, *nsh;
	size_t len, shoff, total, i;
	uint8_t *img, *big;
	Elf64_Sym s;
	char name[32];
	int fd;

	memset(&s, 0, sizeof(s));
	put(&syms, &s, sizeof(s));
	put8(&strs, 0);
	for (i = 0; i < nsym; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		s.st_name = (uint32_t)strs.n;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = 1;
		s.st_value = MINI_TEXT_ADDR + i;
		s.st_size = 1;
		put(&strs, name, strlen(name) + 1);
		put(&syms, &s, sizeof(s));
	}
	{
		struct mini_sec secs[] = {
		    {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, MINI_TEXT_ADDR, NULL,
		     MINI_TEXT_SIZE + nsym},
		    {".symtab", SHT_SYMTAB, 0, 0, syms.p, syms.n},
		    {".strtab", SHT_STRTAB, 0, 0, strs.p, strs.n},
		};

		img = elf_of(secs, 3, &len);
	}
	ehdr = (Elf64_Ehdr *)img;
	sh = (Elf64_Shdr *)(img + ehdr->e_shoff);
	sh[2].sh_link = 3;
	sh[2].sh_info = 1;
	sh[2].sh_entsize = sizeof(Elf64_Sym);
	/* a new header table: the old ones, then the copies of .symtab */
	shoff = mini_align(len, 8);
	total = shoff + (ehdr->e_shnum + (size_t)ncopies) * sizeof(Elf64_Shdr);
	big = calloc(1, total);
	if (!big) {
		perror("calloc");
		exit(2);
	}
	memcpy(big, img, len);
	ehdr = (Elf64_Ehdr *)big;
	nsh = (Elf64_Shdr *)(big + shoff);
	memcpy(nsh, sh, ehdr->e_shnum * sizeof(Elf64_Shdr));
	for (i = 0; i < ncopies; i++)
		nsh[ehdr->e_shnum + i] = nsh[2];
	ehdr->e_shoff = shoff;
	ehdr->e_shnum += ncopies;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, big, total) != (ssize_t)total) {
		perror("write symtab image");
		exit(2);
	}
	close(fd);
	free(img);
	free(big);
	free(syms.p);
	free(strs.p);
	return path;
}

static void symbols_case(void *arg, struct outcome *o)
{
	struct sym_cache *c = sym_cache_new();
	struct sym_obj *obj;
	const char *name = NULL;
	double t0;

	bound_start();
	t0 = now_ms();
	obj = sym_cache_get(c, NULL, arg, -1, 0);
	o->ms = now_ms() - t0;
	o->rc = obj ? 0 : -1;
	if (obj) {
		o->val[0] = sym_obj_count(obj);
		o->val[1] = !sym_obj_lookup(obj, MINI_TEXT_ADDR + 7, &name, NULL) && name &&
			    !strcmp(name, "f7");
	}
	sym_cache_free(c);
}

static void test_symtab_copies(void)
{
	const uint32_t nsym = 50000;
	char *path = symtab_copies(nsym, 2000);
	struct outcome o;

	o = run_bounded("2000 SHT_SYMTAB headers over one 50k-symbol .symtab", symbols_case, path,
			256, 20);
	CHECK(o.rc == 0 && o.val[0] == nsym && o.val[1] == 1,
	      "overlapping symtabs: %s, %llu symbols (want %u), f7 %s", o.rc ? "not read" : "read",
	      (unsigned long long)o.val[0], nsym, o.val[1] ? "found" : "missing");
	unlink(path);
}

/* ---- /proc/PID/maps ---- */

#define MAPS_N 60000

/*
 * Maps one page of a file MAPS_N times, executable, a page apart (so each is
 * its own mapping), then reads our own maps under the bound: a PATH_MAX
 * buffer per entry made that ~250 MB.
 */
static void maps_case(void *arg, struct outcome *o)
{
	const char *file = arg;
	uint8_t *base = (uint8_t *)0x200000000000ull;
	long page = sysconf(_SC_PAGESIZE);
	struct maps_entry *v = NULL;
	int fd = open(file, O_RDONLY | O_CLOEXEC), n, i, same = 0;
	double t0;

	if (fd < 0) {
		o->rc = -errno;
		return;
	}
	for (i = 0; i < MAPS_N; i++) {
		void *want = base + 2 * (size_t)i * (size_t)page;
		void *p = mmap(want, (size_t)page, PROT_READ | PROT_EXEC,
			       MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);

		if (p != want) {
			o->rc = -1000 - i;
			return;
		}
	}
	close(fd);
	bound_start();
	t0 = now_ms();
	n = proc_maps_read(getpid(), true, &v);
	o->ms = now_ms() - t0;
	o->rc = n;
	for (i = 0; i < n; i++)
		same += !strcmp(v[i].path, file);
	o->val[0] = (uint64_t)same;
	free(v);
}

static void test_maps_many(void)
{
	char dir[] = "/tmp/cfiprof-budgets-maps-XXXXXX", file[512];
	struct outcome o;
	int fd;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	/* a long name: each entry's path is 200 bytes of the maps text */
	snprintf(file, sizeof(file), "%s/%0180d", dir, 0);
	fd = open(file, O_CREAT | O_RDWR | O_CLOEXEC, 0755);
	if (fd < 0 || ftruncate(fd, 4096)) {
		perror(file);
		exit(2);
	}
	close(fd);
	o = run_bounded("60k executable mappings", maps_case, file, 64, 30);
	CHECK(o.rc >= MAPS_N && o.val[0] == MAPS_N,
	      "60k mappings under RLIMIT_AS: proc_maps_read %d, %llu with the file's path", o.rc,
	      (unsigned long long)o.val[0]);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	test_read_vaddr_before_section();
	test_hdr_dups();
	test_cie_program();
	test_debug_frame_span();
	test_budget_limits();
	test_budget_bytes();
	test_budget_defaults();
	test_symtab_copies();
	test_maps_many();
	return HARNESS_DONE();
}
