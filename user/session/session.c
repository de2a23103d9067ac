// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profiling session shared by record and top (its start, wait and stop); see session.h. */
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/track/cgroups.h"
#include "common/clock.h"
#include "common/parse.h"
#include "common/vec.h"
#include "tables/cfi_table.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/ksym_events.h"
#include "user/symbolize/sym_cache.h"
#include "user/session/consumer.h"
#include "user/session/launch.h"
#include "user/session/privileges.h"
#include "user/profile/profile.h"
#include "user/session/bpf_names.h"
#include "user/session/session.h"

volatile sig_atomic_t session_stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	session_stop_requested = 1;
}

/*
 * Raises the soft limit on open files to the hard one, as systemd services
 * and perf do: the soft default (1024) only protects programs using select(),
 * and a load holds files open (user/track/proc_load.c).  *orig keeps the
 * limit a launched command gets back.
 */
static void raise_nofile_limit(struct rlimit *orig)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, orig))
		return;
	rl = *orig;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static void queue_all_pids(struct proc_tracker *pt)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint32_t pid;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!parse_u32(e->d_name, 1, INT32_MAX, &pid))
			proc_tracker_request(pt, pid, WORK_LOAD, 0);
	}
	closedir(d);
}

/* Events other than perf events (probes, tracepoints, off-CPU time): the command waits its tables.
 */
static bool held_for_events(const struct event_list *ev)
{
	for (int i = 0; i < ev->nr; i++) {
		if (ev->ev[i].kind != EVENT_PERF)
			return true;
	}
	return false;
}

/*
 * The child stops with SIGTRAP after a successful exec (PTRACE_TRACEME).  Run
 * it to its entry point, load its mappings, then let it go: its first
 * samples already unwind.  Returns false if the child is already gone.
 */
static bool release_after_exec(struct session *s)
{
	uint64_t exec_ns;
	int status;

	if (waitpid(s->child, &status, 0) != s->child)
		return false;
	exec_ns = mono_ns();
	if (!WIFSTOPPED(status)) {
		/* under PTRACE_TRACEME only a failed exec exits before the first stop */
		s->child_status = status;
		s->exec_failed = true;
		return false;
	}
	/*
	 * Only now a target: before the exec the child is a copy of cfiprof, whose
	 * own 30-odd libraries would otherwise be sampled and their tables built.
	 * The executable and ld.so first: the loader's own work is sampled too.
	 */
	loader_add_target(&s->ld, (uint32_t)s->child);
	/*
	 * With deferred unwinding its first CPU samples wait for their tables and
	 * are finished then, as every new process's under -a: it starts at once,
	 * its load queued (holding it cost 10-35 ms of every run's wall time).
	 * Probes and off-CPU events come in bursts (200 opens in a row) that the
	 * stack-copy budget cannot carry: such a command is held as before.
	 */
	if (s->opts.defer_stack && !held_for_events(&s->opts.events)) {
		proc_tracker_request(s->pt, (uint32_t)s->child, WORK_EXEC, exec_ns);
		proc_tracker_note_exec(s->pt, (uint32_t)s->child, exec_ns);
		launch_release(s->child);
		return true;
	}
	proc_tracker_load_now(s->pt, (uint32_t)s->child);
	if (!launch_run_to_entry(s->child, &s->child_status))
		return false;
	proc_tracker_load_now(s->pt, (uint32_t)s->child);
	/* the latency the summary reports counts the time it waited for its tables */
	proc_tracker_note_exec(s->pt, (uint32_t)s->child, exec_ns);
	launch_release(s->child);
	return true;
}

void session_read_counters(struct session *s, uint64_t c[CNT_MAX])
{
	int i;

	loader_read_counters(&s->ld, c);
	/* walks finished (or given up) in user space count under the reason they ended with */
	for (i = 0; i < STOP_REASON_MAX; i++)
		c[CNT_STOP_BASE + i] += s->deferred.stats.by_reason[i];
}

void session_progress(struct session *s, uint64_t *samples, uint64_t *complete, uint64_t *lost)
{
	uint64_t c[CNT_MAX] = {0};

	session_read_counters(s, c);
	*samples = c[CNT_SAMPLES];
	*complete = c[CNT_STOP_BASE + STOP_COMPLETE];
	*lost = c[CNT_LOST_RINGBUF];
}

/*
 * Deferred samples wait at most this long for their tables (a cold libLLVM
 * builds in ~120 ms, slower under load), and hold at most this many bytes.
 */
#define DEFERRED_TIMEOUT_NS  (5ull * 1000 * 1000 * 1000)
#define DEFERRED_QUEUE_BYTES (64ull << 20)
/* At stop, queued table loads get this long (one load is bounded by the tracker's budget). */
#define SESSION_STOP_DRAIN_S  2.0
#define SESSION_RUNTIMES_WAIT_S 1.0 /* for code objects still being read at stop */

/*
 * Stack-copy bytes per second when not set: a quarter of all samples at full
 * size, enough for every sample of a process starting on each CPU at once.
 */
static uint64_t defer_budget_default(const struct session_opts *o)
{
	int cpus = libbpf_num_possible_cpus();

	return (uint64_t)o->freq * (uint64_t)(cpus > 0 ? cpus : 1) * o->defer_stack / 4 +
	       DEFER_CHUNK;
}

static void *read_kernel_symbols(void *arg)
{
	struct session *s = arg;

	/* the rest is asked of the kernel once the programs are loaded */
	s->ksyms = ksyms_new();
	/*
	 * Programs loaded before the symbol records were opened are named only
	 * by the kernel's list of symbols, which holds none while
	 * net.core.bpf_jit_kallsyms is 0 (as perf reads them at start, from
	 * the kernel's list of programs)
	 */
	if (s->ksyms)
		bpf_names_add_all(s->ksyms);
	else
		snprintf(s->ksyms_err, sizeof(s->ksyms_err), "kernel symbols: no memory");
	return NULL;
}

void session_kernel_symbols_update(struct session *s, struct ksyms *k)
{
	uint64_t lost = ksym_events_lost(s->ksym_events);

	ksym_events_drain(s->ksym_events, k);
	if (ksym_events_lost(s->ksym_events) > lost)
		fprintf(stderr,
			"cfiprof: %" PRIu64 " kernel symbol records lost: programs loaded "
			"meanwhile may show as addresses\n",
			ksym_events_lost(s->ksym_events) - lost);
}

struct ksyms *session_kernel_symbols(struct session *s, char *err, size_t errlen)
{
	struct ksyms *k;

	if (s->ksyms_started) {
		pthread_join(s->ksyms_thread, NULL);
		s->ksyms_started = false;
	} else if (!s->ksyms && !s->ksyms_err[0]) {
		snprintf(s->ksyms_err, sizeof(s->ksyms_err), "kernel stacks are off");
	}
	k = s->ksyms;
	s->ksyms = NULL;
	if (k && s->ld.skel && loader_ask_kernel_names(&s->ld, k, err, errlen)) {
		/* the kernel's lookup does not run here: all of kallsyms, read now */
		fprintf(stderr, "cfiprof: %s: reading /proc/kallsyms instead\n", err);
		ksyms_free(k);
		k = ksyms_load(NULL, s->ksyms_err, sizeof(s->ksyms_err));
		if (k)
			bpf_names_add_all(k);
	}
	/* listed while they loaded: cfiprof's programs may be missing */
	if (k && s->ld.skel)
		loader_name_programs(&s->ld, k);
	session_kernel_symbols_update(s, k);
	if (!k)
		snprintf(err, errlen, "%s", s->ksyms_err);
	return k;
}

/* What the loader is opened with, from the session's options (the cgroup fd is set apart). */
static void loader_opts_from(struct session *s, const struct session_opts *o,
			     struct loader_opts *lo)
{
	/* a cgroup filter alone: every process in it, whenever it arrives */
	lo->filter_pids = !o->all && !o->cgroup[0];
	lo->follow_children = !o->no_inherit;
	lo->collect_kernel = o->kernel;
	lo->force_tail_calls = o->tail_calls;
	lo->runtimes_on = ~o->runtimes_off;
	lo->runtime_walks_first = o->runtime_walks_first;
	if (!s->opts.events.nr) {
		char perr[128];

		event_list_parse(&s->opts.events, o->cycles ? "cycles" : "cpu-clock", perr,
				 sizeof(perr));
	}
	lo->events = &s->opts.events;
	lo->explicit_events = o->explicit_events;
	lo->period = o->period;
	lo->min_block_ns = o->min_block_ns;
	lo->event_budget = o->event_budget == SESSION_EVENT_EXACT ? 0
			   : o->event_budget			  ? o->event_budget
								  : SESSION_EVENT_BUDGET;
	lo->max_frames = o->max_frames;
	lo->freq = o->freq;
	lo->rows_max = o->rows_max;
	lo->ringbuf_bytes = o->ringbuf_bytes;
	/* whole pages: the copy is made a page at a time */
	lo->defer_stack_bytes = (o->defer_stack + DEFER_CHUNK - 1) & ~(uint32_t)(DEFER_CHUNK - 1);
	lo->defer_bytes_per_sec = o->defer_budget ? o->defer_budget : defer_budget_default(o);
}

/* the first runtime's process is found (session_runtimes_on_first_proc) */
static void start_runtime_walks(void *loader)
{
	loader_want_runtime_walks(loader);
}

/* The state user space unwinds and names with: deferred walks, tables, symbols, tracker. */
static int start_unwind_state(struct session *s, const struct session_opts *o)
{
	struct walk_maps maps;
	int err;

	walk_maps_from_bpf(&maps, &s->walk_fds, s->ld.rows_win.base, s->ld.rows_max,
			   s->ld.rules_mem, s->ld.rules_max);
	s->walk_fds.procs_fd = s->ld.procs_fd;
	s->walk_fds.mappings_fd = s->ld.mappings_fd;
	s->walk_fds.pages_fd = s->ld.pages_fd;
	if (deferred_queue_init(&s->deferred, &maps, o->max_frames, DEFERRED_QUEUE_BYTES,
				DEFERRED_TIMEOUT_NS, session_add_deferred, s)) {
		fprintf(stderr, "cfiprof: out of memory\n");
		return -ENOMEM;
	}
	deferred_queue_set_reload(&s->deferred, session_reload_for_walk, s);
	deferred_queue_set_units(&s->deferred, session_runtimes_deferred_units, &s->runtimes);
	s->deferred_ready = true;
	err = table_store_init(&s->ts, s->ld.rows_win.base, s->ld.rows_max, s->ld.rules_mem,
			       s->ld.rules_max, s->ld.pages_fd, s->ld.pages_max);
	s->ts_ready = !err;
	s->ts.rows_window = &s->ld.rows_win;
	s->ts.verbose = o->verbose;
	s->ts.max_bytes = o->max_table_bytes;
	s->ts.idle_ttl_ns = (uint64_t)(o->table_idle_ttl * 1e9);
	s->syms = sym_cache_new();
	/* fetches run on their own threads: the consumer and the load thread never wait */
	if (s->syms && o->debuginfod) {
		s->fetch = sym_fetch_new(&o->fetch);
		if (!s->fetch)
			fprintf(stderr, "cfiprof: debuginfod: cannot start the fetch threads\n");
		sym_cache_set_fetch(s->syms, s->fetch);
	}
	if (s->syms)
		sym_cache_set_lines(s->syms, o->lines);
	if (s->syms && o->warm_lines)
		sym_cache_warm_lines(s->syms);
	if (err || !s->syms || agg_init(&s->agg, o->max_stacks)) {
		fprintf(stderr, "cfiprof: out of memory\n");
		return -ENOMEM;
	}
	if (session_runtimes_start(&s->runtimes, s->ld.runtime_procs_fd, s->opts.runtimes_off)) {
		fprintf(stderr, "cfiprof: out of memory\n");
		return -ENOMEM;
	}
	/* verified while sampling runs, once a runtime's process is seen: a native one never waits
	 */
	if (s->ld.runtime_walks_later)
		session_runtimes_on_first_proc(&s->runtimes, start_runtime_walks, &s->ld);
	/* a cache that cannot be used safely is said so and skipped: tables are built */
	if (o->table_cache[0])
		s->table_cache = cfi_table_cache_open(
		    o->table_cache,
		    o->table_cache_bytes ? o->table_cache_bytes : SESSION_TABLE_CACHE_BYTES);
	s->pt = proc_tracker_new(&(struct proc_tracker_opts){.ts = &s->ts,
							     .syms = s->syms,
							     .procs_fd = s->ld.procs_fd,
							     .mappings_fd = s->ld.mappings_fd,
							     .table_cache = s->table_cache,
							     .runtimes = s->runtimes.hooks,
							     .nr_runtimes = s->runtimes.nr_hooks,
							     .max_procs = o->max_procs,
							     .build_workers = o->build_workers});
	if (!s->pt) {
		fprintf(stderr, "cfiprof: out of memory\n");
		return -ENOMEM;
	}
	return 0;
}

/* -p's processes and the cgroup's, loaded before sampling so that their first samples unwind. */
static int load_targets(struct session *s, const struct session_opts *o)
{
	int i;

	for (i = 0; i < o->nr_pids; i++) {
		if (kill((pid_t)o->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "cfiprof: no process with pid %u\n", o->pids[i]);
			return -ESRCH;
		}
		loader_add_target(&s->ld, o->pids[i]);
		/* before attaching, so that the first samples already unwind */
		if (proc_tracker_load_now(s->pt, o->pids[i]))
			fprintf(stderr, "cfiprof: pid %u: cannot read its mappings\n", o->pids[i]);
	}
	if (o->cgroup[0]) {
		uint32_t *pids = NULL;
		int n = cgroup_pids(o->cgroup, &pids);

		/* like -p: tables in place before the first sample */
		for (i = 0; i < n; i++)
			proc_tracker_load_now(s->pt, pids[i]);
		free(pids);
	}
	return 0;
}

/* The command, stopped since its fork, let go: at its exec, or unheld. */
static int release_command(struct session *s)
{
	if (s->go_fd < 0)
		return 0;
	/*
	 * Not held at its exec: a target already, so its exec reaches
	 * BPF (on_exec) and queues its load as any target's would; its
	 * first samples wait for their tables (deferred) or are counted.
	 */
	if (!s->child_held) {
		fprintf(stderr, "cfiprof: the command cannot be held at its exec (ptrace "
				"refused: traced already?): it starts unheld\n");
		loader_add_target(&s->ld, (uint32_t)s->child);
	}
	if (write(s->go_fd, "g", 1) != 1)
		fprintf(stderr, "cfiprof: cannot start the command\n");
	close(s->go_fd);
	s->go_fd = -1;
	if (s->child_held && !release_after_exec(s)) {
		s->child_done = true;
		if (s->exec_failed)
			return -ENOEXEC; /* the child said why */
		waitpid(s->child, &s->child_status, WNOHANG);
	}
	return 0;
}

int session_start(struct session *s, const struct session_opts *o)
{
	/* where the start went, said by -v: monotonic seconds at each step */
	double t_begin = mono_sec(), t_loaded, t_ready, t_traced;
	struct loader_opts lo = {0};
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = *o;
	s->child = -1;
	s->cgroup_fd = -1;
	s->go_fd = -1;
	s->unwalked.fd = -1;
	pthread_mutex_init(&s->agg_lock, NULL);
	raise_nofile_limit(&s->nofile_orig);
	/* a binary installed with +p holds its capabilities as permitted only */
	privileges_raise();
	if (!privileges_check(o->all || o->nr_pids || o->cgroup[0]))
		return -EPERM;
	loader_opts_from(s, o, &lo);
	/* created while the start forks, opens and parses: the kernel zeroing their pages */
	loader_early_maps(&s->early_maps, &lo);
	lo.early = &s->early_maps;
	/*
	 * The command's process is forked first, while this one is small: every
	 * page written after a fork is a copy-on-write fault until the child has
	 * exec'd (slow where faults trap to a hypervisor), and a fork's page-table
	 * copy grows with the BPF object, kallsyms and the unwind state.
	 */
	if (o->cmd) {
		s->child = launch_stopped(o->cmd, &s->nofile_orig, o->cmd_stderr, &s->go_fd,
					  &s->child_held);
		if (s->child < 0) {
			err = -errno;
			fprintf(stderr, "cfiprof: fork: %s\n", strerror(errno));
			return err;
		}
	}
	/* first: what loads while kallsyms is read is in one or the other */
	if (o->kernel) {
		char kerr[128];

		s->ksym_events = ksym_events_open(kerr, sizeof(kerr));
		if (!s->ksym_events)
			fprintf(stderr,
				"cfiprof: BPF programs loaded from now on will show as "
				"addresses: %s\n",
				kerr);
	}
	/* the programs listed take a while: meanwhile the verifier checks cfiprof's */
	if (o->kernel && !pthread_create(&s->ksyms_thread, NULL, read_kernel_symbols, s)) {
		pthread_setname_np(s->ksyms_thread, "cfiprof-ksyms");
		s->ksyms_started = true;
	}
	lo.cgroup_fd = -1;
	if (o->cgroup[0]) {
		s->cgroup_fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->cgroup_fd < 0) {
			err = -errno;
			fprintf(stderr, "cfiprof: cannot open cgroup %s: %s\n", o->cgroup,
				strerror(errno));
			return err;
		}
		lo.cgroup_fd = s->cgroup_fd;
	}
	err = loader_open(&s->ld, &lo);
	if (err)
		return err;
	t_loaded = mono_sec();
	err = offcpu_unwalked_init(
	    &s->unwalked,
	    event_list_has(&s->opts.events, EVENT_OFF_CPU) ? s->ld.offcpu_unwalked_fd : -1,
	    (uint32_t)event_list_find(&s->opts.events, EVENT_OFF_CPU));
	if (err) {
		fprintf(stderr, "cfiprof: cannot set up the off-CPU sums: %s\n", strerror(-err));
		return err;
	}
	err = start_unwind_state(s, o);
	if (err)
		return err;
	/*
	 * One poll serves the three rings; the consumer's ring_buffer__consume
	 * reads them in the order added, the walked samples first, so that a
	 * process's exit is seldom handled before its last samples (its tables
	 * are unloaded EXIT_UNLOAD_DELAY_NS after in any case); the exiting
	 * processes' mappings need no order with either.
	 */
	s->rb = ring_buffer__new(s->ld.samples_fd, session_handle_record, s, NULL);
	if (s->rb && (ring_buffer__add(s->rb, s->ld.events_fd, session_handle_record, s) ||
		      ring_buffer__add(s->rb, s->ld.exit_maps_fd, session_handle_record, s))) {
		ring_buffer__free(s->rb);
		s->rb = NULL;
	}
	if (!s->rb) {
		err = -errno;
		fprintf(stderr, "cfiprof: cannot open the ring buffer: %s\n", strerror(errno));
		return err;
	}
	err = load_targets(s, o);
	if (err)
		return err;
	t_ready = mono_sec();
	err = loader_attach_tracepoints(&s->ld);
	if (err)
		return err;
	t_traced = mono_sec();
	if (proc_tracker_start(s->pt))
		return -1;
	if (o->all)
		queue_all_pids(s->pt);

	err = pthread_create(&s->consumer, NULL, session_consumer_main, s);
	if (err)
		return -err;
	pthread_setname_np(s->consumer, "cfiprof-ring");
	s->consumer_started = true;
	err = loader_attach_perf(&s->ld, &lo);
	if (err)
		return err;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	s->start = mono_sec();
	if (o->verbose)
		fprintf(
		    stderr,
		    "cfiprof: start: %.1f ms: BPF programs loaded and verified %.1f ms, unwind and "
		    "symbol state %.1f ms, tracepoints attached %.1f ms (the pids given loaded), "
		    "sampling attached %.1f ms\n",
		    (s->start - t_begin) * 1e3, (t_loaded - t_begin) * 1e3,
		    (t_ready - t_loaded) * 1e3, (t_traced - t_ready) * 1e3,
		    (s->start - t_traced) * 1e3);
	/* a map whose declaration no longer matches its early copy is created again, later */
	if (o->verbose) {
		fprintf(stderr, "cfiprof: start: %d of %d maps created ahead were used\n",
			s->early_maps.taken, s->early_maps.n);
		fprintf(
		    stderr,
		    "cfiprof: start: ring buffers: samples %u KiB (perf events' walked samples), "
		    "events %u KiB (stack copies, requests, the other events' samples)\n",
		    s->ld.samples_bytes / 1024, s->ld.events_bytes / 1024);
	}
	s->start_unix_ns = unix_ns();
	return release_command(s);
}

/*
 * The -p processes, watched for their exit as perf's -p is: a pidfd each in
 * fds (-1 for one already gone).  Returns how many fds there are; 0 (never
 * ends on its own) when one of them cannot be watched (a thread's id before
 * Linux 6.9, no pidfd_open).
 */
static int watch_targets(const struct session *s, struct pollfd *fds)
{
	int i, n = s->opts.nr_pids;

	for (i = 0; i < n; i++) {
		int fd = (int)syscall(SYS_pidfd_open, (pid_t)s->opts.pids[i], 0);

		if (fd < 0 && errno != ESRCH)
			break;
		fds[i] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (i == n)
		return n;
	while (i-- > 0)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	return 0;
}

/* Closes the pidfds of the targets that exited; whether none is left. */
static bool targets_gone(struct pollfd *fds, int n)
{
	int i, left = 0;

	for (i = 0; i < n; i++) {
		if (fds[i].fd >= 0 && fds[i].revents) {
			close(fds[i].fd);
			fds[i].fd = -1; /* poll skips it */
		}
		left += fds[i].fd >= 0;
	}
	return !left;
}

void session_wait(struct session *s, double deadline, void (*tick)(struct session *, void *),
		  void *ctx)
{
	double next_tick = mono_sec() + 1.0;
	struct pollfd fds[SESSION_MAX_PIDS];
	int nfds = 0, i;

	/* the command's or the last target's exit wakes the wait at once, not at the next tick */
	if (s->child > 0) {
		fds[0] = (struct pollfd){.fd = (int)syscall(SYS_pidfd_open, s->child, 0),
					 .events = POLLIN};
		nfds = fds[0].fd >= 0;
	} else if (s->opts.nr_pids) {
		nfds = watch_targets(s, fds);
	}
	while (!session_stop_requested && !s->child_done) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		if (nfds)
			poll(fds, (nfds_t)nfds, 50);
		else
			nanosleep(&ts, NULL);
		if (deadline && mono_sec() >= deadline)
			break;
		if (s->child > 0 && waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
			s->child_done = true;
			break;
		}
		if (s->child <= 0 && nfds && targets_gone(fds, nfds))
			break;
		if (tick && mono_sec() >= next_tick) {
			tick(s, ctx);
			next_tick += 1.0;
		}
	}
	for (i = 0; i < nfds; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
}

void session_stop(struct session *s)
{
	loader_detach_perf(&s->ld);
	if (s->consumer_started)
		session_consumer_stop(s);
	/* everything sampled before detaching is still in the ring buffer */
	if (s->rb)
		ring_buffer__consume(s->rb);
	session_take_unwalked(s, true);
	if (s->pt) {
		/* a flood of queued loads must not hold up a stop (SIGTERM) */
		bool drained = proc_tracker_drain_for(s->pt, SESSION_STOP_DRAIN_S);

		if (!drained)
			fprintf(stderr,
				"cfiprof: table loads still queued after %.0f s at stop: dropped "
				"(their "
				"samples keep what was loaded)\n",
				SESSION_STOP_DRAIN_S);
		/* the loads the last deferred samples asked for are done: finish them */
		if (s->deferred_ready)
			deferred_queue_run(&s->deferred, mono_ns(), true);
		proc_tracker_stop(s->pt, !drained);
	}
	/* the last samples' code objects, read before the profile names them */
	session_runtimes_wait(&s->runtimes, SESSION_RUNTIMES_WAIT_S);
}

void session_free(struct session *s)
{
	if (s->consumer_started)
		session_consumer_stop(s);
	if (s->child > 0 && !s->child_done) {
		if (s->go_fd >= 0)
			close(s->go_fd); /* the child exits without running the command */
		else
			kill(s->child, SIGTERM);
		waitpid(s->child, &s->child_status, 0);
	}
	if (s->ksyms_started)
		pthread_join(s->ksyms_thread, NULL);
	ksyms_free(s->ksyms);
	ksym_events_close(s->ksym_events);
	s->ksym_events = NULL;
	ring_buffer__free(s->rb);
	if (s->deferred_ready)
		deferred_queue_free(&s->deferred);
	proc_tracker_free(s->pt);
	session_runtimes_free(&s->runtimes);
	cfi_table_cache_close(s->table_cache);
	agg_free(&s->agg);
	offcpu_unwalked_free(&s->unwalked);
	if (s->ts_ready)
		table_store_destroy(&s->ts);
	sym_cache_free(s->syms);  /* puts its fetched tables... */
	sym_fetch_free(s->fetch); /* ...before they go */
	loader_close(&s->ld);
	map_early_free(&s->early_maps);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	pthread_mutex_destroy(&s->agg_lock);
}

size_t session_prof_events(const struct session *s, struct prof_event *out)
{
	const struct event_list *l = &s->opts.events;

	if (!l->nr || (!s->opts.explicit_events && !event_list_has(l, EVENT_OFF_CPU)))
		return 0;
	event_list_describe(l, out);
	return (size_t)l->nr;
}
