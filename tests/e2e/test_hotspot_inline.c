// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Inline frames and source lines of compiled Java frames (issue 33), read
 * from the JVM's own debug info: Inl.java's hot loop calls leaf, a small
 * static method C2 inlines, for a fixed CPU time; recorded with cfiprof
 * record -f pprof, 999 Hz, the JVM run with no flags but the oracle's.
 *
 * The oracles are the JVM's and javac's own word, independent of cfiprof's
 * decoders: the run's -XX:+PrintCompilation -XX:+PrintInlining (diagnostic
 * output only: it changes no compile) lists what each compile inlined, and
 * javap -c -l the LineNumberTable of each method (JDK 25's javap prints
 * none with -l alone).  In the pprof, a compiled
 * frame with inlined methods is one Location whose Lines are the inlined
 * methods innermost first and the frame's method last (as DWARF's inline
 * levels are): every Inl method inlined into another there must be one the
 * JVM says it inlined into it, and every line of an Inl method one javap
 * lists for that method.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/pprof_read.h"
#include "tests/lib/javac.h"

/* CPU seconds of Inl's loop: ~2,000 samples of its thread at 999 Hz, however busy the machine */
#define SECONDS	  "2"
#define LINES_MAX 64

/*
 * leaf: a loop over a long whose count C2 cannot know (reps, a field that
 * is not final: a constant count of 20 would let it drop the loop's
 * safepoint poll, the PcDesc that gives leaf's scope to the loop's
 * instructions) and a volatile store; hot calls it 1,000 times between
 * two reads of its thread's CPU clock.  hot runs once: C2 compiles it
 * on-stack (OSR), leaf inlined, ~40 bytes of bytecode called hot
 * (FreqInlineSize: 325).
 */
static const char inl_java[] =
    "import java.lang.management.ManagementFactory;\n"
    "import java.lang.management.ThreadMXBean;\n"
    "public class Inl {\n"
    "    static volatile int sink;\n"
    "    static long reps = 20;\n"
    "    static int leaf(int n, long reps) {\n"
    "        int s = n;\n"
    "        for (long r = 0; r < reps; r++) {\n"
    "            for (int i = 0; i < 50; i++) s = s * 31 + i;\n"
    "            sink = s;\n"
    "        }\n"
    "        return s;\n"
    "    }\n"
    "    static long hot(long cpuNanos) {\n"
    "        ThreadMXBean t = ManagementFactory.getThreadMXBean();\n"
    "        long end = t.getCurrentThreadCpuTime() + cpuNanos, acc = 0;\n"
    "        while (t.getCurrentThreadCpuTime() < end)\n"
    "            for (int k = 0; k < 1000; k++) acc += leaf(k, reps);\n"
    "        return acc;\n"
    "    }\n"
    "    public static void main(String[] a) {\n"
    "        System.out.println(\"acc \" + hot(Long.parseLong(a[0]) * 1000000000L));\n"
    "    }\n"
    "}\n";

/* One method's lines as javap -l lists them (its LineNumberTable). */
struct method_lines {
	char name[64];
	uint32_t line[LINES_MAX];
	int n;
};

/* javap -l's LineNumberTables of Inl's methods into m[] ("line L: BCI" under each method). */
static int javap_lines(const char *out, struct method_lines *m, int max)
{
	int n = 0;
	char *save = NULL, *text = out ? strdup(out) : NULL;

	for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		unsigned int line, bci;
		char *paren = strchr(l, '(');

		/* "  static int leaf(int, long);": a method, its name before '(' */
		if (paren && strstr(l, ");") && n < max) {
			char *start = paren;

			while (start > l && start[-1] != ' ')
				start--;
			snprintf(m[n].name, sizeof(m[n].name), "Inl.%.*s", (int)(paren - start),
				 start);
			m[n++].n = 0;
		} else if (n && sscanf(l, " line %u: %u", &line, &bci) == 2 &&
			   m[n - 1].n < LINES_MAX) {
			m[n - 1].line[m[n - 1].n++] = line;
		}
	}
	free(text);
	return n;
}

/* Whether javap lists line for method name; -1 when it lists no such method. */
static int javap_has(const struct method_lines *m, int n, const char *name, uint32_t line)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(m[i].name, name))
			continue;
		for (int j = 0; j < m[i].n; j++)
			if (m[i].line[j] == line)
				return 1;
		return 0;
	}
	return -1;
}

/*
 * Whether PrintInlining says a compile of Inl::hot inlined Inl::leaf: a
 * line "@ BCI   Inl::leaf (N bytes)   inline (hot)" in the tree under a
 * PrintCompilation line of Inl::hot ("ID ... Inl::hot (...)", or "Inl::hot
 * @ BCI" for an on-stack one).
 */
static bool jvm_inlined(const char *out)
{
	char *save = NULL, *text = out ? strdup(out) : NULL;
	bool in_hot = false, inlined = false;

	for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l && !inlined;
	     l = strtok_r(NULL, "\n", &save)) {
		const char *t = l + strspn(l, " \t");

		if (*t >= '0' && *t <= '9')
			in_hot = strstr(t, "Inl::hot ") != NULL;
		else if (*t == '@' && in_hot && strstr(t, "Inl::leaf (") &&
			 strstr(t, "inline (hot)"))
			inlined = true;
	}
	free(text);
	return inlined;
}

struct inl_counts {
	uint64_t hot;	    /* samples with a frame of Inl.hot (its own, compiled or not) */
	uint64_t inlined;   /* ... with Inl.leaf inlined into it, an inline frame above it */
	uint64_t pairs_bad; /* samples with an Inl method inlined into another the JVM did not */
	uint64_t lines;	    /* samples' lines of Inl.hot and Inl.leaf, all levels */
	uint64_t lines_ok;  /* ... that javap lists for the method */
	uint64_t lines_unknown; /* ... 0: no line known */
	char first_bad[512];
};

/* One location's lines of sample s (count n) judged against javap and the JVM's inlining. */
static void judge_location(const struct decoded *d, const struct dec_loc *l, uint64_t n,
			   const struct method_lines *m, int nm, bool jvm_says, bool *hot,
			   bool *inlined, bool *bad, struct inl_counts *c)
{
	int nr = l->nr_lines < DEC_LOC_LINES ? l->nr_lines : DEC_LOC_LINES;

	for (int k = 0; k < nr; k++) {
		const struct dec_func *f = func_by_id(d, l->line_func[k]);
		const struct dec_func *up = k + 1 < nr ? func_by_id(d, l->line_func[k + 1]) : NULL;
		int has;

		if (!f || strncmp(f->name, "Inl.", 4))
			continue;
		*hot |= k == nr - 1 && !strcmp(f->name, "Inl.hot");
		if (up && !strncmp(up->name, "Inl.", 4)) {
			bool ok = jvm_says && !strcmp(f->name, "Inl.leaf") &&
				  !strcmp(up->name, "Inl.hot");

			*inlined |= ok && k + 1 == nr - 1;
			if (!ok && !*bad && !c->first_bad[0])
				snprintf(c->first_bad, sizeof(c->first_bad),
					 "%s inlined into %s, not as the JVM said", f->name,
					 up->name);
			*bad |= !ok;
		}
		/* main runs once, interpreted: a frame with no line (its bcp is not read) */
		if (!strcmp(f->name, "Inl.main"))
			continue;
		c->lines += n;
		if (!l->line_no[k]) {
			c->lines_unknown += n;
			continue;
		}
		has = javap_has(m, nm, f->name, (uint32_t)l->line_no[k]);
		c->lines_ok += has == 1 ? n : 0;
		if (has != 1 && !c->first_bad[0])
			snprintf(c->first_bad, sizeof(c->first_bad),
				 "%s at line %" PRId64 ", which javap does not list for it",
				 f->name, l->line_no[k]);
	}
}

static void judge_pprof(const char *path, const struct method_lines *m, int nm, bool jvm_says,
			struct inl_counts *c)
{
	struct decoded d = {0};
	size_t len = 0;
	uint8_t *buf = gunzip_file(path, &len);

	memset(c, 0, sizeof(*c));
	CHECK(buf && decode(buf, len, &d) == 0, "%s: not a pprof", path);
	for (int i = 0; buf && i < d.nr_samples; i++) {
		const struct dec_sample *s = &d.samples[i];
		uint64_t n = s->nr_vals ? s->vals[0] : 0;
		bool hot = false, inlined = false, bad = false;

		for (int j = 0; j < s->nr_locs; j++) {
			const struct dec_loc *l = loc_by_id(&d, s->locs[j]);

			if (l)
				judge_location(&d, l, n, m, nm, jvm_says, &hot, &inlined, &bad, c);
		}
		c->hot += hot ? n : 0;
		c->inlined += hot && inlined ? n : 0;
		c->pairs_bad += bad ? n : 0;
	}
	decoded_free(&d);
	free(buf);
}

static void test_inlined(void)
{
	static struct method_lines m[16];
	char src[PATH_MAX], classes[PATH_MAX], jvm_out[PATH_MAX], pprof[PATH_MAX], sh[3 * PATH_MAX],
	    javap[2 * PATH_MAX], *log = NULL, *printed = NULL, *lines = NULL;
	/* the JVM's stdout (PrintInlining's) into a file; exec: the recorded process is java */
	char *cmd[] = {"sh", "-c", sh, NULL};
	char rec[PATH_MAX], rep[PATH_MAX], rep_err[PATH_MAX + 8];
	char *opts[] = {"-f", "pprof", "--save", rec, NULL};
	char *report[] = {(char *)cfiprof_bin, "report", rec, "-f", "pprof", NULL};
	struct inl_counts c, r;
	bool jvm_says;
	int nm;

	tpath(classes, sizeof(classes), "classes");
	tpath(src, sizeof(src), "Inl.java");
	tpath(jvm_out, sizeof(jvm_out), "jvm.txt");
	tpath(rec, sizeof(rec), "inl.rec");
	tpath(rep, sizeof(rep), "report.pb.gz");
	snprintf(rep_err, sizeof(rep_err), "%s.err", rep);
	CHECK(javac_text(src, inl_java, classes) == 0,
	      "javac %s (make test-deps installs default-jdk-headless)", src);
	snprintf(sh, sizeof(sh),
		 "exec java -XX:+UnlockDiagnosticVMOptions -XX:+PrintCompilation "
		 "-XX:+PrintInlining -cp %s Inl %s > %s",
		 classes, SECONDS, jvm_out);
	if (harness_failed || e2e_record("inl", "999", opts, cmd, &log))
		goto out;
	snprintf(javap, sizeof(javap), "javap -c -l -cp %s Inl > %s/javap.txt", classes, tmpdir);
	CHECK(sh_fmt("%s", javap) == 0, "%s", javap);
	printed = slurp(jvm_out);
	lines = slurp(tpath(javap, sizeof(javap), "javap.txt"));
	jvm_says = jvm_inlined(printed);
	nm = javap_lines(lines, m, 16);
	CHECK(jvm_says && javap_has(m, nm, "Inl.leaf", 7) == 1,
	      "the oracles: PrintInlining says Inl::hot inlined Inl::leaf: %d; javap lists %d "
	      "methods",
	      jvm_says, nm);
	judge_pprof(tpath(pprof, sizeof(pprof), "inl"), m, nm, jvm_says, &c);
	printf("  inl: %" PRIu64 " samples in Inl.hot, %" PRIu64 " (%.1f%%) with Inl.leaf inlined "
	       "above it, %" PRIu64 " with another inlining; %" PRIu64
	       " lines of Inl methods, %" PRIu64 " as javap lists, %" PRIu64 " unknown\n",
	       c.hot, c.inlined, c.hot ? 100.0 * (double)c.inlined / (double)c.hot : 0.0,
	       c.pairs_bad, c.lines, c.lines_ok, c.lines_unknown);
	/*
	 * Never wrong: no inlining the JVM did not do, no line javap does not list.
	 */
	CHECK(c.pairs_bad == 0 && c.lines_ok + c.lines_unknown == c.lines,
	      "%" PRIu64 " samples with inlining the JVM did not do, %" PRIu64 " of %" PRIu64
	      " lines not javap's; first: %s",
	      c.pairs_bad, c.lines - c.lines_ok - c.lines_unknown, c.lines, c.first_bad);
	/*
	 * Seen: hot runs all of the loop's 2 s of CPU time (~2,000 samples at
	 * 999 Hz; >= 1,000 leaves the JVM's start and compiles room), and
	 * leaf's loop is nearly all of hot's work: 1,000 calls of 1,000
	 * multiply-adds each per read of the clock.  A sample there names
	 * leaf unless its pc lies past leaf's last PcDesc in the loop (its
	 * safepoint poll): a few instructions of the loop's dozens, and the
	 * samples before C2's code is in (interpreted, or C1's: leaf not
	 * inlined).  Half of hot's samples is far below what that leaves, and
	 * with 1,000 samples at least a chance result far from it.  Lines known
	 * for >= 90%: every PcDesc of these methods has a bci.
	 */
	CHECK(c.hot >= 1000 && c.inlined * 2 >= c.hot && c.lines_ok * 10 >= c.lines * 9,
	      "%" PRIu64 " samples in Inl.hot (want >= 1000), %" PRIu64
	      " with Inl.leaf inlined (want >= half), %" PRIu64 " of %" PRIu64
	      " lines known (want >= 90%%)",
	      c.hot, c.inlined, c.lines_ok, c.lines);
	CHECK(strstr(log, "cfiprof: hotspot: debug info of ") != NULL, "no debug info summary: %s",
	      log);
	/* the recording keeps them: report, the JVM long gone, shows the same */
	CHECK(run(report, rep, rep_err, 60) == 0, "cfiprof report %s -f pprof", rec);
	judge_pprof(rep, m, nm, jvm_says, &r);
	CHECK(r.hot == c.hot && r.inlined == c.inlined && r.pairs_bad == c.pairs_bad &&
		  r.lines == c.lines && r.lines_ok == c.lines_ok,
	      "report: %" PRIu64 " in Inl.hot, %" PRIu64 " with leaf inlined, %" PRIu64
	      " lines as javap's; record: %" PRIu64 ", %" PRIu64 ", %" PRIu64,
	      r.hot, r.inlined, r.lines_ok, c.hot, c.inlined, c.lines_ok);
out:
	free(log);
	free(printed);
	free(lines);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("hotspot-inline"))
		return HARNESS_DONE();
	RUN_TEST(test_inlined);
	e2e_finish();
	return HARNESS_DONE();
}
