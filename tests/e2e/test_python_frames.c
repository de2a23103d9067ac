// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames inside native stacks (issue 18), on Debian's python3.11 (no
 * debug information): known programs (tests/progs/python/) recorded with
 * cfiprof record -- python3.11 PROG.  In each, the exact Python chains appear
 * (the Python frames of a stack, root first, ignoring native ones), >= 95%
 * of the process's samples in Python code have Python frames, and every
 * group of Python frames sits right above a _PyEval_EvalFrameDefault frame.  Also: a
 * process in its own PID and mount namespaces (its interpreter visible only
 * there), pprof's file:line, an interpreter of an unsupported version
 * (plain native stacks, counted), a --save recording's report (the same
 * folded output as the live run; an older recording: plain native stacks),
 * samples deferred for lack of tables, which keep their Python frames, and
 * off-CPU stacks (--off-cpu), which carry Python frames too.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <glob.h>
#include <sys/stat.h>

#include "tests/lib/e2e.h"
#include "tests/lib/folded_stats.h"
#include "tests/lib/interp_folded.h"
#include "tests/lib/pprof_read.h"
#include "user/runtimes/python/python_offsets.h"

#define PYTHON	"/usr/bin/python3.11"
/* of each program's CPU time: as many samples however busy the machine */
#define SECONDS "2c"

static char progs[PATH_MAX];

#define py_run interp_run

/* Python's frames in folded lines (tests/lib/interp_folded.h); comm: the version under test */
static struct interp_lang py_lang = {.comm = "python3.11",
				     .unknown = "[python]",
				     .eval = "_PyEval_EvalFrameDefault",
				     .what = "Python"};
#define py_comm py_lang.comm

static bool read_py_folded(const char *name, struct py_run *r)
{
	return interp_read_folded(&py_lang, name, r);
}

/* Records CMD... at FREQ Hz with OPTS; reads its folded output. */
static bool record_py_opts(const char *name, const char *freq, char *const opts[],
			   char *const cmd[], struct py_run *r)
{
	char folded[128];

	memset(r, 0, sizeof(*r));
	snprintf(folded, sizeof(folded), "%s.folded", name);
	tpath(r->folded, sizeof(r->folded), folded);
	if (e2e_record(folded, freq, opts, cmd, &r->log))
		return false;
	return read_py_folded(name, r);
}

static bool record_py(const char *name, char *const cmd[], struct py_run *r)
{
	return record_py_opts(name, "299", NULL, cmd, r);
}

static uint64_t chain_count_ex(const struct py_run *r, const char *want, bool unread_ok)
{
	return interp_chain_count(&py_lang, r, want, unread_ok);
}

static void print_lines(const struct py_run *r, const char *log)
{
	interp_print_lines(&py_lang, r, log);
}

static uint64_t chain_count(const struct py_run *r, const char *want)
{
	return chain_count_ex(r, want, false);
}

static void expect_chain(const struct py_run *r, const char *what, const char *want)
{
	uint64_t n = chain_count(r, want);

	CHECK(n >= 3, "%s: chain %s in %lu samples (want >= 3)", what, want, (unsigned long)n);
}

/*
 * interp_judge_excusing for record's own command: its first load most often
 * finds the interpreter before its script runs; the 5% covers a late one.
 * The interpreter's own start is not counted: 3-8% of a short run's samples
 * on machines whose copy-on-write faults are slow (interning its static
 * strings writes to its .data).
 */
static void judge_excusing(const char *name, const struct py_run *r, uint64_t excused)
{
	interp_judge_excusing(&py_lang, "python", name, r, excused);
}

static uint64_t taken_before_known(const char *log, uint64_t all, bool strict);

/*
 * A program that is the only Python process: the samples the summary did not
 * count were taken before its first load found the interpreter (how many
 * depends on when the load thread gets a CPU: 16 of 116 beside make
 * test-stress and a JVM benchmark), counted and excused.
 */
static void judge(const char *name, const struct py_run *r)
{
	judge_excusing(name, r, taken_before_known(r->log, r->samples, true));
}

/*
 * Of all the samples python3.11 took (log: record's), those taken before
 * its interpreter was known: the ones the python summary does not count.
 * The summary counts every Python process: where the program starts none
 * but itself, it counts no more than the program took (strict), and the
 * samples lost with the ring buffer full, which it counted as they were
 * taken (deferred copies of 64 KiB fill the ring on a busy machine: a CI
 * run's summary counted 1,022 where the recording had 818); those may be
 * python3.11's, so up to that many more may have been taken before.
 */
static uint64_t taken_before_known(const char *log, uint64_t all, bool strict)
{
	long known = interp_summary_samples(log, "python");
	/* record -v's summary: "cfiprof: 4.7 s, N samples (W written, L lost: ring buffer full)" */
	const char *l = log ? strstr(log, " written, ") : NULL;
	unsigned long lost = 0;

	if (l && sscanf(l, " written, %lu lost: ring buffer full", &lost) != 1)
		lost = 0;
	CHECK(known >= 0 && (!strict || (uint64_t)known <= all + lost),
	      "python summary names %ld samples of the %lu python3.11 took (%lu samples lost); "
	      "the summary: %.1500s",
	      known, (unsigned long)all, lost, log ? log : "");
	if (known < 0 || (uint64_t)known >= all + lost)
		return 0;
	return all + lost - (uint64_t)known < all ? all + lost - (uint64_t)known : all;
}

static char *prog(const char *name)
{
	static char buf[8][PATH_MAX];
	static int i;
	char *b = buf[i++ % 8];

	snprintf(b, PATH_MAX, "%.3000s/%s.py", progs, name);
	return b;
}

static void test_recursion(void)
{
	char *cmd[] = {PYTHON, prog("recurse"), SECONDS, NULL}, want[2048];
	const char *p = prog("recurse");
	struct py_run r;

	if (!record_py("recurse", cmd, &r))
		goto out;
	judge("recurse", &r);
	snprintf(want, sizeof(want),
		 "<module> (%s:%d);main (%s:%d);outer (%s:%d);rec (%s:15);rec (%s:15);rec (%s:15);"
		 "rec (%s:15);rec (%s:15);rec (%s:14);leaf (%s:*",
		 p, interp_mark_line(p, "# MODULE"), p, interp_mark_line(p, "# MAIN"), p,
		 interp_mark_line(p, "# OUTER"), p, p, p, p, p, p, p);
	expect_chain(&r, "recurse", want);
out:
	free(r.log);
}

static void test_threads(void)
{
	char *cmd[] = {PYTHON, prog("threads"), SECONDS, NULL}, want[2048];
	const char *p = prog("threads"), *const workers[] = {"alpha_work (%s:14)",
							     "beta_work (%s:18)",
							     "gamma_work (%s:22)"};
	const char *t = "/usr/lib/python3.11/threading.py";
	struct py_run r;
	char w[256];
	int i;

	if (!record_py("threads", cmd, &r))
		goto out;
	/*
	 * A quiet clean clone (cc70) once placed a thread's outer frames
	 * (Thread._bootstrap .. Thread.run) at the root, 1 sample of 438: its
	 * native stack had one evaluation loop for the chain's two groups.
	 * Thread.run calls its target through CALL_FUNCTION_EX, in C:
	 * _PyFunction_Vectorcall -> _PyEval_Vector pushes the target's frame
	 * (_PyEvalFramePushAndInit) and only then calls the evaluation loop;
	 * a sample in between (cc93's: its leaf in _PyEval_Vector under
	 * _PyFunction_Vectorcall) has one group more than loops, as Ruby's
	 * rb_yield: allowed as for Ruby, 1% of the samples at most.
	 */
	py_lang.push_before_loop = true;
	judge("threads", &r);
	py_lang.push_before_loop = false;
	for (i = 0; i < 3; i++) {
		snprintf(w, sizeof(w), workers[i], p);
		snprintf(want, sizeof(want),
			 "Thread._bootstrap (%s:*;Thread._bootstrap_inner (%s:*;Thread.run (%s:*;"
			 "%s;spin (%s:*",
			 t, t, t, w, p);
		expect_chain(&r, "threads", want);
	}
	snprintf(want, sizeof(want), "<module> (%s:40);main (%s:34);main_work (%s:26);spin (%s:*",
		 p, p, p, p);
	expect_chain(&r, "threads: main", want);
out:
	free(r.log);
}

static void test_generators(void)
{
	char *cmd[] = {PYTHON, prog("generators"), SECONDS, NULL}, want[2048];
	const char *p = prog("generators");
	struct py_run r;

	if (!record_py("generators", cmd, &r))
		goto out;
	judge("generators", &r);
	snprintf(want, sizeof(want), "<module> (%s:32);consume (%s:25);squares (%s:*", p, p, p);
	expect_chain(&r, "generators: for loop", want);
	snprintf(want, sizeof(want),
		 "<module> (%s:32);consume (%s:27);outer_gen (%s:19);inner_gen (%s:*", p, p, p, p);
	expect_chain(&r, "generators: yield from", want);
out:
	free(r.log);
}

static void test_ctypes_callback(void)
{
	/* ctypes_cb.py counts CPU seconds already */
	char *cmd[] = {PYTHON, prog("ctypes_cb"), "2", NULL}, want[2048];
	const char *p = prog("ctypes_cb");
	struct py_run r;

	if (!record_py("ctypes_cb", cmd, &r))
		goto out;
	judge("ctypes_cb", &r);
	snprintf(want, sizeof(want), "<module> (%s:25);sort_with_callback (%s:21);compare (%s:*", p,
		 p, p);
	/* between the two: libc's qsort, libffi's closure, the ctypes callback's eval loop */
	expect_chain(&r, "ctypes: qsort calls compare", want);
out:
	free(r.log);
}

static void test_asyncio(void)
{
	char *cmd[] = {PYTHON, prog("asyncio_spin"), SECONDS, NULL}, want[2048];
	const char *p = prog("asyncio_spin"), *a = "/usr/lib/python3.11/asyncio";
	struct py_run r;

	if (!record_py("asyncio", cmd, &r))
		goto out;
	judge("asyncio", &r);
	snprintf(want, sizeof(want),
		 "<module> (%s:23);run (%s/runners.py:*;Runner.run (%s/runners.py:*;"
		 "BaseEventLoop.run_until_complete (%s/base_events.py:*;"
		 "BaseEventLoop.run_forever (%s/base_events.py:*;"
		 "BaseEventLoop._run_once (%s/base_events.py:*;Handle._run (%s/events.py:*;"
		 "worker (%s:14);crunch (%s:*",
		 p, a, a, a, a, a, a, p, p);
	expect_chain(&r, "asyncio: a task's coroutine", want);
out:
	free(r.log);
}

/*
 * A container: own PID and mount namespaces, the interpreter copied onto a
 * tmpfs only that namespace sees.  Its threads' ids differ from the host's.
 * Its samples taken before the first load after its exec are excused: the
 * load waits behind the copy's tables on a busy machine (81 of 420 once).
 */
static void test_namespaces(void)
{
	char dir[PATH_MAX], script[4 * PATH_MAX], want[2048];
	char *cmd[] = {"unshare", "--pid", "--mount", "--fork", "sh", "-c", script, NULL};
	const char *p = prog("threads");
	struct py_run r;

	tpath(dir, sizeof(dir), "ct");
	mkdir(dir, 0755);
	snprintf(script, sizeof(script),
		 "mount -t tmpfs none %s && cp " PYTHON " %s/python3.11 && "
		 "exec %s/python3.11 %s " SECONDS,
		 dir, dir, dir, p);
	if (!record_py("namespaces", cmd, &r))
		goto out;
	/* python is exec'd by the namespace's shell, not held at its exec as record's command is */
	py_lang.push_before_loop = true; /* threads.py: see test_threads */
	judge_excusing("namespaces", &r, taken_before_known(r.log, r.samples, true));
	py_lang.push_before_loop = false;
	snprintf(want, sizeof(want), "<module> (%s:40);main (%s:34);main_work (%s:26);spin (%s:*",
		 p, p, p, p);
	expect_chain(&r, "namespaces: main thread", want);
	snprintf(want, sizeof(want),
		 "Thread._bootstrap (*;Thread._bootstrap_inner (*;Thread.run (*;beta_work (%s:18);"
		 "spin (%s:*",
		 p, p);
	expect_chain(&r, "namespaces: a thread", want);
out:
	free(r.log);
}

/*
 * pprof: a Python frame is a function in its source file, its location on the
 * line, and its name shown by go tool pprof as it is.
 */
static void test_pprof_lines(void)
{
	char out[PATH_MAX], *o, *cmd[] = {PYTHON, prog("recurse"), "1", NULL}, want[PATH_MAX + 64];
	const char *go = find_go();
	char *log = NULL;
	int st;

	tpath(out, sizeof(out), "recurse.pb.gz");
	if (e2e_record("recurse.pb.gz", "299", NULL, cmd, &log))
		goto out;
	CHECK(go != NULL, "go tool pprof is needed (golang-go)");
	if (!go)
		goto out;
	o = go_pprof(go, tmpdir, "-lines -top -nodecount=200", out, &st);
	snprintf(want, sizeof(want), " leaf %s:8\n", prog("recurse"));
	CHECK(st == 0 && o && strstr(o, want), "go tool pprof -lines: '%s' expected in:\n%s", want,
	      o ? o : "");
	snprintf(want, sizeof(want), " rec %s:15\n", prog("recurse"));
	CHECK(o && strstr(o, want), "go tool pprof -lines: '%s' expected", want);
	free(o);
	/*
	 * pprof's default "demangling" strips <...> from a name that is its own
	 * system name and looks like C++: the script's top level, <module>,
	 * must show as it is, not as <unknown>.
	 */
	o = go_pprof(go, tmpdir, "-top -nodecount=500", out, &st);
	CHECK(st == 0 && o && strstr(o, " <module>\n") && !strstr(o, "<unknown>"),
	      "go tool pprof -top: '<module>' expected, '<unknown>' not, in:\n%s", o ? o : "");
	free(o);
out:
	free(log);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted (split in place; free the array); their number in *n. */
static char **sorted_lines(char *text, size_t *n)
{
	char **v = NULL, *save = NULL, *line;
	size_t cap = 0;

	*n = 0;
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[(*n)++] = line;
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_line);
	return v;
}

/* Whether two folded files hold the same stacks and counts (in any order). */
static bool same_folded(const char *a_path, const char *b_path)
{
	char *a = slurp(a_path), *b = slurp(b_path), **la, **lb;
	size_t na, nb, i;
	bool same;

	la = sorted_lines(a, &na);
	lb = sorted_lines(b, &nb);
	same = a && b && na == nb && na > 0;
	for (i = 0; same && i < na; i++)
		same = !strcmp(la[i], lb[i]);
	if (!same)
		printf("  %s: %zu lines, %s: %zu lines; first difference at line %zu:\n  %.600s\n  "
		       "%.600s\n",
		       a_path, na, b_path, nb, i ? i - 1 : 0, i && i <= na ? la[i - 1] : "",
		       i && i <= nb ? lb[i - 1] : "");
	free(la);
	free(lb);
	free(a);
	free(b);
	return same;
}

/* A recording as cfiprof wrote it before Python frames were saved: no pyframe, no " py". */
static bool strip_python(const char *in_path, const char *out_path)
{
	char line[65536], *py;
	FILE *in = fopen(in_path, "re"), *out = fopen(out_path, "we");
	bool ok = in && out;

	while (ok && fgets(line, sizeof(line), in)) {
		if (!strncmp(line, "pyframe ", 8))
			continue;
		if (!strncmp(line, "stack ", 6) && (py = strstr(line, " py ")))
			strcpy(py, "\n");
		ok = fputs(line, out) >= 0;
	}
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok;
}

/* cfiprof report REC -o OUT (T/NAME), its stderr in *log; its exit status. */
static int report_to(const char *rec, const char *name, char *out, size_t len, char **log)
{
	char err[PATH_MAX + 8];
	char *argv[] = {(char *)cfiprof_bin, "report", (char *)rec, "-o", out, NULL};
	int rc;

	tpath(out, len, name);
	snprintf(err, sizeof(err), "%s.err", out);
	rc = run(argv, NULL, err, 60);
	*log = slurp(err);
	return rc;
}

/*
 * record --save, then report: the recording renders what the live run did,
 * Python frames included (their code objects lived in a process that is
 * gone).  A recording without Python data (an older cfiprof's) still loads:
 * the same samples, plain native stacks.
 */
static void test_save_report(void)
{
	char rec[PATH_MAX], old[PATH_MAX], out[PATH_MAX], *log = NULL;
	char *opts[] = {"--save", rec, NULL}, *cmd[] = {PYTHON, prog("threads"), "1c", NULL};
	struct py_run live, rep = {0}, plain = {0};
	int rc;

	tpath(rec, sizeof(rec), "save.rec");
	if (!record_py_opts("save_live", "299", opts, cmd, &live))
		goto out;
	judge("save_live", &live);
	rc = report_to(rec, "save_report.folded", out, sizeof(out), &log);
	CHECK(rc == 0 && log && !strstr(log, "malformed"), "report %s: exit %d: %s", rec, rc,
	      log ? log : "");
	snprintf(rep.folded, sizeof(rep.folded), "%s", out);
	if (read_py_folded("save_report", &rep))
		CHECK(rep.samples == live.samples && rep.with_frames == live.with_frames &&
			  same_folded(live.folded, rep.folded),
		      "report of the recording differs from the live run's folded output");
	free(log);
	tpath(old, sizeof(old), "save_old.rec");
	CHECK(strip_python(rec, old), "cannot write %s", old);
	rc = report_to(old, "save_old.folded", out, sizeof(out), &log);
	CHECK(rc == 0 && log && !strstr(log, "malformed"), "report %s: exit %d: %s", old, rc,
	      log ? log : "");
	snprintf(plain.folded, sizeof(plain.folded), "%s", out);
	if (read_py_folded("save_old", &plain))
		CHECK(plain.samples == live.samples && plain.with_frames == 0,
		      "a recording without Python data: %lu samples (%lu live), %lu with Python "
		      "frames",
		      (unsigned long)plain.samples, (unsigned long)live.samples,
		      (unsigned long)plain.with_frames);
out:
	free(log);
	free(live.log);
}

/* What a recording says of the deferred samples of python3.11 (recording.h). */
struct deferred_count {
	uint64_t deferred;    /* samples finished in user space (FLAGS has SAMPLE_DEFERRED) */
	uint64_t in_python;   /* ... whose native stack passes the evaluation loop */
	uint64_t with_python; /* ... of those, with Python frames */
	uint64_t with_fn;     /* ... deferred samples with a Python frame named fn */
	uint64_t all;	      /* every sample of python3.11, deferred or not */
};

#define MAX_KEYS 4096

/*
 * Counts the deferred samples of python3.11 in recording path: the native
 * frames named _PyEval_EvalFrameDefault come from its uframe lines, the
 * Python frames named fn from its pyframe lines (keys: "PID ADDR" and
 * "PID GEN CODE:INSTR:ENTRY:OWNER:SCOPE").
 */
static bool count_deferred(const char *path, const char *fn, struct deferred_count *c)
{
	static char evals[MAX_KEYS][48], fns[MAX_KEYS][96];
	int nr_evals = 0, nr_fns = 0, i;
	char line[65536], key[128];
	FILE *f = fopen(path, "re");

	memset(c, 0, sizeof(*c));
	while (f && fgets(line, sizeof(line), f)) {
		unsigned int pid, gen, level, entry, owner, scope, role, lno, ln, sl;
		unsigned long long start, addr, code;
		unsigned int instr;
		int at = 0;

		if (sscanf(line, "uframe %u %llx %llx %u %u %u%n", &pid, &start, &addr, &level, &ln,
			   &sl, &at) == 6 &&
		    !strncmp(line + at, "\t_PyEval_EvalFrameDefault\t", 26) && nr_evals < MAX_KEYS)
			snprintf(evals[nr_evals++], sizeof(evals[0]), "%u %llx", pid, addr);
		if (sscanf(line, "pyframe %u %u %llx %x %u %u %x %u %u%n", &pid, &gen, &code,
			   &instr, &entry, &owner, &scope, &role, &lno, &at) == 9 &&
		    !strncmp(line + at + 1, fn, strlen(fn)) && line[at + 1 + strlen(fn)] == '\t' &&
		    nr_fns < MAX_KEYS)
			snprintf(fns[nr_fns++], sizeof(fns[0]), "%u %u %llx:%x:%x:%x:%x", pid, gen,
				 code, instr, entry, owner, scope);
	}
	if (!f)
		return false;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long count;
		unsigned int pid, tid, reason, flags, gen = 0;
		char comm[64], *u, *py, *g, *tok, *save = NULL;
		bool in_py = false, has_fn = false;
		int k = 0;

		if (sscanf(line, "stack %llu %u %u %u %u %63s", &count, &pid, &tid, &reason, &flags,
			   comm) != 6 ||
		    strcmp(comm, "python3.11"))
			continue;
		c->all += count;
		if (!(flags & 8 /* SAMPLE_DEFERRED */))
			continue;
		c->deferred += count;
		line[strcspn(line, "\n")] = 0;
		g = strstr(line, " g ");
		if (g)
			gen = (unsigned int)strtoul(g + 3, NULL, 10);
		py = strstr(line, " py ");
		if (py) {
			*py = 0;
			for (tok = strtok_r(py + 4, ",", &save); tok && !has_fn;
			     tok = strtok_r(NULL, ",", &save)) {
				snprintf(key, sizeof(key), "%u %u %s", pid, gen, tok);
				for (i = 0; i < nr_fns && !has_fn; i++)
					has_fn = !strcmp(fns[i], key);
			}
		}
		/* "u PC,PC,..": one word */
		u = strstr(line, " u ");
		if (u)
			u[3 + strcspn(u + 3, " ")] = 0;
		for (tok = u ? strtok_r(u + 3, ",", &save) : NULL; tok && !in_py;
		     tok = strtok_r(NULL, ",", &save), k++) {
			unsigned long long pc = strtoull(tok, NULL, 16);

			/* return addresses are looked up (and saved) at pc - 1 */
			snprintf(key, sizeof(key), "%u %llx", pid, k ? pc - 1 : pc);
			for (i = 0; i < nr_evals && !in_py; i++)
				in_py = !strcmp(evals[i], key);
		}
		c->in_python += in_py ? count : 0;
		c->with_python += in_py && py ? count : 0;
		c->with_fn += has_fn ? count : 0;
	}
	fclose(f);
	return true;
}

/*
 * A Python process's samples taken before its tables are in (deferred, then
 * finished in user space) keep their Python frames: the kernel reads the
 * frame chain at sample time, the interpreter being known before the tables
 * are built.  The process is exec'd by a shell (not held at its entry as
 * record's own command is); early_work loads five fresh copies of a library
 * whose tables take tens of ms each to build on one worker (ctypes), one
 * after another, and spends its 0.6 s of CPU in them, 0.12 s each: its samples wait
 * for each copy's tables from its load on, whatever
 * the interpreter's start took (preloading copies at exec left the window
 * to the start: beside make test-stress's hogs 0-13 deferred samples in
 * Python code, 1-3 of them in early_work).  >= 95% of its deferred samples
 * inside Python code must show Python frames, most early_work.
 */
static void test_deferred(void)
{
	char rec[PATH_MAX], big[PATH_MAX + 32], script[4 * PATH_MAX];
	char *opts[] = {"--save", rec, "--table-cache", "off", "--build-workers", "1", NULL};
	char *cmd[] = {"sh", "-c", script, NULL};
	struct deferred_count c;
	uint64_t before;
	struct py_run r;

	tpath(rec, sizeof(rec), "deferred.rec");
	snprintf(big, sizeof(big), "%s/libdefer_big.so", progs_dir);
	/* five builds on one worker (tests/progs/progs.mk): the windows */
	CHECK(copy_file_n(big, tmpdir, 5), "copy %s into %s", big, tmpdir);
	snprintf(script, sizeof(script),
		 "exec " PYTHON " %s 0.6 1 %s/c0.so %s/c1.so %s/c2.so %s/c3.so %s/c4.so",
		 prog("early"), tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	/*
	 * 999 Hz: tens of deferred samples a copy, its build's CPU time against
	 * the program's.  A machine that gives the program little CPU while the
	 * worker builds may leave too few to judge: the run is repeated, three
	 * times at most.
	 */
	for (int attempt = 1;; attempt++) {
		if (!record_py_opts("deferred", "999", opts, cmd, &r))
			goto out;
		CHECK(count_deferred(rec, "early_work", &c), "cannot read %s", rec);
		if ((c.in_python >= 10 && c.with_fn >= 5) || attempt == 3)
			break;
		printf("  deferred: run %d: %lu deferred samples in Python code, %lu in early_work; "
		       "again\n",
		       attempt, (unsigned long)c.in_python, (unsigned long)c.with_fn);
		free(r.log);
	}
	printf("  deferred: %lu samples, %lu in Python code, %lu of those with Python frames, "
	       "%lu in early_work\n",
	       (unsigned long)c.deferred, (unsigned long)c.in_python, (unsigned long)c.with_python,
	       (unsigned long)c.with_fn);
	/* 25-200 here, with the load of the machine: how long the tables took */
	CHECK(c.in_python >= 10, "only %lu deferred samples in Python code: no window to test",
	      (unsigned long)c.in_python);
	/*
	 * Samples taken before the first load after the exec found the
	 * interpreter cannot have Python frames, deferred or not: how many
	 * depends on how long that load waited (behind the shell's own builds
	 * on the one worker), 0-20 at 999 Hz.  The python summary counts the
	 * samples taken once it was known; python3.11's other samples are that
	 * window, and it must have closed before the early_work samples (the
	 * check below).  Of the rest, 5% may lack their frames.
	 */
	before = taken_before_known(r.log, c.all, true);
	printf("  deferred: %lu of python3.11's samples taken before its interpreter was known\n",
	       (unsigned long)before);
	CHECK(c.in_python - c.with_python <= before + c.in_python / 20,
	      "%lu of %lu deferred samples in Python code with Python frames, %lu taken before the "
	      "interpreter was known; %s",
	      (unsigned long)c.with_python, (unsigned long)c.in_python, (unsigned long)before,
	      r.log && strstr(r.log, "cfiprof: python:") ? strstr(r.log, "cfiprof: python:") : "");
	/*
	 * the windows early_work opens: some of its samples wait too.  How
	 * many the interpreter's start (site.py, imports) takes beside them
	 * is the machine's speed (beside make test-stress 109 of 142 once):
	 * no share of them is judged.
	 */
	CHECK(c.with_fn >= 5, "%lu of %lu deferred samples in early_work", (unsigned long)c.with_fn,
	      (unsigned long)c.in_python);
	/* and all of them, deferred or not, in the folded output (the same window excused) */
	judge_excusing("deferred", &r, before);
	expect_chain(&r, "deferred", "<module> (*;main (*;late_work (*;spin (*");
out:
	free(r.log);
}

/* The number just before key in s ("12 of threads" -> 12 for " of threads"); -1 if absent. */
static long number_before_or_none(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;

	if (!p)
		return -1;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtol(p, NULL, 10);
}

/*
 * record's own command: it starts at once, its first load queued at the
 * exec finds the interpreter, most often while ld.so still runs.  Its first
 * samples come before the interpreter made its main thread's thread state
 * (ld.so, the runtime's pre-initialization: 0-3 samples at 999 Hz, counted
 * as threads without a frame chain), then its start runs native code only
 * until importlib's first frame.  Searched for again as soon as the thread
 * state is made, not 50 ms later (~50 samples without a frame chain at 999
 * Hz): then every sample whose native stack passes the evaluation loop,
 * importlib's bootstrap in the interpreter's start included, has its Python
 * frames.
 *
 * The load races the interpreter's start (7 ms of CPU time to its script):
 * beside other suites it found the interpreter 12 samples late once, 7 of
 * them in Python code already.  Samples taken before it was known (all
 * python3.11 took less those the python summary counts) are excused, as in
 * test_deferred; of the rest, 2 may be in a frame not running yet (its
 * first instruction's page fault).
 */
static void test_first_samples(void)
{
	char *cmd[] = {PYTHON, prog("early"), "0.3", "0.4", NULL};
	struct py_run r;
	long without;
	uint64_t before;

	if (!record_py_opts("first", "999", NULL, cmd, &r))
		goto out;
	without = number_before_or_none(r.log, " of threads without one");
	printf("  first: %ld samples of threads without a frame chain\n", without);
	before = taken_before_known(r.log, r.samples, true);
	printf("  first: %lu samples taken before the interpreter was known\n",
	       (unsigned long)before);
	CHECK(without >= 0 && without <= 10,
	      "%ld samples of threads without a frame chain (want <= 10: searched again at once)",
	      without);
	CHECK(r.in_code - r.with_frames <= before + 2,
	      "%lu of %lu samples in Python code without Python frames, %lu taken before the "
	      "interpreter was known (want <= that + 2); one: %s",
	      (unsigned long)(r.in_code - r.with_frames), (unsigned long)r.in_code,
	      (unsigned long)before, r.missing_example);
	judge_excusing("first", &r, before);
out:
	free(r.log);
}

/*
 * The main thread's state linked into the interpreter's list before its
 * ids are stored in it (Debian's python3.11 does so: new_threadstate sets
 * interp->threads.head, then calls PyThread_get_thread_ident and
 * PyThread_get_thread_native_id, whose gettid is a syscall): a sample in
 * between finds the list's head without this thread's id, and the thread
 * searched for again only 50 ms (PY_THREAD_RETRY_NS) later, or when another
 * thread state is added, lost the frames of the interpreter's start and
 * script meanwhile (cc109: 23 of 423).  libslow_gettid.so (LD_PRELOAD)
 * makes that window 0.2 s of CPU time, so samples always fall in it; the
 * thread must be found again as soon as its id is there.  Of the samples
 * in Python code, those taken before the interpreter was known are
 * excused, and 2 may be in a frame not running yet (as first_samples).
 */
static void test_tstate_id_late(void)
{
	char pre[PATH_MAX + 16];
	char *cmd[] = {"env", pre, PYTHON, prog("early"), "0", "0.3", NULL};
	struct py_run r;
	uint64_t before;

	snprintf(pre, sizeof(pre), "LD_PRELOAD=%.3000s/libslow_gettid.so", progs_dir);
	if (!record_py_opts("idlate", "999", NULL, cmd, &r))
		goto out;
	before = taken_before_known(r.log, r.samples, true);
	printf("  idlate: %lu samples in Python code, %lu with Python frames, %lu taken before "
	       "the interpreter was known\n",
	       (unsigned long)r.in_code, (unsigned long)r.with_frames, (unsigned long)before);
	/* the script's 0.3 s of CPU: ~300 samples at 999 Hz; 100 leaves room for any machine */
	CHECK(r.in_code >= 100, "%lu samples in Python code", (unsigned long)r.in_code);
	CHECK(r.in_code - r.with_frames <= before + 2,
	      "%lu of %lu samples in Python code without Python frames, %lu taken before the "
	      "interpreter was known (want <= that + 2); one: %s",
	      (unsigned long)(r.in_code - r.with_frames), (unsigned long)r.in_code,
	      (unsigned long)before, r.missing_example);
out:
	free(r.log);
}

/* Writes hex as the value of the copy's Py_Version (its .dynsym symbol, in .rodata). */
static bool patch_py_version(const char *path, uint32_t hex)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL, *s2;
	GElf_Shdr sh, sh2;
	uint64_t addr = 0;
	bool done = false;

	elf_version(EV_CURRENT);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	while (e && !addr && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (name = elf_strptr(e, sh.sh_link, sym.st_name)) &&
			    !strcmp(name, "Py_Version"))
				addr = sym.st_value;
		}
	}
	for (s2 = NULL; e && addr && !done && (s2 = elf_nextscn(e, s2));) {
		if (!gelf_getshdr(s2, &sh2) || sh2.sh_type != SHT_PROGBITS || addr < sh2.sh_addr ||
		    addr + 4 > sh2.sh_addr + sh2.sh_size)
			continue;
		done = pwrite(fd, &hex, 4, (off_t)(sh2.sh_offset + addr - sh2.sh_addr)) == 4;
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return done;
}

/* Samples stopped at no-rule anywhere but in _init or _fini. */
static uint64_t no_rule_outside_crt(const struct py_run *r)
{
	static const char tag[] = "[incomplete: no-rule];";
	char line[16384];
	uint64_t n = 0;
	FILE *f = fopen(r->folded, "re");

	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, tag), *cnt = strrchr(line, ' ');
		size_t len;

		if (!at || !cnt)
			continue;
		at += sizeof(tag) - 1;
		len = strcspn(at, "; ");
		if (!is_crt_function(at, len) && !is_crt_address(at, len)) {
			n += strtoull(cnt + 1, NULL, 10);
			printf("  no rule outside crt: %s", line);
		}
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * An interpreter whose Py_Version says 3.12 (a copy of python3.11, patched):
 * no table entry, so plain native stacks, complete, and counted.
 */
static void test_unsupported_version(void)
{
	/* 1 s of its CPU: ~299 samples at 299 Hz however busy the host, 50 wanted */
	char bin[512], *cmd[] = {bin, prog("recurse"), "1c", NULL};
	char *cp[] = {"cp", PYTHON, bin, NULL};
	struct py_run r = {0};

	tpath(bin, sizeof(bin), "python3.11");
	CHECK(run(cp, NULL, NULL, 30) == 0 && patch_py_version(bin, 0x030e00f0),
	      "a copy of " PYTHON " claiming 3.14");
	if (!record_py("unsupported", cmd, &r))
		goto out;
	CHECK(r.samples >= 50 && r.with_frames == 0, "%lu samples, %lu with Python frames",
	      (unsigned long)r.samples, (unsigned long)r.with_frames);
	/* the version named: the user knows which interpreter is not supported */
	CHECK(r.log && strstr(r.log, "cfiprof: python: 1 Python process of unsupported version "
				     "3.14: native stacks only"),
	      "counted unsupported: %s", r.log ? r.log : "");
	/*
	 * complete but for code no FDE covers: crt's _init and _fini (issue 14),
	 * named or, in a stripped library, by address (CI met one sample in a
	 * page fault at libz.so.1.2.13+0x3000, the first byte of its .init)
	 */
	CHECK(r.log && strstr(r.log, "stop reasons: complete") && no_rule_outside_crt(&r) == 0,
	      "native stacks unchanged: %s", r.log ? r.log : "");
out:
	free(r.log);
}

/*
 * --runtimes: the same program with Python left out (none; ruby alone)
 * shows no Python frame and the summary no Python process, its native
 * stacks as whole (the same crt excuse as above); with python listed, its
 * frames are there.  1 s of its CPU each: ~299 samples at 299 Hz however
 * busy the host, 50 wanted.
 */
static void test_runtimes_option(void)
{
	static const char *const lists[] = {"none", "ruby", "python"};
	char *cmd[] = {PYTHON, prog("recurse"), "1c", NULL};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char *opts[] = {"--runtimes", (char *)lists[i], NULL}, name[32];
		bool on = !strcmp(lists[i], "python");
		struct py_run r = {0};

		snprintf(name, sizeof(name), "runtimes-%s", lists[i]);
		if (!record_py_opts(name, "299", opts, cmd, &r)) {
			free(r.log);
			continue;
		}
		printf("  --runtimes %s: %lu samples, %lu with Python frames\n", lists[i],
		       (unsigned long)r.samples, (unsigned long)r.with_frames);
		CHECK(r.samples >= 50 && (on ? r.with_frames * 2 >= r.samples : r.with_frames == 0),
		      "--runtimes %s: %lu samples, %lu with Python frames", lists[i],
		      (unsigned long)r.samples, (unsigned long)r.with_frames);
		CHECK(on == (r.log && strstr(r.log, "cfiprof: python: ") != NULL),
		      "--runtimes %s: the python summary line: %s", lists[i], r.log ? r.log : "");
		CHECK(r.log && strstr(r.log, "stop reasons: complete") &&
			  no_rule_outside_crt(&r) == 0,
		      "--runtimes %s: native stacks unchanged: %s", lists[i], r.log ? r.log : "");
		free(r.log);
	}
}

/*
 * The runtimes' walks verified while sampling runs (docs/runtimes.md): by
 * default record -v says when they took the first sampling program's place,
 * and counts the samples of a runtime's process taken before, which carry no
 * Python frames and are not the python summary's (it counts a status for
 * each sample it read): no more of them than the samples it does not count.
 * The walks must have come: the program runs 1 s of CPU at 299 Hz, the load
 * tens of ms.  --runtimes-at-start: the walks are there before the first
 * sample, no such line, none counted.  Both judged as every other run.
 */
static void test_walks_later(void)
{
	static const char key[] = " samples of a runtime's process taken before";

	for (int at_start = 0; at_start < 2; at_start++) {
		char *cmd[] = {PYTHON, prog("recurse"), "1c", NULL};
		char *opts[] = {"--runtimes-at-start", NULL};
		const char *name = at_start ? "walks-at-start" : "walks-later";
		const char *line;
		struct py_run r = {0};
		long pending;

		if (!record_py_opts(name, "299", at_start ? opts : NULL, cmd, &r)) {
			free(r.log);
			continue;
		}
		line = r.log ? strstr(r.log, "cfiprof: runtimes' walks: ") : NULL;
		pending = line ? number_before_or_none(line, key) : -1;
		printf("  %s: %ld samples taken before the walks were in place, of %lu\n", name,
		       pending, (unsigned long)r.samples);
		if (at_start) {
			CHECK(!line && !strstr(r.log, "carry no runtime frames"),
			      "%s: no runtimes' walks line, none counted: %s", name, r.log);
		} else {
			uint64_t before = taken_before_known(r.log, r.samples, true);

			CHECK(line && strstr(line, " in place ") && !strstr(line, "not in place"),
			      "%s: the walks in place: %s", name, r.log ? r.log : "");
			CHECK(pending >= 0 && (uint64_t)pending <= before,
			      "%s: %ld samples counted before the walks, %lu outside the python "
			      "summary: %s",
			      name, pending, (unsigned long)before, r.log ? r.log : "");
		}
		judge(name, &r);
		free(r.log);
	}
}

/*
 * --off-cpu on a program that naps 4 x 100 ms in nap_leaf: its blocks carry
 * their Python frames, and the chain's time is what the program measured off
 * the CPU (within 10%: the kernel's switch-out to switch-in is ~10 us a block
 * longer than the program's wall time less its CPU time).
 */
static void test_off_cpu(void)
{
	char *cmd[] = {PYTHON, prog("sleeper"), NULL}, *opts[] = {"--off-cpu", NULL};
	const char *at;
	struct py_run r = {0};
	uint64_t us, measured, unread;
	bool ok;

	if (!record_py_opts("offcpu", "99", opts, cmd, &r))
		goto out;
	/*
	 * A block's sample reaches the consumer at its switch-in, and the last
	 * comes just before the program exits: a consumer starved of CPU may
	 * queue nap_leaf's code object once the process is gone, and the frame
	 * prints [python], counted unreadable (docs/runtimes.md, Limits).  Only
	 * then does [python] stand for a frame of the chain.
	 */
	at = r.log ? strstr(r.log, " unreadable), ") : NULL;
	while (at && at > r.log && at[-1] >= '0' && at[-1] <= '9')
		at--;
	unread = at ? strtoull(at, NULL, 10) : 0;
	us = chain_count_ex(&r, "<module> (*;main (*;nap_outer (*;nap_leaf (*", unread > 0);
	at = r.log ? strstr(r.log, "naps: off-CPU ") : NULL;
	measured = at ? strtoull(at + 14, NULL, 10) / 1000 : 0;
	printf("  off-CPU: %lu us under <module>;main;nap_outer;nap_leaf, %lu us measured, "
	       "%lu code objects unreadable\n",
	       (unsigned long)us, (unsigned long)measured, (unsigned long)unread);
	ok = measured >= 400000 && us >= measured * 9 / 10 && us <= measured * 11 / 10;
	CHECK(ok, "the naps' Python chain: %lu us of %lu us off the CPU", (unsigned long)us,
	      (unsigned long)measured);
	if (!ok)
		print_lines(&r, r.log);
out:
	free(r.log);
}

/*
 * A Python process that execs another program: the interpreter's addresses
 * were the old image's.  Before, the new image's samples were walked as
 * Python's until its exec's load ended (the python summary counted them,
 * what lay at the old addresses read as frames or as unreadable).  Here
 * that load builds chain_big's own 100,000 FDEs (table cache off): ~100 ms
 * of its samples.  The entry goes at the exec now: the summary may count no
 * more samples than python3.11 took, and none of chain_big's has Python
 * frames.
 */
static void test_exec_away(void)
{
	char chain[PATH_MAX + 32];
	char *opts[] = {"--table-cache", "off", "--build-workers", "1", NULL};
	/* 0.5 s of chain_big's CPU time: ~500 samples at 999 Hz however busy the machine */
	char *cmd[] = {PYTHON, prog("exec_away"), chain, "0.5c", NULL};
	char line[16384];
	uint64_t chain_samples = 0, chain_python = 0;
	struct py_run r;
	long known;
	FILE *f;

	snprintf(chain, sizeof(chain), "%s/chain_big", progs_dir);
	if (!record_py_opts("exec_away", "999", opts, cmd, &r))
		goto out;
	f = fopen(r.folded, "re");
	while (f && fgets(line, sizeof(line), f)) {
		const char *sp = strrchr(line, ' ');
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (strncmp(line, "chain_big;", 10))
			continue;
		chain_samples += n;
		chain_python += strstr(line, ".py:") ? n : 0;
	}
	if (f)
		fclose(f);
	printf("  exec_away: %lu samples of python3.11, %lu of chain_big (%lu with Python frames)\n",
	       (unsigned long)r.samples, (unsigned long)chain_samples,
	       (unsigned long)chain_python);
	CHECK(chain_samples >= 50, "only %lu samples of chain_big after the exec",
	      (unsigned long)chain_samples);
	CHECK(chain_python == 0, "%lu of chain_big's samples with Python frames",
	      (unsigned long)chain_python);
	/*
	 * The python summary counts python3.11's samples (those after its
	 * interpreter was known), no more: the old code counted 2-17 of
	 * chain_big's, and once in ~20 runs, with the entry dropped at the exec,
	 * a load of the old image that read its mappings before the exec wrote it
	 * back after it (the kernel now ignores an entry older than the exec).
	 */
	known = interp_summary_samples(r.log, "python");
	CHECK(known >= 0 && (uint64_t)known <= r.samples,
	      "the python summary counts %ld samples, python3.11 took %lu (want no more): "
	      "chain_big's were walked as Python's",
	      known, (unsigned long)r.samples);
out:
	free(r.log);
}

/*
 * The other versions the offsets table has, each as pyenv builds it on this
 * machine kind (/root/.pyenv/versions/3.N.*: the interpreter in
 * libpython3.N.so, not in the program as Debian's; 3.8-3.10's frames are
 * PyFrameObjects, each run by a call of the evaluation loop of its own):
 * the recursion's and the ctypes callback's exact chains, and 95% of the
 * samples in Python code with their frames (those before the interpreter
 * was known excused).  Every version present but 3.11 (Debian's is every
 * other test's) runs, threads under 3.8 and 3.10; which did is printed.
 * Only with CFIPROF_PYTHON_VERSIONS set: make python-versions-test.
 */
static void test_other_versions(void)
{
	char ran[512] = "", name[32];
	glob_t g = {0};

	glob("/root/.pyenv/versions/3.*/bin/python3.*", 0, NULL, &g);
	CHECK(g.gl_pathc > 0, "no pyenv CPython in /root/.pyenv/versions");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;
		const char *rp = prog("recurse"), *cp = prog("ctypes_cb");
		/* a second of CPU time each: ~300 samples at 299 Hz, six versions */
		char *rec[] = {g.gl_pathv[i], (char *)rp, "1c", NULL};
		char *cb[] = {g.gl_pathv[i], (char *)cp, "1", NULL};
		unsigned int minor;
		char want[2048], tail;
		struct py_run r;

		/*
		 * python3.N itself, not python3.N-config, and a version the table
		 * has; 3.11 is Debian's in every other test (its entry is the same)
		 */
		if (sscanf(base, "python3.%u%c", &minor, &tail) != 1 ||
		    !python_offsets_find((uint16_t)(0x0300 | minor)) || minor == 11)
			continue;
		snprintf(py_comm, sizeof(py_comm), "%s", base);
		snprintf(name, sizeof(name), "recurse-3.%u", minor);
		if (record_py(name, rec, &r)) {
			judge_excusing(name, &r, taken_before_known(r.log, r.samples, false));
			snprintf(
			    want, sizeof(want),
			    "<module> (%s:%d);main (%s:%d);outer (%s:%d);rec (%s:15);rec "
			    "(%s:15);rec (%s:15);rec (%s:15);rec (%s:15);rec (%s:14);leaf (%s:*",
			    rp, interp_mark_line(rp, "# MODULE"), rp,
			    interp_mark_line(rp, "# MAIN"), rp, interp_mark_line(rp, "# OUTER"), rp,
			    rp, rp, rp, rp, rp, rp);
			expect_chain(&r, name, want);
		}
		free(r.log);
		snprintf(name, sizeof(name), "ctypes-3.%u", minor);
		if (record_py(name, cb, &r)) {
			judge_excusing(name, &r, taken_before_known(r.log, r.samples, false));
			snprintf(want, sizeof(want),
				 "<module> (%s:25);sort_with_callback (%s:21);compare (%s:*", cp,
				 cp, cp);
			expect_chain(&r, name, want);
		}
		free(r.log);
		/*
		 * thread states known by pthread_self() (3.10 and older): each
		 * worker's own; 3.9's layout is 3.8's
		 */
		if ((python_offsets_find((uint16_t)(0x0300 | minor))->bpf.flags &
		     PY_FLAG_PTHREAD_ID) &&
		    minor != 9) {
			const char *tp = prog("threads");
			char *th[] = {g.gl_pathv[i], (char *)tp, "1c", NULL};

			snprintf(name, sizeof(name), "threads-3.%u", minor);
			if (record_py(name, th, &r)) {
				judge_excusing(name, &r,
					       taken_before_known(r.log, r.samples, false));
				/* co_name, not the qualified name, before 3.11 */
				snprintf(
				    want, sizeof(want),
				    "_bootstrap (*;_bootstrap_inner (*;run (*;beta_work (%s:18);"
				    "spin (%s:*",
				    tp, tp);
				expect_chain(&r, name, want);
				snprintf(
				    want, sizeof(want),
				    "<module> (%s:40);main (%s:34);main_work (%s:26);spin (%s:*",
				    tp, tp, tp, tp);
				expect_chain(&r, name, want);
			}
			free(r.log);
		}
		snprintf(ran + strlen(ran), sizeof(ran) - strlen(ran), " %s", g.gl_pathv[i]);
	}
	globfree(&g);
	snprintf(py_comm, sizeof(py_comm), "python3.11");
	printf("  other versions:%s\n", ran[0] ? ran : " none installed (/root/.pyenv/versions)");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("python"))
		return HARNESS_DONE();
	if (!realpath("tests/progs/python", progs))
		snprintf(progs, sizeof(progs), "tests/progs/python");
	RUN_TEST(test_recursion);
	RUN_TEST(test_threads);
	RUN_TEST(test_generators);
	RUN_TEST(test_ctypes_callback);
	RUN_TEST(test_asyncio);
	RUN_TEST(test_namespaces);
	RUN_TEST(test_pprof_lines);
	RUN_TEST(test_save_report);
	RUN_TEST(test_deferred);
	RUN_TEST(test_first_samples);
	RUN_TEST(test_tstate_id_late);
	RUN_TEST(test_unsupported_version);
	RUN_TEST(test_runtimes_option);
	RUN_TEST(test_walks_later);
	RUN_TEST(test_off_cpu);
	RUN_TEST(test_exec_away);
	/* a version matrix: make python-versions-test, not make test */
	if (getenv("CFIPROF_PYTHON_VERSIONS"))
		RUN_TEST(test_other_versions);
	e2e_finish();
	return HARNESS_DONE();
}
