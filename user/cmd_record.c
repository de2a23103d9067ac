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

#include "aggregate.h"
#include "commands.h"
#include "folded.h"
#include "frame_names.h"
#include "loader.h"
#include "proc_tracker.h"
#include "output.h"
#include "recording.h"
#include "table_store.h"

#define MAX_PIDS 256

static struct record_args {
	uint32_t pids[MAX_PIDS];
	int nr_pids;
	bool all;
	char **cmd;
	uint32_t freq;
	double duration;
	uint32_t max_frames;
	bool kernel;
	bool tail_calls;
	bool cycles;
	uint32_t rows_max;
	uint64_t max_stacks;
	const char *output;
	enum out_format format;
	const char *save;
	bool verbose;
} args = {
	.freq = 99,
	.max_frames = 127,
	.kernel = true,
	.rows_max = 4u << 20,
	.max_stacks = 1u << 20,
};

enum {
	OPT_MAX_FRAMES = 256,
	OPT_USER_ONLY,
	OPT_TAIL_CALLS,
	OPT_ROWS,
	OPT_MAX_STACKS,
	OPT_EVENT,
	OPT_SAVE,
};

static const struct argp_option opts[] = {
	{"pid", 'p', "PID[,PID...]", 0, "profile these processes (all their threads)", 0},
	{"all-cpus", 'a', NULL, 0, "profile the whole system", 0},
	{"freq", 'F', "HZ", 0, "samples per second per CPU (default 99)", 0},
	{"duration", 'd', "SECONDS", 0, "stop after SECONDS (default: until Ctrl-C or the command exits)",
	 0},
	{"max-frames", OPT_MAX_FRAMES, "N", 0, "user frames per sample (default 127, at most 1024)", 0},
	{"kernel", 'k', NULL, 0, "record kernel stacks too (default)", 0},
	{"user-only", OPT_USER_ONLY, NULL, 0, "do not record kernel stacks", 0},
	{"event", OPT_EVENT, "EVENT", 0, "cpu-clock (default) or cycles", 0},
	{"output", 'o', "FILE", 0, "write the profile to FILE (default stdout)", 0},
	{"format", 'f', "FORMAT", 0,
	 "folded, pprof, svg, text or speedscope (default: by the extension of -o, else folded)", 0},
	{"tail-calls", OPT_TAIL_CALLS, NULL, 0, "walk with tail calls even if bpf_loop exists", 0},
	{"rows", OPT_ROWS, "N", 0, "capacity of the unwind-rows map (default 4194304)", 0},
	{"max-stacks", OPT_MAX_STACKS, "N", 0, "distinct stacks kept (default 1048576)", 0},
	{"save", OPT_SAVE, "FILE", 0, "also save the raw stacks and mappings to FILE", 0},
	{"verbose", 'v', NULL, 0, "report each object's tables", 0},
	{},
};

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	char *tok, *save = NULL;
	uint32_t v;

	switch (key) {
	case 'p':
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (parse_u32(tok, 1, INT32_MAX, &v))
				argp_error(state, "invalid pid '%s'", tok);
			if (args.nr_pids == MAX_PIDS)
				argp_error(state, "at most %d pids", MAX_PIDS);
			args.pids[args.nr_pids++] = v;
		}
		break;
	case 'a':
		args.all = true;
		break;
	case 'F':
		if (parse_u32(arg, 1, 100000, &args.freq))
			argp_error(state, "invalid frequency '%s' (1..100000)", arg);
		break;
	case 'd': {
		char *end;

		args.duration = strtod(arg, &end);
		if (end == arg || *end || args.duration <= 0)
			argp_error(state, "invalid duration '%s'", arg);
		break;
	}
	case OPT_MAX_FRAMES:
		if (parse_u32(arg, 1, MAX_USER_FRAMES_LIMIT, &args.max_frames))
			argp_error(state, "invalid --max-frames '%s' (1..%d)", arg,
				   MAX_USER_FRAMES_LIMIT);
		break;
	case 'k':
		args.kernel = true;
		break;
	case OPT_USER_ONLY:
		args.kernel = false;
		break;
	case OPT_EVENT:
		if (!strcmp(arg, "cycles"))
			args.cycles = true;
		else if (strcmp(arg, "cpu-clock"))
			argp_error(state, "unknown event '%s' (cpu-clock or cycles)", arg);
		break;
	case 'o':
		args.output = arg;
		break;
	case 'f':
		args.format = output_format_parse(arg);
		if (args.format == OUT_UNKNOWN)
			argp_error(state, "unknown format '%s' (%s)", arg, output_format_names());
		break;
	case OPT_TAIL_CALLS:
		args.tail_calls = true;
		break;
	case OPT_ROWS:
		if (parse_u32(arg, 1024, 1u << 28, &args.rows_max))
			argp_error(state, "invalid --rows '%s'", arg);
		break;
	case OPT_MAX_STACKS:
		if (parse_u32(arg, 1, 1u << 30, &v))
			argp_error(state, "invalid --max-stacks '%s'", arg);
		args.max_stacks = v;
		break;
	case OPT_SAVE:
		args.save = arg;
		break;
	case 'v':
		args.verbose = true;
		break;
	case ARGP_KEY_ARG:
		/* everything from the first non-option on is the command */
		args.cmd = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if ((args.nr_pids > 0) + args.all + (args.cmd != NULL) != 1)
			argp_error(state, "give exactly one of -p PID, -a, or -- COMMAND");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct session {
	struct loader ld;
	struct table_store ts;
	struct sym_cache *syms;
	struct proc_tracker *pt;
	struct aggregator agg;
	uint64_t records, events;
	pid_t child;
};

static int handle_record(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct event_record *ev = data;

	if (size < sizeof(uint32_t))
		return 0;
	switch (ev->type) {
	case RECORD_SAMPLE: {
		const struct sample_record *r = data;

		s->records++;
		if (agg_add(&s->agg, r, size) == 0 && r->reason == STOP_COMPLETE)
			proc_tracker_note_complete(s->pt, r->pid, r->time_ns);
		break;
	}
	case RECORD_REQUEST:
		if (size >= sizeof(*ev))
			proc_tracker_request(s->pt, ev->pid, WORK_LOAD, ev->time_ns);
		s->events++;
		break;
	case RECORD_EXEC:
		if (size >= sizeof(*ev))
			proc_tracker_request(s->pt, ev->pid, WORK_EXEC, ev->time_ns);
		s->events++;
		break;
	case RECORD_EXIT:
		if (size >= sizeof(*ev))
			proc_tracker_request(s->pt, ev->pid, WORK_EXIT, ev->time_ns);
		s->events++;
		break;
	default:
		s->agg.malformed++;
		break;
	}
	return 0;
}

static void queue_all_pids(struct proc_tracker *pt)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint32_t pid;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!parse_u32(e->d_name, 1, INT32_MAX, &pid) && pid != (uint32_t)getpid())
			proc_tracker_request(pt, pid, WORK_LOAD, 0);
	}
	closedir(d);
}

/* The child waits for a byte on the pipe, so profiling is armed before it runs. */
static pid_t spawn_stopped(char **cmd, int *go_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		/* stop right after exec, so its tables are in place before it runs */
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "cfiprof: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go_fd = p[1];
	return pid;
}

/* AT_ENTRY from /proc/PID/auxv: where the program starts once ld.so has mapped its libraries. */
static uint64_t auxv_entry(pid_t pid)
{
	char path[64];
	Elf64_auxv_t av;
	uint64_t entry = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fread(&av, sizeof(av), 1, f) == 1 && av.a_type != AT_NULL) {
		if (av.a_type == AT_ENTRY) {
			entry = av.a_un.a_val;
			break;
		}
	}
	fclose(f);
	return entry;
}

/*
 * Runs the stopped child to its entry point with a one-shot breakpoint, so
 * that the dynamic loader has mapped every needed library.  false if the child
 * died on the way; true otherwise (even if the breakpoint could not be used).
 */
static bool run_to_entry(pid_t pid)
{
	struct user_regs_struct regs;
	uint64_t entry = auxv_entry(pid);
	long word;
	int status;

	if (!entry)
		return true;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno)
		return true;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)((word & ~0xffL) | 0xcc)))
		return true;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, NULL) || waitpid(pid, &status, 0) != pid ||
		    !WIFSTOPPED(status))
			return false;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		/* other signals before main are the program's own: deliver them */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status)))
			return false;
		if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
			return false;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) || regs.rip != entry + 1)
		return true;
	regs.rip = entry;
	ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word);
	ptrace(PTRACE_SETREGS, pid, NULL, &regs);
	return true;
}

/*
 * The child stops with SIGTRAP after a successful exec (PTRACE_TRACEME).  Run
 * it to its entry point, load its mappings, then let it go: its first
 * samples already unwind.  Returns false if the child is already gone.
 */
static bool release_after_exec(struct session *s)
{
	int status;

	if (waitpid(s->child, &status, 0) != s->child)
		return false;
	if (!WIFSTOPPED(status))
		return false; /* exec failed: the child exited */
	/* the executable and ld.so first: the loader's own work is sampled too */
	proc_tracker_load_now(s->pt, (uint32_t)s->child);
	if (!run_to_entry(s->child))
		return false;
	proc_tracker_load_now(s->pt, (uint32_t)s->child);
	ptrace(PTRACE_DETACH, s->child, NULL, NULL);
	return true;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_summary(struct session *s, double secs)
{
	uint64_t c[CNT_MAX] = {0};
	struct table_store_stats ts = s->ts.stats;
	struct tracker_stats tr;
	uint64_t hits, misses, stops = 0, lost, run_ns = 0, run_cnt = 0;
	uint32_t b;
	struct proc *p;
	int i;

	loader_read_counters(&s->ld, c);
	proc_tracker_stats(s->pt, &tr);
	hits = c[CNT_CACHE_HIT];
	misses = c[CNT_CACHE_MISS];
	lost = c[CNT_LOST_RINGBUF];
	for (i = 0; i < STOP_REASON_MAX; i++)
		stops += c[CNT_STOP_BASE + i];
	fprintf(stderr, "cfiprof: %.1f s, %" PRIu64 " samples (%" PRIu64 " written, %" PRIu64
			" lost: ring buffer full), %" PRIu64 " received\n",
		secs, c[CNT_SAMPLES], c[CNT_WRITTEN], lost, s->agg.samples);
	fprintf(stderr, "cfiprof: stop reasons:");
	for (i = 0; i < STOP_REASON_MAX; i++) {
		if (c[CNT_STOP_BASE + i])
			fprintf(stderr, " %s %" PRIu64 " (%.2f%%)", stop_reason_name(i),
				c[CNT_STOP_BASE + i], pct(c[CNT_STOP_BASE + i], stops));
	}
	fprintf(stderr, "\n");
	fprintf(stderr,
		"cfiprof: rule cache hit rate %.1f%% (%" PRIu64 " hits, %" PRIu64
		" misses), %.1f user frames per sample, %" PRIu64 " frame-pointer frames\n",
		pct(hits, hits + misses), hits, misses,
		s->agg.user_samples ? (double)s->agg.user_frames / (double)s->agg.user_samples : 0.0,
		c[CNT_FP_FRAMES]);
	fprintf(stderr,
		"cfiprof: tables: %" PRIu64 " objects loaded (%" PRIu64 " without CFI, %" PRIu64
		" failed), %" PRIu64 " of %" PRIu64 " rows, %" PRIu64 " rules, %" PRIu64
		" pages; processes: %" PRIu64 " loaded, %" PRIu64 " reloaded, %" PRIu64
		" exited, %" PRIu64 " vanished\n",
		ts.objects_loaded, ts.objects_no_cfi, ts.objects_failed, ts.rows_used, ts.rows_total,
		ts.rules_used, ts.pages_used, tr.loads, tr.reloads, tr.exits, tr.vanished);
	if (c[CNT_EVENTS_LOST] || tr.queue_dropped || s->agg.overflow || s->agg.malformed)
		fprintf(stderr,
			"cfiprof: losses: %" PRIu64 " events (ring buffer), %" PRIu64
			" load requests (queue full), %" PRIu64 " samples in [overflow], %" PRIu64
			" malformed records\n",
			c[CNT_EVENTS_LOST], tr.queue_dropped, s->agg.overflow, s->agg.malformed);
	if (!loader_prog_stats(&s->ld, &run_ns, &run_cnt) && run_ns && c[CNT_SAMPLES]) {
		double per_sample = (double)run_ns / (double)c[CNT_SAMPLES];
		double frames = (double)c[CNT_FRAMES] / (double)c[CNT_SAMPLES];

		fprintf(stderr,
			"cfiprof: BPF run time %.0f ns per sample, %.1f ns per user frame (%" PRIu64
			" runs, %" PRIu64 " sampled, kernel.bpf_stats_enabled)\n",
			per_sample, frames > 0 ? per_sample / frames : 0.0, run_cnt, c[CNT_SAMPLES]);
	}
	for (p = proc_tracker_first(s->pt, &b); p; p = proc_tracker_next(s->pt, p, &b)) {
		if (p->exec_ns && p->first_complete_ns)
			fprintf(stderr, "cfiprof: pid %u: first complete stack %.1f ms after exec\n",
				p->pid, (double)(p->first_complete_ns - p->exec_ns) / 1e6);
	}
}

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cmd_record(int argc, char **argv)
{
	static const struct argp argp = {
		opts, parse_opt, "[-- COMMAND [ARGS...]]",
		"Sample call stacks, unwound in the kernel from DWARF CFI, and write folded stacks.\n"
		"\nExamples:\n  cfiprof record -p 1234 -d 10 -o out.folded\n"
		"  cfiprof record -F 999 -- ./app arg\n  cfiprof record -a -d 5",
		NULL, NULL, NULL};
	struct loader_opts lo = {0};
	struct recording_meta meta = {0};
	struct profile_info info = {0};
	struct profile prof;
	struct session s;
	struct ring_buffer *rb = NULL;
	struct frame_namer fn;
	struct ksyms *ks = NULL;
	char kerr[256];
	FILE *out = stdout;
	double start, deadline = 0;
	int go_fd = -1, err, i, status;
	bool child_done = false;

	memset(&s, 0, sizeof(s));
	s.child = -1;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL))
		return 2;
	if (args.output) {
		out = fopen(args.output, "we");
		if (!out) {
			fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.output, strerror(errno));
			return 1;
		}
	}
	if (args.output && args.format == OUT_UNKNOWN)
		args.format = output_format_from_path(args.output);
	meta.freq = args.freq;
	snprintf(meta.event, sizeof(meta.event), "%s", args.cycles ? "cycles" : "cpu-clock");
	lo.filter_pids = !args.all;
	lo.collect_kernel = args.kernel;
	lo.force_tail_calls = args.tail_calls;
	lo.use_cycles = args.cycles;
	lo.max_frames = args.max_frames;
	lo.freq = args.freq;
	lo.rows_max = args.rows_max;
	err = loader_open(&s.ld, &lo);
	if (err)
		goto out_close;
	err = table_store_init(&s.ts, s.ld.rows_mem, s.ld.rows_max, s.ld.rules_mem, s.ld.rules_max,
			       s.ld.pages_fd);
	s.ts.verbose = args.verbose;
	s.syms = sym_cache_new();
	s.pt = s.syms ? proc_tracker_new(&s.ts, s.syms, s.ld.procs_fd, s.ld.mappings_fd) : NULL;
	if (err || !s.pt || agg_init(&s.agg, args.max_stacks)) {
		fprintf(stderr, "cfiprof: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	rb = ring_buffer__new(s.ld.events_fd, handle_record, &s, NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr, "cfiprof: cannot open the ring buffer: %s\n", strerror(errno));
		goto out;
	}
	for (i = 0; i < args.nr_pids; i++) {
		if (kill((pid_t)args.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "cfiprof: no process with pid %u\n", args.pids[i]);
			err = -ESRCH;
			goto out;
		}
		loader_add_target(&s.ld, args.pids[i]);
		/* before attaching, so that the first samples already unwind */
		if (proc_tracker_load_now(s.pt, args.pids[i]))
			fprintf(stderr, "cfiprof: pid %u: cannot read its mappings\n", args.pids[i]);
	}
	if (args.cmd) {
		s.child = spawn_stopped(args.cmd, &go_fd);
		if (s.child < 0) {
			err = -errno;
			fprintf(stderr, "cfiprof: fork: %s\n", strerror(errno));
			goto out;
		}
		loader_add_target(&s.ld, (uint32_t)s.child);
	}
	err = loader_attach_tracepoints(&s.ld);
	if (err)
		goto out;
	if (proc_tracker_start(s.pt)) {
		err = -1;
		goto out;
	}
	if (args.all)
		queue_all_pids(s.pt);
	err = loader_attach_perf(&s.ld, &lo);
	if (err)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	start = now_s();
	meta.start_unix_ns = unix_ns();
	if (args.duration > 0)
		deadline = start + args.duration;
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1)
			fprintf(stderr, "cfiprof: cannot start the command\n");
		close(go_fd);
		go_fd = -1;
		child_done = !release_after_exec(&s);
	}
	while (!stop_requested) {
		err = ring_buffer__poll(rb, 100);
		/* samples are submitted without a wakeup until enough are pending */
		if (err >= 0)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "cfiprof: ring buffer: %s\n", strerror(-err));
			break;
		}
		if (deadline && now_s() >= deadline)
			break;
		if (s.child > 0 && waitpid(s.child, &status, WNOHANG) == s.child) {
			child_done = true;
			break;
		}
	}
	err = 0;
	loader_detach_perf(&s.ld);
	/* everything sampled before detaching is still in the ring buffer */
	ring_buffer__consume(rb);
	proc_tracker_drain(s.pt);
	proc_tracker_stop(s.pt, false);
	print_summary(&s, now_s() - start);
	meta.duration_ns = (uint64_t)((now_s() - start) * 1e9);
	ks = args.kernel ? ksyms_load(NULL, kerr, sizeof(kerr)) : NULL;
	if (args.kernel && !ks)
		fprintf(stderr, "cfiprof: kernel symbols unavailable: %s\n", kerr);
	frame_namer_init(&fn, s.pt, ks);
	info.period_ns = 1000000000ull / args.freq;
	info.start_unix_ns = meta.start_unix_ns;
	info.duration_ns = meta.duration_ns;
	info.event = meta.event;
	if (profile_build(&prof, &s.agg, &fn, &info)) {
		fprintf(stderr, "cfiprof: out of memory while symbolizing\n");
		err = -ENOMEM;
	} else {
		if (output_write(out, &prof, args.format, args.cmd ? args.cmd[0] : "cfiprof")) {
			fprintf(stderr, "cfiprof: writing the output failed: %s\n", strerror(errno));
			err = -EIO;
		}
		profile_free(&prof);
	}
	frame_namer_free(&fn);
	ksyms_free(ks);
	if (args.save) {
		FILE *sf = fopen(args.save, "we");

		if (!sf || recording_write(sf, &s.agg, s.pt, &meta) || fclose(sf)) {
			fprintf(stderr, "cfiprof: cannot write %s: %s\n", args.save, strerror(errno));
			err = -EIO;
		}
	}
out:
	if (s.child > 0 && !child_done) {
		if (go_fd >= 0)
			close(go_fd); /* the child exits without running the command */
		else if (stop_requested || deadline)
			kill(s.child, SIGTERM);
		waitpid(s.child, &status, 0);
	}
	ring_buffer__free(rb);
	proc_tracker_free(s.pt);
	agg_free(&s.agg);
	table_store_destroy(&s.ts);
	sym_cache_free(s.syms);
	loader_close(&s.ld);
out_close:
	if (out != stdout && fclose(out))
		err = -EIO;
	return err ? 1 : 0;
}
