// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Java classes unloaded mid-run (issue 33: "a class unloaded and its code
 * freed mid-run is named correctly or counted stale, never misnamed").
 *
 * Gens.java loads, one after another, GENS classes Gen0 ... GenN, each by a
 * class loader of its own, and runs each one's recursive fib in a thread of
 * its own named gen-K (HotSpot gives a Java thread's name to its native
 * thread: the sample's comm) for a fixed CPU time: interpreted first, then
 * compiled.  Then it drops the loader and calls System.gc(), which unloads
 * the class: its Method*s go back to the metaspace and its nmethods are
 * freed, and the next generation's methods and code are made in the memory
 * they left.  A reader that named an address once and kept the name, or read
 * an nmethod freed and compiled again, names gen-K's frames as an older
 * generation's methods.
 *
 * The oracle is the program's structure and the JVM's own log: a thread
 * gen-K runs only GenK's methods, so every Java frame of its samples named
 * Gen<digits>.* must be GenK.*; -Xlog:class+unload (a log, not a change of
 * how code runs) says which classes were unloaded, before the next
 * generation started.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/javac.h"

#include "tests/lib/e2e.h"

#define GENS 12
/* CPU milliseconds of each generation's loop: ~250 samples each at 999 Hz */
#define CPU_MS "250"

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	bool ok = f && fputs(text, f) >= 0;

	if (f)
		ok = !fclose(f) && ok;
	return ok;
}

static bool write_sources(const char *dir)
{
	char path[PATH_MAX], text[2048];
	bool ok;

	snprintf(path, sizeof(path), "%.4000s/Gens.java", dir);
	ok = write_file(
	    path,
	    "import java.io.File;\n"
	    "import java.net.URL;\n"
	    "import java.net.URLClassLoader;\n"
	    "public class Gens {\n"
	    "    public static void main(String[] a) throws Exception {\n"
	    "        int gens = Integer.parseInt(a[0]);\n"
	    "        for (int k = 0; k < gens; k++) {\n"
	    "            URL[] at = {new File(a[1], \"g\" + k).toURI().toURL()};\n"
	    "            URLClassLoader l = new URLClassLoader(at, Gens.class.getClassLoader());\n"
	    "            Runnable r = (Runnable) l.loadClass(\"Gen\" + k)\n"
	    "                .getDeclaredConstructor().newInstance();\n"
	    "            Thread t = new Thread(r, \"gen-\" + k);\n"
	    "            t.start();\n"
	    "            t.join();\n"
	    "            r = null;\n"
	    "            l.close();\n"
	    "            l = null;\n"
	    "            System.gc();\n"
	    "            System.out.println(\"unloaded \" + k);\n"
	    "        }\n"
	    "    }\n"
	    "}\n");
	for (int k = 0; ok && k < GENS; k++) {
		snprintf(path, sizeof(path), "%.4000s/src%d", dir, k);
		ok = mkdir(path, 0755) == 0;
		snprintf(path, sizeof(path), "%.4000s/src%d/Gen%d.java", dir, k, k);
		snprintf(
		    text, sizeof(text),
		    "public class Gen%d implements Runnable {\n"
		    "    static volatile long sink;\n"
		    "    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
		    "    public void run() {\n"
		    "        java.lang.management.ThreadMXBean t =\n"
		    "            java.lang.management.ManagementFactory.getThreadMXBean();\n"
		    "        long end = t.getCurrentThreadCpuTime() + %sL * 1000000L;\n"
		    "        while (t.getCurrentThreadCpuTime() < end) sink += fib(18 + %d %% 3);\n"
		    "    }\n"
		    "}\n",
		    k, CPU_MS, k);
		ok = ok && write_file(path, text);
	}
	return ok;
}

struct gen_counts {
	uint64_t samples;  /* of gen-K threads */
	uint64_t with_gen; /* ... with a Gen frame named */
	uint64_t right;	   /* Gen frames named GenK.* in gen-K's samples */
	uint64_t misnamed; /* ... named another generation's */
	uint64_t per_gen[GENS];
	char first_bad[512];
};

/* The folded profile's gen-K threads: each Gen<digits>. frame against K. */
static void count_gens(const char *folded, struct gen_counts *c)
{
	char line[65536];
	FILE *f = fopen(folded, "re");

	memset(c, 0, sizeof(*c));
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' ');
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;
		bool any = false;
		int k;

		if (sscanf(line, "gen-%d;", &k) != 1 || k < 0 || k >= GENS)
			continue;
		c->samples += n;
		for (const char *p = line; (p = strstr(p, ";Gen")) != NULL; p += 4) {
			char *end;
			long j = strtol(p + 4, &end, 10);

			if (end == p + 4 || *end != '.')
				continue;
			any = true;
			if (j == k) {
				c->right += n;
			} else {
				c->misnamed += n;
				if (!c->first_bad[0])
					snprintf(c->first_bad, sizeof(c->first_bad), "%.500s",
						 line);
			}
		}
		c->with_gen += any ? n : 0;
		c->per_gen[k] += any ? n : 0;
	}
	if (f)
		fclose(f);
}

static void test_unload(void)
{
	char dir[PATH_MAX], path[PATH_MAX], unload_log[PATH_MAX], xlog[PATH_MAX + 64];
	char folded[PATH_MAX], *log = NULL, *text = NULL, gens[16];
	char *cmd[] = {"java", xlog, "-cp", dir, "Gens", gens, dir, NULL};
	struct gen_counts c;
	int unloaded = 0, gens_seen = 0;

	tpath(dir, sizeof(dir), "java");
	tpath(unload_log, sizeof(unload_log), "unload.log");
	snprintf(xlog, sizeof(xlog), "-Xlog:class+unload=info:file=%s", unload_log);
	snprintf(gens, sizeof(gens), "%d", GENS);
	CHECK(mkdir(dir, 0755) == 0 && write_sources(dir), "cannot write the sources in %s", dir);
	/* one javac (a JVM's start each), then each generation's class in a directory of its own */
	CHECK(sh_fmt("cd %s && javac " JAVAC_FLAGS " -d all Gens.java src*/Gen*.java && mv all/Gens.class .",
		     dir) == 0,
	      "javac Gens.java, Gen*.java");
	for (int k = 0; !harness_failed && k < GENS; k++)
		CHECK(sh_fmt("cd %s && mkdir g%d && mv all/Gen%d.class g%d/", dir, k, k, k) == 0,
		      "Gen%d.class into g%d", k, k);
	if (harness_failed || e2e_record("gens", "999", NULL, cmd, &log))
		goto out;

	/* the JVM's word: the generations' classes unloaded as the run went */
	text = slurp(unload_log);
	for (int k = 0; text && k < GENS; k++) {
		snprintf(path, sizeof(path), "unloading class Gen%d ", k);
		unloaded += strstr(text, path) != NULL;
	}
	count_gens(tpath(folded, sizeof(folded), "gens"), &c);
	for (int k = 0; k < GENS; k++)
		gens_seen += c.per_gen[k] > 0;
	printf("  gens: %d of %d generations unloaded (-Xlog:class+unload); %" PRIu64
	       " samples of gen-K threads, %" PRIu64 " with a Gen frame named, in %d generations;"
	       " Gen frames: %" PRIu64 " their thread's generation, %" PRIu64 " another's\n",
	       unloaded, GENS, c.samples, c.with_gen, gens_seen, c.right, c.misnamed);
	/*
	 * Each generation is unloaded by the System.gc() after its thread ends,
	 * so all but the last are (-Xlog's own count; the last may be too).
	 */
	CHECK(unloaded >= GENS - 1, "%d of %d generations unloaded: %s", unloaded, GENS,
	      text ? text : "(no log)");
	/*
	 * Never misnamed, whatever the memory's reuse: no exception.  And not
	 * vacuous: the generations' ~250 samples each name their frames (a
	 * stale frame is left unnamed, counted; 1 in 2 named at least), so the
	 * generations that reused their predecessors' memory are judged.  Beside
	 * make test-stress one generation's fib, compiled where an unloaded
	 * one's code had been, waited its whole short life for rows (its
	 * samples no-rule and tables-pending, unnamed): half the generations.
	 */
	CHECK(c.misnamed == 0, "%" PRIu64 " Gen frames named another generation's method: %s",
	      c.misnamed, c.first_bad);
	CHECK(gens_seen * 2 >= GENS && c.with_gen * 2 >= c.samples,
	      "%" PRIu64 " of %" PRIu64 " samples of gen-K threads name a Gen frame, in %d of %d "
	      "generations",
	      c.with_gen, c.samples, gens_seen, GENS);
out:
	free(text);
	free(log);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("hotspot-unload"))
		return HARNESS_DONE();
	RUN_TEST(test_unload);
	e2e_finish();
	return HARNESS_DONE();
}
