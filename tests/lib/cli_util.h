/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the end-to-end tests share to run commands and read what they wrote:
 * clocks, spawning in a process group of its own, waiting with a timeout,
 * reading files whole, failure context.  Static inline: each test uses some.
 */
#ifndef CFIPROF_TESTS_CLI_UTIL_H
#define CFIPROF_TESTS_CLI_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

/* sh -c of a printf-formatted command line; its exit status (128: killed by a signal). */
static inline int sh_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int sh_fmt(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static inline void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Fork and exec argv in a process group of its own: stdin from /dev/null,
 * stdout / stderr sent to files (NULL: /dev/null, "-": the test's own; the
 * same name: one file for both), env ("K=V", NULL-terminated, may be NULL)
 * added.  Returns its pid or -1.
 */
static inline pid_t spawn_env(char *const argv[], char *const env[], const char *out,
			      const char *err)
{
	static const int handled[] = {SIGINT, SIGTERM, SIGHUP};
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fds[3] = {open("/dev/null", O_RDONLY), 1, 2};
		const char *to[3] = {NULL, out ? out : "/dev/null", err ? err : "/dev/null"};
		struct sigaction sa;

		/* the test's own handlers (cleanup) must not run here before exec */
		for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
			if (!sigaction(handled[i], NULL, &sa) && sa.sa_handler != SIG_IGN)
				signal(handled[i], SIG_DFL);
		for (int i = 1; i < 3; i++)
			if (strcmp(to[i], "-"))
				fds[i] = open(to[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out && err && !strcmp(out, err) && strcmp(out, "-")) {
			close(fds[2]);
			fds[2] = dup(fds[1]);
		}
		for (int i = 0; i < 3; i++) {
			if (fds[i] < 0)
				_exit(126);
			if (fds[i] != i) {
				dup2(fds[i], i);
				close(fds[i]);
			}
		}
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		setpgid(0, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

static inline pid_t spawn(char *const argv[], const char *out, const char *err)
{
	return spawn_env(argv, NULL, out, err);
}

/*
 * Waits up to timeout seconds; kills the process group past it (then
 * *timed_out, if given, is set).  Returns a wait status or -1.
 */
static inline int wait_timeout(pid_t pid, double timeout, bool *timed_out)
{
	double deadline = mono_sec() + timeout;
	int status;

	if (timed_out)
		*timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		if (mono_sec() >= deadline) {
			if (timed_out)
				*timed_out = true;
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			return status;
		}
		usleep(20000);
	}
}

/* Exit code of a wait status: 128+sig if killed, -1 if it timed out or could not be waited for. */
static inline int exit_code(int st, bool timed_out)
{
	if (st == -1 || timed_out)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/*
 * Runs argv (as spawn_env) to completion, killing its group past timeout
 * seconds.  Returns its exit code, 128+sig if killed by a signal, -1 if it
 * could not run or timed out.  *elapsed (if given) gets the wall time.
 */
static inline int run_env(char *const argv[], char *const env[], const char *out, const char *err,
			  double timeout, double *elapsed)
{
	double t0 = mono_sec();
	pid_t pid = spawn_env(argv, env, out, err);
	bool timed_out = false;
	int st = pid < 0 ? -1 : wait_timeout(pid, timeout, &timed_out);

	if (timed_out)
		fprintf(stderr, "  %s timed out after %.0f s: killed\n", argv[0], timeout);
	if (elapsed)
		*elapsed = mono_sec() - t0;
	return exit_code(st, timed_out);
}

static inline int run(char *const argv[], const char *out, const char *err, double timeout)
{
	return run_env(argv, NULL, out, err, timeout, NULL);
}

/* The perf events process pid holds open (-1: not readable). */
static inline int perf_event_fds(pid_t pid)
{
	char dir[64], link[PATH_MAX + 300], target[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += !strcmp(target, "anon_inode:[perf_event]");
		}
	}
	closedir(d);
	return n;
}

/*
 * Waits (at most timeout seconds: a loaded machine's BPF load) until the
 * cfiprof of child pid samples: from its start it holds one kernel-symbol
 * event per CPU (kernel stacks on, the default), and once attached one
 * sampling event per CPU more.  False if it exits first (not reaped).
 */
static inline bool wait_cfiprof_sampling(pid_t pid, double timeout)
{
	double end = mono_sec() + timeout;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	while (mono_sec() < end) {
		siginfo_t si = {0};

		if (perf_event_fds(pid) >= 2 * cpus)
			return true;
		if (!waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid)
			return false;
		usleep(10000);
	}
	return false;
}

/* A whole file, NUL-terminated ("" if it cannot be read); *len (if given) gets its size. */
/* File descriptors this process has open now. */
static inline int open_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

static inline char *slurp_len(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f) {
		for (;;) {
			/*
			 * Doubling: a sanitizer's realloc copies every time (no
			 * mremap), and fixed steps made reading a 25 MB oracle
			 * quadratic (2 million page faults under ASan).
			 */
			if (cap - n < 65536) {
				size_t more = cap > 65536 ? cap : 65536;
				char *nb = realloc(buf, cap + more + 1);

				if (!nb)
					break;
				buf = nb;
				cap += more;
			}
			got = fread(buf + n, 1, cap - n, f);
			if (!got)
				break;
			n += got;
		}
		fclose(f);
	}
	if (!buf)
		buf = malloc(1);
	if (!buf)
		abort();
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* text into the file path (created or truncated): false when not all of it went. */
static inline bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	bool ok = f && fputs(text, f) >= 0;

	if (f && fclose(f))
		ok = false;
	return ok;
}

static inline char *slurp(const char *path)
{
	return slurp_len(path, NULL);
}

/*
 * The fewest cpu-clock samples at hz that cpu_s seconds of a task's CPU time
 * may give: half of what they should, less 5.  A sample lands on whatever
 * runs when a CPU's timer fires, so a task's count is its CPU time over the
 * period, give or take the ticks it shared; half is far below that and far
 * above a task not profiled (0), however busy the machine.
 */
static inline double cpu_samples_floor(double cpu_s, double hz)
{
	return cpu_s * hz / 2 - 5;
}

/*
 * The samples record's -v summary says it kept tables-pending, by cause
 * ("kept tables-pending: N process gone, M tables not ready in time, ...":
 * their sum), 0 without that line.  A consumer starved by the machine's
 * load leaves no ring room for stack copies: those samples are counted
 * there, not lost.
 */
static inline uint64_t summary_kept_pending(const char *log)
{
	const char *p = log ? strstr(log, "kept tables-pending: ") : NULL;
	uint64_t sum = 0;
	char *end;

	if (!p)
		return 0;
	for (p += strlen("kept tables-pending: "); *p && *p != '\n';) {
		if (*p >= '0' && *p <= '9') {
			sum += strtoull(p, &end, 10);
			p = end;
		} else {
			p++;
		}
	}
	return sum;
}

/*
 * The number just before key in s, spaces between ("263 finished" -> 263 for
 * "finished"), 0 if key is absent: a count of record's -v summary.
 */
static inline uint64_t number_before(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;

	if (!p)
		return 0;
	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

/*
 * The samples of language runtimes' processes record -v says it took before
 * the runtimes' walks were in place ("runtimes' walks: ...; N samples of a
 * runtime's process taken before"): their native frames only, counted.
 */
static inline uint64_t summary_rt_walk_pending(const char *log)
{
	const char *line = log ? strstr(log, "cfiprof: runtimes' walks: ") : NULL;

	return line ? number_before(line, "samples of a runtime's process taken before") : 0;
}

/* utime + stime of pid in seconds (of its threads, not its reaped children), or -1. */
static inline double proc_cpu_s(pid_t pid)
{
	char path[64], *s, *p;
	unsigned long ut, st;
	double r = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	s = slurp(path);
	p = strrchr(s, ')');
	if (p &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
		r = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	free(s);
	return r;
}

/*
 * The /proc directory of pid's thread named name (its comm, as top -H and perf
 * show it) into dir: false when it has none.
 */
static inline bool thread_dir(pid_t pid, const char *name, char *dir, size_t len)
{
	char tasks[64], path[512];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(tasks, sizeof(tasks), "/proc/%d/task", (int)pid);
	d = opendir(tasks);
	while (d && !found && (e = readdir(d))) {
		char *comm;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", tasks, e->d_name);
		comm = slurp(path);
		found = comm && !strncmp(comm, name, strlen(name)) && comm[strlen(name)] == '\n';
		free(comm);
		if (found)
			snprintf(dir, len, "%s/%s", tasks, e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * A test's scratch directory: removed after a passing run, kept (and named)
 * after a failing one, or whenever CFIPROF_KEEP_TMP is set (to compare with a failure).
 */
static inline void tmpdir_done(const char *dir, bool failed)
{
	char cmd[PATH_MAX + 16];

	if (failed || getenv("CFIPROF_KEEP_TMP")) {
		fprintf(stderr, "logs and files kept in %s\n", dir);
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* The last non-empty lines of a file, for failure messages. */
static inline void print_tail(const char *path, int lines)
{
	char *s = slurp(path), *p = s + strlen(s);
	int n = 0;

	while (p > s && p[-1] == '\n')
		p--;
	while (p > s) {
		if (p[-1] == '\n' && ++n == lines)
			break;
		p--;
	}
	fprintf(stderr, "  --- %s (tail):\n%s\n", path, p);
	free(s);
}

/* The end of a file under a label, for failure messages. */
static inline void dump_tail(const char *label, const char *path)
{
	char *s = slurp(path);
	size_t len = strlen(s);
	const char *p = len > 2000 ? s + len - 2000 : s;

	fprintf(stderr, "  --- %s (%s):\n%s\n  ---\n", label, path, p);
	free(s);
}

/* Runs a shell command made like printf; true when it exits 0. */
__attribute__((format(printf, 1, 2))) static inline bool shell_ok(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < sizeof(cmd) && system(cmd) == 0;
}

static inline bool tool_exists(const char *name)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* ---- the test programs' known chains (tests/progs) ---- */

/* frames[0..n) joined with ';' into buf, cut at len. */
static inline void join_frames(char *buf, size_t len, char **frames, int n)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && off + 1 < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s", i ? ";" : "", frames[i]);

		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* A GCC-split part of a function (foo.cold) is still foo. */
static inline bool frame_is(const char *actual, const char *expected)
{
	size_t n = strlen(expected);

	return !strcmp(actual, expected) ||
	       (!strncmp(actual, expected, n) && !strcmp(actual + n, ".cold"));
}

/*
 * What a spinning leaf itself may call: spin_done -> clock_gettime (libc,
 * vDSO).  spin_now is inlined: with source lines it is "spin_now (inline)".
 * On top of any of them a signal may be handled (faults_life's SIGUSR1): glibc's
 * trampoline __restore_rt, in which the kernel returns from the handler, then
 * the handler on_usr1 and what it calls (spin_now, clock_gettime).
 */
static inline bool leaf_callee_ok(const char *name, int depth_below_leaf)
{
	bool spin_now = !strcmp(name, "spin_now") || !strcmp(name, "spin_now (inline)");

	if (!strcmp(name, "__restore_rt") || !strcmp(name, "on_usr1"))
		return true;
	if (depth_below_leaf == 0)
		return !strcmp(name, "spin_done") || spin_now;
	return strstr(name, "clock_gettime") || strstr(name, "vdso") || spin_now;
}

/*
 * A folded stack (frames root first, the leaf at leaf_at) is exactly exp[]
 * from the root to the leaf, and below the leaf only what the leaf calls.
 */
static inline bool chain_is(char **frames, int n, int leaf_at, const char *const *exp, int nexp)
{
	bool ok = leaf_at + 1 == nexp;

	for (int i = 0; ok && i < nexp; i++)
		ok = frame_is(frames[i], exp[i]);
	for (int i = leaf_at + 1; ok && i < n; i++)
		ok = leaf_callee_ok(frames[i], i - leaf_at - 1);
	return ok;
}

/* n copies of src named dir/c0.so .. dir/c{n-1}.so, and dir/lib.so: each its own inode. */
static inline bool copy_file_n(const char *src, const char *dir, int n)
{
	size_t len = 0;
	char *data = slurp_len(src, &len), path[PATH_MAX + 32];
	bool ok = len > 0;

	for (int i = -1; ok && i < n; i++) {
		FILE *f;

		if (i < 0)
			snprintf(path, sizeof(path), "%.4000s/lib.so", dir);
		else
			snprintf(path, sizeof(path), "%.4000s/c%d.so", dir, i);
		f = fopen(path, "we");
		ok = f && fwrite(data, 1, len, f) == len;
		if (f)
			ok = !fclose(f) && ok;
	}
	free(data);
	return ok;
}

#endif
