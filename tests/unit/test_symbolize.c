// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbolizer tests. Test programs are compiled at run time; binutils
 * (readelf, objcopy, c++filt) is the independent oracle for symbol
 * addresses and demangled names.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "elf/build_id.h"
#include "user/symbolize/demangle.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/ksym_events.h"
#include "user/symbolize/ksym_live.h"
#include "user/symbolize/perfmap.h"
#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_table.h"

static char tmpdir[64];

struct fsym {
	uint64_t addr, size;
	char *name;
};

struct fsyms {
	struct fsym *v;
	size_t n, cap;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Function symbols as binutils' readelf sees them (both .symtab and .dynsym). */
static void readelf_syms(const char *path, struct fsyms *out)
{
	char cmd[4096], line[8192];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return;
	while (fgets(line, sizeof(line), p)) {
		char type[32], bind[32], vis[32], ndx[32], name[4096];
		unsigned long long value, size;
		unsigned num;

		if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s %4095s", &num, &value, &size,
			   type, bind, vis, ndx, name) != 8)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) || !strcmp(ndx, "UND") ||
		    !value)
			continue;
		/* readelf prints versions as name@VER / name@@VER; the ELF name has none. */
		name[strcspn(name, "@")] = '\0';
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 1024;
			out->v = realloc(out->v, out->cap * sizeof(*out->v));
		}
		out->v[out->n++] = (struct fsym){value, size, strdup(name)};
	}
	pclose(p);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), fsym_cmp);
}

static void fsyms_free(struct fsyms *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static const struct fsym *fsym_by_name(const struct fsyms *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

static bool alias_at(const struct fsyms *s, uint64_t addr, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].addr == addr && !strcmp(s->v[i].name, name))
			return true;
	return false;
}

/* Start of the first function symbol strictly after addr, or UINT64_MAX. */
static uint64_t next_start(const struct fsyms *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].addr > addr)
			return s->v[i].addr;
	return UINT64_MAX;
}

static bool covered_by_sized(const struct fsyms *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].size && s->v[i].addr <= addr && addr < s->v[i].addr + s->v[i].size)
			return true;
	return false;
}

static const char *lookup_name(struct sym_obj *o, uint64_t addr, uint64_t *off)
{
	const char *name = NULL;
	uint64_t dummy;

	if (sym_obj_lookup(o, addr, &name, off ? off : &dummy) < 0)
		return NULL;
	return name;
}

static const char prog_c[] =
    "#define F __attribute__((noinline, aligned(64), used))\n"
    "F int alpha(int x) { return x * 3 + 1; }\n"
    "F int beta(int x) { return x ^ 0x55; }\n"
    "static F int gamma_local(int x) { return x - 7; }\n"
    "F int delta(int x) { return alpha(x) + beta(x) + gamma_local(x); }\n"
    /* hand-written functions without .size: zfunc before zafter, zlast alone in .zsec */
    "__asm__(\".text\\n.p2align 6\\n.globl zfunc\\n.type zfunc,@function\\nzfunc:\\n"
    " nop\\n nop\\n nop\\n ret\\n.p2align 6\\n.globl zafter\\n.type zafter,@function\\n"
    "zafter:\\n ret\\n.size zafter, 1\\n"
    ".section .zsec,\\\"ax\\\",@progbits\\n.globl zlast\\n.type zlast,@function\\n"
    "zlast:\\n nop\\n nop\\n ret\\n.text\\n\");\n"
    "int main(int argc, char **argv) { (void)argv; return delta(argc); }\n";

static const char *const prog_funcs[] = {"alpha", "beta", "gamma_local", "delta", "main"};

/* Names, boundaries and padding of one binary with a full .symtab. */
static void check_prog_symbols(struct sym_obj *o, const struct fsyms *rs, const char *what)
{
	size_t i, padding_checked = 0;

	for (i = 0; i < sizeof(prog_funcs) / sizeof(prog_funcs[0]); i++) {
		const struct fsym *f = fsym_by_name(rs, prog_funcs[i]);
		const char *n;
		uint64_t off = 99, end;

		CHECK(f && f->size, "%s: readelf has no sized %s", what, prog_funcs[i]);
		if (!f || !f->size)
			continue;
		n = lookup_name(o, f->addr, &off);
		CHECK(streq(n, f->name) && off == 0, "%s: %s at 0x%" PRIx64 " -> %s+%" PRIu64, what,
		      f->name, f->addr, n ? n : "(none)", off);
		n = lookup_name(o, f->addr + f->size - 1, &off);
		CHECK(streq(n, f->name) && off == f->size - 1, "%s: %s last byte -> %s", what,
		      f->name, n ? n : "(none)");
		end = f->addr + f->size;
		if (next_start(rs, f->addr) > end && !covered_by_sized(rs, end)) {
			n = lookup_name(o, end, NULL);
			CHECK(n == NULL, "%s: padding after %s at 0x%" PRIx64 " -> %s", what,
			      f->name, end, n);
			padding_checked++;
		}
	}
	CHECK(padding_checked >= 3, "%s: only %zu padding checks", what, padding_checked);
}

/* TMPDIR/prog, from prog_c: test_c_program's, and test_separate_debug's to strip. */
static void build_prog(void)
{
	char src[256], bin[256];

	snprintf(src, sizeof(src), "%s/prog.c", tmpdir);
	snprintf(bin, sizeof(bin), "%s/prog", tmpdir);
	write_file(src, prog_c);
	if (!shell_ok("gcc -O2 -g -Wl,--build-id=sha1 -o %s %s", bin, src))
		CHECK(0, "gcc failed");
}

static void test_c_program(void)
{
	char bin[256];
	struct sym_cache *c = sym_cache_new();
	struct fsyms rs = {0};
	const struct fsym *z, *za, *zl;
	struct sym_obj *o;
	const char *n;
	uint64_t off;

	snprintf(bin, sizeof(bin), "%s/prog", tmpdir);
	readelf_syms(bin, &rs);
	o = sym_cache_get(c, NULL, bin, -1, 0);
	CHECK(o != NULL, "cannot load %s", bin);
	if (!o)
		goto out;
	CHECK(sym_cache_get(c, NULL, bin, -1, 0) == o && sym_cache_count(c) == 1,
	      "second get must hit the cache");
	CHECK(strlen(sym_obj_build_id(o)) == 40, "build-id '%s'", sym_obj_build_id(o));
	check_prog_symbols(o, &rs, "prog");

	/* Zero-sized: up to the next function, never out of the section. */
	z = fsym_by_name(&rs, "zfunc");
	za = fsym_by_name(&rs, "zafter");
	zl = fsym_by_name(&rs, "zlast");
	CHECK(z && za && zl && z->size == 0 && zl->size == 0, "asm symbols missing");
	if (z && za && zl) {
		n = lookup_name(o, z->addr + 3, &off);
		CHECK(streq(n, "zfunc") && off == 3, "zfunc+3 -> %s", n);
		n = lookup_name(o, za->addr - 1, NULL);
		CHECK(streq(n, "zfunc"), "zafter-1 -> %s", n);
		n = lookup_name(o, za->addr, NULL);
		CHECK(streq(n, "zafter"), "zafter -> %s", n);
		n = lookup_name(o, zl->addr + 2, NULL);
		CHECK(streq(n, "zlast"), "zlast+2 -> %s", n);
		/* .zsec holds 3 bytes: the next byte belongs to no function of ours. */
		n = lookup_name(o, zl->addr + 3, NULL);
		CHECK(!streq(n, "zlast"), "zlast+3 (past .zsec) -> %s", n);
	}

	/* File offset -> vaddr through PT_LOAD, for /proc/PID/maps offsets. */
	{
		const struct fsym *f = fsym_by_name(&rs, "alpha");
		uint64_t v = 0;
		char cmd[512], line[512];
		unsigned long long foff = 0, va = 0;
		FILE *p;

		snprintf(cmd, sizeof(cmd),
			 "readelf -lW %s | awk '$1==\"LOAD\" && $7 ~ /E/ {print $2, $3}'", bin);
		p = popen(cmd, "r");
		if (p && fgets(line, sizeof(line), p))
			sscanf(line, "%llx %llx", &foff, &va);
		if (p)
			pclose(p);
		if (f && va) {
			CHECK(sym_obj_offset_to_vaddr(o, f->addr - va + foff, &v) == 0 &&
				  v == f->addr,
			      "offset_to_vaddr: 0x%" PRIx64 " vs 0x%" PRIx64, v, f->addr);
		}
	}
out:
	fsyms_free(&rs);
	sym_cache_free(c);
}

static void test_separate_debug(void)
{
	char bin[256], dbg[256], stripped[256], linked[256], root[256], bad[256];
	struct sym_cache *c = sym_cache_new();
	struct fsyms rs = {0};
	char id[ELF_BUILD_ID_HEX_LEN] = "";
	const struct fsym *g;
	struct sym_obj *o;
	const char *n;
	int fd;

	snprintf(bin, sizeof(bin), "%s/prog", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/.debug/prog.debug", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/prog.stripped", tmpdir);
	snprintf(linked, sizeof(linked), "%s/prog.linked", tmpdir);
	snprintf(root, sizeof(root), "%s/dbgroot", tmpdir);
	readelf_syms(bin, &rs);
	g = fsym_by_name(&rs, "gamma_local");
	if (!shell_ok("mkdir -p %s/.debug %s && objcopy --only-keep-debug %s %s && "
		      "objcopy --strip-all %s %s && "
		      "cd %s && objcopy --add-gnu-debuglink=.debug/prog.debug %s %s",
		      tmpdir, root, bin, dbg, bin, stripped, tmpdir, stripped, linked))
		CHECK(0, "objcopy failed");
	fd = open(stripped, O_RDONLY);
	CHECK(fd >= 0 && elf_build_id_hex_fd(fd, id, sizeof(id)) == 0 && strlen(id) == 40,
	      "build-id of stripped binary");
	if (fd >= 0)
		close(fd);

	/* Stripped, no debug file reachable: none, never a neighbour's name. */
	CHECK(sym_cache_set_debug_root(c, root) == 0, "set_debug_root");
	o = sym_cache_get(c, "stripped-nodebug", stripped, -1, 0);
	CHECK(o != NULL, "load stripped");
	if (o && g) {
		n = lookup_name(o, g->addr, NULL);
		CHECK(n == NULL, "stripped gamma_local -> %s", n);
		CHECK(sym_obj_debug_file(o) == NULL, "no debug file expected");
	}

	/* .gnu_debuglink found in the .debug/ subdirectory, opened via an fd. */
	fd = open(linked, O_RDONLY);
	o = sym_cache_get(c, "linked", linked, fd, 0);
	if (fd >= 0)
		close(fd);
	CHECK(o && streq(sym_obj_debug_file(o), dbg), "debuglink file: %s",
	      o && sym_obj_debug_file(o) ? sym_obj_debug_file(o) : "(none)");
	if (o)
		check_prog_symbols(o, &rs, "debuglink");

	/* Build-id tree: <root>/.build-id/xx/rest.debug. */
	shell_ok("mkdir -p %s/.build-id/%.2s && cp %s %s/.build-id/%.2s/%s.debug", root, id, dbg,
		 root, id, id + 2);
	o = sym_cache_get(c, id, stripped, -1, 0);
	CHECK(o && sym_obj_debug_file(o) && strstr(sym_obj_debug_file(o), "/.build-id/"),
	      "build-id debug file: %s",
	      o && sym_obj_debug_file(o) ? sym_obj_debug_file(o) : "(none)");
	if (o)
		check_prog_symbols(o, &rs, "build-id");

	/* A debug file of some other build at the right path must be refused. */
	sym_cache_free(c);
	c = sym_cache_new();
	snprintf(bad, sizeof(bad), "%s/badroot", tmpdir);
	shell_ok("mkdir -p %s/.build-id/%.2s && gcc -O2 -g -x c -o %s/other - <<'X'\n"
		 "int other_fn(void) { return 1; } int main(int argc, char **argv) { return "
		 "other_fn(); }\nX\n"
		 "objcopy --only-keep-debug %s/other %s/.build-id/%.2s/%s.debug",
		 bad, id, tmpdir, tmpdir, bad, id, id + 2);
	sym_cache_set_debug_root(c, bad);
	o = sym_cache_get(c, "mismatch", stripped, -1, 0);
	CHECK(o && !sym_obj_debug_file(o), "mismatched build-id accepted: %s",
	      o && sym_obj_debug_file(o) ? sym_obj_debug_file(o) : "(none)");

	/* Unreadable objects fail once and stay failed under their key. */
	CHECK(sym_cache_get(c, "missing", "/nonexistent/lib.so", -1, 0) == NULL, "missing file");
	CHECK(sym_cache_get(c, "missing", "/nonexistent/lib.so", -1, 0) == NULL, "missing again");
	CHECK(sym_cache_remove(c, "missing") == 0 && sym_cache_remove(c, "missing") < 0, "remove");
	fsyms_free(&rs);
	sym_cache_free(c);
}

/* c++filt (binutils) output for one name; flags "" or "-p". */
static void cxxfilt(const char *flags, const char *name, char *out, size_t len)
{
	char cmd[4096];
	FILE *p;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "c++filt %s '%s'", flags, name);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (fgets(out, (int)len, p))
		out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

static void test_cxx(void)
{
	static const char src_text[] =
	    "namespace ns {\n"
	    "template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }\n"
	    "struct Widget { __attribute__((noinline)) int poke(int, const char *) const; };\n"
	    "int Widget::poke(int v, const char *s) const { return v + s[0]; }\n"
	    "}\n"
	    "int main(int c, char **v) { ns::Widget w;\n"
	    "  return ns::twice<int>(c) + (int)ns::twice<double>(c) + w.poke(c, v[0]); }\n";
	char src[256], bin[256], want[4096];
	struct sym_cache *c = sym_cache_new();
	struct fsyms rs = {0};
	struct sym_obj *o;
	size_t i, checked = 0;

	snprintf(src, sizeof(src), "%s/cxx.cc", tmpdir);
	snprintf(bin, sizeof(bin), "%s/cxx", tmpdir);
	write_file(src, src_text);
	if (!shell_ok("g++ -O2 -g -o %s %s", bin, src))
		CHECK(0, "g++ failed");
	readelf_syms(bin, &rs);
	o = sym_cache_get(c, NULL, bin, -1, 0);
	CHECK(o != NULL, "load cxx");
	for (i = 0; o && i < rs.n; i++) {
		const char *n;

		if (strncmp(rs.v[i].name, "_ZN", 3) != 0 || !strstr(rs.v[i].name, "2ns"))
			continue;
		sym_cache_set_demangle(c, SYM_DEMANGLE_FULL);
		cxxfilt("", rs.v[i].name, want, sizeof(want));
		n = lookup_name(o, rs.v[i].addr, NULL);
		CHECK(streq(n, want), "%s -> '%s', c++filt '%s'", rs.v[i].name, n, want);
		sym_cache_set_demangle(c, SYM_DEMANGLE_NO_PARAMS);
		cxxfilt("-p", rs.v[i].name, want, sizeof(want));
		n = lookup_name(o, rs.v[i].addr, NULL);
		CHECK(streq(n, want), "%s -> '%s', c++filt -p '%s'", rs.v[i].name, n, want);
		sym_cache_set_demangle(c, SYM_DEMANGLE_NONE);
		n = lookup_name(o, rs.v[i].addr, NULL);
		CHECK(streq(n, rs.v[i].name), "raw %s -> '%s'", rs.v[i].name, n);
		checked++;
	}
	CHECK(checked >= 3, "expected twice<int>, twice<double>, poke: got %zu", checked);
	fsyms_free(&rs);
	sym_cache_free(c);
}

static void check_demangle(const char *mangled, enum sym_demangle_mode mode, const char *want)
{
	char *got = sym_demangle(mangled, mode);

	CHECK(want ? streq(got, want) : got == NULL, "demangle %s -> '%s', want '%s'", mangled,
	      got ? got : "(null)", want ? want : "(null)");
	free(got);
}

static void test_demangle(void)
{
	check_demangle("_ZN4core3fmt5write17h0123456789abcdefE", SYM_DEMANGLE_FULL,
		       "core::fmt::write");
	check_demangle("_ZN3std2rt10lang_start17h9a1b2c3d4e5f6071E", SYM_DEMANGLE_NO_PARAMS,
		       "std::rt::lang_start");
	check_demangle("_RNvCs1234_7mycrate4main", SYM_DEMANGLE_FULL, "mycrate::main");
	check_demangle("_RNvNtCs1234_7mycrate3foo3bar", SYM_DEMANGLE_FULL, "mycrate::foo::bar");
	check_demangle("_ZN3foo3barIiEEvT_", SYM_DEMANGLE_FULL, "void foo::bar<int>(int)");
	check_demangle("_ZN3foo3barIiEEvT_", SYM_DEMANGLE_NO_PARAMS, "foo::bar<int>");
	check_demangle("_Z3fooi.cold", SYM_DEMANGLE_FULL, "foo(int) [clone .cold]");
	check_demangle("_ZN3foo3barIiEEvT_", SYM_DEMANGLE_NONE, NULL);
	check_demangle("malloc", SYM_DEMANGLE_FULL, NULL);
	check_demangle("_Znotmangled", SYM_DEMANGLE_FULL, NULL);
	check_demangle("_R", SYM_DEMANGLE_FULL, NULL);
}

/* The kernel's %pS answers as ksym_live reads them, the kernel's formats as lib/vsprintf.c writes
 * them. */
static void test_ksym_answers(void)
{
	static const struct {
		const char *answer, *name;
		uint64_t addr, start, end;
	} ok[] = {
	    {"do_syscall_64+0x15/0x280", "do_syscall_64", 0xffffffff821ecbf5, 0xffffffff821ecbe0,
	     0xffffffff821ece60},
	    {"do_syscall_64+0x0/0x280", "do_syscall_64", 0xffffffff821ecbe0, 0xffffffff821ecbe0,
	     0xffffffff821ece60},
	    {"nft_do_chain+0x10/0x5a0 [nf_tables]", "nft_do_chain [nf_tables]", 0xffffffffc0201010,
	     0xffffffffc0201000, 0xffffffffc02015a0},
	    {"finish_task_switch.isra.0+0x8/0x2c0", "finish_task_switch.isra.0", 0x1008, 0x1000,
	     0x12c0},
	};
	static const char *const refused[] = {
	    "0xffffffffc0201000", /* no symbol: the address itself */
	    "f+0x20/0x40",	  /* an offset past the address */
	    "f+0x0/0x0",	  /* no size */
	    "+0x1/0x2",		  /* no name */
	    "f+0x1/0x2 junk",	  /* neither end nor module */
	    "f",		  /* no offset */
	};
	char name[64];
	uint64_t start, end;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int rc =
		    ksym_live_parse(ok[i].answer, ok[i].addr, &start, &end, name, sizeof(name));

		CHECK(rc == 0 && !strcmp(name, ok[i].name) && start == ok[i].start &&
			  end == ok[i].end,
		      "'%s': rc %d, '%s' [%#" PRIx64 ", %#" PRIx64 ")", ok[i].answer, rc,
		      rc ? "" : name, rc ? 0 : start, rc ? 0 : end);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK(ksym_live_parse(refused[i], 0x10, &start, &end, name, sizeof(name)) == -1,
		      "'%s' taken for a symbol", refused[i]);
	CHECK(ksym_live_parse("a_rather_long_name+0x1/0x2", 0x10, &start, &end, name, 8) == -1,
	      "a name longer than the buffer kept cut");
}

static void test_kallsyms(void)
{
	static const char fake[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 t do_one\n"
				   "ffffffff81000100 T do_one_alias\n"
				   "ffffffff81000200 D some_data\n"
				   "ffffffff81000300 T after_data\n"
				   "this line is garbage\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0001080 T mod_fn2\t[mymod]\n";
	char path[256], err[512] = "";
	struct ksyms *k;
	const char *n = NULL;
	uint64_t off = 0;

	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	write_file(path, fake);
	k = ksyms_load(path, err, sizeof(err));
	CHECK(k != NULL, "ksyms_load: %s", err);
	if (k) {
		CHECK(ksyms_count(k) == 5, "count %zu", ksyms_count(k));
		CHECK(ksyms_lookup(k, 0xffffffff81000150, &n, &off) == 0 &&
			  streq(n, "do_one_alias") && off == 0x50,
		      "alias -> %s+%" PRIx64, n, off);
		CHECK(ksyms_lookup(k, 0xffffffff810000ff, &n, &off) == 0 && streq(n, "_stext"),
		      "_stext end -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffff81000250, &n, NULL) < 0, "data address -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffff80000000, &n, NULL) < 0, "before first -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffffc0001010, &n, &off) == 0 &&
			  streq(n, "mod_fn [mymod]") && off == 0x10,
		      "module -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffffc0001090, &n, NULL) == 0 &&
			  streq(n, "mod_fn2 [mymod]"),
		      "module 2 -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffffc0001080 + 4096, &n, NULL) < 0, "past last -> %s",
		      n);
		ksyms_free(k);
	}

	/* Out of address order (not root's kallsyms, but a file may be): sorted, same answers. */
	write_file(path, "ffffffffc0001080 T mod_fn2\t[mymod]\n"
			 "ffffffff81000300 T after_data\n"
			 "ffffffff81000100 t do_one\n"
			 "ffffffff81000000 T _stext\n"
			 "ffffffff81000200 D some_data\n"
			 "ffffffff81000100 T do_one_alias\n"
			 "ffffffffc0001000 t mod_fn\t[mymod]\n"
			 "1ffffffff81000400 T too_wide\n");
	k = ksyms_load(path, err, sizeof(err));
	CHECK(k != NULL, "ksyms_load (unsorted): %s", err);
	if (k) {
		CHECK(ksyms_count(k) == 5, "unsorted: count %zu", ksyms_count(k));
		CHECK(ksyms_lookup(k, 0xffffffff81000150, &n, &off) == 0 &&
			  streq(n, "do_one_alias") && off == 0x50,
		      "unsorted: alias -> %s+%" PRIx64, n, off);
		CHECK(ksyms_lookup(k, 0xffffffff81000250, &n, NULL) < 0, "unsorted: data -> %s", n);
		CHECK(ksyms_lookup(k, 0xffffffffc0001010, &n, &off) == 0 &&
			  streq(n, "mod_fn [mymod]") && off == 0x10,
		      "unsorted: module -> %s", n);
		ksyms_free(k);
	}

	/* kptr_restrict: every address reads as zero. */
	write_file(path, "0000000000000000 T _stext\n0000000000000000 t foo\t[m]\n");
	err[0] = '\0';
	errno = 0;
	k = ksyms_load(path, err, sizeof(err));
	CHECK(k == NULL && errno == EPERM && strstr(err, "kptr_restrict"),
	      "zero addresses: errno %d, err '%s'", errno, err);
	ksyms_free(k);

	/* The real file, when this machine lets us read it. */
	k = ksyms_load(NULL, err, sizeof(err));
	if (!k) {
		CHECK(0, "the real /proc/kallsyms: %s (run as root, kptr_restrict < 2)", err);
		return;
	}
	{
		FILE *f = fopen("/proc/kallsyms", "r");
		char line[512], name[256], type;
		unsigned long long a;
		int found = 0;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && type == 'T' &&
			    !strcmp(name, "schedule")) {
				found = 1;
				break;
			}
		if (f)
			fclose(f);
		if (!found)
			CHECK(0, "no 'T schedule' line in /proc/kallsyms");
		else
			CHECK(ksyms_lookup(k, a, &n, &off) == 0 && off == 0 && n &&
				  (streq(n, "schedule") || strstr(n, "schedule")),
			      "real schedule -> %s", n);
	}
	ksyms_free(k);
}

/* A one-instruction-pair socket filter named name: its fd, or -errno. */
static int load_tiny_prog(const char *name)
{
	struct bpf_insn insns[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t) "GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", name);
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/* Where the kernel put a loaded program's code; 0 when unknown. */
static uint64_t prog_code_addr(int fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;
	uint64_t addr = 0;

	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uintptr_t)&addr;
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uintptr_t)&info;
	if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)))
		return 0;
	return addr;
}

/* Drains e into k until addr has a name, for at most ~5 s; the name or NULL. */
static const char *drained_name(struct ksym_events *e, struct ksyms *k, uint64_t addr)
{
	const char *n = NULL;

	for (int i = 0; i < 500; i++) {
		ksym_events_drain(e, k);
		if (ksyms_lookup(k, addr, &n, NULL) == 0)
			return n;
		usleep(10000);
	}
	return NULL;
}

/*
 * BPF programs named from the kernel's KSYMBOL records: one loaded after the
 * events were opened, and one loaded before them and unloaded before
 * kallsyms was read (another tool's session ending just as cfiprof starts:
 * its code ran in the first samples, yet neither kallsyms nor a register
 * record names it; the unregister record does).
 */
static void test_ksym_events(void)
{
	char path[256], err[256] = "";
	struct ksym_events *e = NULL;
	struct ksyms *k = NULL;
	uint64_t gone_addr, new_addr;
	const char *n;
	int gone, fresh = -1, held = -1;

	gone = load_tiny_prog("cfi_gone");
	CHECK(gone >= 0, "BPF_PROG_LOAD: %s", strerror(-gone));
	if (gone < 0)
		return;
	gone_addr = prog_code_addr(gone);
	CHECK(gone_addr != 0, "no JIT address for the program (bpf_jit_enable?)");
	e = ksym_events_open(err, sizeof(err));
	CHECK(e != NULL, "ksym_events_open: %s", err);
	close(gone);
	snprintf(path, sizeof(path), "%s/kallsyms_ev", tmpdir);
	write_file(path, "ffffffff81000000 T _stext\n");
	k = ksyms_load(path, err, sizeof(err));
	CHECK(k != NULL, "ksyms_load: %s", err);
	if (!e || !k || !gone_addr)
		goto cleanup;
	n = drained_name(e, k, gone_addr);
	CHECK(n && strstr(n, "_cfi_gone [bpf]"), "a program unloaded after the events opened -> %s",
	      n ? n : "(no name)");
	fresh = load_tiny_prog("cfi_fresh");
	new_addr = fresh >= 0 ? prog_code_addr(fresh) : 0;
	/*
	 * The JIT may give it the gone one's place (a CI run did), where either
	 * name is right (its register record not drained yet, the gone one's
	 * names it): a second one, while the first holds that place, cannot.
	 */
	if (new_addr && ksyms_lookup(k, new_addr, &n, NULL) == 0 && strstr(n, "_cfi_gone [bpf]")) {
		held = fresh;
		fresh = load_tiny_prog("cfi_fresh");
		new_addr = fresh >= 0 ? prog_code_addr(fresh) : 0;
	}
	CHECK(new_addr != 0, "second program: %s", strerror(fresh < 0 ? -fresh : 0));
	if (new_addr) {
		n = drained_name(e, k, new_addr);
		CHECK(n && strstr(n, "_cfi_fresh [bpf]"), "a program loaded after -> %s",
		      n ? n : "(no name)");
	}
	CHECK(ksym_events_lost(e) == 0, "%" PRIu64 " records lost", ksym_events_lost(e));
cleanup:
	if (fresh >= 0)
		close(fresh);
	if (held >= 0)
		close(held);
	ksyms_free(k);
	ksym_events_close(e);
}

static void test_perfmap(void)
{
	char path[256], buf[256];
	struct perfmap *pm;
	const char *n = NULL;
	uint64_t off = 0;
	FILE *f;

	CHECK(perfmap_path(buf, sizeof(buf), NULL, 1234) > 0 && streq(buf, "/tmp/perf-1234.map"),
	      "path %s", buf);
	perfmap_path(path, sizeof(path), tmpdir, 4242);
	pm = perfmap_new(path);
	CHECK(pm && perfmap_count(pm) == 0, "absent map must be empty");
	if (!pm)
		return;
	CHECK(perfmap_lookup(pm, 0x7f0000001000, &n, NULL) < 0, "absent -> %s", n);
	write_file(path, "7f0000001000 40 jit_foo\n"
			 "7f0000001040 20 jit bar with spaces\n"
			 "garbage line\n"
			 "7f0000002000 zz bad_size\n"
			 "7f0000003000 0 zero_size\n"
			 "7f0000004000 10\n"
			 "0x7f0000005000 10 prefixed\n");
	CHECK(perfmap_lookup(pm, 0x7f000000103f, &n, &off) == 0 && streq(n, "jit_foo") &&
		  off == 0x3f,
	      "jit_foo -> %s+%" PRIx64, n, off);
	CHECK(perfmap_count(pm) == 3 && perfmap_malformed(pm) == 4, "count %zu malformed %zu",
	      perfmap_count(pm), perfmap_malformed(pm));
	CHECK(perfmap_lookup(pm, 0x7f0000001040, &n, NULL) == 0 && streq(n, "jit bar with spaces"),
	      "spaces -> %s", n);
	CHECK(perfmap_lookup(pm, 0x7f0000001060, &n, NULL) < 0, "past end -> %s", n);
	CHECK(perfmap_lookup(pm, 0x7f0000005008, &n, NULL) == 0 && streq(n, "prefixed"),
	      "0x prefix -> %s", n);
	CHECK(perfmap_refresh(pm) == 0, "unchanged file must not reload");

	/* The JIT appends: new code, and code that replaced jit_foo's range. */
	f = fopen(path, "a");
	fputs("7f0000001000 80 jit_foo_v2\n7f0000006000 10 newer\n", f);
	fclose(f);
	CHECK(perfmap_lookup(pm, 0x7f0000006005, &n, NULL) == 0 && streq(n, "newer"),
	      "reload on miss -> %s", n);
	CHECK(perfmap_lookup(pm, 0x7f0000001010, &n, NULL) == 0 && streq(n, "jit_foo_v2"),
	      "later line wins -> %s", n);
	CHECK(perfmap_lookup(pm, 0x7f0000001050, &n, NULL) == 0 && streq(n, "jit_foo_v2"),
	      "later line wins over nested -> %s", n);
	CHECK(perfmap_malformed(pm) == 4, "malformed %zu", perfmap_malformed(pm));
	perfmap_free(pm);
}

struct libinfo {
	const char *want;
	char path[4096];
	uint64_t bias;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct libinfo *li = arg;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, li->want)) {
		snprintf(li->path, sizeof(li->path), "%s", info->dlpi_name);
		li->bias = info->dlpi_addr;
		return 1;
	}
	return 0;
}

static void test_libc_malloc(struct sym_cache *c)
{
	struct libinfo li = {.want = "libc.so.6"};
	struct fsyms rs = {0};
	const struct fsym *m;
	struct sym_obj *o;
	const char *n;
	uintptr_t rt;

	dl_iterate_phdr(find_lib, &li);
	CHECK(li.path[0], "libc.so.6 not mapped");
	if (!li.path[0])
		return;
	readelf_syms(li.path, &rs);
	m = fsym_by_name(&rs, "malloc");
	o = sym_cache_get(c, NULL, li.path, -1, 0);
	CHECK(o && m, "libc or its malloc missing");
	if (!o || !m)
		goto out;
	n = lookup_name(o, m->addr, NULL);
	CHECK(streq(n, "malloc"), "malloc .dynsym address -> %s", n);
	n = lookup_name(o, m->addr + m->size / 2, NULL);
	CHECK(streq(n, "malloc"), "middle of malloc -> %s", n);

	/* The runtime path: PC, /proc/self/maps file offset, ELF vaddr, name. */
	/* libc's own malloc, not an interposer's (sanitizer builds). */
	{
		void *h = dlopen(li.path, RTLD_NOW | RTLD_NOLOAD);

		rt = h ? (uintptr_t)dlsym(h, "malloc") : 0;
		if (h)
			dlclose(h);
	}
	CHECK(rt - li.bias == m->addr, "runtime malloc 0x%" PRIxPTR " bias 0x%" PRIx64, rt,
	      li.bias);
	{
		FILE *f = fopen("/proc/self/maps", "r");
		char line[4096];
		unsigned long long lo, hi, pgoff;
		uint64_t v = 0;
		bool done = false;

		while (f && !done && fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &pgoff) == 3 && rt >= lo &&
			    rt < hi) {
				CHECK(sym_obj_offset_to_vaddr(o, rt - lo + pgoff, &v) == 0 &&
					  v == m->addr,
				      "maps offset -> vaddr 0x%" PRIx64, v);
				done = true;
			}
		if (f)
			fclose(f);
		CHECK(done, "malloc mapping not found");
	}
out:
	fsyms_free(&rs);
}

/* Every function symbol's own address must map back to itself or an alias there. */
static void check_consistency(struct sym_cache *c, const char *want)
{
	struct libinfo li = {.want = want};
	struct fsyms rs = {0};
	size_t i, bad = 0, badend = 0;
	struct sym_obj *o;

	dl_iterate_phdr(find_lib, &li);
	if (!li.path[0]) {
		/* Not linked in: find it where the toolchain does. */
		FILE *p = popen("g++ -print-file-name=libstdc++.so.6", "r");

		if (p && fgets(li.path, sizeof(li.path), p))
			li.path[strcspn(li.path, "\n")] = '\0';
		if (p)
			pclose(p);
	}
	readelf_syms(li.path, &rs);
	CHECK(rs.n > 1000, "%s: only %zu function symbols", li.path, rs.n);
	o = sym_cache_get(c, NULL, li.path, -1, 0);
	CHECK(o != NULL, "load %s", li.path);
	/* Symbols of a separate debug file (libc6-dbg) must map back too. */
	if (o && sym_obj_debug_file(o)) {
		readelf_syms(sym_obj_debug_file(o), &rs);
		printf("%s: debug file %s\n", want, sym_obj_debug_file(o));
	}
	for (i = 0; o && i < rs.n; i++) {
		const struct fsym *s = &rs.v[i];
		uint64_t off = 1, last;
		const char *n = lookup_name(o, s->addr, &off);

		if (!n || off != 0 || !alias_at(&rs, s->addr, n)) {
			if (bad++ < 5)
				CHECK(0, "%s: %s at 0x%" PRIx64 " -> %s+%" PRIu64, want, s->name,
				      s->addr, n ? n : "(none)", off);
		}
		if (!s->size)
			continue;
		/* The last byte: this symbol or one nested inside it, never before it. */
		last = s->addr + s->size - 1;
		n = lookup_name(o, last, &off);
		if (!n || last - off < s->addr) {
			if (badend++ < 5)
				CHECK(0, "%s: %s last byte -> %s", want, s->name, n ? n : "(none)");
		}
	}
	CHECK(bad == 0 && badend == 0, "%s: %zu start and %zu end mismatches of %zu", want, bad,
	      badend, rs.n);
	printf("%s: %zu symbols checked, %zu distinct addresses\n", li.path, rs.n,
	       o ? sym_obj_count(o) : 0);
	fsyms_free(&rs);
}

/*
 * c++filt demangles verbosely (DMGL_VERBOSE: std::string spelled out as
 * std::basic_string<...>, Rust hashes kept); profiles want the short form.
 * Expands our short forms so the two can be compared.
 */
static void expand_std_abbrev(const char *in, char *out, size_t len)
{
	static const char *const abbrev[][2] = {
	    {"std::string",
	     "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"},
	    {"std::istream", "std::basic_istream<char, std::char_traits<char> >"},
	    {"std::ostream", "std::basic_ostream<char, std::char_traits<char> >"},
	    {"std::iostream", "std::basic_iostream<char, std::char_traits<char> >"},
	};
	size_t o = 0, i;

	while (*in && o + 1 < len) {
		for (i = 0; i < sizeof(abbrev) / sizeof(abbrev[0]); i++) {
			size_t n = strlen(abbrev[i][0]);

			if (!strncmp(in, abbrev[i][0], n) && !isalnum((unsigned char)in[n]) &&
			    in[n] != '_')
				break;
		}
		if (i < sizeof(abbrev) / sizeof(abbrev[0])) {
			in += strlen(abbrev[i][0]);
			/* Verbose output spaces out ">>", as in "std::string> >". */
			o += (size_t)snprintf(out + o, len - o, "%s%s", abbrev[i][1],
					      *in == '>' ? " " : "");
			if (o >= len)
				o = len - 1;
			continue;
		}
		out[o++] = *in++;
	}
	out[o] = '\0';
}

/* Our demangler against c++filt over every name of libstdc++. */
static void check_demangle_all(const char *lib)
{
	static char a[8192], b[8192], c[16384];
	char names[256], filtered[256];
	struct fsyms rs = {0};
	size_t i, bad = 0, mangled = 0;
	FILE *f, *g;

	readelf_syms(lib, &rs);
	snprintf(names, sizeof(names), "%s/names.txt", tmpdir);
	snprintf(filtered, sizeof(filtered), "%s/filtered.txt", tmpdir);
	f = fopen(names, "w");
	for (i = 0; f && i < rs.n; i++)
		fprintf(f, "%s\n", rs.v[i].name);
	if (f)
		fclose(f);
	if (!shell_ok("c++filt < %s > %s", names, filtered)) {
		CHECK(0, "c++filt failed (binutils)");
		fsyms_free(&rs);
		return;
	}
	f = fopen(names, "r");
	g = fopen(filtered, "r");
	while (f && g && fgets(a, sizeof(a), f) && fgets(b, sizeof(b), g)) {
		char *d;

		a[strcspn(a, "\n")] = '\0';
		b[strcspn(b, "\n")] = '\0';
		d = sym_demangle(a, SYM_DEMANGLE_FULL);
		mangled += d != NULL;
		expand_std_abbrev(d ? d : a, c, sizeof(c));
		if (!streq(c, b) && bad++ < 5)
			CHECK(0, "%s -> '%s', c++filt '%s'", a, d ? d : a, b);
		free(d);
	}
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	CHECK(bad == 0 && mangled > 1000, "%zu of %zu demangled names differ from c++filt", bad,
	      mangled);
	fsyms_free(&rs);
}

static void test_system_libs(void)
{
	struct sym_cache *c = sym_cache_new();
	struct libinfo li = {.want = "libstdc++"};
	FILE *p;

	sym_cache_set_demangle(c, SYM_DEMANGLE_NONE);
	test_libc_malloc(c);
	check_consistency(c, "libc.so.6");
	check_consistency(c, "libstdc++");
	p = popen("readlink -f $(g++ -print-file-name=libstdc++.so.6)", "r");
	if (p && fgets(li.path, sizeof(li.path), p))
		li.path[strcspn(li.path, "\n")] = '\0';
	if (p)
		pclose(p);
	if (li.path[0])
		check_demangle_all(li.path);
	else
		CHECK(0, "libstdc++.so.6 not found by g++ -print-file-name (g++)");
	sym_cache_free(c);
}

/*
 * PLT stubs are named "func@plt" exactly where objdump puts its labels, for
 * the lazy .plt, IBT's .plt.sec, and -z now; an ifunc's stub, which objdump
 * calls "*ABS*+0xRESOLVER@plt", after the ifunc.
 */
/* Whether `nm -D` lists a symbol at addr that name ("sym@plt") is the stub of. */
static bool is_dynsym_at(const char *path, unsigned long long addr, const char *name)
{
	char cmd[PATH_MAX + 64], line[512], sym[400];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s 2>/dev/null", path);
	p = popen(cmd, "r");
	while (p && !found && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char *at;

		if (sscanf(line, "%llx %*c %399s", &a, sym) != 2 || a != addr)
			continue;
		at = strchr(sym, '@');
		if (at)
			*at = 0;
		found = strlen(name) == strlen(sym) + 4 && !strncmp(name, sym, strlen(sym)) &&
			!strcmp(name + strlen(sym), "@plt");
	}
	if (p)
		pclose(p);
	return found;
}

static void check_plt(struct sym_cache *c, const char *path, const char *what, int min)
{
	char cmd[PATH_MAX + 128], line[512], want[400];
	struct sym_obj *o = sym_cache_get(c, what, path, -1, 0);
	int labels = 0, ok = 0;
	FILE *p;

	CHECK(o != NULL, "%s: no symbols", what);
	if (!o)
		return;
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec %s 2>/dev/null", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		const char *name;
		uint64_t off;

		/* "<f@plt-0x10>" is objdump's name for PLT0, the resolver stub */
		if (sscanf(line, "%llx <%399[^>]>:", &addr, want) != 2 || strlen(want) < 5 ||
		    strcmp(want + strlen(want) - 4, "@plt"))
			continue;
		labels++;
		name = lookup_name(o, addr + 4, &off);
		/* an ifunc's stub (IRELATIVE): named after an ifunc whose resolver it calls */
		if (!strncmp(want, "*ABS*+0x", 8) && name && off == 4 &&
		    is_dynsym_at(path, strtoull(want + 8, NULL, 16), name))
			snprintf(want, sizeof(want), "%.399s", name);
		if (streq(name, want) && off == 4)
			ok++;
		else if (labels - ok == 1)
			CHECK(0, "%s: 0x%llx is %s, got %s+%llu", what, addr, want,
			      name ? name : "(none)", (unsigned long long)off);
	}
	if (p)
		pclose(p);
	printf("%s: %d of %d PLT stubs named as objdump names them\n", what, ok, labels);
	CHECK(labels >= min && ok == labels, "%s: %d of %d PLT stubs named", what, ok, labels);
}

static void test_plt_names(void)
{
	struct sym_cache *c = sym_cache_new();
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char path[PATH_MAX];
	static const char lib_c[] = "#include <stdio.h>\n#include <stdlib.h>\n"
				    "int f(const char *s) { puts(s); return atoi(s); }\n"
				    "void *g(size_t n) { return malloc(n); }\n";

	sym_cache_set_demangle(c, SYM_DEMANGLE_NONE);
	snprintf(path, sizeof(path), "%s/progs/plt", out);
	check_plt(c, path, "progs/plt", 2);
	check_plt(c, "/lib/x86_64-linux-gnu/libstdc++.so.6", "libstdc++.so.6", 100);
	/* its .rela.plt is not in GOT order: ifunc (IRELATIVE) entries among the others */
	check_plt(c, "/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6", 50);
	snprintf(path, sizeof(path), "%s/libplt.c", tmpdir);
	write_file(path, lib_c);
	if (!shell_ok("cc -O2 -shared -fPIC -fcf-protection=full -Wl,-z,ibtplt -Wl,-z,lazy "
		      "-o %s/libibt.so %s",
		      tmpdir, path))
		CHECK(0, "building an IBT PLT library");
	snprintf(path, sizeof(path), "%s/libibt.so", tmpdir);
	check_plt(c, path, "IBT .plt.sec", 3);
	sym_cache_free(c);
}

/* readelf's value of the symbol name of type type in path (0: none): the oracle's view. */
static uint64_t readelf_sym(const char *path, const char *want, const char *want_type)
{
	char cmd[4096], line[8192];
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char type[32], bind[32], vis[32], ndx[32], name[4096];
		unsigned long long value, size;
		unsigned num;

		if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s %4095s", &num, &value, &size,
			   type, bind, vis, ndx, name) == 8 &&
		    !strcmp(name, want) && !strcmp(type, want_type) && !found)
			found = value;
	}
	if (p)
		pclose(p);
	return found;
}

static const char labels_s[] = "\t.text\n"
			       "\t.globl fn_sized\n\t.type fn_sized,@function\n\t.p2align 4\n"
			       "fn_sized:\n\tnop\n"
			       "\t.globl inner_label\ninner_label:\n\tnop\n\tret\n"
			       "\t.size fn_sized, .-fn_sized\n"
			       "\t.p2align 4\n\t.globl asm_label\nasm_label:\n\tnop\n\tnop\n"
			       "\tret\n"
			       "\t.p2align 4\n\t.globl sized_label\nsized_label:\n\tnop\n\tret\n"
			       "\t.size sized_label, .-sized_label\n";

/*
 * Untyped labels of size 0 in code name it up to the next symbol, as perf
 * names it (issue 34): ld.so's _start and _dl_start_user, hand-written
 * assembly; an untyped one with a size too (arm64's vDSO signal trampoline,
 * __kernel_rt_sigreturn, was [vdso]+0x7bb).  A label inside a sized function
 * leaves the function's name.  The addresses come from readelf.
 */
static void test_code_labels(void)
{
	struct sym_cache *c = sym_cache_new();
	char src[PATH_MAX], lib[PATH_MAX];
	const char *ld = "/lib64/ld-linux-x86-64.so.2", *n;
	uint64_t fn, inner, label, sized, start, user;
	struct sym_obj *o;

	snprintf(src, sizeof(src), "%s/labels.s", tmpdir);
	snprintf(lib, sizeof(lib), "%s/liblabels.so", tmpdir);
	write_file(src, labels_s);
	if (!shell_ok("cc -shared -nostdlib -o %s %s", lib, src))
		CHECK(0, "assembling %s", src);
	fn = readelf_sym(lib, "fn_sized", "FUNC");
	inner = readelf_sym(lib, "inner_label", "NOTYPE");
	label = readelf_sym(lib, "asm_label", "NOTYPE");
	sized = readelf_sym(lib, "sized_label", "NOTYPE");
	CHECK(fn && inner && label && sized,
	      "readelf: fn_sized %lx, inner_label %lx, asm_label %lx, sized_label %lx",
	      (unsigned long)fn, (unsigned long)inner, (unsigned long)label, (unsigned long)sized);
	o = sym_cache_get(c, NULL, lib, -1, 0);
	CHECK(o != NULL, "cannot load %s", lib);
	if (o && fn && inner && label && sized) {
		n = lookup_name(o, inner, NULL);
		CHECK(n && !strcmp(n, "fn_sized"), "inside fn_sized, at inner_label: %s",
		      n ? n : "(none)");
		n = lookup_name(o, label + 1, NULL);
		CHECK(n && !strcmp(n, "asm_label"), "asm_label+1: %s", n ? n : "(none)");
		n = lookup_name(o, sized + 1, NULL);
		CHECK(n && !strcmp(n, "sized_label"), "sized_label+1: %s", n ? n : "(none)");
	}
	/* ld.so's entry labels, from its debug file (libc6-dbg), as perf names them */
	o = sym_cache_get(c, NULL, ld, -1, 0);
	start =
	    o && sym_obj_debug_file(o) ? readelf_sym(sym_obj_debug_file(o), "_start", "NOTYPE") : 0;
	user = o && sym_obj_debug_file(o)
		   ? readelf_sym(sym_obj_debug_file(o), "_dl_start_user", "NOTYPE")
		   : 0;
	CHECK(o && start && user, "%s: no debug file or no _start / _dl_start_user labels in it",
	      ld);
	if (o && start && user) {
		n = lookup_name(o, start, NULL);
		CHECK(n && !strcmp(n, "_start"), "ld.so at _start: %s", n ? n : "(none)");
		n = lookup_name(o, user + 1, NULL);
		CHECK(n && !strcmp(n, "_dl_start_user"), "ld.so at _dl_start_user+1: %s",
		      n ? n : "(none)");
	}
	sym_cache_free(c);
}

/*
 * A sorted run followed by symbols out of order (kallsyms, then the BPF
 * programs' names): the table sorts the tail and merges it; the result must
 * be what a whole sort gives, ties and same-start duplicates included.
 */
static void test_sorted_tail(void)
{
	static const size_t prefix[] = {0, 1, 1000, 5000};
	static const size_t tails[] = {1, 7, 300, 5000};
	unsigned int seed = 12345;
	size_t pi, ti, i;

	for (pi = 0; pi < sizeof(prefix) / sizeof(prefix[0]); pi++) {
		for (ti = 0; ti < sizeof(tails) / sizeof(tails[0]); ti++) {
			struct sym_table a = {0}, b = {0};
			size_t n = prefix[pi] + tails[ti];
			bool same = true;

			for (i = 0; i < n; i++) {
				/* the prefix ascends; the tail lands anywhere, often on a start */
				uint64_t st =
				    i < prefix[pi]
					? 0x1000 + 16 * i
					: 0x1000 + 8 * (uint64_t)(rand_r(&seed) % (2 * n));
				uint64_t len = 1 + (uint64_t)(rand_r(&seed) % 64);
				uint32_t rank = (uint32_t)(rand_r(&seed) % 3), name = (uint32_t)i;

				sym_table_add(&a, st, st + len, name, rank);
				sym_table_add(&b, st, st + len, name, rank);
			}
			sym_table_finish(&a);
			/* the reference: the whole table sorted here, in the order sym_table.h
			 * names */
			qsort(b.r, b.n, sizeof(*b.r), sym_range_cmp);
			sym_table_finish(&b);
			same = a.n == b.n;
			for (i = 0; same && i < a.n; i++)
				same = !memcmp(&a.r[i], &b.r[i], sizeof(a.r[i]));
			CHECK(
			    same,
			    "%zu sorted + %zu unsorted: %zu ranges, want %zu as a whole sort gives",
			    prefix[pi], tails[ti], a.n, b.n);
			sym_table_release(&a);
			sym_table_release(&b);
		}
	}
}

static void test_format(void)
{
	char buf[128];

	sym_format_frame(buf, sizeof(buf), "libfoo.so", NULL, 0x1234);
	CHECK(streq(buf, "libfoo.so+0x1234"), "%s", buf);
	sym_format_frame(buf, sizeof(buf), "/usr/lib/libfoo.so", NULL, 0x10);
	CHECK(streq(buf, "libfoo.so+0x10"), "%s", buf);
	sym_format_frame(buf, sizeof(buf), "libfoo.so", "foo::bar()", 0x1234);
	CHECK(streq(buf, "foo::bar()"), "%s", buf);
	sym_format_frame(buf, sizeof(buf), NULL, NULL, 0x1234);
	CHECK(streq(buf, "[unknown]"), "%s", buf);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfisymXXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	build_prog();
	RUN_TEST(test_demangle);
	RUN_TEST(test_format);
	RUN_TEST(test_c_program);
	RUN_TEST(test_separate_debug);
	RUN_TEST(test_cxx);
	RUN_TEST(test_kallsyms);
	RUN_TEST(test_ksym_answers);
	RUN_TEST(test_ksym_events);
	RUN_TEST(test_sorted_tail);
	RUN_TEST(test_perfmap);
	RUN_TEST(test_system_libs);
	RUN_TEST(test_plt_names);
	RUN_TEST(test_code_labels);
	shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
