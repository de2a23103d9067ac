// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A device where the profiler opens a process's files (issue 26, item 1).
 * Any user may run `unshare -Urm` (Debian, Ubuntu) and bind-mount a device,
 * in its own mount namespace, over the library it mapped, its
 * /tmp/perf-PID.map and its library's .gnu_debuglink candidate; the
 * profiler reads those through /proc/PID/root, so it reaches the device.
 * Opening a device runs its driver's open: an idle /dev/watchdog arms (and
 * the close that follows reboots the host), a tty's lines change.  The
 * device here is a fresh node with /dev/null's numbers, made for the test,
 * and a fanotify FAN_OPEN watch on it (the kernel's word, not cfiprof's)
 * sees every open and who made it (another profiler on the host may too):
 *  - agent_as_unit: the agent as its systemd unit runs it (nobody with
 *    CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH: no
 *    CAP_SYS_ADMIN, so even the library goes through /proc/PID/root) beside
 *    progs/hostile_devices (nobody, in its own user and mount namespaces;
 *    the agent profiles its cgroup only: a shared host runs other attacks).
 *    The device is never opened; the three refusals are counted, each by
 *    its own path's counter and by cause "device", and the library's is
 *    logged.
 *  - record_root: `cfiprof record -p PID` as root (its libraries come
 *    through map_files, the perf map and the debug file through the
 *    process's root): never opened either, and the summary counts it.
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: beside others (its agent in its own cgroup, record -p) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "tests/lib/nobody.h"

#define PATHBUF (PATH_MAX + 64)

static char dev[PATHBUF], victim[PATHBUF];

/*
 * A fanotify watch for opens of path.  Not inotify: another profiler on the
 * host (another agent sampling every process) may open the device too, and
 * fanotify says who opened; FAN_REPORT_FID, so no event opens it again.
 */
static int watch_opens(const char *path)
{
	int fd =
	    fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY);

	if (fd >= 0 && fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, path)) {
		close(fd);
		fd = -1;
	}
	CHECK(fd >= 0, "fanotify on %s: %s", path, strerror(errno));
	return fd;
}

/* Opens by process pid (any thread) seen since the last call; *others: by anyone else. */
static int opens_by(int fan, pid_t pid, int *others)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	int n = 0;
	ssize_t len;

	*others = 0;
	while (fan >= 0 && (len = read(fan, buf, sizeof(buf))) > 0) {
		const struct fanotify_event_metadata *m = (const void *)buf;

		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (!(m->mask & FAN_OPEN))
				continue;
			if (m->pid == pid)
				n++;
			else
				(*others)++;
		}
	}
	return n;
}

/*
 * The device (tmp/watchdog, 1:3), openable where it lies (no nodev mount: else
 * no open could be seen), and the victim's directory: libvictim.so, and
 * libdbg.so stripped of its .symtab with a .gnu_debuglink to libdbg.debug.
 */
static bool prepare(void)
{
	char lib[PATHBUF];
	int fd;

	snprintf(dev, sizeof(dev), "%s/watchdog", tmp);
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", progs);
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) || chmod(dev, 0666)) {
		CHECK(0, "mknod %s: %s", dev, strerror(errno));
		return false;
	}
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "the device opens where it lies (a nodev mount hides opens): %s",
	      strerror(errno));
	if (fd >= 0)
		close(fd);
	return fd >= 0 && shell_ok("mkdir -m 0755 %s && cp %s %s/libvictim.so && "
				   "objcopy --only-keep-debug %s %s/libdbg.debug && "
				   "strip --strip-all -o %s/libdbg.so %s && "
				   "objcopy --add-gnu-debuglink=%s/libdbg.debug %s/libdbg.so",
				   victim, lib, victim, lib, victim, victim, lib, victim, victim);
}

/* hostile_devices as nobody in its own user and mount namespaces; its pid, ready. */
static pid_t start_hostile(const char *name)
{
	char hout[PATHBUF], herr[PATHBUF], prog[PATHBUF];
	char *argv[] = {"unshare", "-Urm", prog, dev, victim, "30", NULL};
	pid_t h;

	snprintf(hout, sizeof(hout), "%s/%s.out", tmp, name);
	snprintf(herr, sizeof(herr), "%s/%s.err", tmp, name);
	snprintf(prog, sizeof(prog), "%s/hostile_devices", nprogs);
	h = spawn_as_nobody(argv, false, hout, herr);
	CHECK(wait_ready(hout),
	      "hostile_devices (nobody, unshare -Urm) did not bind-mount the device: '%s'",
	      slurp(herr));
	return h;
}

/*
 * A cgroup v2 of its own for pid, into cg: the agent profiles the attacker
 * alone, not whatever else a shared host runs (other tests' attacks).
 */
static bool cgroup_of_its_own(pid_t pid, char *cg, size_t len)
{
	const char *base = access("/sys/fs/cgroup/unified/cgroup.procs", F_OK)
			       ? "/sys/fs/cgroup"
			       : "/sys/fs/cgroup/unified";
	char procs[PATHBUF + 16];
	bool ok;
	FILE *f;

	snprintf(cg, len, "%s/cfiprof-hostile-opens.%d", base, (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	ok = (!mkdir(cg, 0755) || errno == EEXIST) && (f = fopen(procs, "w")) &&
	     fprintf(f, "%d\n", (int)pid) > 0 && !fclose(f);
	CHECK(ok, "moving pid %d into %s: %s", (int)pid, cg, strerror(errno));
	return ok;
}

static void stop(pid_t h)
{
	char map[64];

	kill(h, SIGKILL);
	wait_timeout(h, 2, NULL);
	/* the file under the process's mount, in our namespace */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)h);
	unlink(map);
}

/* The named metrics, polled until each is at least want[i] or 20 s passed. */
static void poll_metrics(const char *addr, const char *const names[], const double want[],
			 double got[], int n)
{
	for (int tries = 0; tries < 100; tries++) {
		char *body = addr[0] ? http_get(addr, "/metrics") : NULL;
		bool all = body != NULL;

		for (int i = 0; i < n; i++) {
			got[i] = body ? metric_value(body, names[i]) : -1;
			all = all && got[i] >= want[i];
		}
		free(body);
		if (all)
			return;
		sleep_s(0.2);
	}
}

static void test_agent_as_unit(void)
{
	static const char *const names[] = {
	    "cfiprof_mapped_files_refused_total",
	    "cfiprof_perfmaps_refused_total",
	    "cfiprof_debug_files_refused_total",
	    "cfiprof_outside_files_refused_total{cause=\"device\"}",
	};
	/* one path each: the library, the perf map, the debuglink candidate; three devices */
	static const double want[] = {1, 1, 1, 3};
	char out[PATHBUF], log[PATHBUF], addr[64], cg[PATHBUF];
	char *agent[] = {
	    ncfiprof, "agent", "--output-dir",	 out,		"--interval", "1", "-d", "60",
	    "-F",     "99",    "--metrics-addr", "127.0.0.1:0", "--cgroup",   cg,  NULL};
	double got[4] = {-1, -1, -1, -1};
	int fan, rc, opened, others;
	bool timed_out = false;
	pid_t h, a;
	char *text;

	snprintf(out, sizeof(out), "%s/profiles", tmp);
	snprintf(log, sizeof(log), "%s/agent.log", tmp);
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534), "%s for nobody", out);
	fan = watch_opens(dev);
	h = start_hostile("unit");
	cgroup_of_its_own(h, cg, sizeof(cg));
	a = spawn_as_nobody(agent, true, NULL, log);
	agent_metrics_addr(log, addr, sizeof(addr));
	CHECK(addr[0], "the agent's metrics address is in its log");
	poll_metrics(addr, names, want, got, 4);
	kill(a, SIGTERM);
	rc = exit_code(wait_timeout(a, 15, &timed_out), timed_out);
	opened = opens_by(fan, a, &others);
	CHECK(opened == 0, "the device was opened %d times (FAN_OPEN) by the agent", opened);
	for (int i = 0; i < 4; i++)
		CHECK(got[i] >= want[i], "%s = %.0f (want >= %.0f)", names[i], got[i], want[i]);
	CHECK(rc == 0, "the agent exits %d%s", rc, timed_out ? " (hung)" : "");
	text = slurp(log);
	CHECK(strstr(text, "/libvictim.so is now not a regular file: refused"),
	      "the agent's log names the planted library");
	free(text);
	printf("agent beside a bind-mounted device: %d opens (%d by other processes); refused: "
	       "%.0f mapped, %.0f perf map, %.0f debug file, %.0f as a device\n",
	       opened, others, got[0], got[1], got[2], got[3]);
	stop(h);
	rmdir(cg);
	close(fan);
	if (harness_failed)
		dump_tail("agent log", log);
}

static void test_record_root(void)
{
	char pid[16], err[PATHBUF];
	char *rec[] = {cfiprof, "record", "-v", "-p", pid,	     "-d", "2",
		       "-F",	"99",	  "-o", "/dev/null", NULL};
	int fan = watch_opens(dev), rc, opened, others;
	unsigned long devices = 0;
	bool timed_out = false;
	char *text, *line;
	pid_t h, r;

	snprintf(err, sizeof(err), "%s/record.err", tmp);
	h = start_hostile("record");
	snprintf(pid, sizeof(pid), "%d", (int)h);
	r = spawn(rec, NULL, err);
	rc = exit_code(wait_timeout(r, 30, &timed_out), timed_out);
	opened = opens_by(fan, r, &others);
	text = slurp(err);
	line = strstr(text, "files refused unopened: ");
	if (line && (line = strstr(line, "device ")))
		devices = strtoul(line + 7, NULL, 10);
	CHECK(rc == 0, "record -p %s exits %d: %s", pid, rc, text);
	CHECK(opened == 0, "the device was opened %d times (FAN_OPEN) by record", opened);
	/* the perf map and the debuglink candidate: the library comes through map_files */
	CHECK(devices >= 2, "the summary counts %lu devices refused (want >= 2): %s", devices,
	      text);
	printf("record -p beside a bind-mounted device: %d opens (%d by other processes), %lu "
	       "refused as devices\n",
	       opened, others, devices);
	free(text);
	stop(h);
	close(fan);
}

int main(int argc, char **argv)
{
	static const char *const copied[] = {"hostile_devices"};
	static const char *const tools[] = {"setpriv", "unshare", "objcopy", "strip", NULL};

	harness_init(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nobody_setup("hostile_opens", copied, 1, tools) || !prepare())
		return HARNESS_DONE();
	RUN_TEST(test_agent_as_unit);
	RUN_TEST(test_record_root);
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
