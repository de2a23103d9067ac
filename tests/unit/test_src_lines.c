// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source lines and inline frames (user/symbolize/src_lines.c), no kernel:
 *  - oracle: the chain at every instruction of progs/inlines, and at
 *    instructions all over libc (its debug file, libc6-dbg, found by
 *    build-id), equals `eu-addr2line -f -i` (elfutils) at the same address:
 *    function (linkage) names, files, lines, level by level (where
 *    eu-addr2line drops a level, llvm-symbolizer decides; counted apart);
 *  - libc's sections that lines never read (location lists) are neither
 *    inflated nor charged (readelf's sizes);
 *  - a stripped program finds its DWARF in a debug file by build-id;
 *  - the budgets: a unit or an object over its size, an interval's time
 *    allowance spent, open handles over their bytes, objects holding their
 *    DWARF file over their number, answers over theirs; each refusal
 *    counted, cached answers still served;
 *  - a hostile unit (a DIE naming itself as its sibling) answers, without a
 *    walk that never ends;
 *  - the frame model end to end without the binary: a recording's uframe
 *    lines give the same locations (levels, files, lines) in the default
 *    view, --no-inline and --lines, and pprof carries one Line per level with
 *    the mangled system name, read back by the pprof-format npm package.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/build_id.h"
#include "tests/lib/harness.h"
#include "user/output/format.h"
#include "user/output/pprof.h"
#include "user/profile/profile.h"
#include "user/profile/recording.h"
#include "elf/elf_read.h"
#include "user/symbolize/src_lines_cache.h"
#include "user/symbolize/sym_cache.h"

static const char *out_dir(void)
{
	return getenv("OUT") ? getenv("OUT") : "build";
}

/* ---- the oracle ---- */

struct level {
	char name[512], file[PATH_MAX];
	unsigned int line;
};

struct chain {
	uint64_t addr;
	int n;
	struct level lv[SRC_FRAMES_MAX];
};

/* "FILE:LINE[:COL]" or "??:0" */
static void parse_pos(const char *s, struct level *lv)
{
	char buf[PATH_MAX + 32], *c;
	int colons = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	buf[strcspn(buf, "\n")] = 0;
	lv->line = 0;
	lv->file[0] = 0;
	/* from the right: the line, maybe a column */
	while ((c = strrchr(buf, ':')) && colons < 2) {
		char *end;
		unsigned long v = strtoul(c + 1, &end, 10);

		if (*end || end == c + 1)
			break;
		lv->line = (unsigned int)v;
		*c = 0;
		colons++;
	}
	if (strcmp(buf, "??"))
		snprintf(lv->file, sizeof(lv->file), "%.4000s", buf);
}

/*
 * eu-addr2line -f -i for @n addresses of @file: per address, a name line
 * ("NAME" or "NAME inlined at POS in CALLER") and a position line per level.
 * Levels end where the next address's first level starts, so the addresses
 * go one per run of the tool's batch: -a prints each address first.
 */
static int oracle(const char *file, const uint64_t *addrs, int n, struct chain *out)
{
	char *cmd, *line = NULL;
	size_t cap = 0, len = 0;
	FILE *f, *p;
	int i = -1;

	f = open_memstream(&cmd, &len);
	fprintf(f, "eu-addr2line -a -f -i -e '%s'", file);
	for (int k = 0; k < n; k++)
		fprintf(f, " 0x%" PRIx64, addrs[k]);
	fclose(f);
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return -1;
	while (getline(&line, &cap, p) > 0) {
		struct level *lv;

		if (!strncmp(line, "0x", 2)) {
			if (++i >= n)
				break;
			out[i].addr = strtoull(line, NULL, 16);
			out[i].n = 0;
			continue;
		}
		if (i < 0 || out[i].n >= SRC_FRAMES_MAX)
			continue;
		lv = &out[i].lv[out[i].n++];
		line[strcspn(line, "\n")] = 0;
		snprintf(lv->name, sizeof(lv->name), "%.*s", (int)strcspn(line, " "), line);
		if (getline(&line, &cap, p) <= 0)
			break;
		parse_pos(line, lv);
	}
	free(line);
	/* it exits 1 when an address had no line: that is an answer too */
	pclose(p);
	return i + 1;
}

/* Instruction addresses of @file, every @step-th, at most @max; returns how many. */
static int instructions(const char *file, int step, uint64_t *addrs, int max)
{
	char cmd[PATH_MAX + 128], *line = NULL;
	size_t cap = 0;
	FILE *p;
	int n = 0, k = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s'", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (n < max && getline(&line, &cap, p) > 0) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);

		if (line[0] != ' ' || *end != ':' || end == line)
			continue;
		if (k++ % step == 0)
			addrs[n++] = a;
	}
	free(line);
	pclose(p);
	return n;
}

/*
 * The second oracle, llvm-symbolizer (LLVM's own DWARF reader), for one
 * address: "NAME\nFILE:LINE:COL\n" per level, then a blank line.
 */
static int oracle_llvm(const char *file, uint64_t addr, struct chain *out)
{
	char cmd[PATH_MAX + 128], name[512], *line = NULL;
	size_t cap = 0;
	FILE *p;

	snprintf(
	    cmd, sizeof(cmd),
	    "llvm-symbolizer --obj='%s' --inlining --functions=linkage --no-demangle 0x%" PRIx64,
	    file, addr);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	out->addr = addr;
	out->n = 0;
	while (getline(&line, &cap, p) > 0 && line[0] != '\n' && out->n < SRC_FRAMES_MAX) {
		struct level *lv = &out->lv[out->n++];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, "\n"), line);
		snprintf(lv->name, sizeof(lv->name), "%s", name);
		if (getline(&line, &cap, p) <= 0)
			break;
		parse_pos(line, lv);
	}
	free(line);
	pclose(p);
	return out->n;
}

static bool same_chain(const struct chain *want, int n, const struct src_frame *fr, char *why,
		       size_t len)
{
	int i;

	/* no DWARF there: the tool prints the symbol's name (or ??) at ??:0 */
	if (n <= 0)
		return want->n == 1 && !want->lv[0].line && !want->lv[0].file[0];
	if (want->n != n) {
		snprintf(why, len, "%d levels, want %d", n, want->n);
		return false;
	}
	for (i = 0; i < n; i++) {
		const struct level *w = &want->lv[i];
		const char *name = fr[i].system_name ? fr[i].system_name : "??";
		const char *file = fr[i].file ? fr[i].file : "";

		if (strcmp(w->name, name) || strcmp(w->file, file) || w->line != fr[i].line) {
			snprintf(why, len, "level %d: %s %s:%u, want %s %s:%u", i, name, file,
				 fr[i].line, w->name, w->file, w->line);
			return false;
		}
	}
	return true;
}

/* Every address of @addrs in @file as the oracle says; returns the number that agree. */
static int check_against_oracle(struct sym_cache *c, const char *file, const uint64_t *addrs, int n,
				int *inlined)
{
	struct chain *want = calloc((size_t)n, sizeof(*want));
	struct sym_obj *o = sym_cache_get(c, NULL, file, -1, 0);
	int got, i, agree = 0, shown = 0, by_llvm = 0;
	char why[1024];

	*inlined = 0;
	CHECK(o && sym_obj_has_lines(o), "%s: no DWARF found", file);
	got = want ? oracle(file, addrs, n, want) : -1;
	CHECK(got == n, "eu-addr2line on %s: %d of %d addresses", file, got, n);
	for (i = 0; o && i < got; i++) {
		const struct src_frame *fr;
		int nf = sym_obj_lines(o, want[i].addr, &fr);

		struct chain other;

		if (same_chain(&want[i], nf, fr, why, sizeof(why))) {
			agree++;
			*inlined += nf > 1;
			continue;
		}
		if (shown++ < 5)
			printf("  %s 0x%" PRIx64 ": eu-addr2line: %s\n", file, want[i].addr, why);
		/*
		 * eu-addr2line 0.188 leaves out a level of some deeper chains in
		 * libc (update_regs in set_regs in re_search_internal prints as
		 * update_regs in re_search_internal); LLVM's reader then decides.
		 */
		nf = sym_obj_lines(o, want[i].addr, &fr);
		if (oracle_llvm(file, want[i].addr, &other) > 0 &&
		    same_chain(&other, nf, fr, why, sizeof(why))) {
			agree++;
			by_llvm++;
			*inlined += nf > 1;
		} else {
			printf("  %s 0x%" PRIx64 ": llvm-symbolizer: %s\n", file, want[i].addr,
			       why);
		}
	}
	printf("%s: %d of %d addresses agree with eu-addr2line -i (%d with inline levels), "
	       "%d more with llvm-symbolizer where eu-addr2line differs\n",
	       file, agree - by_llvm, got, *inlined, by_llvm);
	free(want);
	return agree;
}

static void test_oracle_inlines(void)
{
	struct sym_cache *c = sym_cache_new();
	char path[PATH_MAX];
	uint64_t addrs[4096];
	int n, inlined;

	sym_cache_set_lines(c, true);
	snprintf(path, sizeof(path), "%s/progs/inlines", out_dir());
	n = instructions(path, 1, addrs, 4096);
	CHECK(n > 50, "%s: %d instructions", path, n);
	CHECK(check_against_oracle(c, path, addrs, n, &inlined) == n, "every address agrees");
	CHECK(inlined >= 10, "inline chains seen: %d", inlined);
	sym_cache_free(c);
}

static void test_oracle_libc(void)
{
	struct sym_cache *c = sym_cache_new();
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	static uint64_t addrs[1500];
	char real[PATH_MAX];
	int n, inlined;

	sym_cache_set_lines(c, true);
	CHECK(realpath(libc, real) != NULL, "%s", libc);
	n = instructions(real, 211, addrs, 1500);
	CHECK(n > 1000, "%s: %d instructions sampled", real, n);
	/* its DWARF is in libc6-dbg's debug file, found by build-id by both */
	CHECK(check_against_oracle(c, real, addrs, n, &inlined) == n, "every address agrees");
	CHECK(inlined >= 50, "inline chains seen: %d", inlined);
	sym_cache_free(c);
}

/*
 * What readelf says libc's debug file inflates to: all its .debug_*
 * sections (*total) and those lines and inline frames never read (*unread:
 * location lists, macros, name indexes, CFI; DWARF 5 sections 2.6, 6.3, 6.1,
 * 6.4).  Compressed sections by their header's size ("ZLIB, SIZE, ALIGN").
 */
static int debug_file_sizes(const char *file, uint64_t *total, uint64_t *unread, uint64_t *loclists)
{
	static const char *const skip[] = {".debug_loc",     ".debug_loclists", ".debug_macro",
					   ".debug_macinfo", ".debug_pubnames", ".debug_pubtypes",
					   ".debug_frame"};
	char cmd[PATH_MAX + 64], name[256] = "", *line = NULL;
	size_t cap = 0;
	uint64_t size = 0;
	FILE *p;

	*total = *unread = *loclists = 0;
	snprintf(cmd, sizeof(cmd), "readelf -tW '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	/* "  [N] NAME", "  TYPE ADDR OFF SIZE ...", then "  ZLIB, SIZE, ALIGN" when compressed */
	for (;;) {
		bool more = getline(&line, &cap, p) > 0;
		char n2[256];
		unsigned long long v;

		/* the flags line, "[0000000000000800]: COMPRESSED", is not a section's */
		if (!more || (sscanf(line, " [%*d] %255s", n2) == 1 && n2[0] != ':')) {
			if (!strncmp(name, ".debug_", 7)) {
				*total += size;
				for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
					if (!strcmp(name, skip[i]))
						*unread += size;
				if (!strcmp(name, ".debug_loclists"))
					*loclists = size;
			}
			if (!more)
				break;
			snprintf(name, sizeof(name), "%s", n2);
			size = 0;
		} else if (sscanf(line, " PROGBITS %*x %*x %llx", &v) == 1) {
			size = v;
		} else if (sscanf(line, " ZLIB, %llx", &v) == 1) {
			size = v;
		}
	}
	free(line);
	pclose(p);
	return 0;
}

/* libc's real path, its build ID and its debug file's path (libc6-dbg, by build ID). */
static void libc_debug_file(const char *libc, char real[PATH_MAX], char id[ELF_BUILD_ID_HEX_LEN],
			    char debug[PATH_MAX])
{
	int fd;

	CHECK(realpath(libc, real) != NULL, "%s", libc);
	fd = open(real, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && elf_build_id_hex_fd(fd, id, ELF_BUILD_ID_HEX_LEN) == 0 && strlen(id) > 2,
	      "build id of %s", real);
	if (fd >= 0)
		close(fd);
	snprintf(debug, PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
}

/*
 * libc's DWARF opened for lines holds what lines read: its location lists
 * (libc6-dbg has 1.4 MB of them inflated) are neither inflated nor charged.
 * The charge is the sections read plus the unit lists, which are a few
 * hundred bytes a unit: well under the location lists.
 */
static void test_unread_sections(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char real[PATH_MAX], id[ELF_BUILD_ID_HEX_LEN] = "", debug[PATH_MAX];
	uint64_t addrs[64], total, unread, loclists, read;
	struct sym_cache *c = sym_cache_new();
	struct src_lines_ctx *ctx;
	const struct src_frame *f;
	struct sym_obj *o;

	libc_debug_file(libc, real, id, debug);
	CHECK(debug_file_sizes(debug, &total, &unread, &loclists) == 0 && loclists > 0,
	      "%s: %" PRIu64 " bytes inflated, location lists %" PRIu64, debug, total, loclists);
	read = total - unread;

	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	CHECK(instructions(real, 211, addrs, 64) == 64, "addresses of %s", real);
	o = sym_cache_get(c, NULL, real, -1, 0);
	/* the first instructions may be a stub without a line: a function's is enough */
	for (int k = 0; o && k < 64 && !ctx->st.opens; k++)
		sym_obj_lines(o, addrs[k], &f);
	CHECK(ctx->st.opens == 1, "libc's DWARF opened");
	CHECK(ctx->st.open_bytes >= read && ctx->st.open_bytes < read + unread / 2,
	      "charged %" PRIu64 " bytes: sections read %" PRIu64 ", unread %" PRIu64,
	      ctx->st.open_bytes, read, unread);
	sym_cache_free(c);
}

/* The number the shell command cmd prints; -1 if it prints none. */
static long command_number(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	long n = -1;

	/* decimal, or hexadecimal with 0x */
	if (p && fscanf(p, "%li", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/* One symbolizer's units of file, after a lookup at addr: by aranges, by DIE; the answer's top. */
static int units_listed(const char *file, uint64_t addr, uint64_t *aranges, uint64_t *die,
			struct level *top)
{
	struct sym_cache *c = sym_cache_new();
	const struct src_frame *f = NULL;
	struct sym_obj *o;
	int n;

	sym_cache_set_lines(c, true);
	o = sym_cache_get(c, NULL, file, -1, 0);
	n = o ? sym_obj_lines(o, addr, &f) : -1;
	*aranges = sym_cache_lines_ctx(c)->st.units_aranges;
	*die = sym_cache_lines_ctx(c)->st.units_die;
	memset(top, 0, sizeof(*top));
	if (n > 0) {
		/* the outermost level: the function the address is in */
		snprintf(top->name, sizeof(top->name), "%s", f[n - 1].system_name);
		top->line = (int)f[n - 1].line;
	}
	sym_cache_free(c);
	return n;
}

/*
 * Units are found through .debug_aranges where it has a set for them, and
 * through their own DIE where it has none (clang writes no aranges): libc6-dbg
 * has a set for each of its units (readelf -wN: not the dwz file's), so none is read at
 * open; an object linked from a gcc and a clang unit is found whole, lines
 * as binutils' addr2line gives them (it reads the units without aranges;
 * eu-addr2line does not).
 */
static void test_unit_ranges(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	static const char a_c[] = "int from_clang(int);\n"
				  "__attribute__((noinline)) int from_gcc(int x)\n"
				  "{\n"
				  "\treturn from_clang(x) * 3 + 1;\n"
				  "}\n"
				  "void _start(void) { for (;;) from_gcc(2); }\n";
	static const char b_c[] = "__attribute__((noinline)) int from_clang(int x)\n"
				  "{\n"
				  "\treturn x * 7 + 5;\n"
				  "}\n";
	static const char *const fns[] = {"from_gcc", "from_clang"};
	char real[PATH_MAX], id[ELF_BUILD_ID_HEX_LEN] = "", debug[PATH_MAX], cmd[4 * PATH_MAX];
	char dir[] = "/tmp/cfiprof-units-XXXXXX", bin[64], want[256];
	uint64_t addr, aranges, die;
	struct level top;
	long units, sets;
	FILE *f;

	libc_debug_file(libc, real, id, debug);
	snprintf(cmd, sizeof(cmd),
		 "readelf -wN --debug-dump=info --dwarf-depth=1 '%s' 2>/dev/null | "
		 "grep -c 'Compilation Unit @'",
		 debug);
	units = command_number(cmd);
	snprintf(cmd, sizeof(cmd),
		 "readelf -wN --debug-dump=aranges '%s' 2>/dev/null | grep 'Offset into' | "
		 "sort -u | wc -l",
		 debug);
	sets = command_number(cmd);
	CHECK(units > 1000 && sets == units, "%s: %ld units, %ld with an aranges set (readelf)",
	      debug, units, sets);
	CHECK(instructions(real, 4099, &addr, 1) == 1, "an address of %s", real);
	units_listed(real, addr, &aranges, &die, &top);
	CHECK(aranges == (uint64_t)sets && die == 0,
	      "libc: %" PRIu64 " units by aranges, %" PRIu64 " by their DIE (readelf: %ld sets)",
	      aranges, die, sets);

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(cmd, sizeof(cmd), "%s/a.c", dir);
	f = fopen(cmd, "we");
	CHECK(f && fputs(a_c, f) >= 0, "%s", cmd);
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/b.c", dir);
	f = fopen(cmd, "we");
	CHECK(f && fputs(b_c, f) >= 0, "%s", cmd);
	if (f)
		fclose(f);
	snprintf(bin, sizeof(bin), "%s/mixed", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && gcc -g -O1 -c a.c && clang -g -O1 -c b.c && "
		 "gcc -nostdlib -static -o mixed a.o b.o",
		 dir);
	CHECK(system(cmd) == 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=aranges %s | grep -c 'Offset into'", bin);
	CHECK(command_number(cmd) == 1, "%s: one unit in its aranges (gcc's)", bin);
	for (int i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" {print \"0x\" $1}'", bin,
			 fns[i]);
		addr = (uint64_t)command_number(cmd);
		/* binutils: "NAME\nFILE:LINE" */
		snprintf(cmd, sizeof(cmd),
			 "addr2line -f -e %s 0x%" PRIx64 " | sed -n 2p | sed 's/.*://; s/ .*//'",
			 bin, addr);
		long line = command_number(cmd);

		CHECK(units_listed(bin, addr, &aranges, &die, &top) > 0 &&
			  !strcmp(top.name, fns[i]) && top.line == line && line > 0,
		      "%s at 0x%" PRIx64 ": %s line %d, addr2line says line %ld", fns[i], addr,
		      top.name, top.line, line);
		CHECK(aranges == 1 && die == 1,
		      "mixed: %" PRIu64 " units by aranges, %" PRIu64 " by their DIE (want 1, 1)",
		      aranges, die);
	}
	snprintf(want, sizeof(want), "rm -rf '%s'", dir);
	CHECK(system(want) == 0, "%s", want);
}

/* Files of the inflated debug files' cache in dir for build ID id: how many, the first's name, all
 * their bytes. */
static int cached_files(const char *dir, const char *id, char *name, size_t len, uint64_t *bytes)
{
	char prefix[ELF_BUILD_ID_HEX_LEN + 16], path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	int n = 0;

	*bytes = 0;
	snprintf(prefix, sizeof(prefix), "lines-%s-", id);
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, "lines-", 6) && !lstat(path, &st))
			*bytes += (uint64_t)st.st_size;
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (!n++)
			snprintf(name, len, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/* One symbolizer's lookups of addrs in file, as the oracle says: its cache counters. */
static void lookups_counted(const char *file, const uint64_t *addrs, int n, uint64_t *found,
			    uint64_t *written)
{
	struct sym_cache *c = sym_cache_new();
	int inlined;

	sym_cache_set_lines(c, true);
	CHECK(check_against_oracle(c, file, addrs, n, &inlined) == n, "every address agrees");
	*found = sym_cache_lines_ctx(c)->st.inflated_found;
	*written = sym_cache_lines_ctx(c)->st.inflated_written;
	sym_cache_free(c);
}

/* The cache's name for the debug file at path. */
static bool cache_name_of(const char *path, char *name, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd < 0 ? NULL : elf_read_begin(fd);
	bool ok = e && src_lines_cache_name(e, fd, name, len);

	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * libc6-dbg's debug file is compressed: the first open inflates it and
 * writes the inflated copy to the cache directory (what lines read, at
 * readelf's inflated sizes), the next maps the copy; both answer as
 * eu-addr2line on the original.  A copy another user owns, that others may
 * write, a link, or in a directory others may write is not used; another
 * file claiming the build ID is cached apart; past the cache's size the
 * oldest files go.
 */
static void test_inflated_cache(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	char real[PATH_MAX], id[ELF_BUILD_ID_HEX_LEN] = "", debug[PATH_MAX],
			     dir[] = "/tmp/cfiprof-lines-XXXXXX";
	char cache[64], file[PATH_MAX], name[256] = "", copy[64], n1[256], n2[256],
					cmd[2 * PATH_MAX + 64];
	uint64_t total, unread, loclists, bytes, found, written;
	static uint64_t addrs[300];
	int n, fd;

	libc_debug_file(libc, real, id, debug);
	CHECK(debug_file_sizes(debug, &total, &unread, &loclists) == 0, "%s: readelf", debug);
	snprintf(cmd, sizeof(cmd), "readelf -tW '%s' | grep -q ZLIB", debug);
	CHECK(system(cmd) == 0, "%s has compressed sections (readelf -t)", debug);
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("CFIPROF_CACHE_DIR", cache, 1);
	n = instructions(real, 211, addrs, 300);
	CHECK(n == 300, "%s: %d addresses", real, n);

	lookups_counted(real, addrs, n, &found, &written);
	CHECK(!found && written == 1, "first open: %" PRIu64 " found, %" PRIu64 " written", found,
	      written);
	CHECK(cached_files(cache, id, name, sizeof(name), &bytes) == 1, "one file for %s in %s", id,
	      cache);
	/* what lines read, inflated (readelf), and the headers: not the unread sections */
	CHECK(bytes >= total - unread && bytes < total - unread + (1u << 20),
	      "%" PRIu64 " bytes cached: readelf's read sections %" PRIu64, bytes, total - unread);
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(found == 1 && !written, "next open: %" PRIu64 " found, %" PRIu64 " written", found,
	      written);

	snprintf(file, sizeof(file), "%s/%s", cache, name);
	CHECK(chmod(file, 0666) == 0, "chmod %s", file);
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(!found && written == 1, "writable by others: %" PRIu64 " found", found);
	CHECK(chown(file, 65534, 65534) == 0, "chown %s", file);
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(!found && written == 1, "another user's: %" PRIu64 " found", found);
	CHECK(unlink(file) == 0 && symlink(debug, file) == 0, "link %s", file);
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(!found && written == 1, "a link: %" PRIu64 " found", found);
	CHECK(chmod(cache, 0777) == 0, "chmod %s", cache);
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(!found && !written,
	      "a directory others write: %" PRIu64 " found, %" PRIu64 " written", found, written);
	CHECK(chmod(cache, 0700) == 0, "chmod %s", cache);

	snprintf(copy, sizeof(copy), "%s/copy.debug", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", debug, copy);
	CHECK(system(cmd) == 0 && cache_name_of(debug, n1, sizeof(n1)) &&
		  cache_name_of(copy, n2, sizeof(n2)),
	      "names of %s and its copy", debug);
	CHECK(strcmp(n1, n2) && !strncmp(n1, n2, strlen("lines-") + strlen(id)),
	      "the same build ID, names of their own: %s, %s", n1, n2);

	/* three old files of 100 MiB (sparse) and libc's new one: the oldest goes */
	CHECK(unlink(file) == 0, "unlink %s", file);
	for (int i = 1; i <= 3; i++) {
		struct timespec t[2] = {{i, 0}, {i, 0}};

		snprintf(file, sizeof(file), "%s/lines-old-%d.debug", cache, i);
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, 100 << 20) == 0 && futimens(fd, t) == 0, "%s", file);
		if (fd >= 0)
			close(fd);
	}
	lookups_counted(real, addrs, n, &found, &written);
	CHECK(written == 1 && cached_files(cache, id, name, sizeof(name), &bytes) == 1 &&
		  bytes <= SRC_LINES_CACHE_MAX_BYTES,
	      "written, %" PRIu64 " bytes kept", bytes);
	snprintf(file, sizeof(file), "%s/lines-old-1.debug", cache);
	CHECK(access(file, F_OK) != 0, "the oldest went");
	snprintf(file, sizeof(file), "%s/lines-old-3.debug", cache);
	CHECK(access(file, F_OK) == 0, "the newest stayed");

	unsetenv("CFIPROF_CACHE_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm %s", dir);
}

/*
 * With warming (record's way): libc's DWARF is opened on the warm thread as
 * the object is loaded, the lookups after find it open (no second open) and
 * answer as without.  An object removed while queued, and a cache freed with
 * the thread still busy, leave nothing behind (asan, tsan).
 */
static void test_warm(void)
{
	struct sym_cache *c = sym_cache_new();
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	static uint64_t addrs[300];
	char real[PATH_MAX], inl[PATH_MAX];
	uint64_t t0;
	int n, inlined;

	sym_cache_set_lines(c, true);
	sym_cache_warm_lines(c);
	CHECK(realpath(libc, real) != NULL, "%s", libc);
	n = instructions(real, 211, addrs, 300);
	CHECK(sym_cache_get(c, NULL, real, -1, 0) != NULL, "%s loaded", real);
	/*
	 * As long as the warm thread takes: opening libc's DWARF under ASan beside
	 * a stress run took over 10 s once.  The deadline only guards a hang.
	 */
	t0 = mono_ns();
	while (sym_cache_lines_warmed(c) < 1 && mono_ns() - t0 < 180000000000ull)
		usleep(1000);
	CHECK(sym_cache_lines_warmed(c) == 1, "libc's DWARF not opened ahead: %lu opened",
	      (unsigned long)sym_cache_lines_warmed(c));
	CHECK(check_against_oracle(c, real, addrs, n, &inlined) == n, "every address agrees");
	CHECK(sym_cache_lines_ctx(c)->st.opens == 1, "DWARF opened %lu times (want once, ahead)",
	      (unsigned long)sym_cache_lines_ctx(c)->st.opens);
	sym_cache_free(c);

	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	sym_cache_warm_lines(c);
	snprintf(inl, sizeof(inl), "%s/progs/inlines", out_dir());
	CHECK(sym_cache_get(c, NULL, real, -1, 0) && sym_cache_get(c, NULL, inl, -1, 0), "loaded");
	CHECK(sym_cache_remove(c, inl) == 0, "%s removed while queued or open", inl);
	sym_cache_free(c);
}

/*
 * The warm thread runs at the process's priority, never below: it mallocs
 * from the one arena record's threads share (common/heap.h), and a thread
 * preempted holding that arena's lock holds up the consumer.  Beside two busy
 * loops per CPU, while it opens libc's DWARF: no thread of the process has a
 * higher nice value than this one's, and the first lookup's wait for that
 * open is bounded by the CPU it took.  At nice 19 the thread got 15/(2 * 1024
 * + 15) of a CPU (the kernel's weights), so waiting on it took ~140 times the
 * CPU it used (a record's stop waited 40 s for libc's DWARF so); at nice 0 a
 * third of a CPU, ~3 times (~5 under make test-stress's two more loops per
 * CPU).  The bound, 25 times, lies far from both, whatever the machine's
 * speed; the wait must also have been for a real open (tens of ms of CPU).
 */
static int highest_nice(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int most = -100;

	while (d && (e = readdir(d))) {
		char path[300], buf[1024], *p;
		FILE *f;
		int nice;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		/* after the comm: state is field 3, nice field 19 */
		if (p &&
		    sscanf(p + 2,
			   "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %d",
			   &nice) == 1 &&
		    nice > most)
			most = nice;
		fclose(f);
	}
	if (d)
		closedir(d);
	return most;
}

static void test_warm_busy(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	int nhogs = 2 * (int)sysconf(_SC_NPROCESSORS_ONLN), started = 0;
	pid_t hogs[64];
	struct sym_cache *c = NULL;
	struct sym_obj *o;
	const struct src_frame *fr;
	struct rusage r0, r1;
	char real[PATH_MAX];
	uint64_t addr, t0, wall, cpu;
	bool seen = false;
	int nice_most;
	char dir[] = "/tmp/cfiprof-lines-XXXXXX", cache[64], rm[96];

	CHECK(realpath(libc, real) != NULL && instructions(real, 7, &addr, 1) == 1, "%s", libc);
	/*
	 * An empty cache directory: the open inflates libc's debug file (tens of
	 * ms of CPU, as a machine's first start does); the inflated copy a
	 * start leaves behind opens in about a millisecond, too short to tell a
	 * wait at nice 0 from one at nice 19 beside the busy loops.
	 */
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("CFIPROF_CACHE_DIR", cache, 1);
	for (int i = 0; i < nhogs && i < 64; i++) {
		hogs[i] = fork();
		if (hogs[i] == 0) {
			/* gone with the test, however it ends */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				;
		}
		started += hogs[i] > 0;
	}
	CHECK(started == nhogs, "%d of %d busy loops started", started, nhogs);
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	sym_cache_warm_lines(c);
	o = sym_cache_get(c, NULL, real, -1, 0);
	CHECK(o != NULL, "%s loaded", real);
	/* until the thread is inside libc's open (the deadline guards a hang) */
	t0 = mono_ns();
	while (o && !(seen = sym_cache_lines_warming(c)) && mono_ns() - t0 < 30000000000ull)
		usleep(1000);
	CHECK(seen && sym_cache_lines_warmed(c) == 0,
	      "the warm thread never opened libc (%lu opened)",
	      (unsigned long)sym_cache_lines_warmed(c));
	nice_most = highest_nice();
	CHECK(nice_most == getpriority(PRIO_PROCESS, 0),
	      "a thread at nice %d while the warm thread opens libc (this one: %d)", nice_most,
	      getpriority(PRIO_PROCESS, 0));
	getrusage(RUSAGE_SELF, &r0);
	t0 = mono_ns();
	if (o && seen)
		sym_obj_lines(o, addr, &fr);
	wall = mono_ns() - t0;
	getrusage(RUSAGE_SELF, &r1);
	for (int i = 0; i < started; i++) {
		kill(hogs[i], SIGKILL);
		waitpid(hogs[i], NULL, 0);
	}
	cpu = (uint64_t)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
			 r0.ru_stime.tv_sec) *
		  1000000000ull +
	      (uint64_t)((r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
			  r0.ru_stime.tv_usec) *
			 1000);
	printf("  first lookup beside %d busy loops: %.1f ms waited, %.1f ms of CPU\n", nhogs,
	       wall / 1e6, cpu / 1e6);
	CHECK(cpu >= 5000000, "the lookup used %.1f ms of CPU: libc's DWARF was not being opened",
	      cpu / 1e6);
	CHECK(wall < 25 * cpu, "the lookup waited %.1f ms for %.1f ms of CPU (at nice 19: ~140x)",
	      wall / 1e6, cpu / 1e6);
	sym_cache_free(c);
	unsetenv("CFIPROF_CACHE_DIR");
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	CHECK(system(rm) == 0, "rm %s", dir);
}

/*
 * With the opener (the agent's way): a lookup never opens DWARF itself; the
 * first ones are refused as opening (named without lines) while libc's
 * DWARF is opened apart, the later ones answer as without, from one open.
 * An object removed while queued or being opened, and a cache freed with
 * the thread busy, leave nothing behind (asan, tsan).
 */
static void test_opener(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	static uint64_t addrs[300];
	char real[PATH_MAX], inl[PATH_MAX];
	const struct src_frame *f;
	struct src_lines_ctx *ctx;
	struct sym_cache *c = sym_cache_new();
	struct sym_obj *o;
	uint64_t t0, refused;
	int n, inlined, r;

	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	CHECK(src_lines_opener_start(ctx) == 0, "opener thread");
	CHECK(realpath(libc, real) != NULL, "%s", libc);
	n = instructions(real, 211, addrs, 300);
	o = sym_cache_get(c, NULL, real, -1, 0);
	CHECK(o != NULL && n > 0, "%s loaded", real);
	if (!o || n <= 0) {
		sym_cache_free(c);
		return;
	}
	r = sym_obj_lines(o, addrs[0], &f);
	CHECK(r == -1 && ctx->st.refused[SRC_REFUSED_OPENING] == 1 && ctx->st.opens == 0,
	      "first lookup: %d, %" PRIu64 " refused as opening, %" PRIu64 " opens (want -1, 1, 0)",
	      r, ctx->st.refused[SRC_REFUSED_OPENING], ctx->st.opens);
	t0 = mono_ns();
	while ((r = sym_obj_lines(o, addrs[0], &f)) < 0 && mono_ns() - t0 < 10000000000ull)
		usleep(1000);
	refused = ctx->st.refused[SRC_REFUSED_OPENING];
	CHECK(r >= 0 && ctx->st.opens == 1,
	      "libc's DWARF taken from the opener: %d, %" PRIu64 " opens", r, ctx->st.opens);
	CHECK(check_against_oracle(c, real, addrs, n, &inlined) == n, "every address agrees");
	CHECK(ctx->st.opens == 1 && ctx->st.refused[SRC_REFUSED_OPENING] == refused,
	      "open once: %" PRIu64 " opens, %" PRIu64 " more refused", ctx->st.opens,
	      ctx->st.refused[SRC_REFUSED_OPENING] - refused);
	/* closed as idle, then looked up again: opened apart again */
	src_lines_close_idle(ctx);
	src_lines_close_idle(ctx);
	CHECK(ctx->st.open_bytes == 0, "%" PRIu64 " bytes open after two idle intervals",
	      ctx->st.open_bytes);
	sym_cache_free(c);

	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	CHECK(src_lines_opener_start(ctx) == 0, "opener thread");
	snprintf(inl, sizeof(inl), "%s/progs/inlines", out_dir());
	o = sym_cache_get(c, NULL, real, -1, 0);
	CHECK(o && sym_obj_lines(o, addrs[1], &f) == -1, "libc queued");
	o = sym_cache_get(c, NULL, inl, -1, 0);
	CHECK(instructions(inl, 97, addrs, 1) == 1 && o && sym_obj_lines(o, addrs[0], &f) == -1,
	      "%s queued", inl);
	CHECK(sym_cache_remove(c, inl) == 0, "%s removed while queued or open", inl);
	sym_cache_free(c);
}

/* A stripped program: its DWARF from the build-id debug file, the same chains. */
static void test_debug_file(void)
{
	struct sym_cache *c = sym_cache_new(), *d = sym_cache_new();
	char path[PATH_MAX], stripped[PATH_MAX], root[PATH_MAX];
	uint64_t addrs[4096];
	struct sym_obj *o, *s;
	int n, i, same = 0;

	snprintf(path, sizeof(path), "%s/progs/inlines", out_dir());
	snprintf(stripped, sizeof(stripped), "%s/progs/inlines_stripped", out_dir());
	snprintf(root, sizeof(root), "%s/progs/debug", out_dir());
	sym_cache_set_lines(c, true);
	sym_cache_set_lines(d, true);
	sym_cache_set_debug_root(d, root);
	o = sym_cache_get(c, NULL, path, -1, 0);
	s = sym_cache_get(d, NULL, stripped, -1, 0);
	CHECK(o && s && sym_obj_has_lines(s), "stripped: DWARF from %s", root);
	n = instructions(path, 1, addrs, 4096);
	for (i = 0; o && s && i < n; i++) {
		const struct src_frame *a, *b;
		int na = sym_obj_lines(o, addrs[i], &a), k;
		struct src_frame copy[SRC_FRAMES_MAX];

		if (na > 0)
			memcpy(copy, a, (size_t)na * sizeof(*a));
		if (sym_obj_lines(s, addrs[i], &b) != na)
			continue;
		for (k = 0; k < na; k++)
			if (strcmp(copy[k].system_name ? copy[k].system_name : "",
				   b[k].system_name ? b[k].system_name : "") ||
			    copy[k].line != b[k].line)
				break;
		same += k == na;
	}
	CHECK(n > 50 && same == n, "%d of %d addresses the same from the debug file", same, n);
	sym_cache_free(c);
	sym_cache_free(d);
}

/* ---- budgets ---- */

/* An address of outer_work where three levels are inlined, from the oracle's program. */
static uint64_t deep_addr(struct sym_cache *c, const char *path)
{
	uint64_t addrs[4096];
	struct sym_obj *o = sym_cache_get(c, NULL, path, -1, 0);
	int n = instructions(path, 1, addrs, 4096), i;

	for (i = 0; o && i < n; i++) {
		const struct src_frame *f;

		if (sym_obj_lines(o, addrs[i], &f) == 3)
			return addrs[i];
	}
	return 0;
}

static void test_budgets(void)
{
	char path[PATH_MAX];
	struct sym_cache *c;
	struct src_lines_ctx *ctx;
	const struct src_frame *f;
	struct sym_obj *o;
	uint64_t deep;

	snprintf(path, sizeof(path), "%s/progs/inlines", out_dir());
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	deep = deep_addr(c, path);
	CHECK(deep != 0, "an address with 3 levels");
	sym_cache_free(c);

	/* a unit over its size is refused, counted, and tried no further */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	ctx->max_cu_bytes = 64;
	o = sym_cache_get(c, NULL, path, -1, 0);
	CHECK(o && sym_obj_lines(o, deep, &f) == -1 && ctx->st.refused[SRC_REFUSED_CU] == 1,
	      "unit over max_cu_bytes refused: %" PRIu64, ctx->st.refused[SRC_REFUSED_CU]);
	sym_cache_free(c);

	/* an object over its size is never opened */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	ctx->max_object_bytes = 64;
	o = sym_cache_get(c, NULL, path, -1, 0);
	CHECK(o && sym_obj_lines(o, deep, &f) == -1 && sym_obj_lines(o, deep + 1, &f) == -1 &&
		  ctx->st.refused[SRC_REFUSED_OBJECT] == 2 && ctx->st.opens == 0,
	      "object over max_object_bytes refused: %" PRIu64 ", opens %" PRIu64,
	      ctx->st.refused[SRC_REFUSED_OBJECT], ctx->st.opens);
	sym_cache_free(c);

	/* the interval's allowance spent: new lookups refused, answers kept still served */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	o = sym_cache_get(c, NULL, path, -1, 0);
	CHECK(o && sym_obj_lines(o, deep, &f) == 3, "answered");
	ctx->ns_left = 0;
	CHECK(o && sym_obj_lines(o, deep, &f) == 3 && ctx->st.hits == 1, "cached answer served");
	CHECK(o && sym_obj_lines(o, deep - 1, &f) == -1 && ctx->st.refused[SRC_REFUSED_TIME] == 1,
	      "refused past the time allowance: %" PRIu64, ctx->st.refused[SRC_REFUSED_TIME]);
	ctx->ns_left = UINT64_MAX;
	CHECK(o && sym_obj_lines(o, deep - 1, &f) >= 1, "answered in the next interval");
	sym_cache_free(c);

	/* open handles over their bytes: the least recently used closes, answers stay right */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	ctx->max_open_bytes = 1;
	{
		char stripped[PATH_MAX], root[PATH_MAX];
		struct sym_obj *o2;
		int k, ok = 0;

		snprintf(stripped, sizeof(stripped), "%s/progs/inlines_stripped", out_dir());
		snprintf(root, sizeof(root), "%s/progs/debug", out_dir());
		sym_cache_set_debug_root(c, root);
		o = sym_cache_get(c, NULL, path, -1, 0);
		o2 = sym_cache_get(c, NULL, stripped, -1, 0);
		for (k = 0; o && o2 && k < 4; k++) {
			ok += sym_obj_lines(o, deep - (uint64_t)k, &f) >= 1;
			ok += sym_obj_lines(o2, deep - (uint64_t)k, &f) >= 1;
		}
		CHECK(ok == 8 && ctx->st.closes >= 7 && ctx->st.opens >= 8,
		      "handles closed and reopened: %d answers, %" PRIu64 " opens, %" PRIu64
		      " closes",
		      ok, ctx->st.opens, ctx->st.closes);
	}
	sym_cache_free(c);

	/* idle handles close at the end of a period: their bytes go, their answers stay */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	o = sym_cache_get(c, NULL, path, -1, 0);
	CHECK(o && sym_obj_lines(o, deep, &f) == 3 && ctx->st.open_bytes > 0, "opened");
	src_lines_close_idle(ctx); /* used in this period: stays */
	CHECK(ctx->st.open_bytes > 0 && ctx->st.closes == 0, "a handle used in the period stays");
	src_lines_close_idle(ctx); /* not used since: closed */
	CHECK(ctx->st.open_bytes == 0 && ctx->st.closes == 1,
	      "idle handle closed: %" PRIu64 " bytes", ctx->st.open_bytes);
	CHECK(o && sym_obj_lines(o, deep, &f) == 3 && ctx->st.opens == 1, "its answers stay");
	CHECK(o && sym_obj_lines(o, deep - 1, &f) >= 1 && ctx->st.opens == 2,
	      "reopened for a new one");
	/* opened again in the period after its idle close: now two idle periods, then four */
	src_lines_close_idle(ctx);
	src_lines_close_idle(ctx);
	CHECK(ctx->st.open_bytes > 0 && ctx->st.closes == 1,
	      "reopened soon after its close: kept through an idle period (%" PRIu64 " closes)",
	      ctx->st.closes);
	src_lines_close_idle(ctx);
	CHECK(ctx->st.open_bytes == 0 && ctx->st.closes == 2,
	      "closed after two idle periods: %" PRIu64 " closes", ctx->st.closes);
	CHECK(o && sym_obj_lines(o, deep - 2, &f) >= 1 && ctx->st.opens == 3, "reopened again");
	for (int k = 0; k < 4; k++)
		src_lines_close_idle(ctx);
	CHECK(ctx->st.closes == 2, "kept through four idle periods: %" PRIu64 " closes",
	      ctx->st.closes);
	src_lines_close_idle(ctx);
	CHECK(ctx->st.closes == 3, "closed after the fifth: %" PRIu64 " closes", ctx->st.closes);
	/* wanted again only long after: its limit stays, SRC_IDLE_MAX at most */
	for (int k = 0; k < 2 * SRC_IDLE_MAX; k++)
		src_lines_close_idle(ctx);
	CHECK(o && sym_obj_lines(o, deep - 3, &f) >= 1 && ctx->st.opens == 4, "opened late");
	for (int k = 0; k < 4; k++)
		src_lines_close_idle(ctx);
	CHECK(ctx->st.closes == 3, "still four idle periods: %" PRIu64 " closes", ctx->st.closes);
	src_lines_close_idle(ctx);
	CHECK(ctx->st.closes == 4, "closed after the fifth: %" PRIu64 " closes", ctx->st.closes);
	sym_cache_free(c);

	/* objects holding their DWARF file: at most max_attached, a place freed is taken again */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	ctx->max_attached = 1;
	{
		struct sym_obj *a = sym_cache_get(c, "a", path, -1, 0);
		struct sym_obj *b = sym_cache_get(c, "b", path, -1, 0);

		CHECK(a && sym_obj_has_lines(a) && b && !sym_obj_has_lines(b) &&
			  ctx->st.refused[SRC_REFUSED_FILES] == 1 && ctx->nr_attached == 1,
		      "second object refused its DWARF file: %" PRIu64 " refused, %" PRIu64
		      " attached",
		      ctx->st.refused[SRC_REFUSED_FILES], ctx->nr_attached);
		sym_cache_remove(c, "a");
		b = sym_cache_get(c, "c", path, -1, 0);
		CHECK(b && sym_obj_has_lines(b) && ctx->nr_attached == 1,
		      "the place freed is taken: %" PRIu64 " attached", ctx->nr_attached);
	}
	sym_cache_free(c);

	/* answers over their number: the cache is emptied rather than grown */
	c = sym_cache_new();
	sym_cache_set_lines(c, true);
	ctx = sym_cache_lines_ctx(c);
	ctx->max_cache_entries = 8;
	o = sym_cache_get(c, NULL, path, -1, 0);
	{
		uint64_t k, most = 0;

		for (k = 0; o && k < 100; k++) {
			sym_obj_lines(o, deep - 40 + k, &f);
			if (ctx->st.cache_entries > most)
				most = ctx->st.cache_entries;
		}
		CHECK(most <= 8 && ctx->st.lookups == 100, "at most 8 answers kept: %" PRIu64,
		      most);
	}
	sym_cache_free(c);
}

/* ---- the frame model without the binary: a recording's uframe lines ---- */

static const char rec_text[] =
    "# cfiprof recording v1\n"
    "meta 99 cpu-clock 1000 2000000000\n"
    "map 42 400000 401000 0 400000 1 0123456789abcdef /gone/inlines\n"
    "uframe 42 400000 400231 0 18 14\tleaf_mix\tleaf_mix\t/src/inlines.cc\n"
    "uframe 42 400000 400231 1 26 21\tmiddle_sum\tmiddle_sum\t/src/inlines.cc\n"
    "uframe 42 400000 400231 2 32 30\tinl::outer_work(unsigned long)\t_ZN3inl10outer_workEm\t"
    "/src/inlines.cc\n"
    "uframe 42 400000 400090 0 42 36\tmain\tmain\t/src/inlines.cc\n"
    "stack 5 42 42 0 0 inlines k - u 400231,400091\n";

/* @rec read as `report` reads it, written to @out as @fmt through @v. */
static int render_to(FILE *out, const char *rec, enum out_format fmt, const struct prof_view *v)
{
	struct recording_meta meta = {0};
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = proc_tracker_new_names(sc);
	struct profile_info info = {.period_ns = 10000000};
	struct aggregator a;
	struct frame_namer fn;
	struct profile p;
	char err[128];
	uint64_t bad = 0;
	FILE *in = fmemopen((void *)rec, strlen(rec), "r");
	int ret = -1;

	meta.frames = saved_frames_new();
	agg_init(&a, 100);
	if (recording_read(in, &a, pt, &meta, NULL, &bad, err, sizeof(err)) || bad) {
		printf("recording_read: %" PRIu64 " bad: %s\n", bad, err);
		goto out;
	}
	frame_namer_init(&fn, pt, NULL);
	fn.saved_user = meta.frames;
	if (!profile_build(&p, &a, &fn, &info)) {
		ret = output_write(out, &p, fmt, "t", v);
		profile_free(&p);
	}
	frame_namer_free(&fn);
out:
	fclose(in);
	agg_free(&a);
	kernel_names_free(&meta.knames);
	saved_frames_free(meta.frames);
	proc_tracker_free(pt);
	sym_cache_free(sc);
	return ret;
}

static int render(const char *rec, enum out_format fmt, const struct prof_view *v, char **text)
{
	size_t len = 0;
	FILE *out = open_memstream(text, &len);
	int ret = render_to(out, rec, fmt, v);

	fclose(out);
	return ret;
}

static void test_recorded_frames(void)
{
	static const struct prof_view no_inline = {.no_inline = true}, lines = {.lines = true};
	char *t = NULL;

	CHECK(render(rec_text, OUT_FOLDED, NULL, &t) == 0 && t &&
		  !strcmp(t, "inlines;main;inl::outer_work(unsigned long);middle_sum;leaf_mix 5\n"),
	      "default view: inline levels as frames: %s", t);
	free(t);
	t = NULL;
	CHECK(render(rec_text, OUT_FOLDED, &no_inline, &t) == 0 && t &&
		  !strcmp(t, "inlines;main;inl::outer_work(unsigned long) 5\n"),
	      "--no-inline: %s", t);
	free(t);
	t = NULL;
	CHECK(render(rec_text, OUT_FOLDED, &lines, &t) == 0 && t &&
		  !strcmp(t, "inlines;main inlines.cc:42;inl::outer_work(unsigned long) "
			     "inlines.cc:32;middle_sum inlines.cc:26;leaf_mix inlines.cc:18 5\n"),
	      "--lines: %s", t);
	free(t);
	t = NULL;
	/* perf-script: one frame line per level, the inlined ones at the same address */
	CHECK(render(rec_text, OUT_PERF_SCRIPT, NULL, &t) == 0 && t &&
		  strstr(t, "\t          400231 leaf_mix (/gone/inlines)\n"
			    "\t          400231 middle_sum (/gone/inlines)\n"
			    "\t          400231 inl::outer_work(unsigned long) (/gone/inlines)\n"
			    "\t          400090 main (/gone/inlines)\n"),
	      "perf-script: %s", t);
	free(t);
}

/* pprof: Lines innermost first, Function system_name / filename / start_line, mapping flags. */
static void test_pprof_lines(void)
{
	char pb[] = "/tmp/cfiprof-lines-XXXXXX", cmd[PATH_MAX * 3], *line = NULL;
	char npm[PATH_MAX], js[PATH_MAX], out[8192] = "";
	size_t cap = 0, used = 0;
	int fd = mkstemp(pb);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL, *p;

	CHECK(f && render_to(f, rec_text, OUT_PPROF, NULL) == 0, "pprof written");
	if (f)
		fclose(f);
	CHECK(realpath("build/npm/node_modules", npm) && realpath("tests/lib/pprof_decode.js", js),
	      "build/npm/node_modules or tests/lib/pprof_decode.js is missing (make test-deps)");
	snprintf(cmd, sizeof(cmd), "node '%s' '%s' '%s' lines 2>&1", js, npm, pb);
	p = popen(cmd, "r");
	while (p && getline(&line, &cap, p) > 0 && used + strlen(line) < sizeof(out)) {
		strcpy(out + used, line);
		used += strlen(line);
	}
	if (p)
		pclose(p);
	free(line);
	printf("%s", out);
	CHECK(
	    strstr(out,
		   "loc 0x400231: leaf_mix|leaf_mix|/src/inlines.cc|14|18 ; "
		   "middle_sum|middle_sum|/src/inlines.cc|21|26 ; "
		   "inl::outer_work(unsigned long)|_ZN3inl10outer_workEm|/src/inlines.cc|30|32\n"),
	    "three Lines, innermost first, with system names, files and lines");
	CHECK(strstr(out, "loc 0x400090: main|main|/src/inlines.cc|36|42\n"), "one Line for main");
	CHECK(strstr(out, "mapping /gone/inlines functions filenames line_numbers inline_frames\n"),
	      "mapping flags");
	unlink(pb);
}

/* ---- hostile DWARF ---- */

/* A unit whose subprogram names itself as its sibling (DW_AT_sibling back to itself). */
static const char loop_s[] = "\t.text\n"
			     "\t.globl\t_start\n"
			     "\t.type\t_start, @function\n"
			     "_start:\n"
			     "\tnop\n"
			     "\tnop\n"
			     "\tnop\n"
			     "\tret\n"
			     ".Lend:\n"
			     "\t.size\t_start, .-_start\n"
			     "\t.section .debug_abbrev,\"\",@progbits\n"
			     "\t.uleb128 1\t\t# CU\n"
			     "\t.uleb128 0x11\t\t# DW_TAG_compile_unit\n"
			     "\t.byte 1\t\t\t# children\n"
			     "\t.uleb128 0x11\t\t# DW_AT_low_pc\n"
			     "\t.uleb128 0x01\t\t# DW_FORM_addr\n"
			     "\t.uleb128 0x12\t\t# DW_AT_high_pc\n"
			     "\t.uleb128 0x07\t\t# DW_FORM_data8\n"
			     "\t.uleb128 0x03\t\t# DW_AT_name\n"
			     "\t.uleb128 0x08\t\t# DW_FORM_string\n"
			     "\t.byte 0, 0\n"
			     "\t.uleb128 2\t\t# subprogram pointing at itself as its sibling\n"
			     "\t.uleb128 0x2e\t\t# DW_TAG_subprogram\n"
			     "\t.byte 0\n"
			     "\t.uleb128 0x01\t\t# DW_AT_sibling\n"
			     "\t.uleb128 0x13\t\t# DW_FORM_ref4\n"
			     "\t.uleb128 0x03\t\t# DW_AT_name\n"
			     "\t.uleb128 0x08\t\t# DW_FORM_string\n"
			     "\t.uleb128 0x11\t\t# DW_AT_low_pc\n"
			     "\t.uleb128 0x01\t\t# DW_FORM_addr\n"
			     "\t.uleb128 0x12\t\t# DW_AT_high_pc\n"
			     "\t.uleb128 0x07\t\t# DW_FORM_data8\n"
			     "\t.byte 0, 0\n"
			     "\t.byte 0\n"
			     "\t.section .debug_info,\"\",@progbits\n"
			     ".Lcu:\n"
			     "\t.long .Lcu_end - .Lcu_ver\t# unit_length\n"
			     ".Lcu_ver:\n"
			     "\t.value 4\t\t\t# version\n"
			     "\t.long .debug_abbrev\t\t# abbrev offset\n"
			     "\t.byte 8\t\t\t\t# address size\n"
			     "\t.uleb128 1\n"
			     "\t.quad _start\n"
			     "\t.quad .Lend - _start\n"
			     "\t.string \"loop.s\"\n"
			     ".Ldie:\n"
			     "\t.uleb128 2\n"
			     "\t.long .Ldie - .Lcu\t\t# its own offset: the walk goes round\n"
			     "\t.string \"looping\"\n"
			     "\t.quad _start\n"
			     "\t.quad .Lend - _start\n"
			     "\t.byte 0\t\t\t\t# end of children\n"
			     ".Lcu_end:\n";

static void test_sibling_loop(void)
{
	char src[] = "/tmp/cfiprof-loop-XXXXXX.s", bin[64], cmd[256];
	struct sym_cache *c = sym_cache_new();
	const struct src_frame *f;
	struct sym_obj *o;
	int fd = mkstemps(src, 2), n;

	CHECK(fd >= 0 && write(fd, loop_s, sizeof(loop_s) - 1) == (ssize_t)sizeof(loop_s) - 1,
	      "write %s", src);
	close(fd);
	snprintf(bin, sizeof(bin), "%.*s.bin", (int)strlen(src) - 2, src);
	snprintf(cmd, sizeof(cmd), "gcc -nostdlib -static -o %s %s", bin, src);
	CHECK(system(cmd) == 0, "%s", cmd);
	sym_cache_set_lines(c, true);
	o = sym_cache_get(c, NULL, bin, -1, 0);
	/* the harness's timeout fails a walk that never ends */
	alarm(20);
	n = o ? sym_obj_lines(o, 0x401001, &f) : -2;
	alarm(0);
	CHECK(n == 1 && f && f[0].system_name && !strcmp(f[0].system_name, "looping"),
	      "the looping unit answered once: %d", n);
	sym_cache_free(c);
	unlink(src);
	unlink(bin);
}

/* A unit with one function, and a .debug_aranges of the test's (%s). */
static const char aranges_s[] = "\t.text\n"
				"\t.globl\t_start\n"
				"\t.type\t_start, @function\n"
				"_start:\n"
				"\tnop\n"
				"\tnop\n"
				"\tret\n"
				".Lend:\n"
				"\t.size\t_start, .-_start\n"
				"\t.section .debug_abbrev,\"\",@progbits\n"
				"\t.uleb128 1, 0x11\t# DW_TAG_compile_unit\n"
				"\t.byte 1\n"
				"\t.uleb128 0x11, 0x01\t# DW_AT_low_pc, DW_FORM_addr\n"
				"\t.uleb128 0x12, 0x07\t# DW_AT_high_pc, DW_FORM_data8\n"
				"\t.uleb128 0x03, 0x08\t# DW_AT_name, DW_FORM_string\n"
				"\t.byte 0, 0\n"
				"\t.uleb128 2, 0x2e\t# DW_TAG_subprogram\n"
				"\t.byte 0\n"
				"\t.uleb128 0x03, 0x08\n"
				"\t.uleb128 0x11, 0x01\n"
				"\t.uleb128 0x12, 0x07\n"
				"\t.byte 0, 0, 0\n"
				"\t.section .debug_info,\"\",@progbits\n"
				"\t.long .Lcu_end - .Lcu_ver\n"
				".Lcu_ver:\n"
				"\t.value 4\n"
				"\t.long .debug_abbrev\n"
				"\t.byte 8\n"
				"\t.uleb128 1\n"
				"\t.quad _start, .Lend - _start\n"
				"\t.string \"ar.s\"\n"
				"\t.uleb128 2\n"
				"\t.string \"aranged\"\n"
				"\t.quad _start, .Lend - _start\n"
				"\t.byte 0\n"
				".Lcu_end:\n"
				"\t.section .debug_aranges,\"\",@progbits\n"
				"%s";

/*
 * .debug_aranges as written by the object, sound or not: a sound set (32-
 * or 64-bit DWARF) gives the unit's ranges; a set that runs past the
 * section, of another version or address size, or naming no unit, is not
 * read, and the unit is found through its DIE.  Every variant answers.
 */
static void test_aranges_malformed(void)
{
	static const struct {
		const char *what, *set;
		bool used;
	} v[] = {
	    {"a sound set",
	     "\t.long .La - .Lv\n.Lv:\t.value 2\n\t.long .debug_info\n\t.byte 8, 0\n\t.long 0\n"
	     "\t.quad _start, .Lend - _start, 0, 0\n.La:\n",
	     true},
	    {"64-bit DWARF",
	     "\t.long 0xffffffff\n\t.quad .La - .Lv\n.Lv:\t.value 2\n\t.quad .debug_info\n"
	     "\t.byte 8, 0\n\t.zero 8\n\t.quad _start, .Lend - _start, 0, 0\n.La:\n",
	     true},
	    {"no terminator",
	     "\t.long .La - .Lv\n.Lv:\t.value 2\n\t.long .debug_info\n\t.byte 8, 0\n\t.long 0\n"
	     "\t.quad _start, .Lend - _start\n.La:\n",
	     true},
	    {"past the section", "\t.long 0x1000\n\t.value 2\n\t.long .debug_info\n\t.byte 8, 0\n",
	     false},
	    {"64-bit, its length cut", "\t.long 0xffffffff\n\t.long 7\n", false},
	    {"version 3",
	     "\t.long .La - .Lv\n.Lv:\t.value 3\n\t.long .debug_info\n\t.byte 8, 0\n\t.long 0\n"
	     "\t.quad _start, .Lend - _start, 0, 0\n.La:\n",
	     false},
	    {"2-byte addresses",
	     "\t.long .La - .Lv\n.Lv:\t.value 2\n\t.long .debug_info\n\t.byte 2, 0\n\t.long 0\n"
	     "\t.quad _start, .Lend - _start, 0, 0\n.La:\n",
	     false},
	    {"no unit there",
	     "\t.long .La - .Lv\n.Lv:\t.value 2\n\t.long 5\n\t.byte 8, 0\n\t.long 0\n"
	     "\t.quad _start, .Lend - _start, 0, 0\n.La:\n",
	     false},
	    {"a length too short for its header", "\t.long 3\n\t.value 2\n\t.byte 0\n", false},
	};
	char dir[] = "/tmp/cfiprof-aranges-XXXXXX", src[64], bin[64], cmd[256];

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(src, sizeof(src), "%s/ar.s", dir);
	snprintf(bin, sizeof(bin), "%s/ar", dir);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t addr, aranges, die;
		struct level top;
		FILE *f = fopen(src, "we");

		CHECK(f && fprintf(f, aranges_s, v[i].set) > 0, "%s", src);
		if (f)
			fclose(f);
		snprintf(cmd, sizeof(cmd), "gcc -nostdlib -static -o %s %s", bin, src);
		CHECK(system(cmd) == 0, "%s: %s", v[i].what, cmd);
		snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"_start\" {print \"0x\" $1}'", bin);
		addr = (uint64_t)command_number(cmd) + 1;
		CHECK(units_listed(bin, addr, &aranges, &die, &top) == 1 &&
			  !strcmp(top.name, "aranged"),
		      "%s: the function at 0x%" PRIx64 " named %s", v[i].what, addr, top.name);
		CHECK(aranges == v[i].used && die == !v[i].used,
		      "%s: %" PRIu64 " units by aranges, %" PRIu64 " by their DIE", v[i].what,
		      aranges, die);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_oracle_inlines);
	RUN_TEST(test_oracle_libc);
	RUN_TEST(test_unread_sections);
	RUN_TEST(test_unit_ranges);
	RUN_TEST(test_inflated_cache);
	RUN_TEST(test_warm);
	RUN_TEST(test_warm_busy);
	RUN_TEST(test_opener);
	RUN_TEST(test_debug_file);
	RUN_TEST(test_budgets);
	RUN_TEST(test_recorded_frames);
	RUN_TEST(test_pprof_lines);
	RUN_TEST(test_sibling_loop);
	RUN_TEST(test_aranges_malformed);
	return HARNESS_DONE();
}
