// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cfiprof report FILE: re-symbolizes and renders a saved recording; needs no privilege. */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/escape.h"
#include "common/heap.h"
#include "user/profile/aggregate.h"
#include "user/track/cgroups.h"
#include "user/cli/commands.h"
#include "user/cli/output_opts.h"
#include "user/cli/symbol_opts.h"
#include "user/session/privileges.h"
#include "elf/safe_open.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/sym_cache.h"
#include "user/output/format.h"
#include "user/output/otlp_read.h"
#include "user/output/output_file.h"
#include "user/track/proc_tracker.h"
#include "user/profile/recording.h"
#include "user/session/event_spec.h"
#include "user/session/runtimes.h"

static struct report_args {
	const char *input;
	struct output_opts out;
	struct symbol_opts sym;
	bool no_kernel_symbols;
} args = {.out = {.mode = OUTPUT_DEFAULT_MODE}};

static const struct argp_option opts[] = {
    {"no-kernel-symbols", 'K', NULL, 0, "print kernel frames as addresses", 0},
    {},
};

static const char default_input[] = RECORDING_DEFAULT_PATH;
/* this process is the child that writes the output for its parent to put in place */
static bool output_child;

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &args.out;
		state->child_inputs[1] = &args.sym;
		break;
	case 'K':
		args.no_kernel_symbols = true;
		break;
	case ARGP_KEY_ARG:
		if (args.input)
			argp_error(state, "only one recording");
		args.input = arg;
		break;
	case ARGP_KEY_END:
		/* as perf report reads perf.data: what record keeps by default */
		if (!args.input)
			args.input = default_input;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * The recording and the files it names are read without any capability,
 * but the rename that puts the output in place (in the user's directory,
 * under sudo) needs root's rights: a child reports into the temporary file,
 * this process only renames it, or removes it if the child failed.
 * Returns -1 to go on reporting here (the child, or no child to be had),
 * else the exit status.
 */
static int report_in_child(struct output_file *of)
{
	pid_t child;
	int st;

	fflush(NULL); /* nothing buffered is written twice */
	child = fork();
	if (child <= 0) {
		output_child = child == 0;
		return -1;
	}
	/* Ctrl-C is the child's to act on; this process then cleans up */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR) {
			output_abort(of);
			return 1;
		}
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		if (!output_commit(of, false))
			return 0;
		fprintf(stderr, "cfiprof: writing %s failed: %s\n", of->path, strerror(errno));
		return 1;
	}
	output_abort(of);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Puts the written output in place, or leaves it to the parent that can. */
static int output_done(struct output_file *of)
{
	if (!args.out.path)
		return fflush(stdout);
	return output_child ? output_finish_for_parent(of) : output_commit(of, false);
}

/* The profile's period, times and event types, from what the recording says. */
static void info_from_recording(struct profile_info *info, const struct recording_meta *meta,
				struct event_list *events, struct prof_event *pevents)
{
	int i;

	info->period_ns = meta->freq ? 1000000000ull / meta->freq : 0;
	info->start_unix_ns = meta->start_unix_ns;
	info->duration_ns = meta->duration_ns;
	info->event = meta->event[0] ? meta->event : "cpu-clock";
	/* the recording's events, parsed again for their pprof types and units */
	for (i = 0; i < meta->nr_events; i++) {
		char perr[256];

		if (!strcmp(meta->event_names[i], "off-cpu")
			? event_list_add_off_cpu(events)
			: event_list_parse(events, meta->event_names[i], perr, sizeof(perr)))
			break;
	}
	if (meta->nr_events && events->nr == meta->nr_events) {
		event_list_describe(events, pevents);
		info->events = pevents;
		info->nr_events = (size_t)events->nr;
	}
}

/* Writes the profile to of; 0 when it is all out (else the output is removed). */
static int write_report(struct output_file *of, struct profile *prof)
{
	if (output_write(of->f, prof, args.out.format, args.input, &args.out.view)) {
		fprintf(stderr, "cfiprof: writing the output failed: %s\n", strerror(errno));
		if (args.out.path)
			output_abort(of);
		return -1;
	}
	if (output_done(of)) {
		fprintf(stderr, "cfiprof: writing %s failed: %s\n",
			args.out.path ? args.out.path : "standard output", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * An OTLP profiles file (.otlp.pb, what record -f otlp writes) in any
 * format: its names are resolved already, nothing is symbolized again.
 */
static int report_otlp(FILE *in, struct output_file *of)
{
	struct profile prof;
	char err[256];
	int ret;

	if (otlp_read_file(in, &prof, err, sizeof(err))) {
		fprintf(stderr, "cfiprof: %s: %s%s\n", args.input,
			in == stdin ? "not a cfiprof recording (no '# cfiprof recording v1' "
				      "header), and "
				    : "",
			err);
		if (args.out.path)
			output_abort(of);
		return 1;
	}
	ret = write_report(of, &prof) ? 1 : 0;
	fprintf(stderr, "cfiprof: %" PRIu64 " samples, %zu stacks\n", prof.total, prof.nr_samples);
	profile_free(&prof);
	return ret;
}

/*
 * Whether standard input holds an OTLP message, not a recording: a recording
 * begins with its "# cfiprof recording" line, a ProfilesData message with a
 * field's tag (0x0a, 0x12: its first fields are messages), never '#'.
 */
static bool stdin_is_otlp(void)
{
	int c = getc(stdin);

	if (c == EOF)
		return false;
	ungetc(c, stdin);
	return c != '#';
}

int cmd_report(int argc, char **argv)
{
	static const struct argp_child children[] = {
	    {&output_argp, 0, NULL, 0}, {&symbol_argp, 0, NULL, 0}, {0}};
	static const struct argp argp = {
	    opts,
	    parse_opt,
	    "[FILE]",
	    "Render a recording kept by 'cfiprof record' (FILE, default " RECORDING_DEFAULT_PATH
	    "; -: standard input), symbolizing it again from the files it names; or an OTLP "
	    "profiles file (FILE.otlp.pb, as -f otlp writes it, or one piped in).",
	    children,
	    NULL,
	    NULL};
	struct recording_meta meta = {0};
	struct profile_info info = {0};
	struct prof_event pevents[PROF_MAX_EVENTS];
	struct event_list events = {0};
	struct aggregator agg;
	struct sym_cache *syms = NULL;
	struct sym_fetch *fetch = NULL;
	struct proc_tracker *pt = NULL;
	struct ksyms *ks = NULL;
	struct frame_namer fn;
	struct profile prof;
	char err[256], kerr[256];
	FILE *in = NULL;
	struct output_file of = {.f = stdout};
	struct output_owner owner = {0};
	uint64_t bad = 0;
	int ret = 1;

	heap_prefer_huge_pages(HEAP_RESERVE);
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/*
	 * Opened (under a temporary name) while root may still give it to the
	 * user who ran sudo; removed if the report fails.
	 */
	if (!args.out.mode_set)
		owner = output_owner_from_env();
	if (args.out.path && output_open(&of, args.out.path, args.out.mode, &owner)) {
		fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.out.path, strerror(errno));
		return 2;
	}
	/* kernel symbols need CAP_SYSLOG; nothing after them needs any privilege */
	if (!args.no_kernel_symbols) {
		ks = ksyms_load(NULL, kerr, sizeof(kerr));
		if (!ks)
			fprintf(stderr, "cfiprof: %s: addresses shown\n", kerr);
	}
	if (of.tmp && (ret = report_in_child(&of)) >= 0) {
		ksyms_free(ks);
		return ret;
	}
	ret = 1;
	if (privileges_drop_all()) {
		fprintf(stderr, "cfiprof: cannot drop capabilities: %s\n", strerror(errno));
		ksyms_free(ks);
		if (args.out.path)
			output_abort(&of);
		return 1;
	}
	/*
	 * The recording and every file it names are untrusted: no FIFO, no device;
	 * but "-", standard input, is what the user chose to pipe in (as perf's -i -).
	 */
	in = strcmp(args.input, "-") ? fopen_regular(args.input) : stdin;
	if (in == stdin)
		args.input = "standard input"; /* in messages and as the profile's title */
	if (!in) {
		fprintf(stderr, "cfiprof: cannot read %s: %s%s\n", args.input, strerror(errno),
			args.input == default_input ? " (record keeps it when run without -o)"
						    : "");
		ksyms_free(ks);
		if (args.out.path)
			output_abort(&of);
		return 1;
	}
	if (in == stdin ? stdin_is_otlp() : output_format_from_path(args.input) == OUT_OTLP) {
		ret = report_otlp(in, &of);
		fclose(in);
		ksyms_free(ks);
		return ret;
	}
	syms = sym_cache_new();
	if (syms && args.sym.debuginfod) {
		fetch = sym_fetch_new(&args.sym.fetch);
		sym_cache_set_fetch(syms, fetch);
	}
	if (syms)
		sym_cache_set_lines(syms, output_needs_lines(&args.out));
	pt = syms ? proc_tracker_new_names(syms) : NULL;
	meta.frames = saved_frames_new();
	meta.interp_frames = saved_interp_new();
	if (!pt || !meta.frames || !meta.interp_frames || agg_init(&agg, UINT64_MAX)) {
		fprintf(stderr, "cfiprof: out of memory\n");
		goto out;
	}
	info.cgroups = cgroup_names_new_saved();
	info.group_by_container = args.out.group_by_container;
	if (recording_read(in, &agg, pt, &meta, info.cgroups, &bad, err, sizeof(err))) {
		fprintf(stderr, "cfiprof: %s: %s\n", args.input, err);
		goto out_agg;
	}
	if (bad)
		fprintf(stderr, "cfiprof: %s: %" PRIu64 " malformed lines skipped (first: %s)\n",
			args.input, bad, str_escape((char[512]){0}, 512, err, NULL));
	/* the objects were read with the recording: their fetches are under way */
	sym_fetch_settle(fetch, stderr);
	frame_namer_init(&fn, pt, ks);
	fn.saved_kernel = &meta.knames;
	fn.saved_user = meta.frames;
	fn.saved_interp = meta.interp_frames;
	session_runtimes_namers(NULL, &fn, NULL);
	fn.perfmaps_by_path = true;
	info_from_recording(&info, &meta, &events, pevents);
	if (profile_build(&prof, &agg, &fn, &info)) {
		fprintf(stderr, "cfiprof: out of memory while symbolizing\n");
		goto out_fn;
	}
	ret = write_report(&of, &prof) ? 1 : 0;
	fprintf(stderr, "cfiprof: %" PRIu64 " samples, %zu stacks\n", prof.total, prof.nr_samples);
	profile_free(&prof);
out_fn:
	frame_namer_free(&fn);
out_agg:
	agg_free(&agg);
	kernel_names_free(&meta.knames);
out:
	if (args.out.path && of.f)
		output_abort(&of); /* the report failed: the previous output stays */
	ksyms_free(ks);
	cgroup_names_free(info.cgroups);
	proc_tracker_free(pt);
	sym_cache_free(syms);
	sym_fetch_free(fetch);
	saved_frames_free(meta.frames);
	saved_interp_free(meta.interp_frames);
	fclose(in);
	return ret;
}
