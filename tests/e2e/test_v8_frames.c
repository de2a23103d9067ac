// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JavaScript frames of Node.js run with no flags of cfiprof's (issue 33):
 * tests/progs/v8/loop.js recorded with cfiprof record -- node loop.js.  The
 * oracles are independent of cfiprof's V8 reader: node's own symbol table
 * says which samples run JavaScript (their native stack passes through
 * Builtins_JSEntry, where V8 enters JavaScript from C++), the script's text
 * says on which lines fib and work start, and node --trace-opt
 * --trace-deopt says that fib was optimized, its code thrown away mid-run
 * and optimized again.  >= 95% of the samples that
 * run JavaScript name fib or work at those lines, every fib called by work
 * (or by the script's top level, where TurboFan inlined work);
 * the run's --save recording reports the same, OTLP types the frames "v8js",
 * go tool pprof -lines names fib at its file and line.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/cfiprof_abi.h"

#include "tests/lib/e2e.h"
#include "tests/lib/held_maps.h"
#include "tests/lib/interp_folded.h"

#define NODE "/usr/bin/node"
/* CPU seconds of the script's loop: ~2,000 samples at 999 Hz, however busy the machine */
#define SECONDS "2"

static char script[PATH_MAX], set_script[PATH_MAX];

struct v8_counts {
	uint64_t samples;    /* node's main thread's */
	uint64_t in_js;	     /* ... through Builtins_JSEntry: running JavaScript */
	uint64_t named;	     /* ... of those, with fib or work named at their lines */
	uint64_t fib;	     /* ... with fib */
	uint64_t runner;     /* ... with Runner's constructor */
	/* ... whose outermost fib's caller is named, but neither work nor the top level */
	uint64_t fib_wrong;
	uint64_t work_wrong;	 /* ... whose outermost work's caller is named, not Runner */
	uint64_t caller_unnamed; /* ... whose outermost fib's or work's caller is unnamed */
	char first_unnamed[512], first_wrong[512];
};

/* the frames as named at their lines (each with the ';' before it) */
struct v8_needles {
	char fib[PATH_MAX + 64], work[PATH_MAX + 64], runner[PATH_MAX + 64], top[PATH_MAX + 64];
};

/* The frame before callee's (in line): callee is the ';' before its frame. */
static const char *caller_of(const char *line, const char *callee)
{
	const char *p = callee;

	while (p > line && p[-1] != ';')
		p--;
	return p > line ? p - 1 : NULL;
}

/* Whether the frame before callee's (in line) is caller's. */
static bool called_by(const char *line, const char *callee, const char *caller)
{
	const char *p = caller_of(line, callee);

	return p && !strncmp(p, caller, strlen(caller));
}

/*
 * Whether the frame before callee's is named as JavaScript of the script
 * ("NAME (SCRIPT:LINE)"): a name given, right or wrong, where a builtin's
 * frame (Builtins_InterpreterEntryTrampoline) is one left unnamed.
 */
static bool caller_named_js(const char *line, const char *callee)
{
	const char *p = caller_of(line, callee), *at;

	if (!p)
		return false;
	at = strstr(p, script);
	return at && at < callee && at > p && at[-1] == '(';
}

static void count(const char *folded, const struct v8_needles *nd, struct v8_counts *c)
{
	char line[65536];
	FILE *f = fopen(folded, "re");

	memset(c, 0, sizeof(*c));
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' '), *w, *fb;
		bool wrong;
		uint64_t n;

		if (!sp || strncmp(line, "node;", 5))
			continue;
		n = strtoull(sp + 1, NULL, 10);
		c->samples += n;
		if (!strstr(line, ";Builtins_JSEntry;"))
			continue;
		c->in_js += n;
		w = strstr(line, nd->work);
		fb = strstr(line, nd->fib);
		if (w || fb)
			c->named += n;
		else if (!c->first_unnamed[0])
			snprintf(c->first_unnamed, sizeof(c->first_unnamed), "%.500s", line);
		c->fib += fb ? n : 0;
		c->runner += strstr(line, nd->runner) ? n : 0;
		wrong = false;
		/* the top level calls fib itself once, to deoptimize it */
		if (fb && !called_by(line, fb, nd->work) && !called_by(line, fb, nd->top)) {
			wrong = caller_named_js(line, fb);
			c->fib_wrong += wrong ? n : 0;
			c->caller_unnamed += wrong ? 0 : n;
		}
		if (w && !called_by(line, w, nd->runner)) {
			bool named = caller_named_js(line, w);

			c->work_wrong += named ? n : 0;
			c->caller_unnamed += named ? 0 : n;
			wrong |= named;
		}
		if (wrong && !c->first_wrong[0])
			snprintf(c->first_wrong, sizeof(c->first_wrong), "%.500s",
				 strstr(line, ";Builtins_JSEntry;"));
	}
	if (f)
		fclose(f);
}

/*
 * Whether node's --trace-opt --trace-deopt output says fn was optimized,
 * deoptimized, then optimized again, in that order (one line each).
 */
static bool reoptimized(const char *trace, const char *fn)
{
	int step = 0;

	for (const char *l = trace; l && *l && step < 3;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t len = strcspn(l, "\n");
		const char *want = step == 1 ? "deoptimizing" : "[completed optimizing";

		if (memmem(l, len, want, strlen(want)) && memmem(l, len, fn, strlen(fn)))
			step++;
	}
	return step == 3;
}

static void test_no_flags(void)
{
	char cmdline[3 * PATH_MAX], trace[PATH_MAX], folded[PATH_MAX], *log = NULL, *tr = NULL;
	char rec[PATH_MAX], rep[PATH_MAX];
	char *cmd[] = {"sh", "-c", cmdline, NULL}, *opts[] = {"--save", rec, NULL};
	char *report[] = {(char *)cfiprof_bin, "report", "-o", rep, rec, NULL};
	static const char *const otlp_frames[] = {"fib v8js", "work v8js", "Runner v8js",
						  "Builtins_JSEntry native"};
	int fib_line = interp_mark_line(script, "// FIB"),
	    work_line = interp_mark_line(script, "// WORK"),
	    runner_line = interp_mark_line(script, "// RUNNER");
	struct v8_needles nd;
	struct v8_counts c, rc;
	uint64_t pending;

	CHECK(fib_line > 0 && work_line > 0 && runner_line > 0,
	      "no FIB / WORK / RUNNER marks in %s", script);
	tpath(trace, sizeof(trace), "trace-deopt.txt");
	/* exec: the process cfiprof starts is node itself, its output the oracle's */
	snprintf(cmdline, sizeof(cmdline),
		 "exec " NODE " --allow-natives-syntax --trace-opt --trace-deopt %s " SECONDS
		 " > %s",
		 script, trace);
	tpath(rec, sizeof(rec), "loop.rec");
	tpath(rep, sizeof(rep), "report.folded");
	if (e2e_record("loop", "999", opts, cmd, &log))
		goto out;
	tr = slurp(trace);
	/* node's own trace: fib optimized, its code thrown away, optimized again */
	CHECK(tr && reoptimized(tr, "<JSFunction fib "),
	      "node --trace-opt --trace-deopt shows no fib optimized, deoptimized and optimized "
	      "again: %.600s",
	      tr ? tr : "(none)");
	snprintf(nd.fib, sizeof(nd.fib), ";fib (%s:%d)", script, fib_line);
	snprintf(nd.work, sizeof(nd.work), ";work (%s:%d)", script, work_line);
	snprintf(nd.runner, sizeof(nd.runner), ";Runner (%s:%d)", script, runner_line);
	snprintf(nd.top, sizeof(nd.top), ";(anonymous) (%s:1)", script);
	count(tpath(folded, sizeof(folded), "loop"), &nd, &c);
	printf("  loop: %" PRIu64 " samples of node's main thread, %" PRIu64
	       " running JavaScript, %" PRIu64 " of those naming fib or work, %" PRIu64
	       " fib, %" PRIu64 " Runner; %" PRIu64
	       " fib called by neither work nor the top level, %" PRIu64
	       " work not called by Runner, %" PRIu64 " with their caller unnamed\n",
	       c.samples, c.in_js, c.named, c.fib, c.runner, c.fib_wrong, c.work_wrong,
	       c.caller_unnamed);
	/*
	 * node's start (its bootstrap's JavaScript, ~15 samples here) is < 2% of
	 * a loop of 2 s of CPU time, which the machine's load does not change;
	 * the samples taken before the runtimes' walks were in place carry no
	 * JavaScript frames, counted (how many depends on the machine's load),
	 * and are excused
	 */
	pending = summary_rt_walk_pending(log);
	printf("  loop: %" PRIu64 " samples taken before the runtimes' walks were in place\n",
	       pending);
	CHECK(c.in_js >= 100 && (c.named + pending) * 100 >= c.in_js * 95,
	      "%" PRIu64 " of %" PRIu64 " samples running JavaScript name fib or work, %" PRIu64
	      " taken before the walks were in place (want >= 95%%); first without: %s",
	      c.named, c.in_js, pending, c.first_unnamed);
	/*
	 * Nothing is inlined into Runner's constructor (never optimized): each
	 * work is called by it; work may inline fib's outermost call, which is
	 * then work's own frame, so every fib's caller is work (or the top
	 * level's one call that deoptimizes it).
	 */
	/*
	 * A frameless libc leaf (getrusage, under the top level's clock read)
	 * met while node's mapping keys were rewritten was named by its
	 * caller's frame's function, "fib" (1 sample of ~2,000 in 2 of ~30
	 * runs); the kernel now says such a pc maps a file (keys_missing): none.
	 */
	/*
	 * A caller left unnamed (Builtins_InterpreterEntryTrampoline where
	 * work's and Runner's frames are: the walk of JavaScript frames ended
	 * under them) names nothing wrong; it is a frame missing its name, as
	 * Runner's 95% counts.  It was a caller in JIT memory mapped since the
	 * last load, while the kernel could not tell what maps it (V8 holding
	 * its mmap lock); only the leaf waits for the kernel's word now.  1% at
	 * most.
	 */
	CHECK(c.caller_unnamed * 100 <= c.in_js,
	      "%" PRIu64 " of %" PRIu64 " samples with fib's or work's caller unnamed",
	      c.caller_unnamed, c.in_js);
	CHECK(c.fib * 2 >= c.in_js && (c.runner + pending) * 100 >= c.in_js * 95 &&
		  c.fib_wrong + c.work_wrong == 0,
	      "%" PRIu64 " samples with fib, %" PRIu64 " with Runner (of %" PRIu64 "); %" PRIu64
	      " with a fib called by neither work nor the top level, %" PRIu64
	      " a work not called by Runner; first: %s",
	      c.fib, c.runner, c.in_js, c.fib_wrong, c.work_wrong, c.first_wrong);
	CHECK(strstr(log, "cfiprof: v8: 1 process,") != NULL, "no v8 summary line: %s", log);
	/* the recording's report names the frames as record did, in every format */
	CHECK(run(report, NULL, NULL, 60) == 0, "cfiprof report -o %s %s failed", rep, rec);
	count(rep, &nd, &rc);
	CHECK(rc.in_js == c.in_js && rc.named == c.named && rc.fib == c.fib &&
		  rc.runner == c.runner,
	      "report: %" PRIu64 " samples running JavaScript, %" PRIu64 " named, %" PRIu64
	      " fib, %" PRIu64 " Runner; live %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64,
	      rc.in_js, rc.named, rc.fib, rc.runner, c.in_js, c.named, c.fib, c.runner);
	interp_check_otlp(rec, otlp_frames, sizeof(otlp_frames) / sizeof(otlp_frames[0]));
	interp_check_pprof(rec, "fib", script, fib_line);
out:
	free(tr);
	free(log);
}

/*
 * The same script with none of node's tracing flags, which make V8 compute
 * a script's line ends (--trace-deopt prints positions): without them a
 * script that never throws has none, and a function's line comes from its
 * source.  Every sample naming fib names it at its line (all of fib's
 * frames are one function: at its line in all, or in none).
 */
static void test_lines_untraced(void)
{
	char cmdline[2 * PATH_MAX], folded[PATH_MAX], at_line[PATH_MAX + 64], any[PATH_MAX + 8];
	char *cmd[] = {"sh", "-c", cmdline, NULL}, *log = NULL, line[65536];
	uint64_t fib = 0, fib_at_line = 0;
	FILE *f;

	snprintf(cmdline, sizeof(cmdline), "exec " NODE " --allow-natives-syntax %s 1 > /dev/null",
		 script);
	snprintf(at_line, sizeof(at_line), ";fib (%s:%d)", script,
		 interp_mark_line(script, "// FIB"));
	snprintf(any, sizeof(any), ";fib (%s:", script);
	if (e2e_record("untraced", "999", NULL, cmd, &log))
		goto out;
	f = fopen(tpath(folded, sizeof(folded), "untraced"), "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' ');
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		fib += strstr(line, any) ? n : 0;
		fib_at_line += strstr(line, at_line) ? n : 0;
	}
	if (f)
		fclose(f);
	printf("  untraced: %" PRIu64 " samples name fib, %" PRIu64 " at its line\n", fib,
	       fib_at_line);
	CHECK(fib >= 100 && fib_at_line == fib, "%" PRIu64 " samples name fib, %" PRIu64 " as %s",
	      fib, fib_at_line, at_line + 1);
out:
	free(log);
}

/* pid's keys for addresses in [lo, hi) deleted from the mappings map fd: how many */
static int delete_keys(int fd, uint32_t pid, uint64_t lo, uint64_t hi)
{
	struct cfi_mapping_key cur, next, del[512];
	bool first = true;
	int n = 0;

	while (n < 512 && !bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		uint64_t a = __builtin_bswap64(next.addr_be);

		if (next.pid == pid && a >= lo && a < hi)
			del[n++] = next;
		cur = next;
		first = false;
	}
	for (int i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &del[i]);
	return n;
}

/*
 * pid's keys for addresses in [lo, hi) made what user space writes for a
 * file whose tables were refused: no object, frame pointers, every other
 * flag as it wrote them.  How many were changed.
 */
static int refuse_keys(int fd, uint32_t pid, uint64_t lo, uint64_t hi)
{
	struct cfi_mapping_key cur, next;
	struct cfi_mapping_val v;
	bool first = true;
	int n = 0;

	while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		uint64_t a = __builtin_bswap64(next.addr_be);

		cur = next;
		first = false;
		if (next.pid != pid || a < lo || a >= hi || bpf_map_lookup_elem(fd, &next, &v) ||
		    (!v.obj_id && !(v.flags & CFI_MAPPING_CFI)))
			continue;
		v.obj_id = 0;
		v.flags = (v.flags & ~(CFI_MAPPING_CFI | CFI_MAPPING_PENDING)) | CFI_MAPPING_FP;
		n += !bpf_map_update_elem(fd, &next, &v, BPF_EXIST);
	}
	return n;
}

/* The child of parent running node, and the range of its libc's code; 0 if none yet. */
static pid_t node_libc(pid_t parent, uint64_t *lo, uint64_t *hi)
{
	char path[128], line[PATH_MAX + 128], comm[32] = "", perms[8];
	unsigned long long s, e;
	pid_t child = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%d", &child) != 1)
		child = 0;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)child);
	f = child ? fopen(path, "re") : NULL;
	if (!f || !fgets(comm, sizeof(comm), f) || strncmp(comm, "node", 4))
		child = 0;
	if (f)
		fclose(f);
	*lo = *hi = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	f = child ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) == 3 && !strcmp(perms, "r-xp") &&
		    strstr(line, "/libc.so.6")) {
			*lo = s;
			*hi = e;
		}
	if (f)
		fclose(f);
	return *lo ? child : 0;
}

/*
 * record of node running tests/progs/v8/set.js for 3 s of its CPU into NAME
 * (with opts), while attack changes its libc's keys in cfiprof's mappings map
 * (found through record's fdinfo), again and again; libc's code range in
 * node into [*lo, *hi).  How many keys were changed.
 */
static int record_attacking_libc(const char *name, char *const opts[],
				 int (*attack)(int fd, uint32_t pid, uint64_t lo, uint64_t hi),
				 uint64_t *lo, uint64_t *hi)
{
	char *cmd[] = {NODE, set_script, "3", NULL};
	int fd = -1, changed = 0, status = 0;
	pid_t rec, node = 0;
	double t0 = mono_sec();

	*lo = *hi = 0;
	rec = e2e_record_start(name, "999", opts, cmd);
	CHECK(rec > 0, "%s: cannot start cfiprof record", name);
	while (rec > 0 && waitpid(rec, &status, WNOHANG) == 0 && mono_sec() - t0 < 60) {
		if (!node)
			node = node_libc(rec, lo, hi);
		if (fd < 0)
			fd = map_of_process(rec, "mappings");
		if (node && fd >= 0)
			changed += attack(fd, (uint32_t)node, *lo, *hi);
		sleep_s(0.05);
	}
	if (fd >= 0)
		close(fd);
	if (rec > 0 && mono_sec() - t0 >= 60) {
		kill(rec, SIGKILL);
		waitpid(rec, &status, 0);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: record exited with status %d",
	      name, status);
	CHECK(node && changed > 0,
	      "%s: no libc keys of node changed (node %d, libc at %#" PRIx64 ", %d keys)", name,
	      (int)node, *lo, changed);
	return changed;
}

/* libc's names, the oracle: nm of libc.so.6 and of its debug file (libc6-dbg), one a line */
static char *libc_names(void)
{
	char path[PATH_MAX], *names;

	CHECK(sh_fmt("f=/lib/x86_64-linux-gnu/libc.so.6; b=$(readelf -n $f | "
		     "awk '/Build ID/ {print $3}'); { nm -D --defined-only $f; nm "
		     "/usr/lib/debug/.build-id/$(echo $b | cut -c1-2)/$(echo $b | cut -c3-).debug; "
		     "} 2>/dev/null | awk '{print $NF}' | sed 's/@.*//' | sort -u > %s",
		     tpath(path, sizeof(path), "libc-names")) == 0,
	      "nm of libc and its debug file");
	names = slurp(path);
	CHECK(names && strstr(names, "\n__memcpy_avx_unaligned_erms\n"),
	      "no __memcpy_avx_unaligned_erms among libc's names (libc6-dbg)");
	return names;
}

/* name (len bytes) is one of names' lines */
static bool named_in(const char *names, const char *name, size_t len)
{
	char want[512];

	snprintf(want, sizeof(want), "\n%.*s\n", (int)(len < 500 ? len : 500), name);
	return strstr(names, want) != NULL;
}

/*
 * Judges a record_attacking_libc run's perf-script output (each frame's
 * address and name; inlined functions in their caller's frame, as nm names
 * them): every sample whose leaf's address is in libc's code range of node
 * [lo, hi) must name it from libc's symbols, and most leaves must be there
 * (3 s of node's CPU at 999 Hz, nearly all of it in memcpy: set.js copies 1
 * MiB at a time).  A leaf of libc's taken for JavaScript has no address in
 * libc: fewer than half the samples there is such leaves.
 */
static void judge_libc_leaves(const char *name, const char *what, int changed, uint64_t lo,
			      uint64_t hi)
{
	char path[PATH_MAX], line[4096], first_bad[512] = "", *names = libc_names();
	uint64_t samples = 0, judged = 0, misnamed = 0;
	bool leaf = false;
	FILE *f = fopen(tpath(path, sizeof(path), name), "re");

	while (names && f && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char *fn, *dso;
		int at = 0;

		/* a sample: its header, then one "\tADDR NAME (DSO)" line a frame, leaf first */
		if (line[0] != '\t') {
			leaf = line[0] != '\n';
			samples += leaf;
			continue;
		}
		if (!leaf)
			continue;
		leaf = false;
		if (sscanf(line, "\t%llx %n", &addr, &at) != 1 || !at || addr < lo || addr >= hi)
			continue;
		fn = line + at;
		dso = strrchr(fn, '(');
		if (!dso || dso == fn)
			continue;
		judged++;
		if (named_in(names, fn, (size_t)(dso - 1 - fn)))
			continue;
		/* a PLT entry libc calls through (an ifunc's): objdump's NAME@plt, NAME in nm's */
		if (dso - 1 - fn > 4 && !strncmp(dso - 5, "@plt", 4) &&
		    named_in(names, fn, (size_t)(dso - 5 - fn)))
			continue;
		misnamed++;
		if (!first_bad[0])
			snprintf(first_bad, sizeof(first_bad), "%.500s", line);
	}
	if (f)
		fclose(f);
	free(names);
	printf("  %s: %d libc keys of node %s; %" PRIu64 " of %" PRIu64
	       " samples with their leaf in libc, %" PRIu64 " of them not named as libc's\n",
	       name, changed, what, judged, samples, misnamed);
	CHECK(misnamed == 0,
	      "%s: %" PRIu64 " of %" PRIu64 " samples with their leaf in libc's code have a leaf "
	      "not named as libc's; first: %s",
	      name, misnamed, judged, first_bad);
	CHECK(judged >= ENOUGH_TO_JUDGE && judged * 2 >= samples,
	      "%s: %" PRIu64 " of %" PRIu64 " samples have their leaf in libc's code", name, judged,
	      samples);
}

/*
 * A pc without a mapping key is V8's code only when the kernel says its
 * memory maps no file: a file's keys may be missing while user space
 * rewrites them (a reload), or refused.  Here libc's keys of a running node
 * are deleted from cfiprof's mappings map, again and again, while
 * TypedArray's set calls libc's memcpy (frameless) from the builtin's own
 * JavaScript frame (tests/progs/v8/set.js).  The oracle is the process's
 * maps and nm (judge_libc_leaves): before, 2,880 of 2,898 leaves without a
 * key took the name of the function in the builtin's frame.  (Judged by
 * the stop's tag before: a stack that stopped at a caller without a key,
 * new JIT code, under a builtin leaf read as a leaf without one.)
 */
static void test_keys_missing(void)
{
	char *opts[] = {"-f", "perf-script", "--no-inline", NULL};
	uint64_t lo, hi;
	int deleted = record_attacking_libc("set", opts, delete_keys, &lo, &hi);

	judge_libc_leaves("set", "deleted", deleted, lo, hi);
}

/*
 * A file's code with a key but no object (its tables refused by a quota, or
 * the file not opened) is walked by frame pointers, as JIT code is: it is
 * still never V8's code.  libc's keys of node are made what user space
 * writes for a refused file, again and again (set.js as in keys_missing).
 * Before, such a leaf took the name of the function in the builtin's frame
 * (and no address in libc).
 */
static void test_keys_refused(void)
{
	char *opts[] = {"-f", "perf-script", "--no-inline", NULL};
	uint64_t lo, hi;
	int refused = record_attacking_libc("set-refused", opts, refuse_keys, &lo, &hi);

	judge_libc_leaves("set-refused", "refused", refused, lo, hi);
}

/*
 * A node whose V8 says its pointers are compressed (v8dbg_TaggedSize 4 in a
 * copy): cfiprof does not read that layout, so it keeps native stacks,
 * complete by frame pointers, and counts the process with its version.
 */
static void test_unsupported_layout(void)
{
	static const struct interp_lang v8_lang = {.comm = "node",
						   .unknown = "[v8]",
						   .eval = "Builtins_JSEntry",
						   .what = "JavaScript",
						   .incomplete_permille = 10};
	char copy[PATH_MAX], version[160];
	char *cmd[] = {copy, "--allow-natives-syntax", script, "1", NULL};
	const int32_t compressed = 4;
	unsigned int major = 0, minor = 0;
	FILE *p = popen(NODE " -p process.versions.v8", "r");

	/* node's own word for its V8 version: the summary names it */
	CHECK(p && fscanf(p, "%u.%u", &major, &minor) == 2, "node -p process.versions.v8");
	if (p)
		pclose(p);
	snprintf(version, sizeof(version),
		 "%u.%u without a layout cfiprof reads (v8dbg_ symbols, 8-byte pointers)", major,
		 minor);
	tpath(copy, sizeof(copy), "node");
	CHECK(sh_fmt("cp " NODE " %s", copy) == 0 &&
		  interp_patch_symbol_in(copy, ".data", "v8dbg_TaggedSize", 0, &compressed, 4),
	      "a copy of node claiming compressed pointers");
	interp_check_unsupported(&v8_lang, "v8", version, cmd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("v8"))
		return HARNESS_DONE();
	if (!realpath("tests/progs/v8/loop.js", script))
		snprintf(script, sizeof(script), "tests/progs/v8/loop.js");
	if (!realpath("tests/progs/v8/set.js", set_script))
		snprintf(set_script, sizeof(set_script), "tests/progs/v8/set.js");
	RUN_TEST(test_no_flags);
	RUN_TEST(test_lines_untraced);
	RUN_TEST(test_keys_missing);
	RUN_TEST(test_keys_refused);
	RUN_TEST(test_unsupported_layout);
	e2e_finish();
	return HARNESS_DONE();
}
