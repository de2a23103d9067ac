// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HotSpot's code cache read from a live JVM run with no flags (Debian's
 * OpenJDK 17, or the JDK home CFIPROF_TEST_JAVA_HOME names), against the
 * JVM's own diagnostic commands as oracles, which read its structures from
 * inside: jcmd's Compiler.codecache (each code heap's bounds),
 * Compiler.codelist (each nmethod: compile id, tier, state, method and
 * signature, [blob, code begin - code end]) and Compiler.perfmap (every
 * blob's code range and name, into /tmp/perf-PID.map).  The JVM runs
 * Busy.java (fib called from work in a loop) until jcmd lists both
 * compiled.  Then hostile input: forged tables, wrong offsets, a process
 * that is no JVM: refused, never a crash.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/test_jvm.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_scopes.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"
#include "user/runtimes/target_mem.h"

#define MAX_NM		  4096
#define MAX_MAP		  16384

/*
 * fib called through a method reference: a hidden class's method compiled
 * too; and an overload of fib, so Busy.fib's names carry their descriptors
 */
static const char busy_java[] =
    "public class Busy {\n"
    "    static final java.util.function.IntUnaryOperator FIB = Busy::fib;\n"
    "    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "    static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "    static long work() {\n"
    "        long s = fib(12L);\n"
    "        for (int i = 0; i < 20; i++) s += FIB.applyAsInt(20);\n"
    "        return s;\n"
    "    }\n"
    "    public static void main(String[] a) {\n"
    "        long t = 0;\n"
    "        System.out.println(\"ready\");\n"
    "        while (true) { t += work(); if (t == 42) System.out.println(t); }\n"
    "    }\n"
    "}\n";

/* the JVM main starts for the tests, and what they need of it */
static struct test_jvm jvm;

/* one line of jcmd Compiler.codelist */
struct nm {
	int id, level, state;
	char name[256], sig[256]; /* "Busy.fib", "(I)I" */
	uint64_t blob, begin, end;
};

/* one line of the perf map */
struct map_line {
	uint64_t begin, size;
	char name[256];
};

/* A command's whole output (malloc'ed), NULL when it failed. */
static char *capture(const char *cmd)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!buf || !p) {
		free(buf);
		if (p)
			pclose(p);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *more = realloc(buf, cap *= 2);

			if (!more)
				break;
			buf = more;
		}
	}
	buf[len] = 0;
	if (pclose(p)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* jcmd's output of one diagnostic command to the JVM, NULL on failure. */
static char *jcmd(const char *what)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "%s/bin/jcmd %d %s 2>&1", jvm.home, (int)jvm.pid, what);
	return capture(cmd);
}

/* jcmd's "Busy.fib(I)I" into its name and descriptor. */
static void split_method(const char *full, char *name, char *sig)
{
	const char *paren = strchr(full, '(');
	size_t n = paren ? (size_t)(paren - full) : strlen(full);

	snprintf(name, 256, "%.*s", (int)n, full);
	snprintf(sig, 256, "%s", paren ? paren : "");
}

/* jcmd Compiler.codelist parsed into nm[] (at most MAX_NM): how many, -1 on failure. */
static int codelist(struct nm *nm)
{
	char *out = jcmd("Compiler.codelist"), *line, *save = NULL;
	int n = 0;

	if (!out)
		return -1;
	for (line = strtok_r(out, "\n", &save); line && n < MAX_NM;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long blob, begin, end;
		char full[512];

		if (sscanf(line, "%d %d %d %511s [%llx, %llx - %llx]", &nm[n].id, &nm[n].level,
			   &nm[n].state, full, &blob, &begin, &end) != 7)
			continue;
		split_method(full, nm[n].name, nm[n].sig);
		nm[n].blob = blob;
		nm[n].begin = begin;
		nm[n].end = end;
		n++;
	}
	free(out);
	return n;
}

/* The perf map jcmd Compiler.perfmap writes, parsed into m[]: how many, -1 on failure. */
static int perfmap(struct map_line *m)
{
	char *out = jcmd("Compiler.perfmap"), path[64], line[512];
	FILE *f;
	int n = 0;

	free(out);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)jvm.pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < MAX_MAP && fgets(line, sizeof(line), f)) {
		unsigned long long begin, size;
		int at = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx %llx %n", &begin, &size, &at) != 2 || !at)
			continue;
		m[n].begin = begin;
		m[n].size = size;
		snprintf(m[n].name, sizeof(m[n].name), "%s", line + at);
		n++;
	}
	fclose(f);
	unlink(path);
	return n;
}

/* The JVM's layout, read as a profiler would: 0, or -1 (a failed check). */
static int layout(struct hotspot_layout *l)
{
	int rc = hotspot_layout_read((uint32_t)jvm.pid, &jvm.syms, jvm.bias, l);

	CHECK(rc == 0, "no layout read from pid %d (libjvm.so at %#" PRIx64 ")", (int)jvm.pid,
	      jvm.bias);
	return rc;
}

static int layout_and_heaps(struct hotspot_layout *l, struct hotspot_heaps *h)
{
	int rc;

	if (layout(l))
		return -1;
	rc = hotspot_heaps_read((uint32_t)jvm.pid, l, h);
	CHECK(rc == 0 && h->n > 0, "no code heaps read: rc %d, %u heaps", rc, h->n);
	return rc;
}

/* The feature version of the JDK at home (its release file's JAVA_VERSION), 0 if unknown. */
static int jdk_feature(const char *home)
{
	char path[PATH_MAX + 16], line[256];
	FILE *f;
	int v = 0;

	snprintf(path, sizeof(path), "%s/release", home);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "JAVA_VERSION=\"%d", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* Whether nm[0, n) is a hidden class's nmethod (Busy's method reference). */
static bool hidden_nm(const struct nm *nm)
{
	return !strncmp(nm->name, "Busy$$Lambda", 12) && strstr(nm->name, "/0x");
}

/* Whether nm[0, n) lists Busy's methods compiled, its method reference's too. */
static bool busy_compiled(const struct nm *nm, int n)
{
	bool fib = false, work = false, hidden = false;

	for (int i = 0; i < n; i++) {
		fib |= !strcmp(nm[i].name, "Busy.fib");
		work |= !strcmp(nm[i].name, "Busy.work");
		hidden |= hidden_nm(&nm[i]);
	}
	return fib && work && hidden;
}

/*
 * Starts Busy under the JDK at jvm.home and waits until jcmd lists its two
 * methods compiled; jvm.pid stays 0 when it cannot (every live test fails).
 */
static void start_jvm(void)
{
	struct nm *nm = calloc(MAX_NM, sizeof(*nm));
	/* a loaded machine compiles slowly: C2 takes seconds, not minutes */
	double deadline = mono_sec() + 180;
	int n = 0;

	jvm.feature = jdk_feature(jvm.home);
	CHECK(nm != NULL, "out of memory");
	if (!nm || !test_jvm_start(&jvm, "/tmp/cfiprof-hotspot.XXXXXX", "Busy", busy_java, NULL)) {
		free(nm);
		return;
	}
	CHECK(test_jvm_printed(&jvm, "ready", deadline), "java printed no ready");
	while (jvm.pid > 0 && mono_sec() < deadline && !busy_compiled(nm, n)) {
		sleep_s(1);
		n = codelist(nm);
	}
	CHECK(busy_compiled(nm, n),
	      "jcmd listed %d nmethods, not Busy.fib, Busy.work and Busy's "
	      "method reference",
	      n);
	test_jvm_libjvm(&jvm);
	free(nm);
	printf("  JDK %d: java pid %d, libjvm.so at %#" PRIx64 ", %d nmethods compiled\n",
	       jvm.feature, (int)jvm.pid, jvm.bias, n);
}

/* the JVM, and the perf map a test had it write */
static void stop_jvm(void)
{
	char map[128];

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)jvm.pid);
	test_jvm_stop(&jvm);
	unlink(map);
}

/* Whether the live tests have their JVM: a failed check when not. */
static bool have_jvm(void)
{
	CHECK(jvm.pid > 0 && jvm.bias, "no JVM to read (see main's failures)");
	return jvm.pid > 0 && jvm.bias;
}

/*
 * The layout from the live JVM, with the spelling its JDK uses where JDKs
 * differ (from their vmStructs.cpp): JDK 17 has CodeBlob::_code_begin,
 * CompiledMethod::_method and GrowableArrayBase, a 16-byte HeapBlock (a
 * size_t length, a bool); JDK 23 on, CodeBlob::_code_offset and _kind.
 */
static void test_layout(void)
{
	struct hotspot_symbols syms;
	struct hotspot_layout l;
	int fd;

	if (!have_jvm() || layout(&l))
		return;
	printf("  layout: HeapBlock %u bytes, ConstantPool %u, CodeBlob fields in %u, nmethod "
	       "fields in %u, code %s, _kind %s\n",
	       l.heap_block_size, l.pool_size, l.blob_bytes, l.nmethod_bytes,
	       l.code_relative ? "offsets" : "addresses", HOTSPOT_HAS(l.blob_kind) ? "yes" : "no");
	CHECK(l.code_heaps && l.code_low && l.code_high && l.blob_bytes &&
		  l.nmethod_bytes > l.blob_bytes && l.pool_size && l.symbol_length.size == 2,
	      "implausible layout");
	if (jvm.feature == 17)
		CHECK(!l.code_relative && (l.nm_method.flags & HOTSPOT_F_ALT) &&
			  !(l.array_len.flags & HOTSPOT_F_ALT) && l.heap_block_size == 16 &&
			  l.block_length.size == 8 && l.block_used.size == 1 &&
			  !HOTSPOT_HAS(l.blob_kind) && l.kind_nmethod == -1 &&
			  l.blob_frame_complete.size == 4 &&
			  (l.blob_frame_complete.flags & HOTSPOT_F_SIGNED),
		      "JDK 17's layout is not as its vmStructs.cpp declares it");
	if (jvm.feature >= 23)
		CHECK(l.code_relative && !(l.nm_method.flags & HOTSPOT_F_ALT) &&
			  HOTSPOT_HAS(l.blob_kind) && l.kind_nmethod >= 0,
		      "JDK %d's layout is not as its vmStructs.cpp declares it", jvm.feature);
	fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && hotspot_elf_symbols(fd, &syms) < 0, "/bin/sh taken for libjvm.so");
	if (fd >= 0)
		close(fd);
}

/* Whether heap bounds [low, high, high_boundary] are those of a heap of h. */
static bool heap_listed(const struct hotspot_heaps *h, uint64_t low, uint64_t high,
			uint64_t boundary)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (h->heap[i].low_boundary == low && h->heap[i].high == high &&
		    h->heap[i].high_boundary == boundary)
			return true;
	return false;
}

/*
 * Every heap's bounds as jcmd Compiler.codecache prints them (CodeCache::
 * print_summary: low_boundary, high, high_boundary).  A heap grows while
 * read: the heaps are read before and after jcmd, and compared when both
 * reads agree (three tries).
 */
static void test_heaps(void)
{
	struct hotspot_heaps h, again;
	struct hotspot_layout l;
	int listed = 0, matched = 0;

	if (!have_jvm() || layout_and_heaps(&l, &h))
		return;
	for (int t = 0; t < 3; t++) {
		char *out = jcmd("Compiler.codecache"), *p = out;

		listed = matched = 0;
		while (p && (p = strstr(p, "bounds ["))) {
			unsigned long long a, b, c;

			if (sscanf(p, "bounds [%llx, %llx, %llx]", &a, &b, &c) == 3) {
				listed++;
				matched += heap_listed(&h, a, b, c);
			}
			p++;
		}
		free(out);
		CHECK(!hotspot_heaps_read((uint32_t)jvm.pid, &l, &again), "heaps unreadable");
		if (!memcmp(&h, &again, sizeof(h)))
			break;
		h = again;
	}
	for (uint32_t i = 0; i < h.n; i++)
		printf("  heap %u: [%#" PRIx64 ", %#" PRIx64 ") of %#" PRIx64
		       ", %u-byte segments\n",
		       i, h.heap[i].low, h.heap[i].high, h.heap[i].high_boundary,
		       1u << h.heap[i].log2_segment);
	CHECK(listed > 0 && listed == (int)h.n && matched == listed,
	      "jcmd printed %d heaps, %d of them as read here (%u read)", listed, matched, h.n);
	for (uint32_t i = 0; i < h.n; i++)
		CHECK(h.heap[i].low == h.heap[i].low_boundary,
		      "heap %u: its low (%#" PRIx64 ") is not its low boundary", i, h.heap[i].low);
}

/* Whether a name read is jcmd's: its start, when the reader cut a longer symbol. */
static bool same_name(const char *mine, const char *theirs, bool cut)
{
	return cut ? !strncmp(mine, theirs, strlen(mine)) : !strcmp(mine, theirs);
}

/*
 * Whether the blob holding pc is the nmethod jcmd listed as nm; why not
 * into why.  A descriptor of over HOTSPOT_STRING_MAX bytes is cut (method
 * handle linkers' are).
 */
static bool blob_is(const struct hotspot_layout *l, const struct hotspot_heaps *h,
		    const struct nm *nm, uint64_t pc, char *why, size_t size)
{
	struct hotspot_method_name mn;
	struct hotspot_blob b;

	if (hotspot_blob_at((uint32_t)jvm.pid, l, h, pc, &b)) {
		snprintf(why, size, "no blob holds %#" PRIx64, pc);
		return false;
	}
	if (b.addr != nm->blob || b.code_begin != nm->begin || b.code_end != nm->end ||
	    !b.is_nmethod || b.compile_id != nm->id || b.comp_level != nm->level ||
	    b.state != nm->state) {
		snprintf(why, size,
			 "at %#" PRIx64 ": blob %#" PRIx64 " '%s' [%#" PRIx64 ", %#" PRIx64
			 ") id %d tier %d state %d",
			 pc, b.addr, b.name, b.code_begin, b.code_end, b.compile_id, b.comp_level,
			 b.state);
		return false;
	}
	if (hotspot_method_name((uint32_t)jvm.pid, l, b.method, &mn) ||
	    !same_name(mn.name, nm->name, mn.cut) || !same_name(mn.signature, nm->sig, mn.cut)) {
		snprintf(why, size, "its Method %#" PRIx64 " named '%s' '%s'", b.method, mn.name,
			 mn.signature);
		return false;
	}
	/* Busy's source is the oracle of its overloads: fib's two, no other */
	if (!strncmp(nm->name, "Busy.", 5) && mn.overloaded != !strcmp(nm->name, "Busy.fib")) {
		snprintf(why, size, "%s%s taken as %san overload", mn.name, mn.signature,
			 mn.overloaded ? "" : "not ");
		return false;
	}
	return true;
}

/* Whether jcmd lists nm (its id at its blob, in its state) in list[0, n). */
static bool still_listed(const struct nm *nm, const struct nm *list, int n)
{
	for (int i = 0; i < n; i++)
		if (list[i].id == nm->id && list[i].blob == nm->blob && list[i].state == nm->state)
			return true;
	return false;
}

/*
 * Each nmethod jcmd Compiler.codelist lists, found from its code's first
 * byte, a byte in its middle, its last, and its blob's header: the blob,
 * code range, compile id, tier and state jcmd prints, and its Method's
 * name and descriptor.  The JVM may free or change one meanwhile (the
 * sweeper, a deoptimization): a mismatch counts only when a second codelist
 * still lists it as before.
 */
static void test_nmethods(void)
{
	struct nm *nm = calloc(MAX_NM, sizeof(*nm)), *again = calloc(MAX_NM, sizeof(*nm));
	int n = 0, m = 0, bad = 0, changed = 0, busy = 0, hidden = 0;
	char why[512] = "", first[600] = "";
	struct hotspot_layout l;
	struct hotspot_heaps h;

	if (!have_jvm() || !nm || !again)
		goto out;
	n = codelist(nm);
	CHECK(busy_compiled(nm, n), "jcmd listed %d nmethods, not Busy's", n);
	if (layout_and_heaps(&l, &h))
		goto out;
	for (int i = 0; i < n; i++) {
		const uint64_t pcs[] = {nm[i].begin, nm[i].begin + (nm[i].end - nm[i].begin) / 2,
					nm[i].end - 1, nm[i].blob};
		bool ok = true;

		for (size_t p = 0; p < sizeof(pcs) / sizeof(pcs[0]) && ok; p++)
			ok = blob_is(&l, &h, &nm[i], pcs[p], why, sizeof(why));
		if (!ok) {
			if (!m)
				m = codelist(again);
			if (still_listed(&nm[i], again, m)) {
				if (!bad++)
					snprintf(first, sizeof(first), "%d %.200s%.100s: %.280s",
						 nm[i].id, nm[i].name, nm[i].sig, why);
			} else {
				changed++;
			}
		}
		busy += ok && !strncmp(nm[i].name, "Busy.", 5);
		hidden += ok && hidden_nm(&nm[i]);
	}
	printf("  %d nmethods as jcmd lists them (%d of Busy, %d of its hidden class), %d changed "
	       "meanwhile\n",
	       n - bad - changed, busy, hidden, changed);
	CHECK(!bad, "%d of %d nmethods not as jcmd lists them; first: %s", bad, n, first);
	CHECK(busy >= 2 && hidden >= 1, "Busy's nmethods found: %d, its hidden class's %d", busy,
	      hidden);
	/* the staleness the compile id is for would be all of them here */
	CHECK(changed * 4 <= n, "%d of %d nmethods changed while read", changed, n);
out:
	free(nm);
	free(again);
}

/* Whether line is one of busy_java's for method name (0: unknown, allowed); true for others. */
static bool busy_line(const char *name, uint32_t line)
{
	if (!line)
		return true;
	/* fib's overloads are named with their descriptors */
	if (!strcmp(name, "Busy.fib(I)I"))
		return line == 3;
	if (!strcmp(name, "Busy.fib(J)J"))
		return line == 4;
	if (!strcmp(name, "Busy.work"))
		return line >= 6 && line <= 8;
	if (!strcmp(name, "Busy.main"))
		return line >= 11 && line <= 13;
	return strncmp(name, "Busy.", 5) != 0;
}

/*
 * Busy's nmethods' debug info as hotspot_code_read decodes it: each named
 * as jcmd names it, with PcDescs, every line of a Busy method one of that
 * method's lines in busy_java, at its own level or inlined.  (JDK 17's
 * layout has it all: test_hotspot_inline checks the inlining against the
 * JVM's own PrintInlining.)
 */
static void test_debug_info(void)
{
	struct nm *nm = calloc(MAX_NM, sizeof(*nm));
	int n, read = 0, pcs = 0, levels = 0, lines = 0, bad = 0;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	char first[512] = "", full[sizeof(((struct nm *)0)->name) + sizeof(((struct nm *)0)->sig)];

	if (!have_jvm() || !nm || layout_and_heaps(&l, &h))
		goto out;
	if (jvm.feature == 17)
		CHECK(l.scopes && l.lines && l.source_file && l.pcdesc_size == 16 &&
			  l.has_line_table == 1 && (l.nm_scopes_data.flags & HOTSPOT_F_ALT),
		      "JDK 17's debug info not found as its vmStructs.cpp declares it");
	n = codelist(nm);
	for (int i = 0; l.scopes && i < n; i++) {
		struct hotspot_blob b;
		struct hotspot_code *c;
		const struct hotspot_chain *ch;
		const char *strs;

		if (strncmp(nm[i].name, "Busy.", 5) ||
		    hotspot_blob_at((uint32_t)jvm.pid, &l, &h, nm[i].begin, &b) || !b.is_nmethod)
			continue;
		c = hotspot_code_read((uint32_t)jvm.pid, &l, b.method, b.addr);
		if (!c)
			continue;
		strs = hotspot_code_strs(c);
		read++;
		pcs += c->nr_pcs;
		/* jcmd's name, with its descriptor where it is an overload (fib) */
		snprintf(full, sizeof(full), "%s%s", nm[i].name, nm[i].sig);
		bad += strcmp(strs + c->name, nm[i].name) && strcmp(strs + c->name, full);
		ch = (const void *)((const uint8_t *)c + c->chains);
		for (uint32_t k = 0; k < c->nr_chains; k++) {
			const struct interp_inlined *lv = hotspot_chain_levels(c, &ch[k]);
			bool ok = busy_line(strs + c->name, ch[k].line);

			lines += ch[k].line != 0;
			for (uint32_t j = 0; j < ch[k].nr; j++) {
				ok &= busy_line(strs + lv[j].name, lv[j].line);
				levels++;
			}
			if (!ok && !bad++)
				snprintf(first, sizeof(first),
					 "%s: a chain of %u levels at line %u", strs + c->name,
					 ch[k].nr, ch[k].line);
		}
		free(c);
	}
	printf("  debug info: %d of Busy's nmethods read, %d PcDescs, %d chains with a line, %d "
	       "inlined levels\n",
	       read, pcs, lines, levels);
	CHECK(!l.scopes || (read >= 2 && pcs >= read && lines > 0 && !bad),
	      "%d nmethods read, %d PcDescs, %d lines, %d wrong: %s", read, pcs, lines, bad, first);
out:
	free(nm);
}

/* The perf map's line for the first blob named name, or NULL. */
static const struct map_line *map_find(const struct map_line *m, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(m[i].name, name))
			return &m[i];
	return NULL;
}

/*
 * The template interpreter's blob (a BufferBlob "Interpreter" in the
 * non-nmethods heap), from the perf map's line of it: found from its code's
 * first byte and middle, its code range the perf map's.
 */
static void test_interpreter(void)
{
	struct map_line *m = calloc(MAX_MAP, sizeof(*m));
	const struct map_line *in;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	int n;

	if (!have_jvm() || !m || layout_and_heaps(&l, &h))
		goto out;
	n = perfmap(m);
	in = map_find(m, n, "Interpreter");
	CHECK(in != NULL, "the perf map (%d lines) has no Interpreter", n);
	for (int k = 0; in && k < 2; k++) {
		uint64_t pc = in->begin + (k ? in->size / 2 : 0);
		struct hotspot_blob b;
		int rc = hotspot_blob_at((uint32_t)jvm.pid, &l, &h, pc, &b);

		CHECK(rc == 0 && b.is_interpreter && !b.is_nmethod &&
			  !strcmp(b.name, "Interpreter") && b.code_begin == in->begin &&
			  b.code_end == in->begin + in->size && !b.method,
		      "at %#" PRIx64 ": rc %d, '%s' [%#" PRIx64 ", %#" PRIx64
		      "), perf map [%#" PRIx64 ", +%#" PRIx64 ")",
		      pc, rc, b.name, b.code_begin, b.code_end, in->begin, in->size);
		if (!k)
			printf("  Interpreter: [%#" PRIx64 ", %#" PRIx64 "), frame %d words\n",
			       b.code_begin, b.code_end, b.frame_size);
	}
out:
	free(m);
}

/* A walk's blobs, kept. */
struct blobs {
	struct hotspot_blob *b;
	int n, cap;
	int stop_at; /* the callback ends the walk at this many, 0: never */
};

static int keep_blob(const struct hotspot_blob *b, void *arg)
{
	struct blobs *k = arg;

	if (k->n == k->cap) {
		struct hotspot_blob *more =
		    realloc(k->b, (size_t)(k->cap * 2 + 64) * sizeof(*more));

		if (!more)
			return 1;
		k->b = more;
		k->cap = k->cap * 2 + 64;
	}
	k->b[k->n++] = *b;
	return k->stop_at && k->n >= k->stop_at;
}

/*
 * Addresses that no used block holds: none is found, none crashes: 0, a
 * page, libjvm.so's first byte, each heap's reserved part past its
 * committed one and the end of its committed part (past every block: a
 * small program fills a few KiB of each), and the free block a walk saw,
 * if any (the tail of the interpreter's, given back once it was made).
 */
static void test_garbage(void)
{
	struct hotspot_walk_stats st;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	uint64_t pcs[4 + 2 * HOTSPOT_HEAPS_MAX];
	int n = 0;

	if (!have_jvm() || layout_and_heaps(&l, &h))
		return;
	pcs[n++] = 0;
	pcs[n++] = 4096;
	pcs[n++] = jvm.bias;
	for (uint32_t i = 0; i < h.n; i++) {
		if (h.heap[i].high < h.heap[i].high_boundary)
			pcs[n++] = h.heap[i].high_boundary - 1;
		pcs[n++] = h.heap[i].high - 1;
	}
	CHECK(hotspot_blobs_walk((uint32_t)jvm.pid, &l, &h, NULL, NULL, NULL, &st) == 0,
	      "the walk failed");
	if (st.free_block)
		pcs[n++] = st.free_block + l.heap_block_size + 8;
	printf("  %d addresses in no used block%s\n", n,
	       st.free_block ? ", one in a free block" : " (no free block seen)");
	for (int i = 0; i < n; i++) {
		struct hotspot_blob b;
		int rc = hotspot_blob_at((uint32_t)jvm.pid, &l, &h, pcs[i], &b);

		CHECK(rc < 0 && !b.addr && !b.name[0],
		      "%#" PRIx64 " found in blob %#" PRIx64 " '%s'", pcs[i], b.addr, b.name);
	}
}

/* The blob of k whose code is [begin, end), or NULL. */
static const struct hotspot_blob *blob_by_code(const struct blobs *k, uint64_t begin, uint64_t end)
{
	for (int i = 0; i < k->n; i++)
		if (k->b[i].code_begin == begin && k->b[i].code_end == end)
			return &k->b[i];
	return NULL;
}

static bool map_has(const struct map_line *m, int n, const struct map_line *x)
{
	for (int i = 0; i < n; i++)
		if (m[i].begin == x->begin && m[i].size == x->size && !strcmp(m[i].name, x->name))
			return true;
	return false;
}

/* How many lines of a[0, na) b[0, nb) lacks. */
static int map_missing(const struct map_line *a, int na, const struct map_line *b, int nb)
{
	int missing = 0;

	for (int i = 0; i < na; i++)
		missing += !map_has(b, nb, &a[i]);
	return missing;
}

/* Whether nmethod list l[0, n) has compile id id at blob. */
static bool nm_has(const struct nm *l, int n, int id, uint64_t blob)
{
	for (int i = 0; i < n; i++)
		if (l[i].id == id && l[i].blob == blob)
			return true;
	return false;
}

/* The oracles a walk is judged by: taken just before it and just after. */
struct oracles {
	struct nm *nm[2];
	struct map_line *map[2];
	int n_nm[2], n_map[2];
};

/*
 * The walk's blobs against the oracles.  The JVM compiles and frees while
 * the walk goes, so what the walk must find is what both oracles list (it
 * was there throughout): each perf map line (code range, and name for
 * what is not an nmethod, CodeBlob::_name; an nmethod's line names its
 * method) and each nmethod of both codelists (its blob, code, compile id).
 * What the walk may find besides is what appeared meanwhile: an nmethod
 * either codelist lists, or compiled after the first (an id above its
 * largest) and gone by the second; a blob of another kind neither perf map
 * lists only as many as the two maps differ by.
 */
static void judge_walk(const struct blobs *k, const struct oracles *o)
{
	int missing = 0, misnamed = 0, nm_missing = 0, unlisted = 0, other = 0, interp = 0;
	int max_id = 0, churn;
	char first[512] = "";

	for (int i = 0; i < o->n_map[0]; i++) {
		const struct map_line *x = &o->map[0][i];
		const struct hotspot_blob *b;

		if (!map_has(o->map[1], o->n_map[1], x))
			continue;
		b = blob_by_code(k, x->begin, x->begin + x->size);
		missing += !b;
		if (b && !b->is_nmethod && strncmp(b->name, x->name, sizeof(b->name) - 1)) {
			if (!misnamed++)
				snprintf(first, sizeof(first), "'%s' is '%s' in the perf map",
					 b->name, x->name);
		}
	}
	for (int i = 0; i < o->n_nm[0]; i++) {
		const struct nm *x = &o->nm[0][i];
		const struct hotspot_blob *b = blob_by_code(k, x->begin, x->end);

		max_id = x->id > max_id ? x->id : max_id;
		if (nm_has(o->nm[1], o->n_nm[1], x->id, x->blob))
			nm_missing +=
			    !b || !b->is_nmethod || b->addr != x->blob || b->compile_id != x->id;
	}
	for (int i = 0; i < k->n; i++) {
		const struct hotspot_blob *b = &k->b[i];
		struct map_line x = {b->code_begin, b->code_end - b->code_begin, ""};

		interp += b->is_interpreter;
		snprintf(x.name, sizeof(x.name), "%s", b->name);
		if (b->is_nmethod)
			unlisted += !nm_has(o->nm[0], o->n_nm[0], b->compile_id, b->addr) &&
				    !nm_has(o->nm[1], o->n_nm[1], b->compile_id, b->addr) &&
				    b->compile_id <= max_id;
		else if (!map_has(o->map[0], o->n_map[0], &x) &&
			 !map_has(o->map[1], o->n_map[1], &x))
			other++;
	}
	churn = map_missing(o->map[0], o->n_map[0], o->map[1], o->n_map[1]) +
		map_missing(o->map[1], o->n_map[1], o->map[0], o->n_map[0]);
	printf("  walk: %d blobs; perf maps of %d and %d lines (%d changed), codelists of %d and "
	       "%d\n",
	       k->n, o->n_map[0], o->n_map[1], churn, o->n_nm[0], o->n_nm[1]);
	CHECK(o->n_map[0] > 100 && o->n_nm[0] > 0, "oracles: %d perf map lines, %d nmethods",
	      o->n_map[0], o->n_nm[0]);
	CHECK(!missing, "%d blobs of the perf map not found by the walk", missing);
	CHECK(!misnamed, "%d blobs named otherwise than in the perf map; first: %s", misnamed,
	      first);
	CHECK(!nm_missing, "%d nmethods of jcmd's codelist not found by the walk", nm_missing);
	CHECK(!unlisted, "%d nmethods found that no codelist lists", unlisted);
	CHECK(other <= churn, "%d blobs found that no perf map lists (%d changed)", other, churn);
	CHECK(interp == 1, "%d Interpreter blobs", interp);
}

/*
 * Every blob of every heap, against the perf maps and codelists taken just
 * before and after (judge_walk); then the walk's bounds: a budget of 5
 * blocks cuts it, a callback ends it.
 */
static void test_walk(void)
{
	struct hotspot_walk_budget five = {.blocks = 5};
	struct blobs k = {0}, one = {.stop_at = 1};
	struct hotspot_walk_stats st;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	struct oracles o = {0};
	int rc;

	for (int i = 0; i < 2; i++) {
		o.nm[i] = calloc(MAX_NM, sizeof(*o.nm[i]));
		o.map[i] = calloc(MAX_MAP, sizeof(*o.map[i]));
	}
	if (!have_jvm() || !o.nm[0] || !o.nm[1] || !o.map[0] || !o.map[1])
		goto out;
	o.n_nm[0] = codelist(o.nm[0]);
	o.n_map[0] = perfmap(o.map[0]);
	if (layout_and_heaps(&l, &h))
		goto out;
	rc = hotspot_blobs_walk((uint32_t)jvm.pid, &l, &h, NULL, keep_blob, &k, &st);
	o.n_nm[1] = codelist(o.nm[1]);
	o.n_map[1] = perfmap(o.map[1]);
	printf("  walk: %u blocks (%u free), %u blobs, %u implausible, %u reads, %u torn heaps\n",
	       st.blocks, st.free, st.blobs, st.bad, st.reads, st.torn);
	CHECK(rc == 0 && !st.cut && !st.torn && st.blobs == (uint32_t)k.n &&
		  st.blocks == st.blobs + st.free + st.bad,
	      "walk: rc %d, cut %d, torn %u, %u blobs (%d kept)", rc, st.cut, st.torn, st.blobs,
	      k.n);
	judge_walk(&k, &o);
	rc = hotspot_blobs_walk((uint32_t)jvm.pid, &l, &h, &five, NULL, NULL, &st);
	CHECK(rc == 1 && st.cut && st.blocks == 5, "a 5-block budget: rc %d, cut %d, %u blocks", rc,
	      st.cut, st.blocks);
	rc = hotspot_blobs_walk((uint32_t)jvm.pid, &l, &h, NULL, keep_blob, &one, &st);
	CHECK(rc == 0 && !st.cut && one.n == 1 && st.blobs == 1,
	      "a callback ending the walk: rc %d, %d blobs", rc, one.n);
out:
	for (int i = 0; i < 2; i++) {
		free(o.nm[i]);
		free(o.map[i]);
	}
	free(k.b);
	free(one.b);
}

/* HotSpot's three tables copied from the JVM into this process, their strings too. */
struct forged {
	uint64_t vals[HS_SYMS]; /* the companion symbols' values; the tables: ours */
	uint8_t *table[3];
	uint32_t n[3];
	char **strings;
	size_t n_strings;
	struct hotspot_symbols syms; /* the addresses of vals[]: read with bias 0 */
};

static const struct {
	int table, stride, names[3], n_names;
} tables[3] = {
    {HS_STRUCTS,
     HS_STRUCT_STRIDE,
     {HS_STRUCT_TYPE_NAME, HS_STRUCT_FIELD_NAME, HS_STRUCT_TYPE_STRING},
     3},
    {HS_TYPES, HS_TYPE_STRIDE, {HS_TYPE_NAME}, 1},
    {HS_INTS, HS_INT_STRIDE, {HS_INT_NAME}, 1},
};

/* Entry i of forged table t. */
static uint8_t *forged_at(struct forged *f, int t, uint32_t i)
{
	return f->table[t] + (size_t)i * f->vals[tables[t].stride];
}

/* The member m (an enum hotspot_sym offset) of entry e, as a pointer to its bytes. */
static void *member(struct forged *f, uint8_t *e, int m)
{
	return e + f->vals[m];
}

/* Our copy of the JVM's string at p (a long one cut, an unreadable one "?"). */
static uint64_t forged_string(struct forged *f, struct hotspot_strings *s, uint64_t p)
{
	char buf[HOTSPOT_STRING_MAX];
	char *copy;

	if (hotspot_cstr(s, p, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	copy = strdup(buf);
	f->strings[f->n_strings++] = copy;
	return (uint64_t)copy;
}

/* The JVM's tables copied into f: 0, or -1. */
static int forge(struct forged *f)
{
	struct hotspot_strings *s = malloc(sizeof(*s));
	int rc = 0;

	memset(f, 0, sizeof(*f));
	f->strings = calloc(3 * 3 * HOTSPOT_ENTRIES_MAX, sizeof(*f->strings));
	if (!s || !f->strings) {
		free(s);
		return -1;
	}
	hotspot_strings_init(s, (uint32_t)jvm.pid);
	for (int i = 0; i < HS_SYMS && !rc; i++)
		rc = target_read((uint32_t)jvm.pid, jvm.syms.value[i] + jvm.bias, &f->vals[i], 8);
	for (int t = 0; t < 3 && !rc; t++) {
		uint64_t stride = f->vals[tables[t].stride], base = f->vals[tables[t].table];
		uint32_t i;

		f->table[t] = calloc(HOTSPOT_ENTRIES_MAX + 1, stride);
		rc = f->table[t] ? 0 : -1;
		for (i = 0; i < HOTSPOT_ENTRIES_MAX && !rc; i++) {
			uint8_t *e = forged_at(f, t, i);
			uint64_t p;

			rc = target_read((uint32_t)jvm.pid, base + i * stride, e, stride);
			memcpy(&p, member(f, e, tables[t].names[0]), 8);
			if (rc || !p)
				break;
			for (int k = 0; k < tables[t].n_names; k++) {
				memcpy(&p, member(f, e, tables[t].names[k]), 8);
				p = p ? forged_string(f, s, p) : 0;
				memcpy(member(f, e, tables[t].names[k]), &p, 8);
			}
		}
		if (!rc)
			memset(forged_at(f, t, i), 0, stride);
		f->n[t] = i;
		f->vals[tables[t].table] = (uint64_t)f->table[t];
	}
	for (int i = 0; i < HS_SYMS; i++)
		f->syms.value[i] = (uint64_t)&f->vals[i];
	free(s);
	return rc;
}

static void forged_free(struct forged *f)
{
	for (size_t i = 0; i < f->n_strings; i++)
		free(f->strings[i]);
	free(f->strings);
	for (int t = 0; t < 3; t++)
		free(f->table[t]);
}

/* The name member m of entry e, "" when NULL. */
static const char *name_of(struct forged *f, uint8_t *e, int m)
{
	uint64_t p;

	memcpy(&p, member(f, e, m), 8);
	return p ? (const char *)p : "";
}

/* The struct entry type::field of f, or NULL. */
static uint8_t *forged_struct(struct forged *f, const char *type, const char *field)
{
	for (uint32_t i = 0; i < f->n[0]; i++) {
		uint8_t *e = forged_at(f, 0, i);

		if (!strcmp(name_of(f, e, HS_STRUCT_TYPE_NAME), type) &&
		    !strcmp(name_of(f, e, HS_STRUCT_FIELD_NAME), field))
			return e;
	}
	return NULL;
}

/* The layout read from the forged tables in this process: its rc. */
static int forged_read(struct forged *f, struct hotspot_layout *l)
{
	return hotspot_layout_read((uint32_t)getpid(), &f->syms, 0, l);
}

/* Points the name member m of e at s (kept by the caller); the old value into *old. */
static void set_name(struct forged *f, uint8_t *e, int m, const char *s, uint64_t *old)
{
	uint64_t p = (uint64_t)s;

	memcpy(old, member(f, e, m), 8);
	memcpy(member(f, e, m), &p, 8);
}

/*
 * Forged tables in this process, copied from the JVM's: read whole they
 * give the JVM's own layout; then one thing at a time is made wrong: a
 * required entry missing, a width no integer has, a string without its
 * end, a table without its end, an entry's member past its stride, a
 * static at address 0: refused.  An entry under its other JDKs' spelling
 * (GenericGrowableArray, JDK 11) is taken as the same.
 */
static void test_forged(void)
{
	static char no_end[4096];
	struct hotspot_layout real, l;
	struct forged f;
	uint8_t *e, *big = NULL;
	uint64_t old, save;
	double t0;

	if (!have_jvm() || layout(&real))
		return;
	CHECK(forge(&f) == 0, "the JVM's tables could not be copied");
	printf("  forged: %u struct entries, %u types, %u int constants\n", f.n[0], f.n[1], f.n[2]);
	/* statics are the JVM's addresses: its version's copied here, where they are read */
	for (int k = 0; k < 2; k++) {
		static int32_t version[2];
		const char *field = k ? "_vm_minor_version" : "_vm_major_version";
		uint64_t here = (uint64_t)&version[k];

		e = forged_struct(&f, "Abstract_VM_Version", field);
		memcpy(&old, e ? member(&f, e, HS_STRUCT_ADDRESS) : (void *)&here, 8);
		CHECK(e && !target_read((uint32_t)jvm.pid, old, &version[k], 4),
		      "Abstract_VM_Version::%s unread", field);
		if (e)
			memcpy(member(&f, e, HS_STRUCT_ADDRESS), &here, 8);
	}
	CHECK(real.vm_version >> 8 >= 11, "the JVM's version read as %#x", real.vm_version);
	CHECK(forged_read(&f, &l) == 0 && !memcmp(&l, &real, sizeof(l)),
	      "the copied tables give another layout");
	/* a required entry gone */
	e = forged_struct(&f, "CodeBlob", "_frame_size");
	CHECK(e != NULL, "no CodeBlob::_frame_size");
	if (e) {
		set_name(&f, e, HS_STRUCT_FIELD_NAME, "_frame_size_gone", &old);
		CHECK(forged_read(&f, &l) < 0, "read without CodeBlob::_frame_size");
		memcpy(member(&f, e, HS_STRUCT_FIELD_NAME), &old, 8);
	}
	/* JDK 11's spelling */
	e = forged_struct(&f, "GrowableArrayBase", "_len");
	if (e) {
		set_name(&f, e, HS_STRUCT_TYPE_NAME, "GenericGrowableArray", &old);
		CHECK(forged_read(&f, &l) == 0 && (l.array_len.flags & HOTSPOT_F_ALT) &&
			  l.array_len.off == real.array_len.off,
		      "GenericGrowableArray::_len not taken for GrowableArrayBase::_len");
		memcpy(member(&f, e, HS_STRUCT_TYPE_NAME), &old, 8);
	}
	/*
	 * JDK 21 on's spellings of the line table's flag (ConstMethod::_flags._flags,
	 * ConstMethodFlags::_misc_has_linenumber_table), and PcDesc gone (no nmethod
	 * debug info): an interpreted frame's line needs neither
	 */
	{
		uint8_t *cf = forged_struct(&f, "ConstMethod", "_flags"), *hl = NULL;
		uint8_t *pc = forged_struct(&f, "PcDesc", "_pc_offset");
		uint64_t o1, o2, o3;

		for (uint32_t i = 0; i < f.n[2] && !hl; i++)
			if (!strcmp(name_of(&f, forged_at(&f, 2, i), HS_INT_NAME),
				    "ConstMethod::_has_linenumber_table"))
				hl = forged_at(&f, 2, i);
		/* a JDK 21 or later (CFIPROF_TEST_JAVA_HOME) has its own spelling, read above */
		CHECK(real.lines && (!hl || (cf && pc)),
		      "JDK 17's line table flag and PcDesc: %p %p %p", (void *)cf, (void *)hl,
		      (void *)pc);
		if (cf && hl && pc) {
			set_name(&f, cf, HS_STRUCT_FIELD_NAME, "_flags._flags", &o1);
			set_name(&f, hl, HS_INT_NAME,
				 "ConstMethodFlags::_misc_has_linenumber_table", &o2);
			set_name(&f, pc, HS_STRUCT_FIELD_NAME, "_pc_offset_gone", &o3);
			CHECK(forged_read(&f, &l) == 0 && l.lines && !l.scopes &&
				  (l.const_flags.flags & HOTSPOT_F_ALT) &&
				  l.const_flags.off == real.const_flags.off &&
				  l.has_line_table == real.has_line_table,
			      "JDK 21's line table flag: lines %d, scopes %d, flag %u (want %u)",
			      l.lines, l.scopes, l.has_line_table, real.has_line_table);
			memcpy(member(&f, cf, HS_STRUCT_FIELD_NAME), &o1, 8);
			memcpy(member(&f, hl, HS_INT_NAME), &o2, 8);
			memcpy(member(&f, pc, HS_STRUCT_FIELD_NAME), &o3, 8);
		}
	}
	/* a static at 0 */
	e = forged_struct(&f, "CodeCache", "_heaps");
	CHECK(e != NULL, "no CodeCache::_heaps");
	if (e) {
		memcpy(&old, member(&f, e, HS_STRUCT_ADDRESS), 8);
		memset(member(&f, e, HS_STRUCT_ADDRESS), 0, 8);
		CHECK(forged_read(&f, &l) < 0, "CodeCache::_heaps at 0 taken");
		memcpy(member(&f, e, HS_STRUCT_ADDRESS), &old, 8);
	}
	/* int 3 bytes wide */
	for (uint32_t i = 0; i < f.n[1]; i++) {
		e = forged_at(&f, 1, i);
		if (strcmp(name_of(&f, e, HS_TYPE_NAME), "int"))
			continue;
		memcpy(&old, member(&f, e, HS_TYPE_SIZE), 8);
		save = 3;
		memcpy(member(&f, e, HS_TYPE_SIZE), &save, 8);
		CHECK(forged_read(&f, &l) < 0, "a 3-byte int taken");
		memcpy(member(&f, e, HS_TYPE_SIZE), &old, 8);
	}
	/* a type name without its end */
	memset(no_end, 'A', sizeof(no_end));
	set_name(&f, forged_at(&f, 0, 0), HS_STRUCT_TYPE_NAME, no_end, &old);
	CHECK(forged_read(&f, &l) < 0, "an endless string taken");
	memcpy(member(&f, forged_at(&f, 0, 0), HS_STRUCT_TYPE_NAME), &old, 8);
	/* a stride past any entry's, a member past the stride */
	save = f.vals[HS_STRUCT_STRIDE];
	f.vals[HS_STRUCT_STRIDE] = 4096;
	CHECK(forged_read(&f, &l) < 0, "a 4096-byte stride taken");
	f.vals[HS_STRUCT_STRIDE] = save;
	old = f.vals[HS_STRUCT_OFFSET];
	f.vals[HS_STRUCT_OFFSET] = save;
	CHECK(forged_read(&f, &l) < 0, "an offset member past the stride taken");
	f.vals[HS_STRUCT_OFFSET] = old;
	/* a table without its end: HOTSPOT_ENTRIES_MAX + 1 entries of one type */
	big = calloc(HOTSPOT_ENTRIES_MAX + 2, save);
	if (big) {
		for (uint32_t i = 0; i <= HOTSPOT_ENTRIES_MAX; i++)
			memcpy(big + i * save, forged_at(&f, 0, 0), save);
		old = f.vals[HS_STRUCTS];
		f.vals[HS_STRUCTS] = (uint64_t)big;
		t0 = mono_sec();
		CHECK(forged_read(&f, &l) < 0, "a table of %d entries taken",
		      HOTSPOT_ENTRIES_MAX + 1);
		printf("  %d entries refused in %.0f ms\n", HOTSPOT_ENTRIES_MAX + 1,
		       (mono_sec() - t0) * 1e3);
		f.vals[HS_STRUCTS] = old;
	}
	CHECK(forged_read(&f, &l) == 0 && !memcmp(&l, &real, sizeof(l)), "not restored");
	free(big);
	forged_free(&f);
}

/* Busy.fib's nmethod as jcmd lists it (the tier-4 one if any), into *out: 0, or -1. */
static int fib_nm(struct nm *out)
{
	struct nm *nm = calloc(MAX_NM, sizeof(*nm));
	int n = nm ? codelist(nm) : -1, found = -1;

	for (int i = 0; i < n; i++)
		if (!strcmp(nm[i].name, "Busy.fib") && (found < 0 || nm[i].level == 4))
			found = i;
	if (found >= 0)
		*out = nm[found];
	free(nm);
	return found >= 0 ? 0 : -1;
}

/*
 * The reader refuses what is not a JVM's: the real JVM with libjvm.so's
 * bias wrong, a process that is no JVM (sleep) read with the JVM's layout
 * and heaps, and the JVM read with offsets made wrong (each a way a layout
 * of another build would be): a heap array of a 64-bit length, code
 * begin read from a blob's size and header size, heaps with nothing
 * committed, a Symbol's length read from its first bytes.
 */
static void test_hostile(void)
{
	char *argv[] = {"sleep", "60", NULL};
	struct hotspot_walk_stats st;
	struct hotspot_method_name mn;
	struct hotspot_layout l, bad;
	struct hotspot_heaps h, hb;
	struct hotspot_blob b;
	struct nm fib = {0};
	pid_t other;
	uint64_t pc;

	if (!have_jvm() || layout_and_heaps(&l, &h))
		return;
	CHECK(fib_nm(&fib) == 0 && !hotspot_blob_at((uint32_t)jvm.pid, &l, &h, fib.begin, &b),
	      "Busy.fib not found");
	pc = fib.begin;
	CHECK(hotspot_layout_read((uint32_t)jvm.pid, &jvm.syms, jvm.bias + (1ull << 40), &bad) < 0,
	      "tables read 1 TiB off");
	other = spawn(argv, NULL, NULL);
	CHECK(other > 0, "cannot start sleep");
	if (other > 0) {
		CHECK(hotspot_layout_read((uint32_t)other, &jvm.syms, jvm.bias, &bad) < 0,
		      "sleep's memory read as a JVM's tables");
		CHECK(hotspot_heaps_read((uint32_t)other, &l, &hb) < 0, "sleep's code heaps read");
		CHECK(hotspot_blob_at((uint32_t)other, &l, &h, pc, &b) < 0 && !b.addr,
		      "a blob found in sleep");
		CHECK(hotspot_method_name((uint32_t)other, &l, b.method ? b.method : pc, &mn) < 0,
		      "a method named in sleep");
		CHECK(hotspot_blobs_walk((uint32_t)other, &l, &h, NULL, NULL, NULL, &st) < 0 &&
			  !st.blobs,
		      "blobs walked in sleep");
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
	}
	CHECK(hotspot_method_name((uint32_t)jvm.pid, &l, 0, &mn) < 0 &&
		  hotspot_method_name((uint32_t)jvm.pid, &l, 16, &mn) < 0 && !mn.name[0],
	      "Method* 0 or 16 named");
	bad = l;
	bad.code_heaps = 0;
	CHECK(hotspot_heaps_read((uint32_t)jvm.pid, &bad, &hb) < 0, "heaps from address 0");
	bad = l;
	bad.array_len.size = 8; /* _len and the int after it: over 2^32 */
	CHECK(hotspot_heaps_read((uint32_t)jvm.pid, &bad, &hb) < 0, "a 64-bit heap count taken");
	bad = l;
	bad.blob_code_begin = bad.blob_size;
	bad.blob_code_begin.size = 8;
	bad.code_relative = false;
	CHECK(hotspot_blob_at((uint32_t)jvm.pid, &bad, &h, pc, &b) < 0,
	      "code begin from the blob's sizes taken");
	CHECK(hotspot_blobs_walk((uint32_t)jvm.pid, &bad, &h, NULL, NULL, NULL, &st) == 0 &&
		  !st.blobs && st.bad > 100,
	      "walked with code begin from the sizes: %u blobs, %u refused", st.blobs, st.bad);
	bad = l;
	bad.vs_high = bad.vs_low;
	CHECK(hotspot_heaps_read((uint32_t)jvm.pid, &bad, &hb) == 0 &&
		  hotspot_blob_at((uint32_t)jvm.pid, &bad, &hb, pc, &b) < 0 &&
		  hotspot_blobs_walk((uint32_t)jvm.pid, &bad, &hb, NULL, NULL, NULL, &st) == 0 &&
		  !st.blocks,
	      "heaps with nothing committed: a blob found");
	bad = l;
	bad.symbol_length.off = bad.symbol_body.off; /* "Bu": 30018 bytes */
	CHECK(!hotspot_blob_at((uint32_t)jvm.pid, &l, &h, pc, &b) &&
		  !hotspot_method_name((uint32_t)jvm.pid, &bad, b.method, &mn) && mn.cut &&
		  strlen(mn.name) < sizeof(mn.name) && strcmp(mn.name, "Busy.fib"),
	      "a Symbol's length from its body: '%s', cut %d", mn.name, mn.cut);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	test_jvm_home(&jvm);
	if (!harness.list)
		start_jvm();
	RUN_TEST(test_layout);
	RUN_TEST(test_heaps);
	RUN_TEST(test_nmethods);
	RUN_TEST(test_debug_info);
	RUN_TEST(test_interpreter);
	RUN_TEST(test_garbage);
	RUN_TEST(test_walk);
	RUN_TEST(test_forged);
	RUN_TEST(test_hostile);
	stop_jvm();
	return HARNESS_DONE();
}
