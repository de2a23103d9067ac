// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Stripped Go programs unwound and named from .gopclntab through record (issue 29):
 * progs/gofib_stripped (-ldflags='-s -w': no .symtab, no DWARF) runs
 * main.main -> main.work -> main.fib with main.sumSquares inlined into
 * main.work, and a goroutine main.spin -> main.fib.
 *  - folded: those exact chains from their goroutine's bottom, every return
 *    address of a complete stack right after a call (tests/lib/callsites.h;
 *    goroutines' bottoms, runtime.goexit + 1, follow none by Go's design),
 *    (gofib_stripped;runtime.goexit;runtime.main;main.main;...), the inlined
 *    function as its own frame, >= 99% of the samples complete and of the
 *    program's user frames named (not gofib_stripped+0x...), though the
 *    process exited before the profile was named.
 *  - gofmt: Debian's gofmt -l over the compiler's ssa sources (the first try):
 *    >= 99.5% of its walkable samples complete (not those taken while it
 *    exits), >= 99% of its user frames named.
 *  - cgo: progs/gocgo_stripped, C code (.eh_frame) and Go code (pcsp) in one
 *    binary, >= 99% complete, the C frames under runtime.asmcgocall.
 *  - vdso: gofib_stripped's clock mode, main.main -> main.clock -> time.Now,
 *    most samples in the vDSO, which Go calls on the system stack (time.now
 *    switches to it without a frame): every sample in the vDSO has the whole
 *    chain to runtime.goexit but the runtime's own calls (sysmon's, complete
 *    from their runtime root), a signal handler's frames above the vDSO and
 *    samples walked before the program was known to run Go (runtime-pending
 *    past the switcher, never a root there; the same with a switcher, time.now
 *    or runtime.nanotime1, as the leaf), every return address after a call.
 *  - lines: --lines gives main.fib's frames as "main.fib gofib.go:N".
 *  - deleted: report of a --save recording, the binary deleted, prints the
 *    same names.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/callsites.h"
#include "tests/lib/go_func.h"

/* The name both kinds of runtime-pending stacks of the program start with. */
#define PENDING_ROOT "gofib_stripped;[incomplete: runtime-pending];"

/*
 * The next folded line at *@line (to free), its count in *@count (0 when it
 * has none) and in *@count_at the space before it (NULL then): a caller that
 * wants the stack alone cuts the line there, one that matches a leaf
 * ("...;leaf ") does not.  NULL past the last line.
 */
static char *next_line(const char **line, uint64_t *count, char **count_at)
{
	const char *nl;
	char *l;

	if (!*line || !**line)
		return NULL;
	nl = strchr(*line, '\n');
	l = strndup(*line, nl ? (size_t)(nl - *line) : strlen(*line));
	*line = nl ? nl + 1 : NULL;
	*count_at = l ? strrchr(l, ' ') : NULL;
	*count = *count_at ? strtoull(*count_at + 1, NULL, 10) : 0;
	return l;
}

/* Samples whose stack has chain, then (when not NULL) then after it; *total all samples. */
static uint64_t samples_with_then(const char *folded, const char *chain, const char *then,
				  uint64_t *total)
{
	const char *line = folded, *at;
	uint64_t n = 0, c;
	char *l, *sp;

	*total = 0;
	while ((l = next_line(&line, &c, &sp))) {
		*total += c;
		if ((at = strstr(l, chain)) && (!then || strstr(at + strlen(chain), then)))
			n += c;
		free(l);
	}
	return n;
}

static uint64_t samples_with(const char *folded, const char *chain, uint64_t *total)
{
	return samples_with_then(folded, chain, NULL, total);
}

/* How the samples whose stacks pass through the vDSO's clock_gettime were walked. */
struct vdso_walks {
	uint64_t in_vdso;  /* all of them but handler and pending */
	uint64_t chained;  /* main.clock's whole chain */
	uint64_t handler;  /* a Go signal handler's frames above the vDSO */
	uint64_t pending;  /* runtime-pending past the switcher, deferred */
	uint64_t runtime;  /* the runtime's own call, complete from a runtime root */
	uint64_t switched; /* the switcher a frame, its caller found by its own rule */
	char other[512];   /* the first stack none of these explain */
};

/* The frame of @line just before @at (which follows a ';'), NUL-free: its start. */
static const char *frame_before(const char *line, const char *at)
{
	const char *p = at > line ? at - 1 : at;

	while (p > line && p[-1] != ';')
		p--;
	return p;
}

/* Whether the frame at @f (up to a ';' or the stack's end) is @name. */
static int frame_named(const char *f, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(f, name, n) && (f[n] == ';' || !f[n]);
}

/* Whether the frame at @f is Go's assembly that calls the vDSO on g0's stack. */
static int switcher(const char *f)
{
	return frame_named(f, "time.now") || frame_named(f, "runtime.nanotime1");
}

/*
 * Classifies each folded line of @folded holding clock_gettime; @chain is
 * main.clock's, up to the vDSO.  The switcher (time.now, runtime.nanotime1:
 * Go's assembly that moves to g0's stack without a frame) is never a frame
 * of a good walk, which steps from the vDSO to m.vdsoPC.
 */
static void vdso_walks(const char *folded, const char *chain, struct vdso_walks *w)
{
	const char *line = folded, *at, *f;
	char want[256], *l, *sp;
	uint64_t c;

	memset(w, 0, sizeof(*w));
	snprintf(want, sizeof(want), "%s__vdso_clock_gettime", chain);
	while ((l = next_line(&line, &c, &sp))) {
		at = strstr(l, "clock_gettime");
		if (!sp || !at) {
			free(l);
			continue;
		}
		*sp = 0; /* the stack alone */
		f = frame_before(l, strstr(l, "__vdso_clock_gettime") ?: at);
		if (strstr(at, ";runtime.sig") || strstr(at, ";runtime.cgoSigtramp")) {
			w->handler += c;
		} else if (f == l + strlen(PENDING_ROOT) &&
			   !strncmp(l, PENDING_ROOT, strlen(PENDING_ROOT)) && switcher(f)) {
			w->pending += c;
		} else {
			w->in_vdso += c;
			if (switcher(f))
				w->switched += c;
			else if (strstr(l, want))
				w->chained += c;
			else if (!strncmp(l, "gofib_stripped;runtime.", 23) &&
				 !strncmp(f, "runtime.", 8) && !strstr(l, "[incomplete") &&
				 !strstr(l, "[unknown]") && !strstr(l, "main.clock"))
				w->runtime += c;
			else if (!w->other[0])
				snprintf(w->other, sizeof(w->other), "%s", l);
		}
		free(l);
	}
}

/* Whether the frames from @f on are the vDSO's or the kernel's only. */
static int vdso_or_kernel_only(const char *f)
{
	while (*f) {
		const char *end = strchrnul(f, ';');

		if (strncmp(f, "__vdso_", 7) && !frame_named(f, "clock_gettime") &&
		    !(end - f > 4 && !strncmp(end - 4, "_[k]", 4)))
			return 0;
		f = *end ? end + 1 : end;
	}
	return 1;
}

/*
 * Runtime-pending samples (the deferred walk of go_runtime.c's
 * deferred_units) and those of them it explains: the switcher (time.now,
 * runtime.nanotime1) the one user frame past the marker, or its caller of
 * the vDSO's; kernel frames above either (an interrupt taken there).  The
 * first other one in @other.
 */
static uint64_t pending_at_switcher(const char *folded, uint64_t *pending, char *other, size_t size)
{
	const char *line = folded, *leaf, *above;
	uint64_t n = 0, c;
	char *l, *sp;

	*pending = 0;
	other[0] = 0;
	while ((l = next_line(&line, &c, &sp))) {
		if (!sp || !strstr(l, "[incomplete: runtime-pending]")) {
			free(l);
			continue;
		}
		*sp = 0; /* the stack alone */
		*pending += c;
		/* the one user frame past the marker, and what is above it */
		leaf = strncmp(l, PENDING_ROOT, strlen(PENDING_ROOT)) ? NULL
								      : l + strlen(PENDING_ROOT);
		above = leaf ? strchrnul(leaf, ';') : NULL;
		if (leaf && switcher(leaf) && vdso_or_kernel_only(*above ? above + 1 : above))
			n += c;
		else if (!other[0])
			snprintf(other, size, "%s", l);
		free(l);
	}
	return n;
}

/*
 * Samples whose walk ended incomplete, and all samples: not those taken while
 * the process tears its address space down (exiting), which have no stack
 * left to walk.
 */
static uint64_t walk_incomplete(const char *folded, uint64_t *total)
{
	return samples_with(folded, ";[incomplete", total) -
	       samples_with(folded, ";[incomplete: exiting]", total);
}

/* The program's user frames (not kernel, not markers), and how many are named. */
static void named_frames(const char *folded, const char *unnamed, uint64_t *frames, uint64_t *named)
{
	char *copy = strdup(folded), *line, *save = NULL;

	*frames = *named = 0;
	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *f, *s2 = NULL;
		uint64_t c = sp ? strtoull(sp + 1, NULL, 10) : 0;
		int k = 0;

		if (sp)
			*sp = '\0';
		for (f = strtok_r(line, ";", &s2); f; f = strtok_r(NULL, ";", &s2), k++) {
			size_t l = strlen(f);

			if (k == 0 || f[0] == '[' || (l > 4 && !strcmp(f + l - 4, "_[k]")))
				continue;
			*frames += c;
			if (strncmp(f, unnamed, strlen(unnamed)))
				*named += c;
		}
	}
	free(copy);
}

/*
 * Complete stacks of @rec whose outermost pc is runtime.goexit + 1 in @exe:
 * the return address Go gives every goroutine's first function, as if goexit
 * had called it (runtime.newproc1), which follows no call instruction.
 */
static uint64_t goexit_bottoms(const char *rec, const char *exe)
{
	char *text = slurp(rec), *line, *save = NULL;
	uint64_t goexit = 0, n = 0, end;

	CHECK(go_func_range(exe, "runtime.goexit", &goexit, &end), "no runtime.goexit in %s", exe);
	for (line = strtok_r(text, "\n", &save); goexit && line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned reason = 1;
		char *u = strstr(line, " u "), *last;

		if (strncmp(line, "stack ", 6) || !u ||
		    sscanf(line, "stack %*u %*u %*u %u", &reason) != 1 || reason)
			continue;
		last = strrchr(u, ',');
		n += last && strtoull(last + 1, NULL, 16) == goexit + 1;
	}
	free(text);
	return n;
}

static char *record_args(const char *name, char *const opts[], char *const cmd[])
{
	char out[PATHBUF], *log = NULL;

	e2e_record(name, "499", opts, cmd, &log);
	free(log);
	return slurp(tpath(out, sizeof(out), name));
}

static char *record(const char *name, const char *exe, char *const opts[])
{
	/* 1.5 s of its CPU (gofib's "c"): as many samples however busy the machine */
	char *cmd[] = {(char *)exe, "1.5c", "1", NULL};

	return record_args(name, opts, cmd);
}

static void test_folded(void)
{
	char exe[PATHBUF], rec[PATHBUF], *folded;
	char *opts[] = {"--save", rec, NULL};
	uint64_t total, work, inl, spin, frames, named, incomplete, complete = 0, bottoms;
	struct callsite_stats cs = {0};

	snprintf(exe, sizeof(exe), "%s/gofib_stripped", progs_dir);
	tpath(rec, sizeof(rec), "go.rec");
	folded = record("go.folded", exe, opts);
	work = samples_with(
	    folded, "gofib_stripped;runtime.goexit;runtime.main;main.main;main.work;main.fib",
	    &total);
	inl = samples_with(folded, ";main.main;main.work;main.sumSquares ", &total);
	/* `go spin(...)`'s wrapper: main.main.func1 up to Go 1.21, main.main.gowrap1 since 1.22 */
	spin =
	    samples_with(folded, "gofib_stripped;runtime.goexit;main.main.func1;main.spin;main.fib",
			 &total) +
	    samples_with(folded,
			 "gofib_stripped;runtime.goexit;main.main.gowrap1;main.spin;main.fib",
			 &total);
	incomplete = walk_incomplete(folded, &total);
	named_frames(folded, "gofib_stripped+0x", &frames, &named);
	printf("  %lu samples: %lu in main.main;main.work;main.fib, %lu in main.sumSquares "
	       "(inlined), %lu in main.spin;main.fib; %lu of %lu user frames named\n",
	       (unsigned long)total, (unsigned long)work, (unsigned long)inl, (unsigned long)spin,
	       (unsigned long)named, (unsigned long)frames);
	/*
	 * a goroutine in work (fib, then sumSquares), one in spin, for 1.5 s of wall
	 * time: counts, not shares, and few (a host busy with other tests starves it)
	 */
	CHECK(total >= 40 && work >= 5 && inl >= 3 && spin >= 5,
	      "chains: %lu total, %lu work, %lu inlined, %lu spin", (unsigned long)total,
	      (unsigned long)work, (unsigned long)inl, (unsigned long)spin);
	CHECK(frames && named * 100 >= frames * 99, "%lu of %lu frames named", (unsigned long)named,
	      (unsigned long)frames);
	CHECK(total && incomplete * 100 <= total, "%lu of %lu samples incomplete",
	      (unsigned long)incomplete, (unsigned long)total);
	/*
	 * Every return address of a complete stack right after a call (no made-up
	 * frame), but the goroutines' bottoms, goexit + 1 by Go's design, and the
	 * pc a preemption signal interrupted, above runtime.asyncPreempt.
	 */
	CHECK(go_func_range(exe, "runtime.asyncPreempt", &cs.resumed_start, &cs.resumed_end),
	      "no runtime.asyncPreempt in %s", exe);
	CHECK(check_callsites(rec, &cs, &complete) == 0, "cannot read %s", rec);
	bottoms = goexit_bottoms(rec, exe);
	printf("  call sites: %lu return addresses after a call, %lu not, of them %lu goexit + 1; "
	       "%lu preempted\n",
	       (unsigned long)cs.checked, (unsigned long)cs.failed, (unsigned long)bottoms,
	       (unsigned long)cs.preempted);
	/*
	 * as many return addresses as the run had complete stacks at least (each
	 * has one past its leaf; 1,000 was a count a starved run fell short of,
	 * 977 from 77 samples), and 20 of those stacks, as the chains above
	 */
	CHECK(complete >= 20 && cs.checked >= complete && cs.failed == bottoms,
	      "%lu of %lu call sites wrong (%lu complete stacks): %s",
	      (unsigned long)(cs.failed - bottoms), (unsigned long)cs.checked,
	      (unsigned long)complete, cs.first_fail);
	free(folded);
}

static void test_vdso(void)
{
	char exe[PATHBUF], rec[PATHBUF], *folded;
	char *opts[] = {"--save", rec, NULL};
	/* 1.5 s of its CPU time: as many samples however busy the machine */
	char *cmd[] = {exe, "1.5c", "0", "clock", NULL};
	const char *chain =
	    "gofib_stripped;runtime.goexit;runtime.main;main.main;main.clock;time.Now;";
	uint64_t total, in_now, now_chained, now_pending, complete = 0, pending_anywhere,
							  pending_explained, unexplained;
	struct callsite_stats cs = {0};
	struct vdso_walks w;
	char want[256], pending_other[512];

	snprintf(exe, sizeof(exe), "%s/gofib_stripped", progs_dir);
	tpath(rec, sizeof(rec), "vdso.rec");
	folded = record_args("vdso.folded", opts, cmd);
	/*
	 * the vDSO's clock_gettime (__vdso_clock_gettime on x86-64), by how its
	 * samples were walked: a sample in a Go signal handler that interrupted
	 * it, or taken before the process was known to run Go, in its first
	 * milliseconds, and walked once it was (deferred: m.vdsoSP was not read
	 * then, so the walk ends past the switcher, runtime-pending), is apart
	 */
	vdso_walks(folded, chain, &w);
	pending_explained =
	    pending_at_switcher(folded, &pending_anywhere, pending_other, sizeof(pending_other));
	/* time.now, the assembly that switches stacks, as the leaf (the count follows it) */
	in_now = samples_with(folded, ";time.now ", &total);
	snprintf(want, sizeof(want), "%stime.now ", chain);
	now_chained = samples_with(folded, want, &total);
	/* in it past its switch, deferred before the process was known to run Go: the same */
	now_pending = samples_with(folded, "[incomplete: runtime-pending];time.now ", &total);
	unexplained = w.in_vdso - w.chained - w.runtime - w.switched;
	printf("  %lu samples: %lu in the vDSO, %lu of them with the chain, %lu in the runtime's "
	       "own calls (%lu in a signal handler above it, %lu runtime-pending); %lu in "
	       "time.now, %lu with the chain, %lu runtime-pending\n",
	       (unsigned long)total, (unsigned long)w.in_vdso, (unsigned long)w.chained,
	       (unsigned long)w.runtime, (unsigned long)w.handler, (unsigned long)w.pending,
	       (unsigned long)in_now, (unsigned long)now_chained, (unsigned long)now_pending);
	if (w.other[0])
		printf("  first sample in the vDSO with none of those walks: %s\n", w.other);
	/*
	 * Before: a word of g0's stack as the caller of time.now, then
	 * no-mapping, in 1 of 6 runs beside three CPU hogs (the vDSO call of a
	 * sample deferred before the first load); and runtime.nanotime1 as the
	 * root, a zero word of g0's stack taken for the outermost frame (a
	 * clean clone's run); and, in CI, the leaf in a helper of the vDSO's
	 * clock_gettime, the switcher cut off the pending walk (a frame more in
	 * the vDSO than the cut allowed), and the switcher as the leaf past its
	 * switch, a word of g0's stack its caller.  Taken in runtime.nanotime1
	 * itself past its switch, with an interrupt's kernel frames above it
	 * (a CI run's): as time.now's.
	 */
	CHECK(!w.switched && pending_anywhere == pending_explained,
	      "%lu samples walked past the vDSO's caller from g0's stack, %lu runtime-pending "
	      "elsewhere than above a vDSO call or in a switcher (the first: %s)",
	      (unsigned long)w.switched, (unsigned long)(pending_anywhere - pending_explained),
	      pending_other);
	/*
	 * main.clock spends some 12% of its CPU in the vDSO: 20 of its samples is
	 * a count any run gets (1.5 s of CPU at 499 Hz is ~750 samples, 80-100 in
	 * the vDSO; 20 is some 7 standard deviations below).
	 * The runtime calls the vDSO too (sysmon's clock, schedinit's): a
	 * complete walk from a runtime root is as good.  A sample in a Go
	 * signal handler above the vDSO has the handler's frames and the
	 * signal's, not the chain (Go's own profiler cannot walk it either): not
	 * counted, as how many there are depends on how long a handler runs,
	 * longer on a loaded host (3 of 272 in one run).  Every other sample
	 * has the chain.
	 */
	CHECK(w.chained >= 20 && !unexplained,
	      "%lu of %lu samples in the vDSO without main.clock's chain or a runtime caller's "
	      "(%lu with main.clock's): %s",
	      (unsigned long)unexplained, (unsigned long)w.in_vdso, (unsigned long)w.chained,
	      w.other);
	/* time.now called from elsewhere than time.Now in this program: none */
	CHECK(in_now == now_chained + now_pending,
	      "%lu of %lu samples in time.now without its chain, not runtime-pending",
	      (unsigned long)(in_now - now_chained - now_pending), (unsigned long)in_now);
	CHECK(go_func_range(exe, "runtime.asyncPreempt", &cs.resumed_start, &cs.resumed_end),
	      "no runtime.asyncPreempt in %s", exe);
	CHECK(check_callsites(rec, &cs, &complete) == 0, "cannot read %s", rec);
	printf("  call sites: %lu return addresses after a call, %lu not (%lu goexit + 1)\n",
	       (unsigned long)cs.checked, (unsigned long)cs.failed,
	       (unsigned long)goexit_bottoms(rec, exe));
	/*
	 * complete: distinct stacks of the recording; main.clock's are few (its
	 * chain over a handful of vDSO and time.Now pcs: 17 beside make
	 * test-stress's hogs, ~30 idle): 5 show the check ran over several
	 */
	CHECK(complete >= 5 && cs.checked >= complete && cs.failed == goexit_bottoms(rec, exe),
	      "%lu of %lu call sites wrong (%lu complete stacks): %s",
	      (unsigned long)(cs.failed - goexit_bottoms(rec, exe)), (unsigned long)cs.checked,
	      (unsigned long)complete, cs.first_fail);
	free(folded);
}

static void test_gofmt(void)
{
	char *opts[] = {NULL};
	/* src/cmd as in the issue has test files that do not parse (gofmt exits 2): ssa parses */
	char *cmd[] = {"/usr/lib/go-1.19/bin/gofmt", "-l",
		       "/usr/lib/go-1.19/src/cmd/compile/internal/ssa", NULL};
	char out[PATHBUF], *folded, *log = NULL;
	uint64_t total, incomplete, frames, named;

	e2e_record("gofmt.folded", "499", opts, cmd, &log);
	free(log);
	folded = slurp(tpath(out, sizeof(out), "gofmt.folded"));
	incomplete = walk_incomplete(folded, &total);
	named_frames(folded, "gofmt+0x", &frames, &named);
	printf("  gofmt: %lu of %lu samples complete, %lu of %lu user frames named\n",
	       (unsigned long)(total - incomplete), (unsigned long)total, (unsigned long)named,
	       (unsigned long)frames);
	CHECK(total >= 300 && incomplete * 1000 <= total * 5, "%lu of %lu samples incomplete",
	      (unsigned long)incomplete, (unsigned long)total);
	CHECK(frames && named * 100 >= frames * 99, "%lu of %lu frames named", (unsigned long)named,
	      (unsigned long)frames);
	free(folded);
}

/*
 * cgo: C code (its .eh_frame) runs on the system stack through
 * runtime.asmcgocall, Go code (its pcsp rows) on the goroutine's: both walked
 * complete, the C side ending at the switch (no goroutine frames below it).
 */
static void test_cgo(void)
{
	char exe[PATHBUF], out[PATHBUF], *folded, *log = NULL;
	char *cmd[] = {exe, "1.5c", NULL}; /* of its CPU: as many samples on a busy machine */
	uint64_t total, incomplete, c, fib, named;
	int exported;

	snprintf(exe, sizeof(exe), "%s/gocgo_stripped", progs_dir);
	e2e_record("cgo.folded", "499", NULL, cmd, &log);
	free(log);
	folded = slurp(tpath(out, sizeof(out), "cgo.folded"));
	incomplete = walk_incomplete(folded, &total);
	c = samples_with(folded, "gocgo_stripped;runtime.asmcgocall;", &total);
	/*
	 * The C side's names come from the cgo call wrappers the binary exports (Go
	 * 1.19 puts _cgo_*_Cfunc_* in .dynsym; 1.21 no longer does), as binutils'
	 * nm reads them
	 */
	exported = nm_find(exe, true, "_Cfunc_", false, NULL);
	/* and the cgo runtime's own C, as the binary names it (x_cgo_notify_runtime_init_done) */
	named = samples_with(folded, "gocgo_stripped;runtime.asmcgocall;_cgo_", &total) +
		samples_with(folded, "gocgo_stripped;runtime.asmcgocall;x_cgo_", &total);
	fib = samples_with(
	    folded, "gocgo_stripped;runtime.goexit;runtime.main;main.main;main.work;main.mixGo",
	    &total);
	printf("  cgo: %lu samples, %lu in C under runtime.asmcgocall (%lu named _cgo_*: %d "
	       "_Cfunc_ symbols exported), %lu in main.mixGo, %lu incomplete\n",
	       (unsigned long)total, (unsigned long)c, (unsigned long)named, exported,
	       (unsigned long)fib, (unsigned long)incomplete);
	CHECK(exported >= 0, "nm -D %s failed", exe);
	CHECK(exported == 0 || named == c,
	      "cgo: %lu of %lu C samples named, with %d _Cfunc_ exported", (unsigned long)named,
	      (unsigned long)c, exported);
	CHECK(total >= 40 && c >= 10 && fib >= 1 && incomplete * 100 <= total,
	      "cgo: %lu samples, %lu in C, %lu in mixGo, %lu incomplete", (unsigned long)total,
	      (unsigned long)c, (unsigned long)fib, (unsigned long)incomplete);
	free(folded);
}

static void test_lines(void)
{
	char exe[PATHBUF], *folded;
	char *opts[] = {"--lines", NULL};
	uint64_t total, fib;

	snprintf(exe, sizeof(exe), "%s/gofib_stripped", progs_dir);
	folded = record("go_lines.folded", exe, opts);
	fib = samples_with(folded, ";main.work gofib.go:36;main.fib gofib.go:", &total);
	CHECK(total >= 40 && fib >= 5,
	      "%lu of %lu samples in main.work gofib.go:36 -> main.fib gofib.go:N",
	      (unsigned long)fib, (unsigned long)total);
	CHECK(samples_with(folded, ";main.work gofib.go:37;main.sumSquares gofib.go:2", &total),
	      "no main.sumSquares line inlined at main.work gofib.go:37");
	free(folded);
}

/*
 * A stripped PIE (-buildmode=pie: the table in .data.rel.ro.gopclntab, the
 * funcdata in another segment): walked by its pcsp rows and named with lines
 * and inline frames as the plain build is.  Before, no table was found: 0%
 * complete, every frame gofib_pie+0x....
 */
static void test_pie(void)
{
	char exe[PATHBUF], *folded;
	char *opts[] = {"--lines", NULL};
	uint64_t total, incomplete, fib, inl;

	snprintf(exe, sizeof(exe), "%s/gofib_pie", progs_dir);
	folded = record("pie.folded", exe, opts);
	incomplete = walk_incomplete(folded, &total);
	fib = samples_with(folded, ";main.work gofib.go:36;main.fib gofib.go:", &total);
	inl = samples_with(folded, ";main.work gofib.go:37;main.sumSquares gofib.go:2", &total);
	printf("  pie: %lu samples, %lu incomplete, %lu in main.work -> main.fib, %lu in the "
	       "inlined main.sumSquares\n",
	       (unsigned long)total, (unsigned long)incomplete, (unsigned long)fib,
	       (unsigned long)inl);
	CHECK(total >= 40 && incomplete * 100 <= total && fib >= 5 && inl >= 1 &&
		  !strstr(folded, "gofib_pie+0x"),
	      "pie: %lu samples, %lu incomplete, %lu main.fib, %lu inlined, unnamed frames: %s",
	      (unsigned long)total, (unsigned long)incomplete, (unsigned long)fib,
	      (unsigned long)inl, strstr(folded, "gofib_pie+0x") ? "some" : "none");
	free(folded);
}

static void test_deleted(void)
{
	char exe[PATHBUF], rec[PATHBUF], out[PATHBUF], err[PATHBUF], *rep, *log = NULL;
	char *opts[] = {"--save", rec, NULL};
	char *cmd[] = {exe, "1c", "1", NULL};
	char *argv[] = {(char *)cfiprof_bin, "report", rec, "-f", "folded", "-o", out, NULL};
	uint64_t total;

	tpath(exe, sizeof(exe), "gofib_copy");
	tpath(rec, sizeof(rec), "go.rec");
	tpath(out, sizeof(out), "go.report");
	tpath(err, sizeof(err), "go.report.err");
	CHECK(shell_ok("cp %s/gofib_stripped %s", progs_dir, exe), "copy");
	e2e_record("go_deleted.folded", "499", opts, cmd, &log);
	free(log);
	CHECK(unlink(exe) == 0, "unlink");
	CHECK(run(argv, NULL, err, 60) == 0, "report exited non-zero");
	rep = slurp(out);
	CHECK(samples_with(rep, ";main.main;main.work;main.fib", &total) * 10 >= total && total,
	      "report without the binary: %s", rep);
	free(rep);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("go_names"))
		return HARNESS_DONE();
	RUN_TEST(test_folded);
	RUN_TEST(test_vdso);
	RUN_TEST(test_gofmt);
	RUN_TEST(test_cgo);
	RUN_TEST(test_lines);
	RUN_TEST(test_pie);
	RUN_TEST(test_deleted);
	e2e_finish();
	return HARNESS_DONE();
}
