// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table compiler and the symbolizer look for an object's separate debug
 * file the same way (elf/debug_file.h): an object stripped of its CFI and its
 * symbols must get both back from the same file, whatever the length of its
 * build-id (lld and gold can emit 32 bytes, not only SHA-1's 20), and both
 * must refuse the same wrong files.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "tables/cfi_table.h"
#include "user/symbolize/sym_cache.h"

/* 32 bytes: too long for a reader that stops at SHA-1's 20. */
#define BUILD_ID_32 "5a0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"
#define OTHER_ID_32 "5a0123456789abcdef0123456789abcdef0123456789abcdef0123456789ffff"

static const char prog_c[] =
    "#define F __attribute__((noinline, used))\n"
    "F int leaf(int x) { return x * 3; }\n"
    "F int nonleaf(int x) { return leaf(x) + leaf(x + 1) + 1; }\n"
    "int main(int argc, char **argv) { (void)argv; return nonleaf(argc); }\n";

/* Only .debug_frame describes the program's functions: stripping it loses their CFI. */
#define CC "gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables"

struct func {
	const char *name;
	uint64_t addr, size;
};

static struct func funcs[] = {{.name = "leaf"}, {.name = "nonleaf"}};
#define NR_FUNCS (sizeof(funcs) / sizeof(funcs[0]))

/* Addresses and sizes from binutils' nm, the independent oracle. */
static bool read_funcs(const char *path)
{
	char cmd[512], line[512], name[256];
	unsigned long long addr, size;
	size_t i, found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %*s %255s", &addr, &size, name) != 3)
			continue;
		for (i = 0; i < NR_FUNCS; i++) {
			if (!strcmp(name, funcs[i].name) && size) {
				funcs[i].addr = addr;
				funcs[i].size = size;
				found++;
			}
		}
	}
	pclose(p);
	return found == NR_FUNCS;
}

static struct cfi_table *build(const char *path, const struct cfi_build_opts *opts,
			       struct cfi_diag *diag)
{
	struct cfi_table *t = NULL;
	struct cfi_diag local;
	int rc;

	if (!diag)
		diag = &local;
	memset(diag, 0, sizeof(*diag));
	rc = cfi_table_build_file(path, opts, &t, diag);
	CHECK(rc == CFI_OK && t, "build %s: %s%s%s", path, cfi_strerror(rc),
	      diag->count ? ": " : "", diag->count ? diag->msg[0] : "");
	return t;
}

static bool has_sep(const struct cfi_table *t)
{
	return t && (t->stats.sources & (1 << CFI_SRC_DEBUG_FRAME_SEP));
}

static bool diag_mentions(const struct cfi_diag *d, const char *what)
{
	unsigned int i;

	for (i = 0; i < d->count && i < CFI_DIAG_KEEP; i++)
		if (strstr(d->msg[i], what))
			return true;
	return false;
}

/* Every byte of the program's functions has the same rule in both tables. */
static void compare_rows(const char *what, const struct cfi_table *want,
			 const struct cfi_table *got)
{
	char a[128], b[128];
	unsigned int bad = 0;
	uint64_t pc;
	size_t i;

	if (!want || !got)
		return;
	for (i = 0; i < NR_FUNCS; i++) {
		const struct cfi_rule *r = cfi_table_lookup(got, funcs[i].addr);

		CHECK(r->cfa_kind != CFI_CFA_NONE, "%s: no rule at %s", what, funcs[i].name);
		for (pc = funcs[i].addr; pc < funcs[i].addr + funcs[i].size; pc++) {
			cfi_rule_describe(cfi_table_lookup(want, pc), want->arch, a, sizeof(a));
			cfi_rule_describe(cfi_table_lookup(got, pc), got->arch, b, sizeof(b));
			if (strcmp(a, b) && bad++ < 3)
				fprintf(stderr, "  %s: %s+0x%" PRIx64 ": want %s, got %s\n", what,
					funcs[i].name, pc - funcs[i].addr, a, b);
		}
	}
	CHECK(bad == 0, "%s: %u addresses with another rule", what, bad);
}

/* The symbolizer's view of @obj under @root: its debug file, and nonleaf's name. */
static void check_symbols(const char *what, const char *obj, const char *root,
			  const char *want_debug_file)
{
	struct sym_cache *c = sym_cache_new();
	const char *name = NULL, *dbg;
	struct sym_obj *o;

	CHECK(c && sym_cache_set_debug_root(c, root) == 0, "%s: sym_cache", what);
	if (!c)
		return;
	o = sym_cache_get(c, NULL, obj, -1, 0);
	CHECK(o != NULL, "%s: symbolizer cannot read %s", what, obj);
	if (o) {
		dbg = sym_obj_debug_file(o);
		if (want_debug_file) {
			CHECK(dbg && !strcmp(dbg, want_debug_file), "%s: symbolizer debug file %s",
			      what, dbg ? dbg : "(none)");
			CHECK(sym_obj_lookup(o, funcs[1].addr + 1, &name, NULL) == 0 && name &&
				  !strcmp(name, "nonleaf"),
			      "%s: nonleaf -> %s", what, name ? name : "(none)");
		} else {
			CHECK(!dbg, "%s: symbolizer took %s", what, dbg);
		}
	}
	sym_cache_free(c);
}

/* Both refuse the debug file @obj would be given under @root, and the compiler says @why. */
static void check_refused(const char *what, const char *obj, const char *root, const char *why)
{
	struct cfi_build_opts opts = {.debug_root = root};
	uint64_t refused = debug_file_refused_total();
	struct cfi_table *t;
	struct cfi_diag diag;

	t = build(obj, &opts, &diag);
	CHECK(t && !has_sep(t), "%s: the table compiler used the debug file", what);
	CHECK(debug_file_refused_total() > refused, "%s: the refusal is not counted", what);
	CHECK(diag_mentions(&diag, why), "%s: refusal not reported: %s", what,
	      diag.count ? diag.msg[0] : "(no message)");
	cfi_table_free(t);
	check_symbols(what, obj, root, NULL);
}

/*
 * ROOT/.build-id/5a/0123...abcd.debug, reachable only through the 32-byte
 * build-id (the stripped object has no .gnu_debuglink).
 */
static void test_build_id_32(void)
{
	char id[ELF_BUILD_ID_HEX_LEN] = "", dbg[256], root[256], bad[256];
	struct cfi_build_opts opts = {.debug_root = root};
	struct cfi_table *full, *sep, *none;
	int fd;

	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(bad, sizeof(bad), "%s/bad", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/root/.build-id/%.2s/%s.debug", tmpdir, BUILD_ID_32,
		 BUILD_ID_32 + 2);
	if (!shell_ok("cd %s && " CC " -Wl,--build-id=0x%s -o prog prog.c && "
		      "mkdir -p root/.build-id/%.2s && objcopy --only-keep-debug prog %s && "
		      "objcopy --strip-all prog stripped",
		      tmpdir, BUILD_ID_32, BUILD_ID_32, dbg)) {
		CHECK(0, "cannot build the 32-byte build-id pair");
		return;
	}
	CHECK(read_funcs(tpath("prog")), "nm: no sized leaf/nonleaf");
	fd = open(tpath("stripped"), O_RDONLY);
	CHECK(fd >= 0 && elf_build_id_hex_fd(fd, id, sizeof(id)) == 0 && !strcmp(id, BUILD_ID_32),
	      "stripped build-id '%s'", id);
	if (fd >= 0)
		close(fd);

	full = build(tpath("prog"), NULL, NULL);
	sep = build(tpath("stripped"), &opts, NULL);
	CHECK(has_sep(sep), "32-byte build-id: the table compiler did not use %s (sources 0x%x)",
	      dbg, sep ? sep->stats.sources : 0);
	CHECK(sep && !strcmp(sep->build_id, BUILD_ID_32), "table build-id '%s'",
	      sep ? sep->build_id : "(no table)");
	compare_rows("32-byte build-id", full, sep);
	/* the rows came from the debug file: without it the functions have none */
	opts.no_separate_debug = 1;
	none = build(tpath("stripped"), &opts, NULL);
	CHECK(none && cfi_table_lookup(none, funcs[1].addr)->cfa_kind == CFI_CFA_NONE,
	      "stripped object still has CFI for nonleaf");
	check_symbols("32-byte build-id", tpath("stripped"), root, dbg);
	cfi_table_free(full);
	cfi_table_free(sep);
	cfi_table_free(none);

	/* a debug file of another build at the same place is refused by both */
	if (!shell_ok("cd %s && " CC " -Wl,--build-id=0x%s -o other prog.c && "
		      "mkdir -p bad/.build-id/%.2s && objcopy --only-keep-debug other "
		      "bad/.build-id/%.2s/%s.debug",
		      tmpdir, OTHER_ID_32, BUILD_ID_32, BUILD_ID_32, BUILD_ID_32 + 2)) {
		CHECK(0, "cannot build the other debug file");
		return;
	}
	check_refused("other build-id", tpath("stripped"), bad, "different build-id");
}

/* Without build-ids the .gnu_debuglink CRC decides, for both. */
static void test_debuglink_crc(void)
{
	char dbg[256], none[256];
	struct cfi_build_opts opts = {.debug_root = none};
	struct cfi_table *full, *sep;

	snprintf(none, sizeof(none), "%s/none", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/.debug/noid.debug", tmpdir);
	if (!shell_ok("cd %s && " CC " -Wl,--build-id=none -o noid prog.c && mkdir -p .debug && "
		      "objcopy --only-keep-debug noid .debug/noid.debug && "
		      "objcopy --strip-all --add-gnu-debuglink=.debug/noid.debug noid noid.linked",
		      tmpdir)) {
		CHECK(0, "cannot build the debuglink pair");
		return;
	}
	CHECK(read_funcs(tpath("noid")), "nm: no sized leaf/nonleaf");
	full = build(tpath("noid"), NULL, NULL);
	sep = build(tpath("noid.linked"), &opts, NULL);
	CHECK(has_sep(sep), "debuglink: the table compiler did not use %s", dbg);
	compare_rows("debuglink", full, sep);
	cfi_table_free(sep);
	check_symbols("debuglink", tpath("noid.linked"), none, dbg);

	/* the debug file changed since the link was made: its CRC no longer matches */
	if (!shell_ok("printf x >> %s", dbg)) {
		CHECK(0, "cannot append to %s", dbg);
		goto out;
	}
	check_refused("debuglink, bad CRC", tpath("noid.linked"), none, "CRC");
out:
	cfi_table_free(full);
}

/*
 * Issue 12, item 10: the directories next to an object belong to whoever owns
 * the object; a debug file reached through a symlink planted there (here to
 * the right file, elsewhere) is refused, not followed.
 */
static void test_debuglink_symlink(void)
{
	char none[256];

	snprintf(none, sizeof(none), "%s/none", tmpdir);
	if (!shell_ok("cd %s && mkdir -p ln/.debug elsewhere && " CC
		      " -Wl,--build-id=none -o ln/obj prog.c && "
		      "objcopy --only-keep-debug ln/obj elsewhere/obj.debug && "
		      "objcopy --strip-all --add-gnu-debuglink=elsewhere/obj.debug ln/obj "
		      "ln/obj.linked && "
		      "ln -s ../../elsewhere/obj.debug ln/.debug/obj.debug",
		      tmpdir)) {
		CHECK(0, "cannot build the symlinked debuglink pair");
		return;
	}
	check_refused("debuglink through a symlink", tpath("ln/obj.linked"), none, "symbolic link");
}

/* A pid that named a process a moment ago: a child, reaped. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

/*
 * An object of a process gone before its names were read (a short process):
 * its root went with it, its build-id still names the debug file, in our
 * tree; its debuglink, a path of the dead root, is never followed in ours.
 */
static void test_process_gone(void)
{
	char root[256], dbg[256];
	struct debug_file_search s = {.root = root};
	struct debug_file out = {.fd = -1};
	struct sym_cache *c;
	struct sym_obj *o;
	const char *name = NULL;
	Elf *e;
	int fd;

	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(dbg, sizeof(dbg), "%s/root/.build-id/%.2s/%s.debug", tmpdir, BUILD_ID_32,
		 BUILD_ID_32 + 2);
	s.pid = (uint32_t)gone_pid();
	s.obj_path = tpath("stripped");
	fd = open(tpath("stripped"), O_RDONLY);
	elf_version(EV_CURRENT);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	CHECK(e && debug_file_find(e, &s, &out) == 0 && !strcmp(out.path, dbg),
	      "process gone: no debug file by build-id (got '%s')", out.path);
	debug_file_close(&out);
	if (e)
		elf_end(e);
	/* the symbolizer, as a load of the gone process calls it (its fd, its pid) */
	c = sym_cache_new();
	CHECK(c && sym_cache_set_debug_root(c, root) == 0, "sym_cache");
	o = c && fd >= 0 ? sym_cache_get(c, "gone", tpath("stripped"), fd, s.pid) : NULL;
	CHECK(o && sym_obj_lookup(o, funcs[1].addr + 1, &name, NULL) == 0 && name &&
		  !strcmp(name, "nonleaf"),
	      "process gone: nonleaf -> %s", name ? name : "(none)");
	sym_cache_free(c);
	if (fd >= 0)
		close(fd);

	/* no build-id: the debuglink is the dead root's, not to be followed in ours */
	s.obj_path = tpath("noid.linked");
	fd = open(tpath("noid.linked"), O_RDONLY);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	CHECK(e && debug_file_find(e, &s, &out) < 0,
	      "process gone: its debuglink was followed in our tree (%s)", out.path);
	debug_file_close(&out);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	FILE *f;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfidbgXXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	f = fopen(tpath("prog.c"), "w");
	if (!f || fputs(prog_c, f) < 0 || fclose(f)) {
		perror("prog.c");
		return 2;
	}
	test_build_id_32();
	test_debuglink_crc();
	test_debuglink_symlink();
	test_process_gone();
	if (!getenv("KEEP"))
		shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
