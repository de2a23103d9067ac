// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A compiled method's frames between interpreted ones (issue 33): Mix.a,
 * compiled, calls Mix.b, which the JVM is told never to compile
 * (CompileCommand=exclude), which calls Mix.a again; the deepest a spins.
 * Every compiled a above the first interpreted b returns to the same pc (its
 * call of b), and the kernel's walk (bpf/hotspot.bpf.h) keeps the last
 * compiled pc it looked up for a recursion: an interpreted frame in between
 * dropped that cache, and each of those a frames went unnamed
 * ("[anon]+0x7f..." where Mix.a belongs).
 *
 * The oracles are the program's own shape (b calls a, nothing else: between
 * two frames of b there is one, a's) and the JVM's word that a was compiled
 * and b never (-XX:+PrintCompilation).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/javac.h"

/* CPU seconds of Mix's loop: ~3,000 samples of its thread at 999 Hz, however busy the machine */
#define SECONDS "3"

static const char mix_java[] =
    "import java.lang.management.ManagementFactory;\n"
    "import java.lang.management.ThreadMXBean;\n"
    "public class Mix {\n"
    "    static volatile long sink;\n"
    "    static long a(int n) {\n"
    "        if (n == 0) return spin();\n"
    "        return b(n) + 1;\n"
    "    }\n"
    "    static long b(int n) {\n"
    "        return a(n - 1) + 1;\n"
    "    }\n"
    "    static long spin() {\n"
    "        long s = 0;\n"
    "        for (int i = 0; i < 20000; i++) s += (s >>> 3) ^ i;\n"
    "        return s;\n"
    "    }\n"
    "    public static void main(String[] x) {\n"
    "        ThreadMXBean t = ManagementFactory.getThreadMXBean();\n"
    "        long end = t.getCurrentThreadCpuTime() + Long.parseLong(x[0]) * 1000000000L;\n"
    "        while (t.getCurrentThreadCpuTime() < end) sink += a(6);\n"
    "    }\n"
    "}\n";

/* Whether PrintCompilation's output has a compile of method ("Mix::a (": not Mix::abc). */
static bool jvm_compiled(const char *out, const char *method)
{
	char pat[64];

	snprintf(pat, sizeof(pat), " %s (", method);
	return out && strstr(out, pat) != NULL;
}

/*
 * In one folded stack (root first), the frames between two frames of Mix.b:
 * how many are named Mix.a and how many otherwise; first_other keeps the
 * first other name.
 */
static void judge_line(const char *line, uint64_t *as_a, uint64_t *other, char *first_other,
		       size_t size)
{
	const char *p = strstr(line, ";Mix.b");

	while (p) {
		const char *mid = strchr(p + 1, ';'), *next;

		if (!mid)
			return;
		mid++;
		next = strstr(mid, ";Mix.b");
		if (!next || next != mid + strcspn(mid, ";"))
			return; /* not b;X;b: the last b, or more than one frame between */
		/* "Mix.a (Mix.java:7)": the name is up to its " (" */
		if (!strncmp(mid, "Mix.a", 5) && (mid[5] == ' ' || mid[5] == ';')) {
			(*as_a)++;
		} else {
			(*other)++;
			if (!first_other[0])
				snprintf(first_other, size, "%.*s", (int)strcspn(mid, "; \n"), mid);
		}
		p = next;
	}
}

static void test_compiled_between_interpreted(void)
{
	char classes[PATH_MAX], src[PATH_MAX], jvm_out[PATH_MAX], folded[PATH_MAX], sh[3 * PATH_MAX];
	char *log = NULL, *printed = NULL, line[65536], first_other[128] = "";
	char *cmd[] = {"sh", "-c", sh, NULL};
	/* samples whose frames between b's are all a's, none, or some of each */
	uint64_t all_a = 0, none_a = 0, mixed = 0;
	FILE *f;

	tpath(classes, sizeof(classes), "classes");
	tpath(src, sizeof(src), "Mix.java");
	tpath(jvm_out, sizeof(jvm_out), "jvm.txt");
	CHECK(javac_text(src, mix_java, classes) == 0,
	      "javac %s (make test-deps installs default-jdk-headless)", src);
	/* exec: the recorded process is java; its stdout (PrintCompilation's) into a file */
	snprintf(sh, sizeof(sh),
		 "exec java -XX:+PrintCompilation -XX:CompileCommand=quiet "
		 "-XX:CompileCommand=exclude,Mix.b -cp %s Mix %s > %s",
		 classes, SECONDS, jvm_out);
	if (harness_failed || e2e_record("mix", "999", NULL, cmd, &log))
		goto out;
	printed = slurp(jvm_out);
	CHECK(jvm_compiled(printed, "Mix::a") && !jvm_compiled(printed, "Mix::b"),
	      "the JVM's word (%s): Mix::a compiled %d, Mix::b compiled %d", jvm_out,
	      jvm_compiled(printed, "Mix::a"), jvm_compiled(printed, "Mix::b"));
	f = fopen(tpath(folded, sizeof(folded), "mix"), "re");
	CHECK(f != NULL, "no %s", folded);
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' ');
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		uint64_t as_a = 0, other = 0;

		if (strncmp(line, "java;", 5) || !strstr(line, ";Mix.b"))
			continue;
		judge_line(line, &as_a, &other, first_other, sizeof(first_other));
		if (as_a && other)
			mixed += n;
		else if (as_a)
			all_a += n;
		else if (other)
			none_a += n;
	}
	if (f)
		fclose(f);
	printf("  mix: samples with frames between two of Mix.b: %" PRIu64 " all named Mix.a, %" PRIu64
	       " none, %" PRIu64 " some of each (first other name: %s)\n",
	       all_a, none_a, mixed, first_other[0] ? first_other : "none");
	/*
	 * Every compiled a above the first b returns to the same pc: in one
	 * sample they are one nmethod, named alike, all Mix.a or none (the
	 * compile counted stale when its name was read: record -v's "frames
	 * stale", 2-3% of Java frames here).  Some of
	 * each only where a sample holds a's frames of two kinds, interpreted
	 * and compiled, while a is being compiled: a few samples of the loop's
	 * ~3,000 (3 CPU-seconds at 999 Hz), <= 1%.  Before the fix, 2,776 of
	 * 2,905 samples had their first a named and the others not.  >= 1,000
	 * all named: the loop's time is nearly all spin's under a(6).
	 */
	CHECK(all_a >= 1000 && mixed * 100 <= all_a + none_a + mixed,
	      "%" PRIu64 " samples with every frame between two of Mix.b named Mix.a (want >= "
	      "1,000), %" PRIu64 " with some named otherwise (want <= 1%%; first: %s), %" PRIu64
	      " with none",
	      all_a, mixed, first_other, none_a);
out:
	free(log);
	free(printed);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("hotspot-mixed"))
		return HARNESS_DONE();
	RUN_TEST(test_compiled_between_interpreted);
	e2e_finish();
	return HARNESS_DONE();
}
