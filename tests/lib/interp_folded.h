/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An interpreter's frames in cfiprof's folded output, for the runtimes'
 * end-to-end tests (test_python_frames, test_php_frames): each frame printed
 * "name (file:line)", or the runtime's "[NAME]" when its code was not read,
 * in groups right above the runtime's evaluation loop's native frame.
 */
#ifndef CFIPROF_TEST_INTERP_FOLDED_H
#define CFIPROF_TEST_INTERP_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/lib/crt_frames.h"
#include "tests/lib/e2e.h"
#include "tests/lib/pprof_read.h"

/* What tells one runtime's samples and frames apart. */
struct interp_lang {
	char comm[16];	     /* the process's comm: its folded lines start "COMM;" */
	const char *unknown; /* the frame of code not read: "[python]" */
	const char *eval;    /* the evaluation loop's native name (a ".suffix" of it too) */
	const char *what;    /* "Python", for messages */
	/*
	 * A frame is pushed before the evaluation-loop call that runs it
	 * (Ruby: rb_yield's C code before vm_exec): a sample in between has
	 * one group of frames more than loops, the outermost at the root.  The
	 * window is a few instructions a call, so such samples are rare in
	 * any loop (1 in ~900 of Ruby's in the arm64 guest, 1 in thousands on
	 * x86, whatever the machine's speed: they are a share of the CPU time
	 * spent there): 1% of the samples in code at most.
	 */
	bool push_before_loop;
	/*
	 * Native stacks incomplete outside crt code, per mille of the samples,
	 * that a process without the runtime's frames may have: 0 for an
	 * interpreter, whose native code all has CFI; 10 for V8, whose JIT code
	 * and builtins are walked by frame pointers (test_runtimes' 99%).
	 */
	unsigned int incomplete_permille;
};

/* What one recording's folded output says of the runtime's process. */
struct interp_run {
	char folded[PATH_MAX];
	char *log;
	uint64_t samples, with_frames;
	/*
	 * Samples in the runtime's code: with its frames, or a native stack
	 * passing the evaluation loop.
	 */
	uint64_t in_code;
	char missing_example[1024]; /* a sample in its code without its frames */
	uint64_t misplaced;	    /* groups of frames not right above the evaluation loop */
	char misplaced_example[1024];
};

/* "name (file:line)": a frame as every output prints it; the runtime's unknown one. */
static inline bool interp_is_frame(const struct interp_lang *lang, const char *f, size_t len)
{
	size_t i = len;

	if (len == strlen(lang->unknown) && !strncmp(f, lang->unknown, len))
		return true;
	if (len < 5 || f[len - 1] != ')')
		return false;
	for (i = len - 2; i > 0 && f[i] >= '0' && f[i] <= '9'; i--)
		;
	return i < len - 2 && f[i] == ':' && memmem(f, len, " (", 2);
}

static inline bool interp_is_eval(const struct interp_lang *lang, const char *f, size_t len)
{
	size_t n = strlen(lang->eval);

	return len >= n && !strncmp(f, lang->eval, n) && (len == n || f[n] == '.');
}

/*
 * The runtime's frames of one folded line, root first, joined by ';' into
 * out; whether a native frame of the line is the evaluation loop in *in_eval.
 */
static inline void interp_chain(const struct interp_lang *lang, const char *line, char *out,
				size_t len, bool *misplaced, bool *in_eval)
{
	const char *f = line, *end = line + strcspn(line, " "), *prev = NULL;
	size_t n = 0, prev_len = 0;
	/*
	 * A group above a native frame that is not the loop, with no user frame
	 * after it: a call being made, the callee's frame linked and its loop
	 * not entered yet (PHP's zend_call_function), placed at the leaf by
	 * design (profile_interp.c).  Misplaced only once a native frame follows.
	 */
	bool pending = false;

	*misplaced = false;
	*in_eval = false;
	out[0] = 0;
	end = strrchr(line, ' ') ? strrchr(line, ' ') : end;
	while (f < end) {
		const char *semi = memchr(f, ';', (size_t)(end - f));
		size_t flen = semi ? (size_t)(semi - f) : (size_t)(end - f);

		if (interp_is_frame(lang, f, flen)) {
			/* the first of a group: its caller is the evaluation loop */
			if (prev && !interp_is_frame(lang, prev, prev_len) &&
			    !interp_is_eval(lang, prev, prev_len))
				pending = true;
			n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%.*s",
					      n ? ";" : "", (int)flen, f);
		} else {
			if (interp_is_eval(lang, f, flen))
				*in_eval = true;
			/* a user frame after the group (kernel frames end in "_[k]") */
			if (pending && !(flen > 4 && !strncmp(f + flen - 4, "_[k]", 4))) {
				*misplaced = true;
				pending = false;
			}
		}
		prev = f;
		prev_len = flen;
		f += flen + 1;
	}
	/*
	 * No evaluation loop named in the native stack (a sample in its cold
	 * part, which a stripped binary leaves unnamed): the frames go to the
	 * root, by design, not misplaced.
	 */
	if (!*in_eval)
		*misplaced = false;
}

/* Whether a folded line is a sample of the runtime's process ("COMM;..."). */
static inline bool interp_comm_line(const struct interp_lang *lang, const char *line)
{
	size_t n = strlen(lang->comm);

	return !strncmp(line, lang->comm, n) && line[n] == ';';
}

/*
 * Reads the folded output r->folded: the process's samples, in the
 * runtime's code, with its frames, misplaced.
 */
static inline bool interp_read_folded(const struct interp_lang *lang, const char *name,
				      struct interp_run *r)
{
	char line[16384], chain[8192];
	bool misplaced, in_eval;
	FILE *f = fopen(r->folded, "re");

	if (!f) {
		CHECK(0, "%s: no %s", name, r->folded);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *cnt = strrchr(line, ' ');
		uint64_t n = cnt ? strtoull(cnt + 1, NULL, 10) : 0;

		if (!interp_comm_line(lang, line))
			continue;
		r->samples += n;
		interp_chain(lang, line, chain, sizeof(chain), &misplaced, &in_eval);
		if (chain[0])
			r->with_frames += n;
		if (chain[0] || in_eval)
			r->in_code += n;
		if (!chain[0] && in_eval && !r->missing_example[0])
			snprintf(r->missing_example, sizeof(r->missing_example), "%.1000s", line);
		if (misplaced && !strstr(line, "[incomplete")) {
			if (!r->misplaced)
				snprintf(r->misplaced_example, sizeof(r->misplaced_example),
					 "%.1000s", line);
			r->misplaced += n;
		}
	}
	fclose(f);
	printf("  %s: %lu samples, %lu in %s code, %lu with %s frames (%.1f%%)\n", name,
	       (unsigned long)r->samples, (unsigned long)r->in_code, lang->what,
	       (unsigned long)r->with_frames, lang->what,
	       r->in_code ? 100.0 * (double)r->with_frames / (double)r->in_code : 0.0);
	return true;
}

/*
 * Samples whose chain is exactly want: ';'-separated frames, each compared
 * whole, or as a prefix when it ends in '*' (a line that varies); with
 * unread_ok, the unknown frame (code not read) stands for any frame but
 * the first.
 */
static inline uint64_t interp_chain_count(const struct interp_lang *lang,
					  const struct interp_run *r, const char *want,
					  bool unread_ok)
{
	char line[16384], chain[8192];
	uint64_t total = 0;
	bool misplaced, in_eval;
	FILE *f = fopen(r->folded, "re");
	size_t ul = strlen(lang->unknown);

	while (f && fgets(line, sizeof(line), f)) {
		const char *cnt = strrchr(line, ' '), *w = want, *c = chain;
		bool ok = true;

		if (!interp_comm_line(lang, line))
			continue;
		interp_chain(lang, line, chain, sizeof(chain), &misplaced, &in_eval);
		while (ok && *w) {
			size_t wl = strcspn(w, ";"), cl = strcspn(c, ";");

			if (unread_ok && c != chain && cl == ul && !strncmp(c, lang->unknown, ul))
				ok = true;
			else if (wl && w[wl - 1] == '*')
				ok = cl >= wl - 1 && !strncmp(c, w, wl - 1);
			else
				ok = cl == wl && !strncmp(c, w, wl);
			w += wl + (w[wl] == ';');
			c += cl + (c[cl] == ';');
		}
		if (ok && !*c && cnt)
			total += strtoull(cnt + 1, NULL, 10);
	}
	if (f)
		fclose(f);
	return total;
}

/*
 * Samples whose runtime frame caller (its "name (file" up to the line) is
 * followed by the frame named callee (a C method, a builtin): Ruby's
 * `times` and `each` under the script's frames that call them.
 */
static inline uint64_t interp_callee_count(const struct interp_lang *lang,
					   const struct interp_run *r, const char *caller,
					   const char *callee)
{
	char line[16384], want[512];
	uint64_t n = 0;
	FILE *f = fopen(r->folded, "re");

	snprintf(want, sizeof(want), ";%s:", caller);
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = interp_comm_line(lang, line) ? strstr(line, want) : NULL;
		const char *close = p ? strstr(p, ");") : NULL;
		size_t cl = strlen(callee);

		if (close && !strncmp(close + 2, callee, cl) &&
		    (close[2 + cl] == ';' || close[2 + cl] == ' '))
			n += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

/* The samples the runtime's summary line of log counts ("cfiprof: NAME: ..., N samples:"); -1. */
static inline long interp_summary_samples(const char *log, const char *name)
{
	char key[64];
	const char *p;
	unsigned long samples;

	snprintf(key, sizeof(key), "cfiprof: %s: ", name);
	p = log ? strstr(log, key) : NULL;
	p = p ? strchr(p, ',') : NULL;
	if (!p || sscanf(p, ", %lu samples:", &samples) != 1)
		return -1;
	return (long)samples;
}

/* The runtime's summary line of log ("cfiprof: NAME: ..."), to show beside a failed count. */
static inline const char *interp_summary_line(const char *log, const char *rt_name, char *buf,
					      size_t size)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "cfiprof: %s: ", rt_name);
	p = log ? strstr(log, key) : NULL;
	snprintf(buf, size, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
	return p ? buf : "(no summary line)";
}

/*
 * Most samples are in the runtime's code, >= 95% of those show its frames
 * (excused: samples taken before the process was known to run it), each
 * group right above the evaluation loop; a summary line of the runtime, no
 * process of an unsupported version.
 */
static inline void interp_judge_excusing(const struct interp_lang *lang, const char *rt_name,
					 const char *name, const struct interp_run *r,
					 uint64_t excused)
{
	char line[512];

	CHECK(r->samples >= ENOUGH_TO_JUDGE, "%s: %lu samples", name, (unsigned long)r->samples);
	CHECK(r->in_code * 2 >= r->samples, "%s: %lu of %lu samples in %s code", name,
	      (unsigned long)r->in_code, (unsigned long)r->samples, lang->what);
	/* excused as they may be, some samples must carry the frames (the walks were loaded) */
	CHECK(r->with_frames > 0, "%s: no sample with %s frames: %s", name, lang->what,
	      r->log ? r->log : "");
	CHECK((r->with_frames + excused) * 100 >= r->in_code * 95,
	      "%s: %lu of %lu samples in %s code with its frames (%lu taken before it was "
	      "known); one without: %s; %s",
	      name, (unsigned long)r->with_frames, (unsigned long)r->in_code, lang->what,
	      (unsigned long)excused, r->missing_example,
	      interp_summary_line(r->log, rt_name, line, sizeof(line)));
	CHECK(lang->push_before_loop ? r->misplaced * 100 <= r->in_code : r->misplaced == 0,
	      "%s: %lu of %lu samples in code with %s frames not above %s: %s", name,
	      (unsigned long)r->misplaced, (unsigned long)r->in_code, lang->what, lang->eval,
	      r->misplaced_example);
	if (r->misplaced)
		printf("  %s: %lu samples between a frame's push and its loop: %s\n", name,
		       (unsigned long)r->misplaced, r->misplaced_example);
	CHECK(interp_summary_samples(r->log, rt_name) >= 0 &&
		  !strstr(r->log, "unsupported version"),
	      "%s: a %s summary, none unsupported: %s", name, lang->what, r->log ? r->log : "");
}

/*
 * The samples the summary does not count are the ones taken before the
 * process was known to run the runtime, excused: a process record holds at
 * its exec has few; one exec'd by a shell (a container's), as many as its
 * first load after that exec took to come.  The summary counts the one
 * process.
 */
static inline void interp_judge(const struct interp_lang *lang, const char *rt_name,
				const char *name, const struct interp_run *r)
{
	long known = interp_summary_samples(r->log, rt_name);
	char one[64];

	snprintf(one, sizeof(one), "cfiprof: %s: 1 process,", rt_name);
	CHECK(r->log && strstr(r->log, one), "%s: the summary counts one %s process: %s", name,
	      lang->what, r->log ? r->log : "");
	CHECK(known >= 0, "%s: no %s summary line: %s", name, rt_name, r->log ? r->log : "");
	interp_judge_excusing(
	    lang, rt_name, name, r,
	    known >= 0 && (uint64_t)known <= r->samples ? r->samples - (uint64_t)known : 0);
}

/* The number of the first line of the file at path holding mark; 0 if none. */
static inline int interp_mark_line(const char *path, const char *mark)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int n = 0, found = 0;

	while (f && fgets(line, sizeof(line), f) && !found) {
		n++;
		if (strstr(line, mark))
			found = n;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * The runtime's own view of a program's chains, the oracle: interpreter
 * runs script (arg) with env_var set to the line of its leaf's mark, and
 * prints two chains in cfiprof's folded form, which go to first and second
 * (len bytes each).  false (a failed check) when it did not.
 */
static inline bool interp_oracle(const char *interpreter, const char *script, const char *arg,
				 const char *env_var, const char *mark, char *first, char *second,
				 size_t len)
{
	char out[PATH_MAX], env_bt[64], *text, *nl;
	char *argv[] = {(char *)interpreter, (char *)script, (char *)arg, NULL};
	char *env[] = {env_bt, "PATH=/usr/bin:/bin", NULL};
	int leaf = interp_mark_line(script, mark), rc;

	if (first[0] && second[0])
		return true;
	snprintf(env_bt, sizeof(env_bt), "%s=%d", env_var, leaf);
	tpath(out, sizeof(out), "oracle.txt");
	rc = run_env(argv, env, out, NULL, 30, NULL);
	text = slurp(out);
	CHECK(leaf > 0 && rc == 0 && text, "%s's own backtrace: exit %d, leaf line %d", interpreter,
	      rc, leaf);
	nl = text ? strchr(text, '\n') : NULL;
	if (nl) {
		*nl = 0;
		snprintf(first, len, "%s", text);
		snprintf(second, len, "%.*s", (int)strcspn(nl + 1, "\n"), nl + 1);
	}
	free(text);
	printf("  oracle (%s's own):\n    %s\n    %s\n", interpreter, first, second);
	return first[0] && second[0];
}

/* record -F 299 OPTS -- CMD into NAME (folded) and its reading into r; false when either failed. */
static inline bool interp_record(const struct interp_lang *lang, const char *name,
				 char *const opts[], char *const cmd[], struct interp_run *r)
{
	memset(r, 0, sizeof(*r));
	tpath(r->folded, sizeof(r->folded), name);
	return !e2e_record(name, "299", opts, cmd, &r->log) && interp_read_folded(lang, name, r);
}

/*
 * `report` of the recording rec (record --save of the run live): the same
 * samples, the same with the runtime's frames, the same samples of chain
 * want: the frames come back as record named them.
 */
static inline void interp_check_report(const struct interp_lang *lang, const char *rec,
				       const struct interp_run *live, const char *want)
{
	struct interp_run rep = {0};
	char *argv[] = {(char *)cfiprof_bin, "report", "-o", rep.folded, (char *)rec, NULL};
	int st;

	tpath(rep.folded, sizeof(rep.folded), "report.folded");
	st = run(argv, NULL, NULL, 60);
	CHECK(st == 0 && interp_read_folded(lang, "report", &rep) && rep.samples == live->samples &&
		  rep.with_frames == live->with_frames &&
		  interp_chain_count(lang, &rep, want, false) ==
		      interp_chain_count(lang, live, want, false),
	      "report of the recording: exit %d, %lu samples (%lu with %s frames), live %lu (%lu)",
	      st, (unsigned long)rep.samples, (unsigned long)rep.with_frames, lang->what,
	      (unsigned long)live->samples, (unsigned long)live->with_frames);
}

/*
 * The recording rec's report as OTLP, decoded by protoc with
 * OpenTelemetry's protos and read by tests/lib/otlp_read.py: each of
 * frames[] ("F NAME TYPE" lines' first words, "leaf php") is a frame there.
 */
static inline void interp_check_otlp(const char *rec, const char *const *frames, size_t n)
{
	char otlp[PATH_MAX], txt[PATH_MAX + 8], sh[4 * PATH_MAX], *text, want[256];
	char *argv[] = {(char *)cfiprof_bin, "report", "-o", otlp, (char *)rec, NULL};
	int st;

	tpath(otlp, sizeof(otlp), "report.otlp.pb");
	snprintf(txt, sizeof(txt), "%s.txt", otlp);
	st = run(argv, NULL, NULL, 60);
	snprintf(sh, sizeof(sh),
		 "protoc -I tests/proto "
		 "--decode=opentelemetry.proto.profiles.v1development.ProfilesData "
		 "opentelemetry/proto/profiles/v1development/profiles.proto < %s | "
		 "python3 tests/lib/otlp_read.py > %s",
		 otlp, txt);
	CHECK(st == 0 && system(sh) == 0, "report -o %s, protoc, otlp_read.py", otlp);
	text = slurp(txt);
	for (size_t i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "\nF %s ", frames[i]);
		/* the text's first line has no newline before it */
		CHECK(text && (strstr(text, want) || !strncmp(text, want + 1, strlen(want + 1))),
		      "OTLP: no frame '%s' in: %s", frames[i], text ? text : "");
	}
	free(text);
}

/* The recording rec's report as pprof: go tool pprof -lines names fn at file:line. */
static inline void interp_check_pprof(const char *rec, const char *fn, const char *file, int line)
{
	char pb[PATH_MAX], want[PATH_MAX + 64], *o = NULL;
	char *argv[] = {(char *)cfiprof_bin, "report", "-o", pb, (char *)rec, NULL};
	const char *go = find_go();
	int st;

	tpath(pb, sizeof(pb), "report.pb.gz");
	st = run(argv, NULL, NULL, 60);
	CHECK(go != NULL, "go tool pprof is needed (golang-go)");
	if (go && st == 0)
		o = go_pprof(go, tmpdir, "-lines -top -nodecount=200", pb, &st);
	snprintf(want, sizeof(want), " %s %s:%d\n", fn, file, line);
	CHECK(st == 0 && o && strstr(o, want), "go tool pprof -lines: '%s' expected in:\n%s", want,
	      o ? o : "");
	free(o);
}

/*
 * interpreter (its file name: bin) run on script (arg) in its own PID and
 * mount namespaces, the interpreter copied into a tmpfs only they see,
 * recorded into r as NAME.
 */
static inline bool interp_record_namespaces(const struct interp_lang *lang, const char *interpreter,
					    const char *bin, const char *script, const char *arg,
					    struct interp_run *r)
{
	char dir[512], sh[5 * PATH_MAX];
	char *cmd[] = {"unshare", "--pid", "--mount", "--fork", "sh", "-c", sh, NULL};

	tpath(dir, sizeof(dir), "ct");
	mkdir(dir, 0755);
	snprintf(sh, sizeof(sh), "mount -t tmpfs none %s && cp %s %s/%s && exec %s/%s %s %s", dir,
		 interpreter, dir, bin, dir, bin, script, arg);
	return interp_record(lang, "namespaces.folded", NULL, cmd, r);
}

/* After a failed count: the process's first lines and the run's log. */
static inline void interp_print_lines(const struct interp_lang *lang, const struct interp_run *r,
				      const char *log)
{
	char line[16384];
	FILE *f = fopen(r->folded, "re");
	int shown = 0;

	while (f && fgets(line, sizeof(line), f) && shown < 20) {
		if (!interp_comm_line(lang, line))
			continue;
		printf("  %s", line);
		shown++;
	}
	if (f)
		fclose(f);
	printf("%s", log ? log : "");
}

/*
 * The len bytes at skip into the data of the dynamic symbol named symbol
 * (in section) of the ELF file at path become bytes (readelf's addresses):
 * a copy of an interpreter made to claim another version.  true if done.
 */
static inline bool interp_patch_symbol_in(const char *path, const char *section, const char *symbol,
					  size_t skip, const void *bytes, size_t len)
{
	char cmd[2 * PATH_MAX + 256];
	unsigned long long vaddr = 0, off = 0, addr = 0;
	FILE *p;
	bool ok = false;

	snprintf(cmd, sizeof(cmd),
		 "readelf -W --dyn-syms %s | awk '$8 == \"%s\" {print $2; exit}'; "
		 "readelf -SW %s | awk '$2 == \"%s\" {print $4, $5}'",
		 path, symbol, path, section);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%llx %llx %llx", &addr, &vaddr, &off) == 3 && addr >= vaddr) {
		FILE *f = fopen(path, "r+e");

		ok = f && !fseek(f, (long)(addr - vaddr + off + skip), SEEK_SET) &&
		     fwrite(bytes, 1, len, f) == len;
		if (f)
			ok &= !fclose(f);
	}
	if (p)
		pclose(p);
	return ok;
}

/* interp_patch_symbol_in for a symbol in .rodata. */
static inline bool interp_patch_symbol(const char *path, const char *symbol, size_t skip,
				       const void *bytes, size_t len)
{
	return interp_patch_symbol_in(path, ".rodata", symbol, skip, bytes, len);
}

/*
 * cmd runs an interpreter whose version has no entry: its samples keep
 * plain native stacks (complete, but where no FDE covers crt code, or the
 * process exiting), none with the runtime's frames, and the summary names
 * the version ("cfiprof: NAME: 1 WHAT process of unsupported version V:
 * native stacks only").
 */
static inline void interp_check_unsupported(const struct interp_lang *lang, const char *rt_name,
					    const char *version, char *const cmd[])
{
	struct interp_run r = {0};
	char want[256];
	uint64_t n;

	if (!interp_record(lang, "unsupported.folded", NULL, cmd, &r))
		goto out;
	CHECK(r.samples >= ENOUGH_TO_JUDGE && r.with_frames == 0, "%lu samples, %lu with %s frames",
	      (unsigned long)r.samples, (unsigned long)r.with_frames, lang->what);
	snprintf(want, sizeof(want),
		 "cfiprof: %s: 1 %s process of unsupported version %s: native stacks only", rt_name,
		 lang->what, version);
	CHECK(r.log && strstr(r.log, want), "counted unsupported (%s): %s", want,
	      r.log ? r.log : "");
	n = count_incomplete_outside_crt(r.folded, lang->comm);
	/*
	 * One sample more than the language allows: a single leaf that nothing
	 * names ("[unknown]", no-rule or no-mapping) turns up in about one run
	 * in six of php's and ruby's (1 of 241-275 samples).  For php it is
	 * code mapped for a few milliseconds: the thread-safe copy dlopens
	 * each extension and unmaps it at once (its build id is the other
	 * one's), so a sample inside one has a pc no later read of the maps
	 * names (a recording's raw pc, below libgcc_s, where strace shows
	 * the extensions mapped and unmapped).  Two or more still fail.
	 */
	CHECK(n <= 1 || n * 1000 <= r.samples * lang->incomplete_permille,
	      "native stacks: %lu of %lu samples incomplete outside crt code (want %u per mille at "
	      "most, or one sample)",
	      (unsigned long)n, (unsigned long)r.samples, lang->incomplete_permille);
out:
	free(r.log);
}

#endif
