// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * V8 (Node.js) without a kernel: the layout v8_elf_offsets reads from
 * node's v8dbg_* symbols against the same values read another way (nm -D
 * and readelf -SW, then the file's bytes), refused for a non-V8 ELF, a
 * copy with an impossible value and truncated copies; and SharedFunctionInfos
 * read from a live node.  The oracle there is node itself: a script the
 * test writes prints, for functions at known lines, %DebugPrint's
 * shared_info address and fn.name, and waits; its script names are a thin,
 * a cons, a sliced and a two-byte string, as the test's own reads of the
 * Script (by the oracle's offsets) confirm, and one function is debugged
 * (a breakpoint: its script then behind a DebugInfo).  Node missing fails.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/runtimes/target_mem.h"
#include "user/runtimes/v8/v8_offsets.h"
#include "user/runtimes/v8/v8_sfi.h"

#define NODE	    "/usr/bin/node"
#define MAX_ORACLE  1024
#define MAX_FNS	    32
#define LONG_REPEAT 80 /* "f" and 80 x "Long": a name past the 255 bytes kept */

/* A v8dbg symbol as nm and readelf see it, its value read from the file. */
static struct oracle_sym {
	char name[160];
	int32_t value;
	long off; /* of the value in the file; -1: in .bss */
} osyms[MAX_ORACLE];
static int nosyms;

struct section {
	uint64_t addr, off, size;
	bool nobits;
};

/* The allocated sections of path, by readelf -SW. */
static int read_sections(const char *path, struct section *s, int max)
{
	char cmd[PATH_MAX + 64], line[512], name[128], type[64];
	unsigned long long addr, off, size;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p) && n < max)
		if (sscanf(line, " [%*d] %127s %63s %llx %llx %llx", name, type, &addr, &off,
			   &size) == 5 &&
		    addr)
			s[n++] = (struct section){addr, off, size, !strcmp(type, "NOBITS")};
	if (p)
		pclose(p);
	return n;
}

/* path's v8dbg values: nm -D for the addresses, readelf -SW for where they lie. */
static int oracle_load(const char *path)
{
	char cmd[PATH_MAX + 64], line[512], name[160], kind;
	struct section secs[128];
	int nsec = read_sections(path, secs, 128), fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned long long addr;
	FILE *p;

	nosyms = 0;
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only %s", path);
	p = popen(cmd, "r");
	while (p && fd >= 0 && fgets(line, sizeof(line), p) && nosyms < MAX_ORACLE) {
		struct oracle_sym *o = &osyms[nosyms];

		if (sscanf(line, "%llx %c %159s", &addr, &kind, name) != 3 ||
		    strncmp(name, "v8dbg_", 6))
			continue;
		for (int i = 0; i < nsec; i++) {
			if (addr < secs[i].addr || addr + 4 > secs[i].addr + secs[i].size)
				continue;
			snprintf(o->name, sizeof(o->name), "%s", name);
			o->off = secs[i].nobits ? -1 : (long)(secs[i].off + addr - secs[i].addr);
			o->value = 0;
			if (o->off < 0 || pread(fd, &o->value, 4, o->off) == 4)
				nosyms++;
			break;
		}
	}
	if (p)
		pclose(p);
	if (fd >= 0)
		close(fd);
	return nosyms;
}

static const struct oracle_sym *oracle_sym(const char *name)
{
	for (int i = 0; i < nosyms; i++)
		if (!strcmp(osyms[i].name, name))
			return &osyms[i];
	return NULL;
}

/* The oracle's value of name; -99999 when it has none. */
static long oracle(const char *name)
{
	const struct oracle_sym *s = oracle_sym(name);

	return s ? s->value : -99999;
}

/* v8_elf_offsets of the file at path; -2 when it cannot be opened. */
static int offsets_of(const char *path, struct v8_offsets *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -2;
	rc = v8_elf_offsets(fd, o);
	close(fd);
	return rc;
}

#define UNCOMPILED(x) "v8dbg_type_UncompiledData" x "__UNCOMPILED_DATA_"
static const char *const uncompiled[] = {
    UNCOMPILED("WithoutPreparseData") "WITHOUT_PREPARSE_DATA_TYPE",
    UNCOMPILED("WithPreparseData") "WITH_PREPARSE_DATA_TYPE",
    UNCOMPILED("WithoutPreparseDataWithJob") "WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE",
    UNCOMPILED("WithPreparseDataAndJob") "WITH_PREPARSE_DATA_AND_JOB_TYPE"};

/* Whether type is one of UncompiledData's, as the oracle has them. */
static bool uncompiled_type(int type)
{
	for (int i = 0; i < 4; i++)
		if (type == oracle(uncompiled[i]))
			return true;
	return false;
}

static void check_fields(const struct v8_offsets *o)
{
	const struct {
		const char *sym;
		long got;
	} f[] = {
	    {"v8dbg_off_fp_function", o->bpf.fp_function},
	    {"v8dbg_class_HeapObject__map__Map", o->bpf.heap_object_map},
	    {"v8dbg_class_Map__instance_type__uint16_t", o->bpf.map_instance_type},
	    {"v8dbg_type_JSFunction__JS_FUNCTION_TYPE", o->bpf.js_function_type},
	    {"v8dbg_class_JSFunction__shared__SharedFunctionInfo", o->bpf.js_function_shared},
	    {"v8dbg_HeapObjectTag", o->heap_object_tag},
	    {"v8dbg_SmiShiftSize", o->smi_shift - 1},
	    {"v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", o->sfi_type},
	    {"v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", o->scope_info_type},
	    {"v8dbg_type_Script__SCRIPT_TYPE", o->script_type},
	    {"v8dbg_FirstNonstringType", o->first_nonstring_type},
	    {"v8dbg_TwoByteStringTag", o->two_byte_tag},
	    {"v8dbg_SeqStringTag", o->seq_tag},
	    {"v8dbg_ThinStringTag", o->thin_tag},
	    {"v8dbg_class_String__length__int32_t", o->string_length},
	    {"v8dbg_class_SeqTwoByteString__chars__char", o->seq_two_byte_chars},
	    {"v8dbg_class_SlicedString__offset__SMI", o->sliced_offset},
	    {"v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object",
	     o->sfi_name_or_scope_info},
	    {"v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject",
	     o->sfi_script_or_debug_info},
	    {"v8dbg_class_Script__line_ends__Object", o->script_line_ends},
	    {"v8dbg_class_FixedArray__data__uintptr_t", o->fixed_array_data},
	    {"v8dbg_class_UncompiledData__start_position__int32_t", o->uncompiled_start_position},
	    {"v8dbg_scopeinfo_idx_first_vars", o->scope_info_first_vars},
	    {"v8dbg_IsNotStringMask", (int16_t)o->is_not_string_mask},
	};
	long lo = 1 << 16, hi = -1;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		CHECK(oracle(f[i].sym) == f[i].got, "%s: read %ld, nm/readelf %ld", f[i].sym,
		      f[i].got, oracle(f[i].sym));
	for (int i = 0; i < 4; i++) {
		long v = oracle(uncompiled[i]);

		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	CHECK(o->uncompiled_first_type == lo && o->uncompiled_last_type == hi,
	      "UncompiledData types %u-%u, nm/readelf %ld-%ld", o->uncompiled_first_type,
	      o->uncompiled_last_type, lo, hi);
}

/* A copy of node whose v8dbg symbol sym's value is v: refused. */
static void check_patched(const char *copy, const char *sym, int32_t v, const char *what)
{
	long off = oracle_sym(sym) ? oracle_sym(sym)->off : -1;
	int fd = open(copy, O_RDWR | O_CLOEXEC);
	struct v8_offsets o;
	int32_t old = 0;

	CHECK(fd >= 0 && off > 0 && pread(fd, &old, 4, off) == 4 && pwrite(fd, &v, 4, off) == 4,
	      "patching %s", what);
	/* still a V8, of its version: counted as one whose layout is not read */
	CHECK(offsets_of(copy, &o) == 1 && o.version && !o.bpf.js_function_shared,
	      "node with %s = %d taken, or not known for a V8 (version %#x)", what, v, o.version);
	if (fd >= 0) {
		CHECK(pwrite(fd, &old, 4, off) == 4, "restoring %s", what);
		close(fd);
	}
}

static void test_offsets(void)
{
	char dir[] = "/tmp/cfiprof-v8.XXXXXX", copy[PATH_MAX];
	static const long cuts[] = {50 << 20, 1 << 20, 64, 0};
	struct v8_offsets o;
	int rc;

	rc = offsets_of(NODE, &o);
	CHECK(rc != -2, "%s missing", NODE);
	if (rc == -2)
		return;
	CHECK(rc == 0, "v8_elf_offsets refused %s", NODE);
	CHECK(oracle_load(NODE) > 500, "nm/readelf found %d v8dbg values in %s", nosyms, NODE);
	CHECK(oracle_sym("v8dbg_class_HeapObject__map__Map") &&
		  oracle_sym("v8dbg_class_HeapObject__map__Map")->off < 0,
	      "HeapObject.map's offset is not in .bss: the .bss path goes untested");
	printf("  node: %d v8dbg values; fp_function %d, SFI type %u, ScopeInfo type %u\n", nosyms,
	       o.bpf.fp_function, o.sfi_type, o.scope_info_type);
	check_fields(&o);
	{
		/* node's own word for its V8: "11.3.244.8-node.38" */
		FILE *p = popen(NODE " -p process.versions.v8", "r");
		unsigned int major = 0, minor = 0;

		CHECK(p && fscanf(p, "%u.%u", &major, &minor) == 2, "node -p process.versions.v8");
		if (p)
			pclose(p);
		CHECK(o.version == (major << 8 | minor), "version %#x, node says %u.%u", o.version,
		      major, minor);
		/* the JSFunction types: a class constructor's (node 20: 2081) is in them */
		CHECK(o.bpf.js_function_last >= o.bpf.js_function_type, "JSFunction types %u..%u",
		      o.bpf.js_function_type, o.bpf.js_function_last);
	}
	CHECK(offsets_of("/bin/true", &o) == -1, "/bin/true taken for a V8");

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(copy, sizeof(copy), "%s/node", dir);
	CHECK(sh_fmt("cp %s %s", NODE, copy) == 0, "copying node");
	CHECK(offsets_of(copy, &o) == 0, "the copy refused");
	check_patched(copy, "v8dbg_class_String__length__int32_t", 5000, "String.length's offset");
	check_patched(copy, "v8dbg_TaggedSize", 4, "TaggedSize");
	check_patched(copy, "v8dbg_type_Script__SCRIPT_TYPE", 0x10000, "SCRIPT_TYPE");
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		CHECK(truncate(copy, cuts[i]) == 0, "truncate");
		CHECK(offsets_of(copy, &o) == -1, "node cut at %ld bytes taken", cuts[i]);
	}
	tmpdir_done(dir, harness_failed);
}

/* What node printed of one function: where its SFI is, its line, name and file. */
struct fn {
	uint64_t jsfn, sfi;
	int line;
	char name[512], file[512];
};

/*
 * The script: each function on the line the test expects, the Script
 * names of the vm-compiled ones a cons, a slice, a two-byte and a thin string.
 */
static const char script_fmt[] =
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "function %s() { return 1; }\n"
    "const obj = {}; obj.work = function () { return 3; };\n"
    "class Shape { area(x) { return x * x; } }\n"
    "const arrow = (x) => x + 1;\n"
    "function 函数λ𝒇() { return 2; }\n"
    "function ünïcödé() { return 4; }\n"
    "function neverCalled() { return 5; }\n"
    "const named = function inner() { return inner; };\n"
    "function debugged() { return 6; }\n"
    "%s\n"
    "%s\n"
    "const vm = require('vm');\n"
    "const n = process.argv.length;\n"
    "const consFile = __dirname + '/cons-' + n + '-file.js';\n"
    "const slicedFile = (__dirname + '/sliced-' + n + '-of-a-longer-name.js')"
    ".slice(0, __dirname.length + 12);\n"
    "const twoByteFile = __dirname + '/δέλτα-' + n + '.js';\n"
    "const unlinedFile = __dirname + '/unlined-' + n + '.js';\n"
    "const thinFile = [__dirname, '/thin-', n, '.js'].join('');\n"
    "const run = (src, filename) => vm.runInThisContext(src, {filename});\n"
    "const consFn = run('\\nfunction consFn() { return new Error().stack; }\\nconsFn', "
    "consFile);\n"
    "const slicedFn = run('\\n\\nfunction slicedFn() { return new Error().stack; }\\nslicedFn', "
    "slicedFile);\n"
    "const twoByteFn = run('function twoByteFn() { return new Error().stack; }\\ntwoByteFn', "
    "twoByteFile);\n"
    "const unlinedFn = run('function unlinedFn() { return 1; }\\nunlinedFn', unlinedFile);\n"
    "consFn(); slicedFn(); twoByteFn(); unlinedFn(); new Error().stack; locals75(); locals74();\n"
    "for (let i = 0; i < 100000; i++) {\n"
    "  fib(5); %s(); obj.work(); new Shape().area(i); arrow(i); 函数λ𝒇(); ünïcödé();\n"
    "  named(); debugged();\n"
    "}\n"
    "// a GC replaces a ThinString by its string: this one comes after the last\n"
    "gc();\n"
    "const thinFn = run('function thinFn() { return new Error().stack; }\\nthinFn', thinFile);\n"
    "// an equal internalized string exists: a key, thinFile becomes a ThinString to it\n"
    "const keyed = {}; keyed[thinFile] = eval(JSON.stringify(thinFile)); thinFn();\n"
    "const show = (f, line, file) => {\n"
    "  %%DebugPrint(f);\n"
    "  console.log('FN ' + line + '\\nNAME ' + f.name + '\\nFILE ' + file);\n"
    "};\n"
    "show(fib, 1, __filename); show(%s, 2, __filename); show(obj.work, 3, __filename);\n"
    "show(Shape.prototype.area, 4, __filename); show(arrow, 5, __filename);\n"
    "show(函数λ𝒇, 6, __filename); show(ünïcödé, 7, __filename);\n"
    "show(neverCalled, 8, __filename); show(named, 9, __filename);\n"
    "show(debugged, 10, __filename); show(Shape, 4, __filename);\n"
    "show(locals75, 11, __filename); show(locals74, 12, __filename);\n"
    "show(consFn, 2, consFile);\n"
    "show(slicedFn, 3, slicedFile); show(twoByteFn, 1, twoByteFile);\n"
    "show(unlinedFn, 1, unlinedFile); show(thinFn, 1, thinFile); show(Math.max, 0, '');\n"
    "console.log('READY');\n"
    "process.stdin.on('data', (d) => { if (String(d).includes('debug')) debug(); });\n"
    "process.stdin.on('end', () => process.exit(0));\n"
    "function debug() {\n"
    "  const s = new (require('inspector').Session)();\n"
    "  const col = require('fs').readFileSync(__filename, 'utf8').split('\\n')[9]"
    ".indexOf('return');\n"
    "  const url = require('url').pathToFileURL(__filename).href;\n"
    "  s.connect();\n"
    "  s.post('Debugger.enable', () => s.post('Debugger.setBreakpointByUrl',\n"
    "    {url, lineNumber: 9, columnNumber: col},\n"
    "    (e, r) => console.log('DEBUGGED ' + (e ? e.message : r.locations.length))));\n"
    "}\n";

/* Waits (60 s at most) until file holds what; its text then (free), or NULL. */
static char *wait_for(const char *file, const char *what, pid_t pid)
{
	for (int i = 0; i < 1200; i++) {
		char *s = slurp(file);

		if (strstr(s, what))
			return s;
		free(s);
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return NULL;
		usleep(50000);
	}
	return NULL;
}

/* The functions node printed, in order: %DebugPrint's then its FN, NAME, FILE lines. */
static int parse_fns(char *out, struct fn *fns, int max)
{
	struct fn cur = {0};
	int n = 0;

	for (char *line = strtok(out, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		unsigned long long a;

		if (sscanf(line, "DebugPrint: 0x%llx", &a) == 1)
			cur = (struct fn){.jsfn = a};
		else if (!cur.sfi && sscanf(line, " - shared_info: 0x%llx", &a) == 1)
			cur.sfi = a;
		else if (sscanf(line, "FN %d", &cur.line) == 1)
			;
		else if (!strncmp(line, "NAME ", 5))
			snprintf(cur.name, sizeof(cur.name), "%s", line + 5);
		else if (!strncmp(line, "FILE", 4))
			snprintf(cur.file, sizeof(cur.file), "%s", line[4] ? line + 5 : "");
		if (!strncmp(line, "FILE", 4) && cur.sfi)
			fns[n++] = cur;
	}
	return n;
}

/* The name v8_sfi_read gives a function whose fn.name is name: its first 255 bytes whole. */
static void expected_name(const char *name, char *out, size_t size)
{
	size_t n = strlen(name) > 255 ? 255 : strlen(name);

	while (n && ((unsigned char)name[n] & 0xc0) == 0x80)
		n--;
	snprintf(out, size, "%.*s", n ? (int)n : 16, n ? name : "(anonymous)");
}

/* The instance type of the object at tagged address a, by the oracle's offsets; -1. */
static int raw_type(pid_t pid, uint64_t a)
{
	uint64_t map;
	uint16_t type;

	if (target_read((uint32_t)pid, a - 1 + oracle("v8dbg_class_HeapObject__map__Map"), &map,
			8) ||
	    target_read((uint32_t)pid, map - 1 + oracle("v8dbg_class_Map__instance_type__uint16_t"),
			&type, 2))
		return -1;
	return type;
}

static uint64_t raw_field(pid_t pid, uint64_t a, const char *sym)
{
	uint64_t v = 0;

	target_read((uint32_t)pid, a - 1 + oracle(sym), &v, 8);
	return v;
}

/* The instance type of the name of the Script of the function whose SFI is sfi. */
static int script_name_type(pid_t pid, uint64_t sfi)
{
	uint64_t script =
	    raw_field(pid, sfi, "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject");

	return raw_type(pid, raw_field(pid, script, "v8dbg_class_Script__name__Object"));
}

/* f read from pid as node named it: its name, file and line. */
static void check_fn(pid_t pid, const struct v8_offsets *o, const struct fn *f)
{
	char want[300];
	struct code_name cn;

	expected_name(f->name, want, sizeof(want));
	v8_sfi_read((uint32_t)pid, o, f->sfi, &cn);
	CHECK(cn.ok && !strcmp(cn.name, want) && !strcmp(cn.file, f->file) &&
		  cn.first_line == (uint32_t)f->line,
	      "SFI %#llx: ok %d, '%s' in '%s' line %u; node: '%s' in '%s' line %d",
	      (unsigned long long)f->sfi, cn.ok, cn.name ? cn.name : "", cn.file ? cn.file : "",
	      cn.first_line, want, f->file, f->line);
	if (cn.ok)
		printf("  %#llx: %.40s%s in %s line %u\n", (unsigned long long)f->sfi, cn.name,
		       strlen(cn.name) > 40 ? "..." : "", cn.file[0] ? cn.file : "(none)",
		       cn.first_line);
	free(cn.name);
}

/*
 * The representations the script names reach, and a lazy function's data,
 * as the test reads them itself.
 */
static void check_representations(pid_t pid, const struct fn *fns, int n)
{
	long rep_mask = oracle("v8dbg_StringRepresentationMask");

	for (int i = 0; i < n; i++) {
		const char *name = fns[i].name, *want = NULL;
		int t = script_name_type(pid, fns[i].sfi);

		if (!strcmp(name, "consFn"))
			want = "v8dbg_type_ConsString__CONS_ONE_BYTE_STRING_TYPE";
		else if (!strcmp(name, "slicedFn"))
			want = "v8dbg_type_SlicedString__SLICED_ONE_BYTE_STRING_TYPE";
		else if (!strcmp(name, "twoByteFn"))
			want = "v8dbg_type_ConsString__CONS_STRING_TYPE";
		CHECK(!want || t == oracle(want), "%s's script name has type %d, not %s", name, t,
		      want);
		CHECK(strcmp(name, "thinFn") || (t & rep_mask) == oracle("v8dbg_ThinStringTag"),
		      "thinFn's script name has type %d: no thin string", t);
		t = raw_type(pid,
			     raw_field(pid, fns[i].sfi,
				       "v8dbg_class_SharedFunctionInfo__function_data__Object"));
		CHECK(strcmp(name, "neverCalled") || uncompiled_type(t),
		      "neverCalled's function data has type %d: compiled", t);
	}
}

/*
 * A hostile process's objects, made in this one's memory (read through
 * its pid as another's): a cons string of itself, lengths and counts past
 * every bound, an external string, a map that is a Smi.  Each read ends,
 * refused or bounded; the well-formed ones read as built.
 */
static uint64_t heap[1024];

static uint64_t obj(int i)
{
	return (uint64_t)(uintptr_t)&heap[i] + 1;
}

static void put(int i, uint16_t off, uint64_t v, size_t len)
{
	memcpy((char *)&heap[i] + off, &v, len);
}

/* Object i of map m (a map of instance type type at m). */
static void make(const struct v8_offsets *o, int i, int m, uint16_t type)
{
	put(m, o->bpf.map_instance_type, type, 2);
	put(i, o->bpf.heap_object_map, obj(m), 8);
}

static void make_string(const struct v8_offsets *o, int i, int m, uint16_t type, int32_t len)
{
	make(o, i, m, type);
	put(i, o->string_length, (uint32_t)len, 4);
}

static void read_fake(const struct v8_offsets *o, const char *name, const char *file, uint32_t line,
		      const char *what)
{
	struct code_name cn;

	v8_sfi_read((uint32_t)getpid(), o, obj(100), &cn);
	/* line ~0u: any (what lies past the fake heap is this process's) */
	CHECK(name ? cn.ok && !strcmp(cn.name, name) && !strcmp(cn.file, file) &&
			 (cn.first_line == line || line == ~0u)
		   : !cn.ok,
	      "%s: ok %d, '%s' in '%s' line %u", what, cn.ok, cn.name ? cn.name : "",
	      cn.file ? cn.file : "", cn.first_line);
	free(cn.name);
}

static void test_hostile(void)
{
	struct v8_offsets o;
	int rc = offsets_of(NODE, &o);

	CHECK(rc == 0, "no layout from %s", NODE);
	if (rc)
		return;
	make_string(&o, 200, 0, o.seq_tag | o.one_byte_tag, 4);
	memcpy((char *)&heap[200] + o.seq_one_byte_chars, "ab\1c", 4);
	make_string(&o, 220, 2, o.seq_tag | o.two_byte_tag, 1);
	put(220, o.seq_two_byte_chars, 0x03b4, 2); /* δ */
	make_string(&o, 240, 4, o.cons_tag | o.one_byte_tag, 5);
	put(240, o.cons_first, obj(200), 8);
	put(240, o.cons_second, obj(220), 8);
	make_string(&o, 260, 6, o.seq_tag | o.one_byte_tag, 14);
	memcpy((char *)&heap[260] + o.seq_one_byte_chars, "/dir/file.js!!", 14);
	make_string(&o, 280, 8, o.sliced_tag | o.one_byte_tag, 11);
	put(280, o.sliced_parent, obj(260), 8);
	put(280, o.sliced_offset, 1ull << o.smi_shift, 8);
	make(&o, 300, 10, o.fixed_array_type);
	put(300, o.fixed_array_length, 3ull << o.smi_shift, 8);
	for (int i = 0; i < 3; i++)
		put(300, (uint16_t)(o.fixed_array_data + 8 * i), (10ull + 10 * i) << o.smi_shift,
		    8);
	make(&o, 320, 12, o.script_type);
	put(320, o.script_name, obj(280), 8);
	put(320, o.script_line_ends, obj(300), 8);
	make(&o, 340, 14, o.uncompiled_first_type);
	put(340, o.uncompiled_start_position, 25, 4);
	make(&o, 100, 16, o.sfi_type);
	put(100, o.sfi_name_or_scope_info, obj(240), 8);
	put(100, o.sfi_script_or_debug_info, obj(320), 8);
	put(100, o.sfi_function_data, obj(340), 8);
	read_fake(&o, "ab?cδ", "dir/file.js", 3, "well-formed");

	put(240, o.cons_first, obj(240), 8); /* a cons of itself */
	read_fake(&o, NULL, NULL, 0, "cons cycle");
	put(240, o.cons_first, obj(200), 8);
	put(200, o.string_length, 0x7fffffff, 4);
	read_fake(&o, NULL, NULL, 0, "string of 2^31 - 1");
	put(200, o.string_length, 4, 4);
	make_string(&o, 360, 18, o.external_tag | o.one_byte_tag, 4);
	put(100, o.sfi_name_or_scope_info, obj(360), 8);
	read_fake(&o, NULL, NULL, 0, "external string");
	put(100, o.sfi_name_or_scope_info, obj(240), 8);
	put(300, o.fixed_array_length, (1ull << 22) << o.smi_shift, 8);
	read_fake(&o, "ab?cδ", "dir/file.js", ~0u, "2^22 line ends, most past the heap");
	put(300, o.fixed_array_length, ((1ull << 22) + 1) << o.smi_shift, 8);
	read_fake(&o, "ab?cδ", "dir/file.js", 0, "2^22 + 1 line ends");
	put(300, o.fixed_array_length, 3ull << o.smi_shift, 8);
	/* a ScopeInfo of more locals than any (2^20) */
	make(&o, 380, 20, o.scope_info_type);
	put(380, 8, (3ull << 12 | 2) << o.smi_shift, 8);
	put(380, (uint16_t)(8 + 8 * o.scope_info_context_locals), ((1ull << 20) + 1) << o.smi_shift,
	    8);
	put(100, o.sfi_name_or_scope_info, obj(380), 8);
	read_fake(&o, NULL, NULL, 0, "2^20 + 1 context locals");
	put(100, o.sfi_name_or_scope_info, obj(240), 8);
	put(100, o.bpf.heap_object_map, 2ull << o.smi_shift, 8); /* a Smi for a map */
	read_fake(&o, NULL, NULL, 0, "a Smi for a map");
}

/* Addresses that are no SharedFunctionInfo: refused. */
static void check_garbage(pid_t pid, const struct v8_offsets *o, const struct fn *f)
{
	const uint64_t bad[] = {0, 1, 0x100000000ull, 0x10001, 0xdead00000001ull, f->jsfn};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct code_name cn;

		v8_sfi_read((uint32_t)pid, o, bad[i], &cn);
		CHECK(!cn.ok && !cn.name, "%#llx read as a SharedFunctionInfo: '%s'",
		      (unsigned long long)bad[i], cn.name ? cn.name : "");
		free(cn.name);
	}
}

/* The debugged function once a breakpoint is set in it: its script behind a DebugInfo. */
static void check_debugged(pid_t pid, int in_fd, const char *out, const struct v8_offsets *o,
			   const struct fn *fns, int n)
{
	const struct fn *f = NULL;
	char *text;

	for (int i = 0; i < n; i++)
		f = !strcmp(fns[i].name, "debugged") ? &fns[i] : f;
	CHECK(f && write(in_fd, "debug\n", 6) == 6, "no debugged function, or node's stdin");
	text = f ? wait_for(out, "DEBUGGED", pid) : NULL;
	CHECK(text && strstr(text, "DEBUGGED 1"), "node set no breakpoint: %s",
	      text ? strstr(text, "DEBUGGED") : "(none)");
	free(text);
	if (!f)
		return;
	CHECK(raw_type(pid, raw_field(pid, f->sfi,
				      "v8dbg_class_SharedFunctionInfo__script_or_debug_info__"
				      "HeapObject")) ==
		  oracle("v8dbg_type_DebugInfo__DEBUG_INFO_TYPE"),
	      "the debugged function has no DebugInfo");
	check_fn(pid, o, f);
}

/*
 * A function with n context locals, each captured by the closure it
 * returns: kScopeInfoMaxInlinedLocalNamesSize (75) or more are kept in a
 * hash table, one slot of its ScopeInfo, fewer inline.
 */
static void locals_fn(char *buf, size_t size, int n)
{
	size_t len = (size_t)snprintf(buf, size, "function locals%d() { let ", n);

	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%sv%d = %d", i ? ", " : "", i, i);
	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%sv%d",
					i ? " + " : "; return () => ", i);
	if (len < size)
		snprintf(buf + len, size - len, "; }");
}

static pid_t start_node(const char *dir, int *in_fd, char *out, size_t size)
{
	char script[PATH_MAX], long_name[4 * LONG_REPEAT + 2] = "f", locals75[2048], locals74[2048];
	int fds[2];
	pid_t pid;
	FILE *f;

	for (int i = 0; i < LONG_REPEAT; i++)
		strcat(long_name, "Long");
	snprintf(script, sizeof(script), "%s/script.js", dir);
	snprintf(out, size, "%s/out.txt", dir);
	locals_fn(locals75, sizeof(locals75), 75);
	locals_fn(locals74, sizeof(locals74), 74);
	f = fopen(script, "w");
	CHECK(f != NULL, "writing %s", script);
	if (!f)
		return -1;
	fprintf(f, script_fmt, long_name, locals75, locals74, long_name, long_name);
	if (fclose(f) || pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* node goes with the test, even one that crashes */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[0], 0);
		dup2(o, 1);
		dup2(o, 2);
		close(fds[1]);
		execl(NODE, "node", "--allow-natives-syntax", "--expose-gc", script, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	*in_fd = fds[1];
	return pid;
}

static void test_sfi_read(void)
{
	char dir[] = "/tmp/cfiprof-v8.XXXXXX", out[PATH_MAX], path[PATH_MAX + 16], *text;
	struct fn fns[MAX_FNS];
	struct v8_offsets o;
	int in_fd = -1, n = 0;
	pid_t pid;

	n = offsets_of(NODE, &o);
	CHECK(n == 0, "no layout from %s", NODE);
	CHECK(oracle_load(NODE) > 500, "nm/readelf found %d v8dbg values", nosyms);
	if (n)
		return;
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	pid = start_node(dir, &in_fd, out, sizeof(out));
	CHECK(pid > 0, "cannot start node");
	if (pid <= 0)
		return;
	text = wait_for(out, "READY", pid);
	CHECK(text != NULL, "node printed no READY");
	if (text)
		n = parse_fns(text, fns, MAX_FNS);
	free(text);
	CHECK(n == 19, "node printed %d functions, not 19", n);
	snprintf(path, sizeof(path), "%s/script.js", dir);
	for (int i = 0; i < n; i++) {
		if (i < 13)
			CHECK(!strcmp(fns[i].file, path), "node's __filename %s, not %s",
			      fns[i].file, path);
		check_fn(pid, &o, &fns[i]);
	}
	printf("  %d functions of node read as node names them\n", n);
	if (n == 19) {
		check_representations(pid, fns, n);
		check_garbage(pid, &o, &fns[0]);
		check_debugged(pid, in_fd, out, &o, fns, n);
	}
	close(in_fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tmpdir_done(dir, harness_failed);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_offsets);
	RUN_TEST(test_sfi_read);
	RUN_TEST(test_hostile);
	return HARNESS_DONE();
}
