/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Hand-made binaries with known unwind shapes: PLT stubs, DRAP, signal
 * trampolines, frameless and rbp-framed code, .debug_frame only (in the file
 * and in separate debug files), the outermost frame, gaps and hand-written
 * .cfi directives, and AArch64's shapes (the RA in the link register, signed
 * return addresses, x29-based CFAs) built with the cross assembler.  Each case compiles a few lines
 * with the system gcc at run time and asserts the exact rule the table compiler gives at addresses
 * found from the symbol table and the disassembly, so the expectations come from what the machine
 * does rather than from another CFI reader.
 */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tables/cfi_table.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"

/* ---- small utilities ---- */

static int write_file(const char *name, const char *text)
{
	FILE *f = fopen(tpath(name), "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Runs a shell command (in tmpdir); returns its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[4096], full[4400];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (snprintf(full, sizeof(full), "cd '%s' && { %s; } >/dev/null 2>cmd.err", tmpdir, cmd) >=
	    (int)sizeof(full))
		abort();
	rc = system(full);
	if (rc) {
		char err[128];

		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
		if (snprintf(err, sizeof(err), "cat '%s/cmd.err' >&2", tmpdir) >= (int)sizeof(err))
			abort();
		rc = system(err) ? rc : rc;
	}
	return rc;
}

/* First line of a command's output (run in tmpdir) that contains needle. */
static int grep_cmd(const char *cmd, const char *needle, char *out, size_t len)
{
	char full[4400], *line = NULL;
	size_t cap = 0;
	int found = 0;
	FILE *f;

	snprintf(full, sizeof(full), "cd '%s' && %s 2>/dev/null", tmpdir, cmd);
	f = popen(full, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		if (!found && strstr(line, needle)) {
			snprintf(out, len, "%s", line);
			found = 1;
		}
	}
	free(line);
	pclose(f);
	return found;
}

/* ---- ELF symbols and sections with libelf ---- */

struct elf_file {
	int fd;
	Elf *e;
};

static int elf_open(const char *path, struct elf_file *ef)
{
	ef->fd = open(path, O_RDONLY);
	if (ef->fd < 0)
		return -1;
	ef->e = elf_begin(ef->fd, ELF_C_READ, NULL);
	if (!ef->e) {
		close(ef->fd);
		return -1;
	}
	return 0;
}

static void elf_close(struct elf_file *ef)
{
	elf_end(ef->e);
	close(ef->fd);
}

/* Address (and size) of a symbol from .symtab or .dynsym; 0 if absent. */
static uint64_t sym_addr(const char *path, const char *name, uint64_t *size)
{
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;

	if (size)
		*size = 0;
	if (elf_open(path, &ef))
		return 0;
	while (!addr && (scn = elf_nextscn(ef.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, i, &s) || !s.st_value)
				continue;
			nm = elf_strptr(ef.e, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				addr = s.st_value;
				if (size)
					*size = s.st_size;
				break;
			}
		}
	}
	elf_close(&ef);
	return addr;
}

static uint64_t sym(const char *path, const char *name, uint64_t *size)
{
	uint64_t a = sym_addr(path, name, size);

	CHECK(a != 0, "symbol %s not found in %s", name, path);
	return a;
}

/* Address and size of a section by name; 0 if absent. */
static uint64_t sec_addr(const char *path, const char *name, uint64_t *size)
{
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	size_t shstrndx;

	*size = 0;
	if (elf_open(path, &ef))
		return 0;
	if (elf_getshdrstrndx(ef.e, &shstrndx) == 0) {
		while ((scn = elf_nextscn(ef.e, scn))) {
			GElf_Shdr sh;
			const char *nm;

			if (!gelf_getshdr(scn, &sh))
				continue;
			nm = elf_strptr(ef.e, shstrndx, sh.sh_name);
			if (nm && !strcmp(nm, name)) {
				addr = sh.sh_addr;
				*size = sh.sh_size;
				break;
			}
		}
	}
	elf_close(&ef);
	return addr;
}

/* The bytes at [addr, addr+len) of an allocated section, for comparing code. */
static int read_code(const char *path, uint64_t addr, void *buf, size_t len)
{
	struct elf_file ef;
	Elf_Scn *scn = NULL;
	int rc = -1;

	if (elf_open(path, &ef))
		return -1;
	while ((scn = elf_nextscn(ef.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || addr < sh.sh_addr ||
		    addr + len > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size >= addr - sh.sh_addr + len) {
			memcpy(buf, (char *)d->d_buf + (addr - sh.sh_addr), len);
			rc = 0;
		}
		break;
	}
	elf_close(&ef);
	return rc;
}

/* ---- disassembly, for addresses the machine semantics pin down ---- */

struct insn {
	uint64_t addr;
	char text[96]; /* "push   %rbp" */
};

static int disasm(const char *path, uint64_t lo, uint64_t hi, struct insn *out, int max)
{
	char cmd[PATH_MAX + 200], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --start-address=0x%llx --stop-address=0x%llx '%s'",
		 (unsigned long long)lo, (unsigned long long)hi, path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0 && n < max) {
		char *p = line, *end;
		uint64_t a;

		while (*p == ' ')
			p++;
		a = strtoull(p, &end, 16);
		if (end == p || *end != ':' || end[1] != '\t')
			continue;
		out[n].addr = a;
		snprintf(out[n].text, sizeof(out[n].text), "%s", end + 2);
		out[n].text[strcspn(out[n].text, "\n")] = 0;
		n++;
	}
	free(line);
	pclose(f);
	return n;
}

/* ---- tables ---- */

static struct cfi_table *build(const char *path, const struct cfi_build_opts *o)
{
	struct cfi_table *t = NULL;
	struct cfi_diag diag = {0};
	int rc = cfi_table_build_file(path, o, &t, &diag);

	CHECK(rc == CFI_OK && t, "build %s: %s%s%s", path, cfi_strerror(rc), diag.count ? ": " : "",
	      diag.count ? diag.msg[0] : "");
	return rc == CFI_OK ? t : NULL;
}

static const char *describe(const struct cfi_rule *r, int arch)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	cfi_rule_describe(r, arch, buf[i], sizeof(buf[i]));
	return buf[i];
}

/* x86-64's: every case but the arm64 ones */
static const char *desc(const struct cfi_rule *r)
{
	return describe(r, CFI_ARCH_X86_64);
}

static const struct cfi_rule none_rule;

static const struct cfi_rule *at(const struct cfi_table *t, uint64_t addr)
{
	return t ? cfi_table_lookup(t, addr) : &none_rule;
}

/*
 * Structural invariants every table must keep: the walker trusts them
 * without checking (binary search per page, row 0 at offset 0).
 */
static void check_invariants(const char *what, const struct cfi_table *t)
{
	uint32_t p, i, bad_first = 0, bad_order = 0, bad_rule = 0, bad_lookup = 0, bad_pages = 0;

	if (!t)
		return;
	CHECK(t->nr_rules >= 1 && t->rules[CFI_RULE_NONE].cfa_kind == CFI_CFA_NONE,
	      "%s: rules[0] must be the 'no CFI' rule", what);
	for (p = 0; p < t->nr_pages; p++) {
		const struct cfi_page *pg = &t->pages[p];
		uint64_t base = pg->page << CFI_PAGE_SHIFT;

		if (p && t->pages[p - 1].page >= pg->page)
			bad_pages++;
		if (!pg->nr_rows || (uint64_t)pg->first_row + pg->nr_rows > t->nr_rows) {
			bad_pages++;
			continue;
		}
		if (t->rows[pg->first_row].off != 0)
			bad_first++;
		for (i = pg->first_row; i < pg->first_row + pg->nr_rows; i++) {
			if (i > pg->first_row && t->rows[i - 1].off >= t->rows[i].off)
				bad_order++;
			if (t->rows[i].rule >= t->nr_rules) {
				bad_rule++;
				continue;
			}
			/* the last row at an offset is the one in force */
			if (cfi_table_lookup(t, base + t->rows[i].off) !=
			    &t->rules[t->rows[i].rule])
				bad_lookup++;
		}
		/* page boundary: row 0 answers for the page's first byte */
		if (cfi_table_lookup(t, base) != &t->rules[t->rows[pg->first_row].rule])
			bad_lookup++;
	}
	CHECK(!bad_pages && !bad_first && !bad_order && !bad_rule && !bad_lookup,
	      "%s: %u bad pages, %u pages without a row at offset 0, %u rows out of order, "
	      "%u bad rule ids, %u lookups disagreeing with the rows",
	      what, bad_pages, bad_first, bad_order, bad_rule, bad_lookup);
}

static int rule_eq(const struct cfi_rule *a, const struct cfi_rule *b)
{
	return a->cfa_kind == b->cfa_kind && a->rbp_kind == b->rbp_kind &&
	       a->ra_kind == b->ra_kind && a->reason == b->reason && a->cfa_off == b->cfa_off &&
	       a->aux == b->aux && a->rbp_off == b->rbp_off && a->ra_off == b->ra_off;
}

#define EXPECT_CFA(t, addr, kind, off, what)                                                       \
	do {                                                                                       \
		const struct cfi_rule *r_ = at(t, addr);                                           \
		CHECK(r_->cfa_kind == (kind) && r_->cfa_off == (off),                              \
		      "%s at 0x%llx: want cfa kind %d off %d, got %s", what,                       \
		      (unsigned long long)(addr), kind, off, desc(r_));                            \
	} while (0)

/* ---- (a) PLT stubs ---- */

/* The K of "(rip & 15) >= K" in the linker's PLT CFA expression, or -1. */
static int plt_threshold(const char *lib)
{
	static const char pat[] =
	    "DW_OP_breg7 (rsp): 8; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; DW_OP_lit";
	char cmd[PATH_MAX + 64], line[1024], *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s'", lib);
	if (!grep_cmd(cmd, pat, line, sizeof(line)))
		return -1;
	p = strstr(line, pat) + strlen(pat);
	return atoi(p);
}

static void plt_variant(const char *name, const char *ldflags)
{
	uint64_t plt, plt_size, sec, sec_size, got, got_size, a;
	unsigned int bad = 0, entries = 0;
	struct cfi_table *t;
	const char *lib = tpath(name);
	int k;

	if (sh("gcc -O2 -fPIC -shared %s -o %s plt.c", ldflags, name)) {
		CHECK(0, "cannot link %s", name);
		return;
	}
	t = build(lib, NULL);
	check_invariants(lib, t);
	plt = sec_addr(lib, ".plt", &plt_size);
	CHECK(plt && plt_size >= 32, "%s: no .plt section", name);
	k = plt_threshold(lib);
	CHECK(k == 9 || k == 10 || k == 11, "%s: readelf shows no PLT expression (K=%d)", name, k);
	if (!t || !plt || k < 0)
		goto out;

	/* PLT0 pushes GOT[1] then jumps: rsp+16, then rsp+24 after its push */
	EXPECT_CFA(t, plt, CFI_CFA_RSP, 16, name);
	EXPECT_CFA(t, plt + 6, CFI_CFA_RSP, 24, name);
	/* every byte of every lazy entry: the one expression, as PLT with aux K */
	for (a = plt + 16; a < plt + plt_size; a++) {
		const struct cfi_rule *r = at(t, a);

		if ((a & 15) == 0)
			entries++;
		if (r->cfa_kind != CFI_CFA_PLT || r->cfa_off != 8 || r->aux != k ||
		    r->ra_kind != CFI_REG_AT_CFA || r->ra_off != -8) {
			if (!bad++)
				CHECK(0, "%s .plt+0x%llx: want plt(rsp+8,>=%d) ra=c-8, got %s",
				      name, (unsigned long long)(a - plt), k, desc(r));
		}
	}
	CHECK(bad == 0, "%s: %u PLT bytes with the wrong rule", name, bad);
	printf("rules: %s: %u lazy PLT entries, threshold %d\n", name, entries, k);

	/* .plt.sec / .plt.got stubs only jump: the CIE's rsp+8 */
	sec = sec_addr(lib, ".plt.sec", &sec_size);
	if (sec) {
		EXPECT_CFA(t, sec, CFI_CFA_RSP, 8, ".plt.sec");
		EXPECT_CFA(t, sec + sec_size - 1, CFI_CFA_RSP, 8, ".plt.sec end");
	}
	got = sec_addr(lib, ".plt.got", &got_size);
	if (got)
		EXPECT_CFA(t, got, CFI_CFA_RSP, 8, ".plt.got");
out:
	cfi_table_free(t);
}

static void test_plt(void)
{
	write_file("plt.c", "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
			    "int f(const char *s) { puts(s); return (int)strlen(s) + atoi(s); }\n"
			    "void *g(size_t n) { return malloc(n); }\n");
	plt_variant("libplt_lazy.so", "-Wl,-z,lazy");
	plt_variant("libplt_now.so", "-Wl,-z,now");
	/* IBT stubs are laid out differently (endbr64 first): K changes to 9 */
	plt_variant("libplt_ibt.so", "-fcf-protection=full -Wl,-z,lazy -Wl,-z,ibtplt");
	plt_variant("libplt_ibt_now.so", "-fcf-protection=full -Wl,-z,now -Wl,-z,ibtplt");
}

/* ---- (b) DRAP ---- */

static void test_drap(void)
{
	static const char src[] =
	    "#include <string.h>\n"
	    "extern void use(char *, int);\n"
	    "__attribute__((noinline)) void drap(int n)\n"
	    "{\n"
	    "	char buf[64] __attribute__((aligned(64)));\n"
	    "	char vla[n];\n"
	    "	memset(buf, n, sizeof(buf));\n"
	    "	memset(vla, n, n);\n"
	    "	use(buf, vla[n / 2]);\n"
	    "}\n"
	    "void use(char *p, int x) { __asm__ volatile(\"\" :: \"r\"(p), \"r\"(x) : \"memory\"); "
	    "}\n"
	    "int main(int argc, char **argv) { (void)argv; drap(argc + 10); return 0; }\n";
	char line[1024], *p;
	uint64_t f, size, a;
	unsigned int deref = 0, r10 = 0, other = 0;
	int drap_off = 0;
	struct cfi_table *t;
	const char *bin = tpath("drap");

	write_file("drap.c", src);
	/* an over-aligned local plus a VLA: GCC needs r10 as DRAP */
	if (sh("gcc -O2 -mstackrealign -o drap drap.c")) {
		CHECK(0, "cannot build drap");
		return;
	}
	if (grep_cmd("readelf --debug-dump=frames drap", "DW_CFA_def_cfa_expression (DW_OP_breg6",
		     line, sizeof(line)) &&
	    (p = strstr(line, "(rbp): ")))
		drap_off = atoi(p + 7);
	CHECK(drap_off < 0, "drap: GCC did not emit a breg6/deref CFA (no DRAP?)");
	f = sym(bin, "drap", &size);
	t = build(bin, NULL);
	check_invariants(bin, t);
	if (!t || !f)
		goto out;
	EXPECT_CFA(t, f, CFI_CFA_RSP, 8, "drap entry");
	for (a = f; a < f + size; a++) {
		const struct cfi_rule *r = at(t, a);

		if (r->cfa_kind == CFI_CFA_DEREF_RBP && r->cfa_off == drap_off && r->aux == 0 &&
		    r->ra_kind == CFI_REG_AT_CFA && r->ra_off == -8)
			deref++;
		/* "push %rbp" saved it through an expression: rbp lost there, the row still usable */
		else if (r->cfa_kind == CFI_CFA_REG && r->aux == 10 &&
			 (r->reason == CFI_UNSUP_NONE || r->reason == CFI_UNSUP_RBP))
			r10++;
		else if (r->cfa_kind != CFI_CFA_RSP)
			other++;
	}
	CHECK(deref > 0, "drap: no byte with cfa=deref(rbp%d)+0", drap_off);
	CHECK(r10 > 0, "drap: no prologue byte with CFA in r10 (a CFI_CFA_REG rule)");
	CHECK(other == 0, "drap: %u bytes with an unexpected rule", other);
	printf("rules: drap: %u bytes deref(rbp%d), %u bytes cfa=r10\n", deref, drap_off, r10);
out:
	cfi_table_free(t);
}

/* ---- (c) signal trampoline ---- */

/*
 * A local symbol of a stripped system library: from the library, else from
 * its detached debug file under /usr/lib/debug/.build-id (libc6-dbg).
 */
static uint64_t libc_debug_sym(const char *lib, const char *name)
{
	char cmd[PATH_MAX + 32], line[256], id[128] = "", path[PATH_MAX];
	uint64_t a = sym_addr(lib, name, NULL);

	if (a)
		return a;
	snprintf(cmd, sizeof(cmd), "readelf -n %s", lib);
	if (!grep_cmd(cmd, "Build ID:", line, sizeof(line)) ||
	    sscanf(strstr(line, "Build ID:") + 9, "%127s", id) != 1 || strlen(id) < 3)
		return 0;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	return sym_addr(path, name, NULL);
}

static void test_signal(void)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	char cmd[PATH_MAX], *line = NULL;
	uint64_t cies[16], lo = 0, hi = 0, a, restore;
	unsigned int ncies = 0, bad = 0;
	struct cfi_table *t;
	size_t cap = 0;
	FILE *f;

	/* libc.so.6 is stripped: find the FDE whose CIE says "S" (signal frame) */
	/* only the interpreted dump puts the augmentation on the CIE's header line */
	/* -wN: libc6-dbg's detached copy (NOBITS .eh_frame) makes readelf exit 1 */
	snprintf(cmd, sizeof(cmd), "readelf -wN --debug-dump=frames-interp %s", libc);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(0, "cannot run %s", cmd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long off, l, h, cie;
		char *pc;

		if (strstr(line, " CIE \"") && strstr(line, "S\"") && ncies < 16 &&
		    sscanf(line, "%llx", &off) == 1)
			cies[ncies++] = off;
		if (!lo && strstr(line, " FDE cie=") && (pc = strstr(line, "pc=")) &&
		    sscanf(strstr(line, "cie=") + 4, "%llx", &cie) == 1 &&
		    sscanf(pc, "pc=%llx..%llx", &l, &h) == 2) {
			for (unsigned int i = 0; i < ncies; i++)
				if (cies[i] == cie) {
					lo = l;
					hi = h;
				}
		}
	}
	free(line);
	if (pclose(f))
		CHECK(0, "%s failed (binutils)", cmd);
	CHECK(lo && hi > lo, "libc: no FDE with an \"S\" augmentation found");
	restore = libc_debug_sym(libc, "__restore_rt");
	if (!restore)
		CHECK(0, "__restore_rt: in neither %s nor its detached debug file (libc6-dbg)",
		      libc);
	else if (restore < lo || restore >= hi)
		CHECK(0, "__restore_rt 0x%llx outside its FDE", (unsigned long long)restore);
	t = build(libc, NULL);
	check_invariants(libc, t);
	if (!t || !lo)
		goto out;
	/* the trampoline by its symbol, not by the FDE the loop below walks */
	if (restore)
		CHECK(at(t, restore)->cfa_kind == CFI_CFA_SIGNAL &&
			  at(t, restore - 1)->cfa_kind == CFI_CFA_SIGNAL,
		      "__restore_rt 0x%llx: want signal there and one byte before, got %s / %s",
		      (unsigned long long)restore, desc(at(t, restore)), desc(at(t, restore - 1)));
	/* the FDE starts one byte early so a return address after the call still hits it */
	for (a = lo; a < hi; a++)
		if (at(t, a)->cfa_kind != CFI_CFA_SIGNAL && !bad++)
			CHECK(0, "libc 0x%llx (signal FDE 0x%llx..0x%llx): want signal, got %s",
			      (unsigned long long)a, (unsigned long long)lo, (unsigned long long)hi,
			      desc(at(t, a)));
	CHECK(bad == 0, "libc signal trampoline: %u bytes not CFI_CFA_SIGNAL", bad);
	printf("rules: libc signal trampoline 0x%llx..0x%llx\n", (unsigned long long)lo,
	       (unsigned long long)hi);
out:
	cfi_table_free(t);
}

/* ---- (d) frameless code, (e) rbp frames ---- */

static const char frames_src[] =
    "extern int g(int);\n"
    "__attribute__((noinline)) int leaf(int a, int b) { return a * b + 3; }\n"
    "__attribute__((noinline)) int nonleaf(int a, int b, int c, int d, int e, int f)\n"
    "{\n"
    "	volatile char buf[40];\n"
    "	int x1 = g(a), x2 = g(b), x3 = g(c), x4 = g(d), x5 = g(e), x6 = g(f);\n"
    "	buf[0] = (char)x1;\n"
    "	return g(x1 + x2) + x1 * x2 * x3 * x4 * x5 * x6 + a + b + c + d + e + f + buf[0];\n"
    "}\n"
    "__attribute__((noinline)) int g(int x) { __asm__ volatile(\"\" : \"+r\"(x)); return x + 1; }\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "	(void)argv;\n"
    "	return leaf(argc, 2) + nonleaf(argc, 1, 2, 3, 4, 5);\n"
    "}\n";

/*
 * Walks the prologue instruction by instruction and checks the CFA against
 * the stack depth the pushes and the sub imply: no CFI reader involved.
 */
static void check_prologue(const char *what, const struct cfi_table *t, const struct insn *in,
			   int n)
{
	int depth = 0, i, checked = 0;

	for (i = 0; i < n; i++) {
		const char *s = in[i].text;
		unsigned long long imm;

		EXPECT_CFA(t, in[i].addr, CFI_CFA_RSP, 8 + depth, what);
		checked++;
		if (!strncmp(s, "push ", 5)) {
			depth += 8;
			if (strstr(s, "%rbp") && i + 1 < n) {
				const struct cfi_rule *r = at(t, in[i + 1].addr);

				CHECK(r->rbp_kind == CFI_REG_AT_CFA && r->rbp_off == -(8 + depth),
				      "%s after push %%rbp at 0x%llx: want rbp=c%d, got %s", what,
				      (unsigned long long)in[i + 1].addr, -(8 + depth), desc(r));
			}
		} else if (sscanf(s, "sub $0x%llx,%%rsp", &imm) == 1) {
			depth += (int)imm;
		} else if (!strncmp(s, "call", 4) || !strncmp(s, "jmp", 3) ||
			   !strncmp(s, "ret", 3) || s[0] == 'j') {
			break;
		}
	}
	CHECK(checked >= 3, "%s: only %d prologue instructions", what, checked);
}

static void test_frames(void)
{
	struct insn in[64];
	uint64_t f, size, a;
	unsigned int bad = 0;
	struct cfi_table *t;
	const char *bin;
	int n, i;

	/* (d) -fomit-frame-pointer */
	bin = tpath("frames_o2");
	if (sh("gcc -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -o frames_o2 frames.c")) {
		CHECK(0, "cannot build frames_o2");
		return;
	}
	t = build(bin, NULL);
	check_invariants(bin, t);
	f = sym(bin, "leaf", &size);
	for (a = f; t && a < f + size; a++) {
		const struct cfi_rule *r = at(t, a);

		if ((r->cfa_kind != CFI_CFA_RSP || r->cfa_off != 8 || r->rbp_kind != CFI_REG_SAME ||
		     r->ra_kind != CFI_REG_AT_CFA || r->ra_off != -8) &&
		    !bad++)
			CHECK(0, "leaf+%llu: want cfa=rsp+8 rbp=same ra=c-8, got %s",
			      (unsigned long long)(a - f), desc(r));
	}
	CHECK(size > 0 && bad == 0, "leaf: %u of %llu bytes wrong", bad, (unsigned long long)size);
	f = sym(bin, "nonleaf", &size);
	n = disasm(bin, f, f + size, in, 64);
	if (t)
		check_prologue("nonleaf", t, in, n);
	cfi_table_free(t);

	/* (e) rbp frames */
	bin = tpath("frames_o0");
	if (sh("gcc -O0 -fno-omit-frame-pointer -o frames_o0 frames.c")) {
		CHECK(0, "cannot build frames_o0");
		return;
	}
	t = build(bin, NULL);
	check_invariants(bin, t);
	f = sym(bin, "nonleaf", &size);
	n = disasm(bin, f, f + size, in, 64);
	for (i = 0; t && i < n && strcmp(in[i].text, "mov    %rsp,%rbp"); i++)
		;
	CHECK(i > 0 && i + 1 < n, "frames_o0: no mov %%rsp,%%rbp in nonleaf");
	if (t && i > 0 && i + 1 < n) {
		const struct cfi_rule *r;

		EXPECT_CFA(t, f, CFI_CFA_RSP, 8, "o0 entry");
		/* between push and mov: rsp+16, rbp saved at c-16 */
		r = at(t, in[i].addr);
		CHECK(r->cfa_kind == CFI_CFA_RSP && r->cfa_off == 16 &&
			  r->rbp_kind == CFI_REG_AT_CFA && r->rbp_off == -16,
		      "o0 after push: got %s", desc(r));
		/* after mov %rsp,%rbp: through the body, until leave */
		for (; i + 1 < n && strncmp(in[i + 1].text, "leave", 5) &&
		       strncmp(in[i + 1].text, "pop", 3);
		     i++) {
			r = at(t, in[i + 1].addr);
			if (!(r->cfa_kind == CFI_CFA_RBP && r->cfa_off == 16 &&
			      r->rbp_kind == CFI_REG_AT_CFA && r->rbp_off == -16 &&
			      r->ra_kind == CFI_REG_AT_CFA && r->ra_off == -8) &&
			    !bad++)
				CHECK(
				    0,
				    "o0 body 0x%llx (%s): want cfa=rbp+16 rbp=c-16 ra=c-8, got %s",
				    (unsigned long long)in[i + 1].addr, in[i + 1].text, desc(r));
		}
		CHECK(bad == 0, "o0 body: %u instructions with the wrong rule", bad);
		/* after leave / pop: back on rsp for the ret */
		if (i + 2 < n)
			EXPECT_CFA(t, in[i + 2].addr, CFI_CFA_RSP, 8, "o0 ret");
	}
	cfi_table_free(t);
}

/* ---- (f) .eh_frame vs .debug_frame, separate debug files ---- */

/*
 * Builds in a child process, for inputs that have crashed the library: the
 * crash becomes one failed check instead of ending the whole test.  Returns
 * the CFA kind at addr, 100 if the build failed, or < 0 for a crash: -signal,
 * or -1000 - exit code (the sanitizers report by exiting).
 */
static int build_isolated(const char *path, const struct cfi_build_opts *o, uint64_t addr)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return 100;
	if (pid == 0) {
		struct cfi_table *t = NULL;
		struct cfi_diag diag = {0};
		int kind;

		if (cfi_table_build_file(path, o, &t, &diag) != CFI_OK)
			_exit(100);
		kind = cfi_table_lookup(t, addr)->cfa_kind;
		cfi_table_free(t);
		_exit(10 + kind);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 100;
	if (WIFSIGNALED(status))
		return -WTERMSIG(status);
	if (WEXITSTATUS(status) == 100)
		return 100;
	if (WEXITSTATUS(status) < 10 || WEXITSTATUS(status) >= 10 + CFI_CFA_KIND_MAX)
		return -1000 - WEXITSTATUS(status);
	return WEXITSTATUS(status) - 10;
}

static void compare_fn(const char *what, const struct cfi_table *ta, const char *bina,
		       const struct cfi_table *tb, const char *binb, const char *fn)
{
	uint64_t fa, fb, sa, sb, i;
	unsigned char ca[4096], cb[4096];
	unsigned int bad = 0;

	fa = sym(bina, fn, &sa);
	fb = sym(binb, fn, &sb);
	if (!ta || !tb || !fa || !fb)
		return;
	CHECK(at(tb, fb)->cfa_kind != CFI_CFA_NONE, "%s: %s has no rule", what, fn);
	CHECK(rule_eq(at(ta, fa), at(tb, fb)), "%s: %s entry: %s vs %s", what, fn, desc(at(ta, fa)),
	      desc(at(tb, fb)));
	/* the rest only if the code is byte-identical, which -g should not change */
	if (sa != sb || sa > sizeof(ca) || read_code(bina, fa, ca, sa) ||
	    read_code(binb, fb, cb, sb) || memcmp(ca, cb, sa))
		return;
	for (i = 0; i < sa; i++)
		if (!rule_eq(at(ta, fa + i), at(tb, fb + i)) && !bad++)
			CHECK(0, "%s: %s+%llu: %s vs %s", what, fn, (unsigned long long)i,
			      desc(at(ta, fa + i)), desc(at(tb, fb + i)));
	CHECK(bad == 0, "%s: %s: %u bytes differ", what, fn, bad);
}

static void test_debug_frame(void)
{
	struct cfi_build_opts o = {0};
	struct cfi_table *ta, *tb, *tc;
	char line[256], id[64] = "";
	const char *a = tpath("async"), *b = tpath("dbg"), *c = tpath("sep");

	if (sh("gcc -O2 -fasynchronous-unwind-tables -o async frames.c") ||
	    sh("gcc -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables -g -Wl,--build-id "
	       "-o dbg frames.c")) {
		CHECK(0, "cannot build the .debug_frame pair");
		return;
	}
	ta = build(a, NULL);
	tb = build(b, NULL);
	check_invariants(b, tb);
	if (ta)
		CHECK(ta->stats.sources & (1 << CFI_SRC_EH_FRAME), "async: no .eh_frame source");
	if (tb)
		CHECK(tb->stats.sources & (1 << CFI_SRC_DEBUG_FRAME),
		      "dbg: no .debug_frame source");
	compare_fn(".debug_frame", ta, a, tb, b, "nonleaf");
	compare_fn(".debug_frame", ta, a, tb, b, "leaf");

	/* the same .debug_frame, only in a separate file found by .gnu_debuglink */
	if (sh("cp dbg sep && objcopy --only-keep-debug sep sep.debug && "
	       "objcopy --strip-debug --add-gnu-debuglink=sep.debug sep")) {
		CHECK(0, "objcopy failed");
		goto out;
	}
	tc = build(c, NULL);
	if (tc)
		CHECK(tc->stats.sources & (1 << CFI_SRC_DEBUG_FRAME_SEP),
		      "sep: separate debug file not used (sources 0x%x)", tc->stats.sources);
	compare_fn("debuglink same dir", ta, a, tc, c, "nonleaf");
	cfi_table_free(tc);

	o.no_separate_debug = 1;
	tc = build(c, &o);
	CHECK(at(tc, sym(c, "nonleaf", NULL))->cfa_kind == CFI_CFA_NONE,
	      "no_separate_debug: nonleaf still has %s", desc(at(tc, sym(c, "nonleaf", NULL))));
	cfi_table_free(tc);
	o.no_separate_debug = 0;

	o.no_debug_frame = 1;
	tc = build(b, &o);
	CHECK(at(tc, sym(b, "nonleaf", NULL))->cfa_kind == CFI_CFA_NONE,
	      "no_debug_frame: nonleaf still has %s", desc(at(tc, sym(b, "nonleaf", NULL))));
	cfi_table_free(tc);
	o.no_debug_frame = 0;

	/* gdb's second place: a .debug directory next to the binary */
	if (!sh("mkdir -p .debug && mv sep.debug .debug/sep.debug")) {
		tc = build(c, NULL);
		compare_fn("debuglink .debug/", ta, a, tc, c, "nonleaf");
		cfi_table_free(tc);
	} else {
		CHECK(0, "cannot move sep.debug to .debug/");
	}

	/* a debug root with the build-id layout: ROOT/.build-id/xx/rest.debug */
	if (grep_cmd("readelf -n sep", "Build ID:", line, sizeof(line)))
		sscanf(strstr(line, "Build ID:") + 9, "%63s", id);
	if (strlen(id) <= 2 || sh("mkdir -p root/.build-id/%.2s && mv .debug/sep.debug "
				  "root/.build-id/%.2s/%s.debug",
				  id, id, id + 2)) {
		CHECK(0, "sep: no build id (readelf -n), or cannot lay out root/.build-id");
	} else {
		tc = build(c, NULL);
		CHECK(at(tc, sym(c, "nonleaf", NULL))->cfa_kind == CFI_CFA_NONE,
		      "debug file moved away, but nonleaf still has %s",
		      desc(at(tc, sym(c, "nonleaf", NULL))));
		cfi_table_free(tc);
		o.debug_root = tpath("root");
		tc = build(c, &o);
		if (tc)
			CHECK(tc->stats.sources & (1 << CFI_SRC_DEBUG_FRAME_SEP),
			      "debug_root build-id: separate debug file not used");
		compare_fn("debug_root build-id", ta, a, tc, c, "nonleaf");
		CHECK(tc && !strcmp(tc->build_id, id), "build id: want %s, got %s", id,
		      tc ? tc->build_id : "(no table)");
		cfi_table_free(tc);
		o.debug_root = NULL;
	}

	/* gdb's global layout: ROOT/<directory of the binary>/<debuglink name> */
	if (strlen(id) > 2 &&
	    !sh("mkdir -p root%s && mv root/.build-id/%.2s/%s.debug root%s/sep.debug", tmpdir, id,
		id + 2, tmpdir)) {
		o.debug_root = tpath("root");
		tc = build(c, &o);
		compare_fn("debug_root/dir/debuglink", ta, a, tc, c, "nonleaf");
		cfi_table_free(tc);
		o.debug_root = NULL;
	} else {
		CHECK(0, "cannot lay out root%s/sep.debug", tmpdir);
	}

	/* a debuglink to a file that belongs to another binary must be ignored */
	if (!sh("gcc -O0 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o other frames.c "
		"&& "
		"objcopy --only-keep-debug other sep.debug")) {
		int kind = build_isolated(c, NULL, sym(c, "nonleaf", NULL));

		CHECK(kind >= 0,
		      "debuglink to a file with another build-id: build crashed (%s %d): "
		      "double elf_end() in tables/table_build.c",
		      kind > -1000 ? "signal" : "exit", kind > -1000 ? -kind : -kind - 1000);
		CHECK(
		    kind == CFI_CFA_NONE || kind < 0,
		    "debuglink to a file with another build-id: it was used (nonleaf cfa kind %d)",
		    kind);
	} else {
		CHECK(0, "cannot build 'other' and its debug file");
	}
out:
	cfi_table_free(ta);
	cfi_table_free(tb);
}

/* ---- (g) the outermost frame, and crt's _init and _fini ---- */

static void test_start(void)
{
	struct cfi_table *t;
	const char *bins[] = {"dyn", "static"};
	const char *flags[] = {"", "-static"};
	int i;

	write_file("start.c", "int main(int argc, char **argv) { return 0; }\n");
	for (i = 0; i < 2; i++) {
		const char *bin = tpath(bins[i]);
		const struct cfi_rule *r;
		uint64_t s;

		if (sh("gcc -O2 %s -o %s start.c", flags[i], bins[i])) {
			CHECK(0, "cannot link %s (libc6-dev has libc.a)", bins[i]);
			continue;
		}
		t = build(bin, NULL);
		check_invariants(bin, t);
		s = sym(bin, "_start", NULL);
		r = at(t, s);
		CHECK(r->cfa_kind == CFI_CFA_RSP && r->ra_kind == CFI_REG_UNDEFINED,
		      "%s _start 0x%llx: want cfa=rsp+N ra=undefined, got %s", bins[i],
		      (unsigned long long)s, desc(r));
		/*
		 * crti.o's _init and _fini have no FDE: "sub $8,%rsp", calls,
		 * "add $8,%rsp; ret" (tables/linker_stubs.c): rsp+8 on entry and
		 * at the ret, rsp+16 before the add, the return address at CFA-8
		 */
		for (int k = 0; k < 2; k++) {
			const char *name = k ? ".fini" : ".init";
			uint64_t size, a = sec_addr(bin, name, &size);
			const struct cfi_rule *r0 = at(t, a), *rm = at(t, a + size - 5),
					      *rr = at(t, a + size - 1);

			CHECK(a && size >= 9 && r0->cfa_kind == CFI_CFA_RSP && r0->cfa_off == 8 &&
				  r0->ra_kind == CFI_REG_AT_CFA && r0->ra_off == -8 &&
				  rm->cfa_kind == CFI_CFA_RSP && rm->cfa_off == 16 &&
				  rm->ra_kind == CFI_REG_AT_CFA && rm->ra_off == -8 &&
				  rr->cfa_kind == CFI_CFA_RSP && rr->cfa_off == 8 &&
				  rr->ra_kind == CFI_REG_AT_CFA,
			      "%s %s at 0x%llx (%llu bytes): entry %s, before the add %s, at the "
			      "ret %s",
			      bins[i], name, (unsigned long long)a, (unsigned long long)size,
			      desc(r0), desc(rm), desc(rr));
		}
		cfi_table_free(t);
	}
}

/* ---- (h) gaps and the ends of the table ---- */

static void test_gaps(void)
{
	static const char src[] =
	    "__attribute__((noinline)) int one(int x) { return x * 3; }\n"
	    "__attribute__((noinline)) int two(int x) { return x * 5 + one(x); }\n"
	    "int main(int argc, char **argv) { (void)argv; return two(argc); }\n";
	uint64_t one, sz1, two, sz2;
	struct cfi_table *t;
	const char *bin = tpath("gaps");

	write_file("gaps.c", src);
	if (sh("gcc -O2 -falign-functions=64 -o gaps gaps.c")) {
		CHECK(0, "cannot build gaps");
		return;
	}
	t = build(bin, NULL);
	check_invariants(bin, t);
	one = sym(bin, "one", &sz1);
	two = sym(bin, "two", &sz2);
	if (!t || !one || !two)
		goto out;
	CHECK(at(t, one + sz1 - 1)->cfa_kind == CFI_CFA_RSP, "one: last byte: %s",
	      desc(at(t, one + sz1 - 1)));
	/* the alignment padding after one() belongs to no FDE */
	if (one + sz1 < two) {
		CHECK(at(t, one + sz1) == &t->rules[CFI_RULE_NONE],
		      "padding after one() at 0x%llx inherits %s", (unsigned long long)(one + sz1),
		      desc(at(t, one + sz1)));
		CHECK(at(t, two - 1)->cfa_kind == CFI_CFA_NONE, "padding before two(): %s",
		      desc(at(t, two - 1)));
	}
	CHECK(at(t, two)->cfa_kind == CFI_CFA_RSP, "two: %s", desc(at(t, two)));
	CHECK(t->min_addr < t->max_addr, "empty range [0x%llx, 0x%llx)",
	      (unsigned long long)t->min_addr, (unsigned long long)t->max_addr);
	CHECK(at(t, t->min_addr)->cfa_kind != CFI_CFA_NONE, "min_addr 0x%llx has no rule",
	      (unsigned long long)t->min_addr);
	CHECK(at(t, t->max_addr - 1)->cfa_kind != CFI_CFA_NONE, "max_addr-1 has no rule");
	CHECK(at(t, t->min_addr - 1)->cfa_kind == CFI_CFA_NONE, "below min_addr: %s",
	      desc(at(t, t->min_addr - 1)));
	CHECK(at(t, t->max_addr)->cfa_kind == CFI_CFA_NONE, "at max_addr: %s",
	      desc(at(t, t->max_addr)));
	CHECK(at(t, t->max_addr + CFI_PAGE_SIZE)->cfa_kind == CFI_CFA_NONE,
	      "a page above max_addr: %s", desc(at(t, t->max_addr + CFI_PAGE_SIZE)));
	CHECK(at(t, 0)->cfa_kind == CFI_CFA_NONE, "address 0: %s", desc(at(t, 0)));
	CHECK(at(t, UINT64_MAX)->cfa_kind == CFI_CFA_NONE, "address ~0: %s",
	      desc(at(t, UINT64_MAX)));
	CHECK(at(t, 1ull << 63)->cfa_kind == CFI_CFA_NONE, "address 1<<63: %s",
	      desc(at(t, 1ull << 63)));
out:
	cfi_table_free(t);
}

/* ---- (i) hand-written .cfi directives ---- */

/*
 * A label after an instruction marks the first address where the directives
 * before it are in force.  The code is never run.
 */
static const char asm_src[] = "	.text\n"
			      "	.globl _start\n"
			      "	.type _start, @function\n"
			      "_start:\n"
			      "	.cfi_startproc\n"
			      "	.cfi_undefined rip\n"
			      "	xor %ebp, %ebp\n"
			      "	hlt\n"
			      "	.cfi_endproc\n"
			      "	.size _start, .-_start\n"
			      "\n"
			      "	.p2align 4\n"
			      "	.globl f_state\n"
			      "	.type f_state, @function\n"
			      "f_state:\n"
			      "	.cfi_startproc\n"
			      "	push %rbp\n"
			      "	.cfi_def_cfa_offset 16\n"
			      "	.cfi_offset rbp, -16\n"
			      "	.globl st_a\n"
			      "st_a:	mov %rsp, %rbp\n"
			      "	.cfi_def_cfa_register rbp\n"
			      "	.globl st_b\n"
			      "st_b:	nop\n"
			      "	.cfi_remember_state\n"
			      "	.cfi_def_cfa rsp, 32\n"
			      "	.cfi_offset rbp, -24\n"
			      "	.globl st_c\n"
			      "st_c:	nop\n"
			      "	.cfi_remember_state\n"
			      "	.cfi_def_cfa_offset 48\n"
			      "	.cfi_same_value rbp\n"
			      "	.globl st_d\n"
			      "st_d:	nop\n"
			      "	.cfi_restore_state\n"
			      "	.globl st_e\n"
			      "st_e:	nop\n"
			      "	.cfi_restore_state\n"
			      "	.globl st_f\n"
			      "st_f:	pop %rbp\n"
			      "	.cfi_def_cfa rsp, 8\n"
			      "	.cfi_restore rbp\n"
			      "	.globl st_g\n"
			      "st_g:	ret\n"
			      "	.cfi_endproc\n"
			      "	.size f_state, .-f_state\n"
			      "\n"
			      "	.p2align 4\n"
			      "	.globl f_expr\n"
			      "	.type f_expr, @function\n"
			      "f_expr:\n"
			      "	.cfi_startproc\n"
			      "	nop\n"
			      /* DW_CFA_val_expression rbp, {DW_OP_breg7 0} */
			      "	.cfi_escape 0x16, 0x06, 0x02, 0x77, 0x00\n"
			      "	.globl ex_a\n"
			      "ex_a:	nop\n"
			      /* DW_CFA_val_offset rbp, 2 * data_align */
			      "	.cfi_escape 0x14, 0x06, 0x02\n"
			      "	.globl ex_b\n"
			      "ex_b:	nop\n"
			      /* DW_CFA_expression rbp, {DW_OP_breg6 0} */
			      "	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00\n"
			      "	.globl ex_c\n"
			      "ex_c:	nop\n"
			      "	.cfi_restore rbp\n"
			      /* DW_CFA_def_cfa_expression {DW_OP_breg7 8; DW_OP_deref} */
			      "	.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
			      "	.globl ex_d\n"
			      "ex_d:	nop\n"
			      /* {DW_OP_breg7 16; DW_OP_deref; DW_OP_plus_uconst 8} */
			      "	.cfi_escape 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08\n"
			      "	.globl ex_e\n"
			      "ex_e:	nop\n"
			      /* {DW_OP_breg0 0}: a shape the model does not know */
			      "	.cfi_escape 0x0f, 0x02, 0x70, 0x00\n"
			      "	.globl ex_f\n"
			      "ex_f:	nop\n"
			      "	.cfi_def_cfa r10, 0\n"
			      "	.globl ex_g\n"
			      "ex_g:	nop\n"
			      "	.cfi_def_cfa rsp, 8\n"
			      /* DW_CFA_val_expression rip, {DW_OP_breg7 0} */
			      "	.cfi_escape 0x16, 0x10, 0x02, 0x77, 0x00\n"
			      "	.globl ex_h\n"
			      "ex_h:	nop\n"
			      "	.cfi_restore rip\n"
			      "	.cfi_offset rbp, -40000\n"
			      "	.globl ex_i\n"
			      "ex_i:	nop\n"
			      "	.cfi_restore rbp\n"
			      "	.cfi_register rip, r11\n"
			      "	.globl ex_j\n"
			      "ex_j:	nop\n"
			      "	.cfi_restore rip\n"
			      "	.cfi_undefined rip\n"
			      "	.globl ex_k\n"
			      "ex_k:	nop\n"
			      "	.cfi_restore rip\n"
			      /* DWARF register 17 (xmm0): no general register, unsupported */
			      "	.cfi_def_cfa 17, 8\n"
			      "	.globl ex_m\n"
			      "ex_m:	nop\n"
			      "	.cfi_def_cfa rsp, 8\n"
			      "	.cfi_offset rbx, -16\n"
			      "	.globl ex_n\n"
			      "ex_n:	nop\n"
			      /* _dl_runtime_resolve's shape: the CFA in rbx */
			      "	.cfi_def_cfa rbx, 24\n"
			      "	.globl ex_o\n"
			      "ex_o:	nop\n"
			      "	.cfi_def_cfa rsp, 8\n"
			      "	.cfi_register rbx, r12\n"
			      "	.globl ex_p\n"
			      "ex_p:	nop\n"
			      "	.cfi_restore rbx\n"
			      "	.globl ex_l\n"
			      "ex_l:	ret\n"
			      "	.cfi_endproc\n"
			      "	.size f_expr, .-f_expr\n";

struct asm_case {
	const char *label;
	int cfa_kind, cfa_off, aux;
	int rbp_kind, rbp_off;
	int ra_kind, ra_off;
	int reason;
};

/* Each case's rule at its label, field by field (-1: any). */
static void check_cases(const char *bin, const struct cfi_table *t, const struct asm_case *cases,
			size_t n)
{
	size_t i;

	for (i = 0; t && i < n; i++) {
		const struct asm_case *c = &cases[i];
		uint64_t a = sym(bin, c->label, NULL);
		const struct cfi_rule *r = at(t, a);
		int ok = 1;

		ok &= r->cfa_kind == c->cfa_kind;
		ok &= c->cfa_off == -1 || r->cfa_off == c->cfa_off;
		ok &= c->aux == -1 || r->aux == c->aux;
		ok &= c->rbp_kind == -1 || r->rbp_kind == c->rbp_kind;
		ok &= c->rbp_off == -1 || r->rbp_off == c->rbp_off;
		ok &= c->ra_kind == -1 || r->ra_kind == c->ra_kind;
		ok &= c->ra_off == -1 || r->ra_off == c->ra_off;
		ok &= r->reason == c->reason;
		CHECK(ok,
		      "%s (0x%llx): want cfa %d/%d aux %d rbp %d/%d ra %d/%d reason %d, got %s "
		      "(reason %s)",
		      c->label, (unsigned long long)a, c->cfa_kind, c->cfa_off, c->aux, c->rbp_kind,
		      c->rbp_off, c->ra_kind, c->ra_off, c->reason, describe(r, t->arch),
		      cfi_unsupported_name(r->reason));
	}
}

static void test_asm(void)
{
	/* -1: do not care */
	static const struct asm_case cases[] = {
	    {"_start", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_UNDEFINED, 0, 0},
	    {"f_state", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"st_a", CFI_CFA_RSP, 16, -1, CFI_REG_AT_CFA, -16, CFI_REG_AT_CFA, -8, 0},
	    {"st_b", CFI_CFA_RBP, 16, -1, CFI_REG_AT_CFA, -16, CFI_REG_AT_CFA, -8, 0},
	    {"st_c", CFI_CFA_RSP, 32, -1, CFI_REG_AT_CFA, -24, CFI_REG_AT_CFA, -8, 0},
	    {"st_d", CFI_CFA_RSP, 48, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"st_e", CFI_CFA_RSP, 32, -1, CFI_REG_AT_CFA, -24, CFI_REG_AT_CFA, -8, 0},
	    {"st_f", CFI_CFA_RBP, 16, -1, CFI_REG_AT_CFA, -16, CFI_REG_AT_CFA, -8, 0},
	    {"st_g", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"f_expr", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_a", CFI_CFA_RSP, 8, -1, CFI_REG_UNSUPPORTED, -1, CFI_REG_AT_CFA, -8,
	     CFI_UNSUP_RBP},
	    {"ex_b", CFI_CFA_RSP, 8, -1, CFI_REG_VAL_CFA, -16, CFI_REG_AT_CFA, -8, 0},
	    {"ex_c", CFI_CFA_RSP, 8, -1, CFI_REG_UNSUPPORTED, -1, CFI_REG_AT_CFA, -8,
	     CFI_UNSUP_RBP},
	    {"ex_d", CFI_CFA_DEREF_RSP, 8, 0, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_e", CFI_CFA_DEREF_RSP, 16, 8, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_f", CFI_CFA_UNSUPPORTED, -1, -1, -1, -1, -1, -1, CFI_UNSUP_CFA_EXPR},
	    {"ex_g", CFI_CFA_REG, 0, 10, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_h", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_UNSUPPORTED, -1, CFI_UNSUP_RA},
	    {"ex_i", CFI_CFA_RSP, 8, -1, CFI_REG_UNSUPPORTED, -1, CFI_REG_AT_CFA, -8,
	     CFI_UNSUP_RBP},
	    {"ex_j", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_UNSUPPORTED, -1, CFI_UNSUP_RA},
	    {"ex_k", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_UNDEFINED, -1, 0},
	    {"ex_m", CFI_CFA_UNSUPPORTED, 8, 17, -1, -1, -1, -1, CFI_UNSUP_CFA_REG},
	    {"ex_n", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_o", CFI_CFA_REG, 24, 3, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_p", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	    {"ex_l", CFI_CFA_RSP, 8, -1, CFI_REG_SAME, 0, CFI_REG_AT_CFA, -8, 0},
	};
	/* rbx (label, kind, offset): where a CFA-in-rbx rule finds it */
	static const struct {
		const char *label;
		int kind, off;
	} rbx_cases[] = {
	    {"f_state", CFI_REG_SAME, 0},	  {"ex_n", CFI_REG_AT_CFA, -16},
	    {"ex_o", CFI_REG_AT_CFA, -16},	  {"ex_p", CFI_REG_UNSUPPORTED, 0},
	    {"ex_l", CFI_REG_SAME, 0},
	};
	struct cfi_table *t;
	const char *bin = tpath("cfi_asm");
	char buf[64];
	size_t i;

	write_file("cfi_asm.s", asm_src);
	if (sh("gcc -nostdlib -static -Wl,-e,_start -o cfi_asm cfi_asm.s")) {
		CHECK(0, "cannot assemble cfi_asm.s");
		return;
	}
	t = build(bin, NULL);
	check_invariants(bin, t);
	check_cases(bin, t, cases, sizeof(cases) / sizeof(cases[0]));
	for (i = 0; t && i < sizeof(rbx_cases) / sizeof(rbx_cases[0]); i++) {
		const struct cfi_rule *r = at(t, sym(bin, rbx_cases[i].label, NULL));

		CHECK(r->rbx_kind == rbx_cases[i].kind && r->rbx_off == rbx_cases[i].off,
		      "%s: rbx %d/%d, want %d/%d (%s)", rbx_cases[i].label, r->rbx_kind, r->rbx_off,
		      rbx_cases[i].kind, rbx_cases[i].off, desc(r));
	}
	/* the formatter keeps the register of a CFA in another register, as readelf prints it */
	if (t) {
		cfi_rule_format_cfa(at(t, sym(bin, "ex_m", NULL)), t->arch, buf, sizeof(buf));
		CHECK(!strcmp(buf, "xmm0+8"), "ex_m: CFA formats as '%s', want 'xmm0+8'", buf);
		cfi_rule_format_cfa(at(t, sym(bin, "ex_g", NULL)), t->arch, buf, sizeof(buf));
		CHECK(!strcmp(buf, "r10+0"), "ex_g: CFA formats as '%s', want 'r10+0'", buf);
		cfi_rule_format_cfa(at(t, sym(bin, "ex_d", NULL)), t->arch, buf, sizeof(buf));
		CHECK(!strcmp(buf, "exp"), "ex_d: CFA formats as '%s', want 'exp'", buf);
	}
	cfi_table_free(t);
}

/*
 * AArch64: the return address is in x30 until a prologue stores it, at
 * offsets that differ per function; GCC's CFA is sp-based, clang's x29-based;
 * pac-ret signs x30 (DW_CFA_AARCH64_negate_ra_state, b-key CIE "B"), which
 * changes no rule.  Assembled with the cross toolchain, read on this host.
 */
static const char asm_arm64_src[] = "	.text\n"
				    "	.globl _start\n"
				    "_start:\n"
				    "	.cfi_startproc\n"
				    "	.cfi_undefined x30\n"
				    "	mov x29, #0\n"
				    "	bl a_leaf\n"
				    "	b .\n"
				    "	.cfi_endproc\n"
				    "a_leaf:\n"
				    "	.cfi_startproc\n"
				    "	add x0, x0, #1\n"
				    "	ret\n"
				    "	.cfi_endproc\n"
				    "a_frame:\n"
				    "	.cfi_startproc\n"
				    "	stp x29, x30, [sp, #-32]!\n"
				    "	.cfi_def_cfa_offset 32\n"
				    "	.cfi_offset 29, -32\n"
				    "	.cfi_offset 30, -24\n"
				    "a_frame_body:\n"
				    "	mov x29, sp\n"
				    "	.cfi_def_cfa_register x29\n"
				    "a_frame_fp:\n"
				    "	bl a_leaf\n"
				    "	ldp x29, x30, [sp], #32\n"
				    "	.cfi_restore 30\n"
				    "	.cfi_restore 29\n"
				    "	.cfi_def_cfa sp, 0\n"
				    "a_frame_epi:\n"
				    "	ret\n"
				    "	.cfi_endproc\n"
				    "a_pac:\n"
				    "	.cfi_startproc\n"
				    "	.cfi_b_key_frame\n"
				    "	pacibsp\n"
				    "	.cfi_negate_ra_state\n"
				    "	stp x29, x30, [sp, #-16]!\n"
				    "	.cfi_def_cfa_offset 16\n"
				    "	.cfi_offset 29, -16\n"
				    "	.cfi_offset 30, -8\n"
				    "a_pac_body:\n"
				    "	ldp x29, x30, [sp], #16\n"
				    "	.cfi_restore 30\n"
				    "	.cfi_restore 29\n"
				    "	.cfi_def_cfa_offset 0\n"
				    "	autibsp\n"
				    "	.cfi_negate_ra_state\n"
				    "a_pac_epi:\n"
				    "	ret\n"
				    "	.cfi_endproc\n"
				    "a_ra_reg:\n"
				    "	.cfi_startproc\n"
				    "	mov x9, x30\n"
				    "	.cfi_register x30, x9\n"
				    "a_ra_reg_body:\n"
				    "	mov x30, x9\n"
				    "	.cfi_restore x30\n"
				    "a_ra_reg_epi:\n"
				    "	ret\n"
				    "	.cfi_endproc\n";

static void test_asm_arm64(void)
{
	/* RSP/RBP kinds are the stack and frame pointers: sp and x29 here */
	static const struct asm_case cases[] = {
	    {"_start", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_UNDEFINED, 0, 0},
	    {"a_leaf", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	    {"a_frame", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	    {"a_frame_body", CFI_CFA_RSP, 32, -1, CFI_REG_AT_CFA, -32, CFI_REG_AT_CFA, -24, 0},
	    {"a_frame_fp", CFI_CFA_RBP, 32, -1, CFI_REG_AT_CFA, -32, CFI_REG_AT_CFA, -24, 0},
	    {"a_frame_epi", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	    {"a_pac", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	    {"a_pac_body", CFI_CFA_RSP, 16, -1, CFI_REG_AT_CFA, -16, CFI_REG_AT_CFA, -8, 0},
	    {"a_pac_epi", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	    {"a_ra_reg_body", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_UNSUPPORTED, -1,
	     CFI_UNSUP_RA},
	    {"a_ra_reg_epi", CFI_CFA_RSP, 0, -1, CFI_REG_SAME, 0, CFI_REG_SAME, 0, 0},
	};
	struct cfi_build_opts native = {.native_only = 1};
	struct cfi_diag diag = {0};
	const char *bin = tpath("cfi_asm_arm64");
	struct cfi_table *t, *refused = NULL;
	char buf[64];

	write_file("cfi_asm_arm64.s", asm_arm64_src);
	if (sh("aarch64-linux-gnu-gcc -nostdlib -static -Wl,-e,_start -o cfi_asm_arm64 "
	       "cfi_asm_arm64.s")) {
		CHECK(0, "cannot assemble cfi_asm_arm64.s (aarch64-linux-gnu-gcc)");
		return;
	}
	t = build(bin, NULL);
	check_invariants(bin, t);
	CHECK(t && t->arch == CFI_ARCH_ARM64, "cfi_asm_arm64: table for %s",
	      t ? cfi_arch_name(t->arch) : "nothing");
	check_cases(bin, t, cases, sizeof(cases) / sizeof(cases[0]));
	if (t) {
		cfi_rule_format_cfa(at(t, sym(bin, "a_frame_fp", NULL)), t->arch, buf, sizeof(buf));
		CHECK(!strcmp(buf, "x29+32"), "a_frame_fp: CFA formats as '%s', want 'x29+32'",
		      buf);
	}
	cfi_table_free(t);
	/*
	 * arm64's PLT has no FDE: PLT0 pushes x16 and x30 (CFA sp+16, RA at
	 * CFA-8 after it), each stub leaves both alone (CFA sp, RA in x30)
	 */
	write_file("plt_arm64.c", "#include <stdio.h>\nint main(void) { return puts(\"x\"); }\n");
	if (!sh("aarch64-linux-gnu-gcc -O2 -o plt_arm64 plt_arm64.c")) {
		const char *pbin = tpath("plt_arm64");
		uint64_t plt_size, plt = sec_addr(pbin, ".plt", &plt_size);
		struct cfi_table *pt = build(pbin, NULL);
		const struct cfi_rule *r0 = at(pt, plt), *r1 = at(pt, plt + 4),
				      *rn = at(pt, plt + 32);

		CHECK(plt && pt && r0->cfa_kind == CFI_CFA_RSP && r0->cfa_off == 0 &&
			  r0->ra_kind == CFI_REG_SAME && r1->cfa_kind == CFI_CFA_RSP &&
			  r1->cfa_off == 16 && r1->ra_kind == CFI_REG_AT_CFA && r1->ra_off == -8 &&
			  rn->cfa_kind == CFI_CFA_RSP && rn->cfa_off == 0 &&
			  rn->ra_kind == CFI_REG_SAME,
		      "arm64 .plt at 0x%llx: PLT0 %s, after its push %s, PLT1 %s",
		      (unsigned long long)plt, describe(r0, CFI_ARCH_ARM64),
		      describe(r1, CFI_ARCH_ARM64), describe(rn, CFI_ARCH_ARM64));
		/* _fini (crti.o, crtn.o): nop; stp x29, x30; mov x29, sp; ldp x29, x30; ret */
		{
			uint64_t fsz, fini = sec_addr(pbin, ".fini", &fsz);
			const struct cfi_rule *f0 = at(pt, fini), *f1 = at(pt, fini + 8),
					      *fr = at(pt, fini + fsz - 4);

			CHECK(fini && fsz == 20 && f0->cfa_kind == CFI_CFA_RSP &&
				  f0->cfa_off == 0 && f0->ra_kind == CFI_REG_SAME &&
				  f1->cfa_off == 16 && f1->rbp_kind == CFI_REG_AT_CFA &&
				  f1->rbp_off == -16 && f1->ra_kind == CFI_REG_AT_CFA &&
				  f1->ra_off == -8 && fr->cfa_kind == CFI_CFA_RSP &&
				  fr->cfa_off == 0 && fr->ra_kind == CFI_REG_SAME,
			      "arm64 .fini at 0x%llx (%llu bytes): %s, after its push %s, at its "
			      "ret %s",
			      (unsigned long long)fini, (unsigned long long)fsz,
			      describe(f0, CFI_ARCH_ARM64), describe(f1, CFI_ARCH_ARM64),
			      describe(fr, CFI_ARCH_ARM64));
		}
		cfi_table_free(pt);
	} else {
		CHECK(0, "cannot build plt_arm64 (aarch64-linux-gnu-gcc)");
	}
	/* a process's object is walked by this machine's walker: another machine's is refused */
	CHECK(cfi_table_build_file(bin, &native, &refused, &diag) == CFI_ERR_ELF && !refused &&
		  diag.count && strstr(diag.msg[0], "arm64 object"),
	      "native_only: an arm64 object gave %s", diag.count ? diag.msg[0] : "no message");
	cfi_table_free(refused);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/cfiprof-rules-XXXXXX";

	harness_init(argc, argv);
	elf_version(EV_CURRENT);
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);

	/* frames.c: the source of test_frames' binaries, and of test_debug_frame's */
	write_file("frames.c", frames_src);
	RUN_TEST(test_plt);
	RUN_TEST(test_drap);
	RUN_TEST(test_signal);
	RUN_TEST(test_frames);
	RUN_TEST(test_debug_frame);
	RUN_TEST(test_start);
	RUN_TEST(test_gaps);
	RUN_TEST(test_asm);
	RUN_TEST(test_asm_arm64);

	if (getenv("CFIPROF_KEEP_TMP"))
		printf("rules: kept %s\n", tmpdir);
	else
		sh("cd / && rm -rf '%s'", tmpdir);
	return HARNESS_DONE();
}
