// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go's goroutine labels (issue 29): progs/golabels_* run main.labelled in two
 * goroutines under pprof.Do(worker=alpha|beta, kind=spin, note=60 x's) and
 * main.bare in the main goroutine, without labels.  The profile is read by
 * Go's own `go tool pprof -traces`, not by cfiprof:
 *  - every sample in main.labelled carries worker (alpha or beta), kind=spin
 *    and note cut to its 48 bytes and "..."; none in main.bare carries one;
 *  - both workers are there;
 *  - the same for a cgo program (its external link gives g a PT_TLS), and
 *    for report of a --save recording of the stripped program;
 *  - OTLP: protoc --decode of the OTLP output holds the labels as attributes.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/e2e.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 256)

#define NOTE_CUT "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..." /* 48 x's */

struct label_counts {
	uint64_t labelled, labelled_ok, bare, bare_labelled, alpha, beta, all;
	char first_bad[512];
};

/* One -traces block: its labels and frames judged. */
static void block_done(const struct traces_block *b, void *ctx)
{
	struct label_counts *c = ctx;
	const char *worker = traces_label(b, "worker"), *kind = traces_label(b, "kind");
	const char *note = traces_label(b, "note");
	bool ok = (!strcmp(worker, "alpha") || !strcmp(worker, "beta")) && !strcmp(kind, "spin") &&
		  !strcmp(note, NOTE_CUT);
	bool in_labelled = false, in_bare = false;

	for (int i = 0; i < b->nr_frames; i++) {
		in_labelled |= !strcmp(b->frame[i], "main.labelled");
		in_bare |= !strcmp(b->frame[i], "main.bare");
	}
	c->all += b->count;
	if (in_labelled) {
		c->labelled += b->count;
		c->labelled_ok += ok ? b->count : 0;
		c->alpha += !strcmp(worker, "alpha") ? b->count : 0;
		c->beta += !strcmp(worker, "beta") ? b->count : 0;
		if (!ok && !c->first_bad[0])
			snprintf(c->first_bad, sizeof(c->first_bad),
				 "main.labelled with worker '%s' kind '%s' note '%s'", worker, kind,
				 note);
	}
	if (in_bare) {
		c->bare += b->count;
		c->bare_labelled += worker[0] || kind[0] || note[0] ? b->count : 0;
	}
}

/* go tool pprof -traces -sample_index=samples of path, counted; false if pprof failed. */
static bool count_labels(const char *path, struct label_counts *c)
{
	char *out;
	int status;

	memset(c, 0, sizeof(*c));
	out = go_pprof("go", tmpdir, "-traces -sample_index=samples", path, &status);
	if (status || !out) {
		CHECK(0, "go tool pprof -traces %s: exit %d\n%.1000s", path, status, out ? out : "");
		free(out);
		return false;
	}
	traces_each(out, block_done, c);
	free(out);
	printf("  %s: %lu samples, main.labelled %lu (%lu with their labels: alpha %lu, beta "
	       "%lu), main.bare %lu (%lu with labels)\n",
	       path + strlen(tmpdir) + 1, (unsigned long)c->all, (unsigned long)c->labelled,
	       (unsigned long)c->labelled_ok, (unsigned long)c->alpha, (unsigned long)c->beta,
	       (unsigned long)c->bare, (unsigned long)c->bare_labelled);
	return true;
}

/*
 * The checks of one profile.  Each goroutine runs burn() for the whole run,
 * so main.labelled and main.bare have samples in proportion to the CPU they
 * got: >= 20 of each (of hundreds at 499 Hz, also on a starved host) is the
 * floor of a run that sampled at all, and the labels are checked on every one.
 */
static void check_counts(const char *what, const struct label_counts *c, bool loaded_late,
			 uint64_t pending)
{
	CHECK(c->labelled >= 20 && c->bare >= 20, "%s: %lu samples in main.labelled, %lu in main.bare",
	      what, (unsigned long)c->labelled, (unsigned long)c->bare);
	/*
	 * A sample before the load told the kernel of the Go runtime has no
	 * labels: the program sleeps 300 ms first, so none is expected unless
	 * the load ended later than that (a starved host).
	 */
	if (loaded_late && c->labelled_ok < c->labelled)
		printf("  %s: %lu of %lu samples of main.labelled without labels: the tables were "
		       "loaded after the program's first 300 ms\n",
		       what, (unsigned long)(c->labelled - c->labelled_ok), (unsigned long)c->labelled);
	/*
	 * nor before the runtimes' walks were in place (verified beside sampling,
	 * after the walk's own load: later on a loaded host), counted by record
	 */
	else
		CHECK(c->labelled_ok + pending >= c->labelled,
		      "%s: %lu of %lu samples of main.labelled without their labels, %lu taken "
		      "before the runtimes' walks were in place; first: %s",
		      what, (unsigned long)(c->labelled - c->labelled_ok),
		      (unsigned long)c->labelled, (unsigned long)pending, c->first_bad);
	CHECK(c->bare_labelled == 0, "%s: %lu samples of main.bare with labels", what,
	      (unsigned long)c->bare_labelled);
	CHECK(c->alpha && c->beta, "%s: alpha %lu, beta %lu", what, (unsigned long)c->alpha,
	      (unsigned long)c->beta);
}

/* Whether the log says the tables (and so the Go entry) came after 300 ms from exec. */
static bool loaded_late(const char *log)
{
	const char *at = log ? strstr(log, ", tables loaded ") : NULL;

	return !at || strtod(at + 16, NULL) >= 300.0;
}

static bool last_loaded_late;
static uint64_t last_pending;

static void record_labels(const char *prog, const char *name, char *const opts[])
{
	char exe[PATHBUF], out[PATH_MAX], *log = NULL;
	char *cmd[] = {exe, "1.5c", NULL}; /* of its CPU: as many samples however busy */
	struct label_counts c;

	snprintf(exe, sizeof(exe), "%s/%s", progs_dir, prog);
	if (e2e_record(name, "499", opts, cmd, &log))
		goto out;
	CHECK(log && strstr(log, "cfiprof: go: 1 process, ") && strstr(log, " 0 unreadable;"),
	      "%s: go summary: %s", name, log ? log : "");
	last_loaded_late = loaded_late(log);
	last_pending = log ? summary_rt_walk_pending(log) : 0;
	if (count_labels(tpath(out, sizeof(out), name), &c))
		check_counts(name, &c, last_loaded_late, last_pending);
out:
	free(log);
}

static void test_pprof(void)
{
	record_labels("golabels_stripped", "stripped.pb.gz", NULL);
}

static void test_cgo(void)
{
	record_labels("golabels_cgo", "cgo.pb.gz", NULL);
}

/* report of a --save recording: the labels kept with its stacks */
static void test_report(void)
{
	char rec[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
	char *opts[] = {"--save", rec, NULL};
	char *argv[] = {(char *)cfiprof_bin, "report", rec, "-o", out, NULL};
	struct label_counts c;
	int rc;

	tpath(rec, sizeof(rec), "saved.rec");
	tpath(out, sizeof(out), "report.pb.gz");
	record_labels("golabels_stripped", "saved.pb.gz", opts);
	rc = run(argv, NULL, tpath(err, sizeof(err), "report.err"), 60);
	CHECK(rc == 0, "report exited %d", rc);
	if (!rc && count_labels(out, &c))
		check_counts("report", &c, last_loaded_late, last_pending);
}

/*
 * OTLP: the labels as sample attributes, decoded by protoc with OpenTelemetry's
 * protos and read by tests/lib/otlp_read.py ("A ATTRS FRAMES VALUE" lines):
 * each sample of main.labelled with its worker and kind, none of main.bare.
 */
static void test_otlp(void)
{
	char out[PATH_MAX], txt[PATHBUF], cmd[4 * PATHBUF], *log = NULL, *text, *line, *save = NULL;
	char exe[PATHBUF], *args[] = {exe, "1c", NULL};
	uint64_t labelled = 0, labelled_ok = 0, bare = 0, bare_labelled = 0;

	snprintf(exe, sizeof(exe), "%s/golabels_stripped", progs_dir);
	tpath(out, sizeof(out), "labels.otlp.pb");
	snprintf(txt, sizeof(txt), "%s.out", out);
	if (e2e_record("labels.otlp.pb", "499", NULL, args, &log))
		goto out;
	snprintf(cmd, sizeof(cmd),
		 "protoc -I tests/proto "
		 "--decode=opentelemetry.proto.profiles.v1development.ProfilesData "
		 "opentelemetry/proto/profiles/v1development/profiles.proto < %s | "
		 "python3 tests/lib/otlp_read.py > %s",
		 out, txt);
	CHECK(system(cmd) == 0, "protoc --decode or otlp_read.py of %s failed", out);
	text = slurp(txt);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		uint64_t v = sp ? strtoull(sp + 1, NULL, 10) : 0;
		bool has_worker = strstr(line, "worker=alpha,") || strstr(line, "worker=beta,") ||
				  strstr(line, "worker=alpha ") || strstr(line, "worker=beta ");

		if (strncmp(line, "A ", 2))
			continue;
		if (strstr(line, ";main.labelled;")) {
			labelled += v;
			labelled_ok += has_worker && strstr(line, "kind=spin") ? v : 0;
		} else if (strstr(line, ";main.bare;")) {
			bare += v;
			bare_labelled += strstr(line, "worker=") ? v : 0;
		}
	}
	free(text);
	printf("  otlp: main.labelled %lu (%lu with worker and kind), main.bare %lu (%lu with a "
	       "worker)\n",
	       (unsigned long)labelled, (unsigned long)labelled_ok, (unsigned long)bare,
	       (unsigned long)bare_labelled);
	/* samples/count values: >= 20 and all labelled as check_counts says */
	CHECK(labelled >= 20 &&
		  (labelled_ok + summary_rt_walk_pending(log) >= labelled || loaded_late(log)) &&
		  bare_labelled == 0,
	      "otlp: main.labelled %lu, %lu with their labels; main.bare with a worker %lu",
	      (unsigned long)labelled, (unsigned long)labelled_ok, (unsigned long)bare_labelled);
out:
	free(log);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("go_labels"))
		return HARNESS_DONE();
	RUN_TEST(test_pprof);
	RUN_TEST(test_cgo);
	RUN_TEST(test_report);
	RUN_TEST(test_otlp);
	e2e_finish();
	return HARNESS_DONE();
}
