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
#include "user/symbolize/frame_names.h"
#include "user/symbolize/kallsyms.h"
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
};

static const struct argp_option opts[] = {
	{"no-inherit", OPT_NO_INHERIT, NULL, 0,
	 "only the -p processes or COMMAND, not the processes they start", 0},
	{"max-frames", OPT_MAX_FRAMES, "N", 0, "user frames per sample (default 512, at most 1024)", 0},
	{"tail-calls", OPT_TAIL_CALLS, NULL, 0, "walk with tail calls even if bpf_loop exists", 0},
	{"rows", OPT_ROWS, "N", 0, "capacity of the unwind-rows map (default 4194304)", 0},
	{"max-stacks", OPT_MAX_STACKS, "N", 0, "distinct stacks kept (default 1048576)", 0},
	{"ring-buffer", OPT_RING, "BYTES", 0,
	 "ring buffer size, a power of two from 16384 (default 8388608)", 0},
	{"save", OPT_SAVE, "FILE", 0,
	 "also save the raw stacks and mappings to FILE (-: standard output, with -o FILE)", 0},
	{"verbose", 'v', NULL, 0, "report each object's tables and where the start went", 0},
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
	case OPT_RING:
		if (parse_u32(arg, 16384, 1u << 30, &v) || (v & (v - 1)))
			argp_error(state, "invalid --ring-buffer '%s' (a power of two, 16384..1073741824)",
				   arg);
		args.so.ringbuf_bytes = v;
		break;
	case 'v':
		args.so.verbose = true;
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
		if (args.save && !strcmp(args.save, "-") && !args.out.path)
			argp_error(state, "--save - needs -o FILE: the profile goes to standard output");
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
	FILE *out = stdout;
	bool tty = isatty(STDERR_FILENO);
	int err;

	heap_prefer_huge_pages(HEAP_RESERVE);
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL))
		return 2;
	args.so.debuginfod = args.sym.debuginfod;
	args.so.fetch = args.sym.fetch;
	if (args.out.path) {
		out = output_create(args.out.path, args.out.mode);
		if (!out) {
			fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.out.path, strerror(errno));
			return 1;
		}
	}
	if (args.out.path && args.out.format == OUT_UNKNOWN)
		args.out.format = output_format_from_path(args.out.path);
	/* a recording keeps the lines, for a report in any view */
	args.so.lines = output_needs_lines(&args.out) || args.save;
	/*
	 * A command's or a few processes' objects: their DWARF opened while they
	 * run, not after (-a would open every debug file on the host).
	 */
	args.so.warm_lines = args.so.lines && !args.so.all && !args.so.cgroup[0];
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
	session_print_summary(&s, stderr);
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
	fn.python = s.python_names;
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
			bool to_stdout = !strcmp(args.save, "-");
			FILE *sf = to_stdout ? stdout : output_create(args.save, args.out.mode);

			meta.prof = &prof;
			meta.python = s.python_names;
			if (!sf || recording_write(sf, &s.agg, s.pt, &meta, info.cgroups) ||
			    (to_stdout ? fflush(sf) : fclose(sf))) {
				fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.save,
					strerror(errno));
				err = -EIO;
			}
		}
		if (output_write(out, &prof, args.out.format, args.so.cmd ? args.so.cmd[0] : "cfiprof",
				 &args.out.view)) {
			fprintf(stderr, "cfiprof: writing the output failed: %s\n", strerror(errno));
			err = -EIO;
		}
		profile_free(&prof);
	}
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
	if (out != stdout && fclose(out))
		err = -EIO;
	if (out == stdout && fflush(out))
		err = -EIO;
	return exit_status(&s, err);
}
