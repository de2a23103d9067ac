// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stacks through code the CFI does not describe on its own (issue 14), end to
 * end: `cfiprof record -F 499 --save R -o F.folded -- CMD` for
 *   node  Node.js running JS-heavy code with --perf-basic-prof: V8's JIT code
 *         (anonymous memory) and its embedded builtins (node's text, no FDE)
 *         are walked by frame pointers, the C++ around them by CFI;
 *   java  Java with -XX:+PreserveFramePointer and a perf map at exit;
 *   lazy  progs/lazybind: 512 lazy PLT bindings per round, so samples inside
 *         ld.so's _dl_runtime_resolve_xsavec (CFA in rbx) and below it;
 *   drap  progs/drap_loop: a function with a DRAP prologue called in a loop,
 *         so samples where the CFA is in r10 (the sample's own registers).
 * Each must have >= 99% of its samples complete (lazy: see below), the JIT
 * frames named (node: by the V8 runtime, over the perf map's "JS:" names;
 * java: by the HotSpot runtime, over the perf map's "int Busy.fib"), complete
 * stacks rooted at the expected chain, and every non-leaf native pc of a
 * complete stack just after a call instruction (tests/lib/callsites.h).
 * Frame-pointer frames per sample are printed per runtime.
 * A missing runtime or program is a failure, never a skip (make test-deps
 * installs nodejs and the JDK).
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build),
 * E2E_SECONDS (default 3).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/cfi_table.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/folded_stats.h"
#include "tests/lib/harness.h"

#define PATHBUF (PATH_MAX + 256)
#include "tests/lib/callsites.h"
#include "tests/lib/javac.h"

#define N(a)	  ((int)(sizeof(a) / sizeof((a)[0])))
#define LIBC_ROOT "_start", "__libc_start_main", "__libc_start_call_main", "main"

/* seconds of each program's CPU time (node's, the Java thread's, drap_loop's "3c"): as many
 * samples however busy the machine */
static const char *seconds = "3";

static const char busy_js[] =
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "function cpuMs() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }\n"
    "function work(ms) {\n"
    "  const end = cpuMs() + ms;\n"
    "  let acc = 0;\n"
    "  while (cpuMs() < end) {\n"
    "    acc += fib(20);\n"
    "    const arr = [];\n"
    "    for (let i = 0; i < 200; i++) arr.push({ k: i, v: String(i * 7) });\n"
    "    arr.sort((a, b) => b.k - a.k);\n"
    "    acc += arr.map((o) => o.v.length).reduce((a, b) => a + b, 0);\n"
    "  }\n"
    "  return acc;\n"
    "}\n"
    "console.log(work(Number(process.argv[2]) * 1000));\n";

static const char busy_java[] =
    "import java.util.*;\n"
    "public class Busy {\n"
    "    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "    static long cpuMs() {\n"
    "        return java.lang.management.ManagementFactory.getThreadMXBean()\n"
    "            .getCurrentThreadCpuTime() / 1000000;\n"
    "    }\n"
    "    static long work(long ms) {\n"
    "        long end = cpuMs() + ms, acc = 0;\n"
    "        while (cpuMs() < end) {\n"
    "            acc += fib(20);\n"
    "            List<String> l = new ArrayList<>();\n"
    "            for (int i = 0; i < 200; i++) l.add(Integer.toString(i * 7));\n"
    "            Collections.sort(l);\n"
    "            for (String s : l) acc += s.length();\n"
    "        }\n"
    "        return acc;\n"
    "    }\n"
    "    public static void main(String[] a) {\n"
    "        System.out.println(work(Long.parseLong(a[0]) * 1000));\n"
    "    }\n"
    "}\n";

struct run {
	char folded[PATHBUF], rec[PATHBUF];
	double fp_frames, user_frames; /* the summary's, over all the recording's samples */
	uint64_t written;
	struct stats st;
	struct callsite_stats cs;
	uint64_t complete_stacks;
	uint64_t no_cfi;  /* no-rule samples in code without CFI (crt): not walkable */
	long v8_samples;  /* samples the v8 summary counts ("cfiprof: v8: 1 process, N samples") */
	uint64_t no_ring; /* kept tables-pending with no ring-buffer room for their copy */
};

/* The summary's user frames and frame-pointer frames (record's stderr). */
static void read_summary(struct run *r, const char *text)
{
	const char *p;

	p = text ? strstr(text, " frame-pointer frames") : NULL;
	if (p) {
		while (p > text && p[-1] != ' ')
			p--;
		r->fp_frames = strtod(p, NULL);
	}
	p = text ? strstr(text, " user frames per sample") : NULL;
	if (p) {
		while (p > text && p[-1] != ' ')
			p--;
		r->user_frames = strtod(p, NULL);
	}
	p = text ? strstr(text, "cfiprof: v8: ") : NULL;
	p = p ? strchr(p, ',') : NULL;
	if (!p || sscanf(p, ", %ld samples:", &r->v8_samples) != 1)
		r->v8_samples = -1;
}

/* perf-PID.map files the runtimes left in /tmp: one per pid of the recording */
static void remove_perf_maps(const char *rec)
{
	FILE *f = fopen(rec, "re");
	char line[512], path[64];
	unsigned int pid, last = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "map %u ", &pid) != 1 || pid == last)
			continue;
		last = pid;
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
		unlink(path);
	}
	fclose(f);
}

static bool record(const char *name, char *const cmd[], struct run *r)
{
	char folded[64], rec[64], *opts[] = {"--save", r->rec, NULL}, *log = NULL;
	double t0 = mono_sec();
	int rc;

	snprintf(folded, sizeof(folded), "%s.folded", name);
	tpath(r->folded, sizeof(r->folded), folded);
	snprintf(rec, sizeof(rec), "%s.rec", name);
	tpath(r->rec, sizeof(r->rec), rec);
	rc = e2e_record(folded, "499", opts, cmd, &log);
	read_summary(r, log);
	/* the first of the summary's: the kept tables-pending line's */
	r->no_ring = number_before(log, "no ring-buffer room");
	free(log);
	if (rc)
		return false;
	CHECK(check_callsites(r->rec, &r->cs, &r->complete_stacks) == 0, "%s: cannot read %s", name,
	      r->rec);
	remove_perf_maps(r->rec);
	printf("  %s: recorded in %.1f s\n", name, mono_sec() - t0);
	return true;
}

/*
 * Samples of comm holding a frame that starts with needle: how many, how many
 * complete, and of those how many are rooted exactly at exp[] (nexp frames,
 * root first; nexp 0: not checked).
 */
struct needle_stats {
	uint64_t with, complete, prefix_ok;
	char first_bad[1024];
};

static void scan_needle(const char *path, const char *comm, const char *needle,
			const char *const *exp, int nexp, struct needle_stats *ns)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *frames[MAX_FRAMES];
	size_t cap = 0;
	ssize_t len;

	memset(ns, 0, sizeof(*ns));
	if (!f)
		return;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *sp = strrchr(line, ' '), *tok, *save = NULL;
		bool incomplete = false, found = false, ok;
		uint64_t count;
		int n = 0, i;

		if (!sp)
			continue;
		*sp = 0;
		count = strtoull(sp + 1, NULL, 10);
		tok = strtok_r(line, ";", &save);
		if (!tok || strcmp(tok, comm))
			continue;
		while ((tok = strtok_r(NULL, ";", &save))) {
			size_t tl = strlen(tok);

			if (!strncmp(tok, "[incomplete: ", 13)) {
				incomplete = true;
				continue;
			}
			if (tl >= 4 && !strcmp(tok + tl - 4, "_[k]"))
				continue;
			found |= !strncmp(tok, needle, strlen(needle));
			if (n < MAX_FRAMES)
				frames[n++] = tok;
		}
		if (!found)
			continue;
		ns->with += count;
		if (incomplete)
			continue;
		ns->complete += count;
		ok = n >= nexp;
		for (i = 0; ok && i < nexp; i++)
			ok = frame_is(frames[i], exp[i]);
		if (ok)
			ns->prefix_ok += count;
		else if (!ns->first_bad[0])
			join_frames(ns->first_bad, sizeof(ns->first_bad), frames, n);
	}
	free(line);
	fclose(f);
}

/* Complete samples of comm whose stack, root first, starts with prefix. */
/*
 * Whether frames (a folded line past its comm) are prefix's first frame
 * alone, the sample's only user frame (its kernel frames after it): a sample
 * at the entry itself, in its first page fault.
 */
static bool alone_root_frame(const char *frames, const char *prefix)
{
	size_t root = strcspn(prefix, ";"), k;
	const char *next = frames + root;

	if (strncmp(frames, prefix, root) || (*next != ';' && *next != ' '))
		return false;
	if (*next == ' ')
		return true;
	k = strcspn(next + 1, "; ");
	return k >= 4 && !strncmp(next + 1 + k - 4, "_[k]", 4);
}

static uint64_t count_roots(const char *path, const char *comm, const char *prefix)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *p;
	size_t cap = 0, n = strlen(comm);
	uint64_t count = 0;

	while (f && getline(&line, &cap, f) > 0) {
		if (strncmp(line, comm, n) || line[n] != ';' || strstr(line, ";[incomplete: "))
			continue;
		p = line + n + 1;
		if (!strncmp(p, prefix, strlen(prefix)) && (p = strrchr(p, ' ')))
			count += strtoull(p + 1, NULL, 10);
		else if (alone_root_frame(line + n + 1, prefix) && (p = strrchr(line, ' ')))
			count += strtoull(p + 1, NULL, 10);
	}
	free(line);
	if (f)
		fclose(f);
	return count;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/*
 * r's samples kept tables-pending with no ring-buffer room for their copies
 * (the summary's count, at most its tables-pending samples): judge says why
 * they are excused.
 */
static uint64_t no_ring_excused(const struct run *r)
{
	uint64_t pending = stats_reason(&r->st, "tables-pending");

	return r->no_ring < pending ? r->no_ring : pending;
}

/*
 * What every runtime must show: completeness, complete stacks rooted at an
 * entry point (or starting with other_root: frames, root first), call sites.
 */
static void judge(const char *name, const char *comm, struct run *r, double min_pct,
		  const char *other_root)
{
	char reasons[512] = "";
	uint64_t walkable, no_ring, incomplete_max;
	int i;

	CHECK(folded_stats_read(r->folded, comm, "-", NULL, 0, &r->st) == 0, "%s: no %s", name,
	      r->folded);
	if (other_root)
		r->st.complete_rootless -= count_roots(r->folded, comm, other_root);
	/* samples no profiler can walk (the process's memory gone, inside execve) do not count */
	walkable = r->st.samples;
	for (i = 0; i < r->st.nr_reasons; i++) {
		snprintf(reasons + strlen(reasons), sizeof(reasons) - strlen(reasons), " %s %lu",
			 r->st.reason_names[i], (unsigned long)r->st.reasons[i]);
		if (!strcmp(r->st.reason_names[i], "exiting") ||
		    !strcmp(r->st.reason_names[i], "in-execve"))
			walkable -= r->st.reasons[i];
	}
	walkable -= r->no_cfi;
	/*
	 * A consumer starved by the machine's load (make test-stress's hogs: 55 of
	 * 486 samples once, a JVM's stack copies of ~62 KiB each) leaves no ring
	 * room for the copies of samples waiting for their tables: kept
	 * tables-pending and counted by that cause, none on an idle machine.
	 * They leave the denominator, at most a quarter of the samples: copies
	 * that never fit would be a regression, not a slow machine.
	 */
	no_ring = no_ring_excused(r);
	walkable -= no_ring;
	printf("  %s: %lu samples of %s, %.2f%% of the walkable complete (incomplete:%s; "
	       "%lu of them in code without CFI, not walkable), %.1f user frames and "
	       "%.1f frame-pointer frames per sample; call sites: %lu checked, %lu failed, %lu in "
	       "JIT code, %lu a runtime's entry by design\n",
	       name, (unsigned long)r->st.samples, comm, pct(r->st.complete, walkable),
	       reasons[0] ? reasons : " none", (unsigned long)r->no_cfi, r->user_frames,
	       r->st.samples ? r->fp_frames / (double)(r->st.samples + r->st.other_comm) : 0,
	       (unsigned long)r->cs.checked, (unsigned long)r->cs.failed, (unsigned long)r->cs.jit,
	       (unsigned long)r->cs.entry_returns);
	if (no_ring)
		printf(
		    "  %s: %lu tables-pending samples kept with no ring-buffer room, not walkable "
		    "here\n",
		    name, (unsigned long)no_ring);
	CHECK(r->st.samples >= ENOUGH_TO_JUDGE, "%s: only %lu samples of %s", name,
	      (unsigned long)r->st.samples, comm);
	/*
	 * Samples labelled exiting or in-execve leave the denominator: they must be
	 * the few of those moments (milliseconds of a run of seconds: 0-1 here),
	 * not walks a regression mislabels to pass.  A twentieth is the bound.
	 */
	CHECK((r->st.samples - walkable - r->no_cfi - no_ring) * 20 <= r->st.samples,
	      "%s: %lu of %lu samples left out as exiting or in-execve", name,
	      (unsigned long)(r->st.samples - walkable - r->no_cfi - no_ring),
	      (unsigned long)r->st.samples);
	CHECK(no_ring * 4 <= r->st.samples,
	      "%s: %lu of %lu samples kept tables-pending with no ring-buffer room", name,
	      (unsigned long)no_ring, (unsigned long)r->st.samples);
	/*
	 * min_pct complete, within the noise of the sample count (java beside
	 * make test-stress's hogs: 194 walkable samples, 1.9 incomplete expected
	 * at 99%, 3 allowed; a regression to 5% would show ~10 there, ~200 in an
	 * idle run's 4,000)
	 */
	incomplete_max = misses_allowed(walkable, (uint64_t)((100.0 - min_pct) * 10000 + 0.5));
	CHECK(walkable && r->st.complete <= walkable && walkable - r->st.complete <= incomplete_max,
	      "%s: %.2f%% of %s's walkable samples complete, want >= %.1f%%: %lu incomplete of "
	      "%lu, at most %lu (incomplete:%s)",
	      name, pct(r->st.complete, walkable), comm, min_pct,
	      (unsigned long)(walkable - r->st.complete), (unsigned long)walkable,
	      (unsigned long)incomplete_max, reasons);
	CHECK(r->st.complete_rootless == 0, "%s: %lu complete stacks not rooted at an entry: %s",
	      name, (unsigned long)r->st.complete_rootless, r->st.first_rootless);
	CHECK(r->cs.failed == 0 && r->cs.checked > 0,
	      "%s: %lu of %lu return addresses after no call; first: %s", name,
	      (unsigned long)r->cs.failed, (unsigned long)r->cs.checked, r->cs.first_fail);
}

static void test_node(void)
{
	char js[PATHBUF];
	char *cmd[] = {"node", "--perf-basic-prof", js, (char *)seconds, NULL};
	static struct run r;
	struct needle_stats js_frames, map_frames;
	char needle[PATHBUF + 32];
	uint64_t in_fault;

	bool ok = tool_exists("node");

	CHECK(ok, "node is missing (make test-deps installs nodejs)");
	tpath(js, sizeof(js), "busy.js");
	ok = ok && write_text(js, busy_js);
	CHECK(ok, "cannot write %s", js);
	/* V8 under --perf-basic-prof also writes isolate-*-v8.log into its working directory */
	ok = ok && chdir(tmpdir) == 0;
	CHECK(ok, "cannot enter %s", tmpdir);
	/*
	 * V8's deoptimizer continues an interpreted frame at these builtins' entries,
	 * pushed as its return address: no call before them, by design.
	 */
	r.cs.entries[0] = nm_symbol("node", "Builtins_InterpreterEnterAtBytecode");
	r.cs.entries[1] = nm_symbol("node", "Builtins_InterpreterEnterAtNextBytecode");
	r.cs.nr_entries = 2;
	CHECK(r.cs.entries[0] && r.cs.entries[1],
	      "node: no Builtins_InterpreterEnterAt(Next)Bytecode in its symbols (nm)");
	if (!ok || !record("node", cmd, &r))
		return;
	/*
	 * node's _init (OPENSSL_cpuid_setup under it) is crt code no FDE covers:
	 * not walkable by CFI, as lazy's (beside the stress, 2 of 464 samples,
	 * in its callees' page faults)
	 */
	r.no_cfi = count_crt_stops(r.folded, "node", true, &in_fault);
	judge("node", "node", &r, 99.0, NULL);
	/*
	 * The JS frames: JIT code reached through V8's builtins, named by the
	 * V8 runtime (docs/runtimes.md), whose names win over the perf map's.
	 */
	snprintf(needle, sizeof(needle), "fib (%s:1)", js);
	scan_needle(r.folded, "node", needle, NULL, 0, &js_frames);
	scan_needle(r.folded, "node", "JS:*fib", NULL, 0, &map_frames);
	printf("  node: %lu samples in JS fib, %lu complete; %lu named by the perf map\n",
	       (unsigned long)js_frames.with, (unsigned long)js_frames.complete,
	       (unsigned long)map_frames.with);
	/*
	 * A sample taken before node's load found V8 (the v8 summary does not
	 * count it) has no JavaScript walk: its JIT code is named by the perf
	 * map.  How many depends on when the load thread gets a CPU (1 of 253
	 * beside make test-stress and a JVM benchmark): those are excused.
	 */
	CHECK(js_frames.with * 2 >= r.st.samples && r.v8_samples >= 0 &&
		  map_frames.with + (uint64_t)r.v8_samples <= r.st.samples,
	      "node: %lu of %lu samples have a named JS frame (%s), %lu the perf map's JS:*fib "
	      "(%ld samples the v8 summary counts)",
	      (unsigned long)js_frames.with, (unsigned long)r.st.samples, needle,
	      (unsigned long)map_frames.with, r.v8_samples);
	CHECK(r.fp_frames > 0, "node: no frame-pointer frames in the summary");
}

static void test_java(void)
{
	char src[PATHBUF];
	char *javac[] = {JAVAC_ARGV, "-d", tmpdir, src, NULL};
	char *cmd[] = {"java",
		       "-XX:+PreserveFramePointer",
		       "-XX:+UnlockDiagnosticVMOptions",
		       "-XX:+DumpPerfMapAtExit",
		       "-cp",
		       tmpdir,
		       "Busy",
		       (char *)seconds,
		       NULL};
	static struct run r;
	struct needle_stats fib, work;
	char launcher[PATH_MAX] = "", root[PATH_MAX + 64];
	uint64_t entry = 0, no_ring;
	FILE *which;

	bool ok = tool_exists("java") && tool_exists("javac");

	CHECK(ok, "java / javac are missing (make test-deps installs default-jdk-headless)");
	tpath(src, sizeof(src), "Busy.java");
	ok = ok && write_text(src, busy_java) && run(javac, NULL, "-", 60) == 0;
	CHECK(ok, "cannot write or compile %s", src);
	/*
	 * The launcher is stripped: its _start is named by its FDE's start,
	 * "java+0xOFF", which must be the ELF entry its header gives (not any
	 * offset in it: a walk gone astray in the launcher would pass), then
	 * libc's __libc_start_main (or nothing: a sample in the entry's own
	 * first page fault, once in a clean clone beside make test-stress).  The thread running
	 * Busy is rooted at libc's clone3, an entry for judge as for every program.
	 */
	which = popen("readlink -f \"$(command -v java)\"", "r");
	if (which && fgets(launcher, sizeof(launcher), which))
		launcher[strcspn(launcher, "\n")] = 0;
	if (which)
		pclose(which);
	entry = launcher[0] ? elf_entry(launcher) : 0;
	CHECK(entry, "java's launcher (%s): no ELF entry point", launcher);
	if (!ok || !entry || !record("java", cmd, &r))
		return;
	snprintf(root, sizeof(root), "%s+0x%" PRIx64 ";__libc_start_main;",
		 strrchr(launcher, '/') + 1, entry);
	/* the JVM's other threads (compilers, GC) have comms of their own */
	judge("java", "java", &r, 99.0, root);
	/*
	 * Both names come from the HotSpot runtime (the JVM's own memory), not
	 * the perf map this JVM also writes at exit ("long Busy.work", its
	 * interpreted frames "Interpreter"): the runtime's names win.  How much
	 * of the loop's time C2 leaves in fib's own
	 * compiled frame rather than inlined into work's depends on when it
	 * compiles them (47-55% of the samples in the CI runs and here), so the
	 * share is asked of work, which every sample of the loop holds, and fib
	 * is asked to be there at all.
	 */
	scan_needle(r.folded, "java", "Busy.work", NULL, 0, &work);
	scan_needle(r.folded, "java", "Busy.fib", NULL, 0, &fib);
	/* the samples kept with no stack for want of ring room (judge's excuse) hold no frame */
	no_ring = no_ring_excused(&r);
	printf("  java: %lu samples in Busy.work, %lu complete; %lu in Busy.fib, %lu complete\n",
	       (unsigned long)work.with, (unsigned long)work.complete, (unsigned long)fib.with,
	       (unsigned long)fib.complete);
	CHECK(work.with * 3 >= (r.st.samples - no_ring) * 2,
	      "java: %lu of %lu samples have a named Busy.work frame, want 2/3 (%lu excused)",
	      (unsigned long)work.with, (unsigned long)r.st.samples, (unsigned long)no_ring);
	CHECK(fib.with * 10 >= r.st.samples - no_ring,
	      "java: %lu of %lu samples have a named Busy.fib frame, want 10%% (%lu excused)",
	      (unsigned long)fib.with, (unsigned long)r.st.samples, (unsigned long)no_ring);
}

static void test_lazy_binding(void)
{
	static const char *const exp[] = {LIBC_ROOT, "lz_round", "lz_all",
					  "_dl_runtime_resolve_xsavec"};
	/* main's own first calls through the executable's PLT (strrchr, snprintf) bind too */
	static const char *const exp_main[] = {LIBC_ROOT, "_dl_runtime_resolve_xsavec"};
	char prog[PATHBUF];
	/*
	 * CPU seconds, not wall ones: beside other suites the program ran a third
	 * of a 3 s run (513 samples at 499 Hz, 49 in lazy binding, one short of
	 * the count asked below); 2.5 s of CPU are ~1,250 samples however busy
	 * the machine, some 120 in lazy binding at the smallest share seen (9.5%)
	 */
	char *cmd[] = {prog, "2.5c", NULL};
	static struct run r;
	struct needle_stats res, own;
	uint64_t in_fault;

	snprintf(prog, sizeof(prog), "%s/lazybind", progs_dir);
	CHECK(access(prog, X_OK) == 0, "%s is missing (make %s)", prog, prog);
	/* every call through the PLT binds on first use only without it */
	unsetenv("LD_BIND_NOW");
	if (access(prog, X_OK) || !record("lazy", cmd, &r))
		return;
	/*
	 * ld.so runs both libraries' _init (crti.o) on every dlopen, their
	 * __do_global_dtors_aux on every dlclose: code without CFI, 1.5-5% of
	 * the samples.  Most were at _init's first instruction, in the page
	 * fault of the freshly mapped text's first fetch (its share follows
	 * what a fault costs: more under Firecracker, whose faults flush the
	 * TLB through the hypervisor); _init and _fini now have rows
	 * (tables/linker_stubs.c), crtstuff's functions still none.  Any other no-rule stop is a
	 * walk the tables should have carried (a stale rule or mapping of the previous round's
	 * library): the rest must be as complete as any runtime's.
	 */
	r.no_cfi = count_crt_no_rule(r.folded, "lazybind", &in_fault);
	printf("  lazy: %lu samples stopped at no-rule in crt code without CFI (%lu in a page "
	       "fault)\n",
	       (unsigned long)r.no_cfi, (unsigned long)in_fault);
	judge("lazy", "lazybind", &r, 99.0, NULL);
	for (int i = 0; i < r.st.nr_reasons; i++)
		CHECK(strcmp(r.st.reason_names[i], "no-rule") || r.st.reasons[i] == r.no_cfi,
		      "lazy: %lu samples stopped at no-rule, %lu of them in crt code without CFI",
		      (unsigned long)r.st.reasons[i], (unsigned long)r.no_cfi);
	/*
	 * liblazy.so is mapped afresh every round, so its keys are rewritten
	 * under running walks: a walk that met them half-written waits for
	 * them (deferred) until a load maps its pc, it does not end at
	 * no-mapping.  A sample of the last rounds may still wait at the exit
	 * (1 run of 11 here under a load average of 13-35, and 2 samples once
	 * beside make test-stress's hogs): the program keeps the library mapped
	 * at its exit, so the kernel's list of its mappings then finishes them.
	 * One may still end there: taken in a round that mapped the library at
	 * another address than the last (no read of /proc can finish it, the
	 * kernel would have to send the pc's VMA).
	 */
	for (int i = 0; i < r.st.nr_reasons; i++)
		CHECK(strcmp(r.st.reason_names[i], "no-mapping") != 0 || r.st.reasons[i] <= 1,
		      "lazy: %lu samples stopped at no-mapping", (unsigned long)r.st.reasons[i]);
	scan_needle(r.folded, "lazybind", "_dl_runtime_resolve", exp, N(exp), &res);
	scan_needle(r.folded, "lazybind", "_dl_runtime_resolve", exp_main, N(exp_main), &own);
	printf("  lazy: %lu samples inside lazy binding, %lu complete, %lu rooted "
	       "main;lz_round;lz_all;_dl_runtime_resolve_xsavec, %lu "
	       "main;_dl_runtime_resolve_xsavec\n",
	       (unsigned long)res.with, (unsigned long)res.complete, (unsigned long)res.prefix_ok,
	       (unsigned long)own.prefix_ok);
	/*
	 * Lazy binding is a large share of the program's samples on a quiet
	 * machine (its rounds bind afresh each time); beside other suites its
	 * dlopen's mmaps and page faults, kernel work that slows most when
	 * CPUs are contended, take much of the rest.  The evidence is the
	 * count: enough to judge, and a twentieth at least (a program that no
	 * longer binds lazily has none).
	 */
	CHECK(res.with * 20 >= r.st.samples && res.with >= ENOUGH_TO_JUDGE,
	      "lazy: only %lu of %lu samples inside _dl_runtime_resolve (want a twentieth, and %d)",
	      (unsigned long)res.with, (unsigned long)r.st.samples, ENOUGH_TO_JUDGE);
	CHECK(pct(res.complete, res.with) >= 99.0,
	      "lazy: %lu of %lu samples inside lazy binding complete", (unsigned long)res.complete,
	      (unsigned long)res.with);
	/* main's own bindings happen once per process: a sample there is rare, not wrong */
	CHECK(res.prefix_ok + own.prefix_ok == res.complete,
	      "lazy: %lu complete stacks with another chain: %s",
	      (unsigned long)(res.complete - res.prefix_ok - own.prefix_ok), res.first_bad);
}

/*
 * Samples whose leaf pc is at a row with the CFA in a register other than
 * rsp/rbp (the DRAP prologue and epilogue), in prog's mapping: all, complete.
 */
static void count_cfa_reg_leaves(const char *rec, const char *prog, uint64_t *all,
				 uint64_t *complete)
{
	struct cfi_table *t = NULL;
	struct cfi_diag diag = {0};
	FILE *f = fopen(rec, "re");
	char *line = NULL;
	size_t cap = 0;
	uint64_t start = 0, end = 0, offset = 0;
	ssize_t len;

	*all = *complete = 0;
	CHECK(f && cfi_table_build_file(prog, NULL, &t, &diag) == CFI_OK, "cannot read %s / %s",
	      rec, prog);
	while (f && t && (len = getline(&line, &cap, f)) > 0) {
		unsigned long count, pc, s, e, o;
		unsigned int pid, tid, reason, flags;
		char path[PATH_MAX];
		const struct cfi_rule *rule;
		char *u;

		if (sscanf(line, "map %u %lx %lx %lx %*x %*u %*s %4095s", &pid, &s, &e, &o, path) ==
			5 &&
		    !strcmp(base_name(path), base_name(prog))) {
			start = s, end = e, offset = o;
			continue;
		}
		u = strstr(line, " u ");
		if (sscanf(line, "stack %lu %u %u %u %u", &count, &pid, &tid, &reason, &flags) !=
			5 ||
		    !u || sscanf(u + 3, "%lx", &pc) != 1 || pc < start || pc >= end)
			continue;
		rule = cfi_table_lookup(t, pc - start + offset);
		if (rule->cfa_kind != CFI_CFA_REG)
			continue;
		*all += count;
		if (reason == STOP_COMPLETE)
			*complete += count;
	}
	free(line);
	if (f)
		fclose(f);
	cfi_table_free(t);
}

static void test_drap_prologue(void)
{
	static const char *const exp[] = {LIBC_ROOT, "drap_loop", "drap_small"};
	char prog[PATHBUF], cpu_secs[32];
	char *cmd[] = {prog, cpu_secs, NULL};
	static struct run r;
	struct needle_stats ds;
	uint64_t in_reg = 0, in_reg_complete = 0;

	snprintf(prog, sizeof(prog), "%s/drap_loop", progs_dir);
	snprintf(cpu_secs, sizeof(cpu_secs), "%sc", seconds);
	CHECK(access(prog, X_OK) == 0, "%s is missing (make %s)", prog, prog);
	if (access(prog, X_OK) || !record("drap", cmd, &r))
		return;
	judge("drap", "drap_loop", &r, 99.5, NULL);
	scan_needle(r.folded, "drap_loop", "drap_small", exp, N(exp), &ds);
	CHECK(ds.with > 0 && ds.prefix_ok == ds.complete,
	      "drap: %lu of %lu complete stacks in drap_small with another chain: %s",
	      (unsigned long)(ds.complete - ds.prefix_ok), (unsigned long)ds.complete,
	      ds.first_bad);
	count_cfa_reg_leaves(r.rec, prog, &in_reg, &in_reg_complete);
	printf("  drap: %lu samples with the CFA in r10 at the leaf, %lu complete\n",
	       (unsigned long)in_reg, (unsigned long)in_reg_complete);
	CHECK(in_reg >= 20, "drap: only %lu samples inside the DRAP prologue / epilogue",
	      (unsigned long)in_reg);
	CHECK(in_reg_complete == in_reg, "drap: %lu of %lu samples in the prologue complete",
	      (unsigned long)in_reg_complete, (unsigned long)in_reg);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (getenv("E2E_SECONDS"))
		seconds = getenv("E2E_SECONDS");
	if (!e2e_setup("runtimes"))
		return HARNESS_DONE();
	RUN_TEST(test_node);
	RUN_TEST(test_java);
	RUN_TEST(test_lazy_binding);
	RUN_TEST(test_drap_prologue);
	e2e_finish();
	return HARNESS_DONE();
}
