// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof record: sample user (and kernel) stacks of some pids, a command or
 * the whole system, unwound in the kernel, and write folded stacks.
 */
#include <argp.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/profile/aggregate.h"
#include "user/track/cgroups.h"
#include "common/heap.h"
#include "common/parse.h"
#include "user/cli/commands.h"
#include "user/cli/output_opts.h"
#include "user/cli/symbol_opts.h"
#include "user/cli/target_opts.h"
#include "user/output/folded.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/perfmap.h"
#include "user/symbolize/sym_refusals.h"
#include "user/session/bpf_program.h"
#include "user/session/session.h"
#include "user/track/proc_tracker.h"
#include "user/output/format.h"
#include "user/output/output_file.h"
#include "user/profile/recording.h"
#include "user/track/table_store.h"

static struct record_args {
	struct session_opts so;
	struct target_opts target;
	struct output_opts out;
	struct symbol_opts sym;
	const char *save;
	bool quiet;
	bool no_save;
} args = {
	.out = {.mode = OUTPUT_DEFAULT_MODE},
	.so = {.freq = 99, .max_frames = DEFAULT_USER_FRAMES, .kernel = true, .rows_max = 4u << 20,
	       .defer_stack = SESSION_DEFER_STACK,
	       .table_idle_ttl = SESSION_TABLE_IDLE_TTL,
	       .max_stacks = 1u << 20,
	       /* one-shot: every probe and tracepoint hit counted unless --event-budget */
	       .event_budget = SESSION_EVENT_EXACT},
};

enum {
	OPT_MAX_FRAMES = 256,
	OPT_TAIL_CALLS,
	OPT_ROWS,
	OPT_MAX_STACKS,
	OPT_SAVE,
	OPT_RING,
	OPT_NO_INHERIT,
	OPT_NO_SAVE,
};

static const struct argp_option opts[] = {
	{"no-inherit", OPT_NO_INHERIT, NULL, 0,
	 "only the -p processes or COMMAND, not the processes they start", 0},
	{"max-frames", OPT_MAX_FRAMES, "N", 0, "user frames per sample (default 512, at most 1024)", 0},
	{"tail-calls", OPT_TAIL_CALLS, NULL, 0, "walk with tail calls even if bpf_loop exists", 0},
	{"rows", OPT_ROWS, "N", 0, "capacity of the unwind-rows map (default 4194304)", 0},
	{"max-stacks", OPT_MAX_STACKS, "N", 0, "distinct stacks kept (default 1048576)", 0},
	{"ring-buffer", OPT_RING, "BYTES", 0,
	 "size of both ring buffers, a power of two from 16384 (default: samples 262144 a CPU, "
	 "from 524288 to 8388608; stack copies and other records 8388608)",
	 0},
	{"save", OPT_SAVE, "FILE", 0,
	 "keep the recording (raw stacks and mappings, for report) in FILE, the previous one as "
	 "FILE.old (default without -o: " RECORDING_DEFAULT_PATH
	 "; -: standard output, with -o FILE)",
	 0},
	{"no-save", OPT_NO_SAVE, NULL, 0, "keep no recording", 0},
	{"verbose", 'v', NULL, 0,
	 "the whole summary: why stacks stopped, the tables, deferred samples, refusals; each "
	 "object's tables and where the start went",
	 0},
	{"quiet", 'q', NULL, 0, "print nothing but errors (and the command's own output)", 0},
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	uint32_t v;

	switch (key) {
	case ARGP_KEY_INIT:
		args.target.so = &args.so;
		state->child_inputs[0] = &args.target;
		state->child_inputs[1] = &args.out;
		state->child_inputs[2] = &args.sym;
		break;
	case OPT_MAX_FRAMES:
		if (parse_u32(arg, 1, MAX_USER_FRAMES_LIMIT, &args.so.max_frames))
			argp_error(state, "invalid --max-frames '%s' (1..%d)", arg,
				   MAX_USER_FRAMES_LIMIT);
		break;
	case OPT_NO_INHERIT:
		args.so.no_inherit = true;
		break;
	case OPT_TAIL_CALLS:
		args.so.tail_calls = true;
		break;
	case OPT_ROWS:
		if (parse_u32(arg, 1024, 1u << 28, &args.so.rows_max))
			argp_error(state, "invalid --rows '%s'", arg);
		break;
	case OPT_MAX_STACKS:
		if (parse_u32(arg, 1, 1u << 30, &v))
			argp_error(state, "invalid --max-stacks '%s'", arg);
		args.so.max_stacks = v;
		break;
	case OPT_SAVE:
		args.save = arg;
		break;
	case OPT_NO_SAVE:
		args.no_save = true;
		break;
	case OPT_RING:
		if (parse_u32(arg, 16384, 1u << 30, &v) || (v & (v - 1)))
			argp_error(state, "invalid --ring-buffer '%s' (a power of two, 16384..1073741824)",
				   arg);
		args.so.ringbuf_bytes = v;
		break;
	case 'v':
		args.so.verbose = true;
		break;
	case 'q':
		args.quiet = true;
		break;
	case ARGP_KEY_ARG:
		/* everything from the first non-option on is the command */
		args.so.cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (target_opts_count(&args.so) + (args.so.cmd != NULL) != 1)
			argp_error(state, "give exactly one of -p PID, -a, --cgroup PATH, --container ID "
					  "or -- COMMAND");
		if (args.quiet && args.so.verbose)
			argp_error(state, "-q and -v: one or the other");
		if (args.save && !strcmp(args.save, "-") && !args.out.path)
			argp_error(state, "--save - needs -o FILE: the profile goes to standard output");
		if (args.save && args.no_save)
			argp_error(state, "--save and --no-save exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * What record exits with: as perf, the command's own status (128 + the signal
 * that killed it, as shells say; 127 if it could not be run); cfiprof's own
 * failure is 1; without a command 0.
 */
static int exit_status(const struct session *s, int err)
{
	if (!args.so.cmd || s->child <= 0)
		return err ? 1 : 0;
	if (s->exec_failed)
		return 127;
	if (err)
		return 1;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return 0;
}

/*
 * Every file the run will write, checked before the workload starts: a run
 * that cannot keep its results is refused (2) rather than run for nothing.
 * Without -o (the profile to standard output) a recording is kept by default,
 * as perf keeps perf.data, for `cfiprof report`; a directory it cannot be
 * written to only says so.
 */
static int check_outputs(void)
{
	const char *save = args.save && strcmp(args.save, "-") ? args.save : NULL;

	if (!args.save && !args.no_save && !args.out.set) {
		if (!output_check(RECORDING_DEFAULT_PATH))
			args.save = RECORDING_DEFAULT_PATH;
		else
			fprintf(stderr,
				"cfiprof: no recording kept: cannot write %s: %s (--save FILE "
				"chooses where, --no-save keeps none)\n",
				RECORDING_DEFAULT_PATH, strerror(errno));
	}
	if (args.out.path && save && output_same_path(args.out.path, save)) {
		fprintf(stderr, "cfiprof: -o and --save are the same file (%s): give two\n", save);
		return 2;
	}
	if (args.out.path && output_check(args.out.path)) {
		fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.out.path, strerror(errno));
		return 2;
	}
	if (save && output_check(save)) {
		fprintf(stderr, "cfiprof: cannot write %s: %s\n", save, strerror(errno));
		return 2;
	}
	return 0;
}

/* The recording, to --save's file (renamed into place, the last one kept as .old) or stdout. */
static int write_recording(struct session *s, struct recording_meta *meta, struct cgroup_names *cg,
			   const struct output_owner *owner)
{
	bool to_stdout = !strcmp(args.save, "-");
	struct output_file of = {.f = stdout};
	int e;

	if (!to_stdout && output_open(&of, args.save, args.out.mode, owner))
		goto fail;
	if (recording_write(of.f, &s->agg, s->pt, meta, cg)) {
		e = errno;
		if (!to_stdout)
			output_abort(&of);
		errno = e;
		goto fail;
	}
	if (to_stdout ? fflush(stdout) : output_commit(&of, true))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.save, strerror(errno));
	return -EIO;
}

/* The profile, to -o's file (renamed into place once complete) or stdout. */
static int write_profile(struct profile *prof, const struct output_owner *owner)
{
	struct output_file of = {.f = stdout};
	const char *title = args.so.cmd ? args.so.cmd[0] : "cfiprof";
	int e;

	if (args.out.path && output_open(&of, args.out.path, args.out.mode, owner)) {
		fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.out.path, strerror(errno));
		return -EIO;
	}
	if (output_write(of.f, prof, args.out.format, title, &args.out.view)) {
		e = errno;
		if (args.out.path)
			output_abort(&of);
		fprintf(stderr, "cfiprof: writing the output failed: %s\n", strerror(e));
		return -EIO;
	}
	if (args.out.path ? output_commit(&of, false) : fflush(stdout)) {
		fprintf(stderr, "cfiprof: writing %s failed: %s\n",
			args.out.path ? args.out.path : "standard output", strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The live progress line, only when stderr is a terminal. */
static void progress(struct session *s, void *ctx)
{
	uint64_t samples, complete, lost;

	(void)ctx;
	session_progress(s, &samples, &complete, &lost);
	fprintf(stderr, "\r\033[Kcfiprof: %.0f s, %" PRIu64 " samples, %.1f%% complete, %" PRIu64
			" lost",
		mono_sec() - s->start, samples,
		samples ? 100.0 * (double)complete / (double)samples : 0.0, lost);
	fflush(stderr);
}

/*
 * record -q: cfiprof's own stderr goes to a memory file until the end, and is
 * shown only if record fails (its reasons are there).  The command keeps the
 * real stderr (session_opts.cmd_stderr).  Returns the real stderr's copy, or
 * -1 (then nothing is held back).
 */
static int quiet_begin(void)
{
	int held = memfd_create("cfiprof-stderr", MFD_CLOEXEC);
	int real = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

	if (held < 0 || real < 0 || dup2(held, STDERR_FILENO) < 0) {
		if (held >= 0)
			close(held);
		if (real >= 0)
			close(real);
		return -1;
	}
	close(held);
	return real;
}

/* Puts the real stderr back; on failure, with what was held back written to it first. */
static void quiet_end(int real, bool failed)
{
	char buf[8192];
	ssize_t n;

	if (real < 0)
		return;
	fflush(stderr);
	if (failed && lseek(STDERR_FILENO, 0, SEEK_SET) == 0)
		while ((n = read(STDERR_FILENO, buf, sizeof(buf))) > 0)
			if (write(real, buf, (size_t)n) != n)
				break;
	dup2(real, STDERR_FILENO);
	close(real);
}

int cmd_record(int argc, char **argv)
{
	static const struct argp_child children[] = {
		{&target_argp, 0, NULL, 0}, {&output_argp, 0, NULL, 0}, {&symbol_argp, 0, NULL, 0},
		{0}};
	static const struct argp argp = {
		opts, parse_opt, "[-- COMMAND [ARGS...]]",
		"Sample call stacks, unwound in the kernel from DWARF CFI, and write a profile. With "
		"-- COMMAND, cfiprof exits with the command's exit status (128 + the signal that "
		"killed it).\v"
		"Examples:\n  cfiprof record -p 1234 -d 10 -o out.svg\n"
		"  cfiprof record -F 999 -o out.pb.gz -- ./app arg\n  cfiprof record -a -d 5 > all.folded",
		children, NULL, NULL};
	struct recording_meta meta = {0};
	struct profile_info info = {0};
	struct prof_event pevents[PROF_MAX_EVENTS];
	struct profile prof;
	struct session s;
	struct frame_namer fn;
	struct ksyms *ks = NULL;
	double t_stop[4] = {0};
	char kerr[256];
	struct output_owner owner = {0};
	bool tty = isatty(STDERR_FILENO);
	int err, real_stderr = -1, status;

	heap_prefer_huge_pages(HEAP_RESERVE);
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL))
		return 2;
	args.so.debuginfod = args.sym.debuginfod;
	args.so.fetch = args.sym.fetch;
	if (check_outputs())
		return 2;
	/* under sudo the files are the user's, unless -m chose who may read them */
	if (!args.out.mode_set)
		owner = output_owner_from_env();
	/* a recording keeps the lines, for a report in any view */
	args.so.lines = output_needs_lines(&args.out) || args.save;
	/*
	 * A command's or a few processes' objects: their DWARF opened while they
	 * run, not after (-a would open every debug file on the host).
	 */
	args.so.warm_lines = args.so.lines && !args.so.all && !args.so.cgroup[0];
	if (args.quiet) {
		real_stderr = quiet_begin();
		args.so.cmd_stderr = real_stderr;
		tty = false;
	}
	err = session_start(&s, &args.so);
	if (err)
		goto out;
	session_wait(&s, args.target.duration > 0 ? s.start + args.target.duration : 0, tty ? progress : NULL,
		     NULL);
	if (tty)
		fprintf(stderr, "\r\033[K");
	t_stop[0] = mono_sec();
	session_stop(&s);
	t_stop[1] = mono_sec();
	session_print_summary(&s, stderr,
			      args.quiet	    ? SUMMARY_QUIET
			      : args.so.verbose ? SUMMARY_FULL
						: SUMMARY_SHORT);
	/* sampling is over: the debug files still coming are worth a bounded wait */
	sym_fetch_settle(s.fetch, stderr);
	meta.freq = args.so.freq;
	snprintf(meta.event, sizeof(meta.event), "%.31s",
		 args.so.events.nr ? args.so.events.ev[0].name : args.so.cycles ? "cycles" : "cpu-clock");
	meta.start_unix_ns = s.start_unix_ns;
	meta.duration_ns = (uint64_t)((mono_sec() - s.start) * 1e9);
	ks = args.so.kernel ? session_kernel_symbols(&s, kerr, sizeof(kerr)) : NULL;
	if (args.so.kernel && !ks)
		fprintf(stderr, "cfiprof: %s\n", kerr);
	meta.ks = ks;
	frame_namer_init(&fn, s.pt, ks);
	session_runtimes_namers(&s.runtimes, &fn, NULL);
	info.period_ns = 1000000000ull / args.so.freq;
	info.start_unix_ns = meta.start_unix_ns;
	info.duration_ns = meta.duration_ns;
	info.event = meta.event;
	info.nr_events = session_prof_events(&s, pevents);
	info.events = pevents;
	_Static_assert(RECORDING_MAX_EVENTS >= EVENT_MAX, "a recording holds every -e event");
	for (int i = 0; info.nr_events && i < s.opts.events.nr && i < RECORDING_MAX_EVENTS; i++)
		snprintf(meta.event_names[meta.nr_events++], sizeof(meta.event_names[0]), "%s",
			 s.opts.events.ev[i].name);
	info.cgroups = cgroup_names_new();
	info.group_by_container = args.out.group_by_container;
	t_stop[2] = mono_sec();
	if (profile_build(&prof, &s.agg, &fn, &info)) {
		fprintf(stderr, "cfiprof: out of memory while symbolizing\n");
		err = -ENOMEM;
	} else {
		/* first: the output's view rewrites the profile's stacks */
		if (args.save) {
			meta.prof = &prof;
			session_runtimes_namers(&s.runtimes, NULL, meta.interp);
			err = write_recording(&s, &meta, info.cgroups, &owner);
		}
		if (write_profile(&prof, &owner))
			err = -EIO;
		profile_free(&prof);
	}
	/* after naming: the symbol sources are read as frames are named */
	sym_refusals_print(s.syms, s.fetch, stderr);
	/* a JIT's map another user wrote, a link, or too big: its frames stay unnamed */
	if (perfmap_refused_total())
		fprintf(stderr,
			"cfiprof: perf maps refused: %" PRIu64
			" (another user's than the process's, a link, not a regular file, or too big)\n",
			perfmap_refused_total());
	t_stop[3] = mono_sec();
	frame_namer_free(&fn);
	ksyms_free(ks);
out:
	cgroup_names_free(info.cgroups);
	session_free(&s); /* reaps the command */
	/* from the command's end (or the duration's) to record's, as start: is to its start */
	if (!err && args.so.verbose)
		fprintf(stderr,
			"cfiprof: stop: %.1f ms: sampling detached and drained %.1f ms, summary and "
			"kernel symbols %.1f ms, frames named and written %.1f ms, teardown %.1f ms\n",
			(mono_sec() - t_stop[0]) * 1e3, (t_stop[1] - t_stop[0]) * 1e3,
			(t_stop[2] - t_stop[1]) * 1e3, (t_stop[3] - t_stop[2]) * 1e3,
			(mono_sec() - t_stop[3]) * 1e3);
	status = exit_status(&s, err);
	/* cfiprof's own failure: its reasons, held back by -q, are shown */
	quiet_end(real_stderr, err != 0);
	return status;
}
