// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Container-wide sampling (issue 6), against a container the test builds from
 * Linux primitives:
 *   - a new cgroup v2 directory cfiprof-test-<pid> under the cgroup2 mount;
 *   - a root directory ROOT whose /opt and /lib64 are tmpfs mounts made in the
 *     container's own mount namespace (unshare --mount --pid --fork), holding
 *     the workload /opt/bin/ctrwork (a copy of progs/chain), its libc in
 *     /opt/lib and its ld.so in /lib64: none of them exists on the host (the
 *     host's ROOT/opt and ROOT/lib64 are empty), so cfiprof can only read them
 *     through /proc/PID/map_files or /proc/PID/root;
 *   - the workload chroots into ROOT and is pid 1 of its PID namespace.
 * Checks:
 *  1. record --cgroup CG while a noisy neighbour (progs/recurse) runs outside
 *     it: 100% of the samples are the container's, stacks are complete, the
 *     chain main;a;b;c;d;leaf is symbolized, the pprof carries the labels
 *     cgroup (the path under the mount) and ns_pid (read by go tool pprof
 *     -tags), report --group-by container puts the cgroup first;
 *     a sub-cgroup docker-<64 hex>.scope with a second workload: --container
 *     <12 hex> profiles exactly it and the pprof label container is the id;
 *  2. symlinks planted in ROOT pointing at host files (absolute, ../../..,
 *     a directory link) are not followed at all by open_in_root /
 *     open_in_proc_root (ELOOP), while ".." and absolute paths stay inside;
 *  3. a process started inside the running container (nsenter into its mount
 *     and PID namespaces, its pid written to the cgroup) after record
 *     --cgroup began is profiled, with complete stacks.
 * A missing tool, program or BPF failure is a failure, never a skip.  Every
 * process, mount namespace and cgroup made here is removed at the end, also
 * on failure or SIGINT / SIGTERM.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build: the test
 * programs are OUT/progs/P).
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"
#include "tests/lib/pprof_read.h"
#include "user/track/cgroups.h"
#include "elf/build_id.h"
#include "elf/safe_open.h"

#define PATHBUF	     (PATH_MAX + 256)
#define MAX_CHILDREN 32
#define MAX_LIBS     16

static char chain[PATHBUF], recurse[PATHBUF];
static char rootdir[512];
static char cg_mnt[256], cg_abs[512], cg_rel[256], dock_abs[PATHBUF], dock_rel[512];
static char dock_id[65];
static char interp[PATH_MAX], libs[MAX_LIBS][PATH_MAX];
static int nr_libs;

/* every process group started here, killed at cleanup */
static pid_t children[MAX_CHILDREN];
static int nr_children;

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

/* ---- processes ---- */

/* spawn_env, the process group registered: cleanup kills it. */
static pid_t spawn_child(char *const argv[], char *const env[], const char *out, const char *err)
{
	pid_t pid;

	if (nr_children == MAX_CHILDREN)
		return -1;
	pid = spawn_env(argv, env, out, err);
	if (pid > 0)
		children[nr_children++] = pid;
	return pid;
}

static void forget_child(pid_t pid)
{
	for (int i = 0; i < nr_children; i++) {
		if (children[i] == pid) {
			children[i] = children[--nr_children];
			return;
		}
	}
}

/* Waits for pid (killing its group past timeout s): exit code, 128+sig, or -1. */
static int wait_child(pid_t pid, double timeout)
{
	bool timed_out;
	int st = wait_timeout(pid, timeout, &timed_out);

	if (timed_out)
		fprintf(stderr, "  pid %d timed out after %.0f s: killed\n", pid, timeout);
	forget_child(pid);
	return exit_code(st, timed_out);
}

static int run_child(char *const argv[], char *const env[], const char *out, const char *err,
		     double timeout)
{
	pid_t pid = spawn_child(argv, env, out, err);

	return pid < 0 ? -1 : wait_child(pid, timeout);
}

/* ---- cleanup: processes, then cgroups (mounts live in namespaces that die with them) ---- */

static void kill_cgroup(const char *path)
{
	char file[PATHBUF];

	if (!path[0] || access(path, F_OK))
		return;
	snprintf(file, sizeof(file), "%s/cgroup.kill", path);
	if (!write_file(file, "1")) {
		/* no cgroup.kill (before 5.14): one by one */
		uint32_t *pids = NULL;
		int n = cgroup_pids(path, &pids);

		for (int i = 0; i < n; i++)
			kill((pid_t)pids[i], SIGKILL);
		free(pids);
	}
}

static bool remove_cgroup(const char *path)
{
	double t0 = mono_sec();

	if (!path[0] || access(path, F_OK))
		return true;
	while (mono_sec() - t0 < 5) {
		if (!rmdir(path) || errno == ENOENT)
			return true;
		if (errno != EBUSY)
			break;
		kill_cgroup(path);
		usleep(20000);
	}
	fprintf(stderr, "  cannot remove cgroup %s: %s\n", path, strerror(errno));
	return false;
}

/* The cgroups under path: a test that died took the name of its docker-named scope with it. */
static void remove_cgroup_children(const char *path)
{
	char child[PATHBUF];
	struct dirent *e;
	DIR *d;

	if (!path[0] || !(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		remove_cgroup(child);
	}
	closedir(d);
}

static volatile sig_atomic_t cleaned;

static void cleanup(void)
{
	if (cleaned)
		return;
	cleaned = 1;
	kill_cgroup(cg_abs); /* the containers, and whatever they started */
	for (int i = 0; i < nr_children; i++)
		kill(-children[i], SIGKILL);
	for (int i = 0; i < nr_children; i++)
		waitpid(children[i], NULL, 0);
	nr_children = 0;
	/*
	 * A container's init outlives its unshare parent for a moment: as the
	 * subreaper, reap every orphan (the killed workloads) before leaving.
	 */
	for (double t0 = mono_sec(); mono_sec() - t0 < 5;) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0 && errno == ECHILD)
			break;
		if (r <= 0)
			usleep(10000);
	}
	remove_cgroup(dock_abs);
	remove_cgroup_children(cg_abs);
	remove_cgroup(cg_abs);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the container ---- */

/* The libraries and the interpreter of prog, from ldd. */
static bool find_libs(const char *prog)
{
	char cmd[PATHBUF + 32], line[PATH_MAX + 64], a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ldd '%s' 2>&1", prog);
	p = popen(cmd, "r");
	if (!p)
		return false;
	interp[0] = '\0';
	nr_libs = 0;
	while (fgets(line, sizeof(line), p)) {
		int n = sscanf(line, "%4095s %4095s %4095s", a, b, c);

		if (n >= 3 && !strcmp(b, "=>") && c[0] == '/' && nr_libs < MAX_LIBS)
			snprintf(libs[nr_libs++], sizeof(libs[0]), "%s", c);
		else if (n >= 1 && a[0] == '/')
			snprintf(interp, sizeof(interp), "%s", a);
	}
	pclose(p);
	return interp[0] && nr_libs > 0;
}

/*
 * Starts a container in cgroup cg: a shell writes its pid into the cgroup,
 * then unshare gives it its own mount and PID namespaces, mounts tmpfs on
 * ROOT/opt and ROOT/<dir of the interpreter>, copies the program to
 * /opt/bin/NAME, its libraries to /opt/lib and the interpreter, and execs
 * chroot ROOT /opt/bin/NAME SECONDS.  Returns the pid of the shell (later
 * unshare), or -1.
 */
static pid_t start_container(const char *cg, const char *name, const char *seconds,
			     const char *errname)
{
	static const char script[] =
	    "cg=$1 root=$2 prog=$3 name=$4 secs=$5 interp=$6; shift 6\n"
	    "echo $$ > \"$cg/cgroup.procs\" || exit 97\n"
	    "exec unshare --mount --pid --fork --propagation private sh -c '\n"
	    "  root=$1 prog=$2 name=$3 secs=$4 interp=$5; shift 5\n"
	    "  idir=$(dirname \"$interp\")\n"
	    "  mount -t tmpfs cfiprof-ctr \"$root/opt\" &&\n"
	    "  mount -t tmpfs cfiprof-ctr \"$root$idir\" &&\n"
	    "  mkdir \"$root/opt/bin\" \"$root/opt/lib\" &&\n"
	    "  cp \"$prog\" \"$root/opt/bin/$name\" &&\n"
	    "  cp -L \"$interp\" \"$root$idir/\" &&\n"
	    "  cp -L \"$@\" \"$root/opt/lib/\" || exit 98\n"
	    "  LD_LIBRARY_PATH=/opt/lib exec chroot \"$root\" \"/opt/bin/$name\" \"$secs\"\n"
	    "' sh \"$root\" \"$prog\" \"$name\" \"$secs\" \"$interp\" \"$@\"\n";
	char *argv[8 + MAX_LIBS + 1], err[PATHBUF];
	int n = 0;

	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = (char *)script;
	argv[n++] = "sh";
	argv[n++] = (char *)cg;
	argv[n++] = rootdir;
	argv[n++] = chain;
	argv[n++] = (char *)name;
	argv[n++] = (char *)seconds;
	argv[n++] = interp;
	for (int i = 0; i < nr_libs; i++)
		argv[n++] = libs[i];
	argv[n] = NULL;
	return spawn_child(argv, NULL, NULL, tpath(err, sizeof(err), errname));
}

/*
 * A process started inside the running container whose workload is target:
 * its pid goes into cgroup cg, nsenter joins the container's mount and PID
 * namespaces, the program is copied into the container's /opt/bin as NAME and
 * run chrooted in ROOT.
 */
static pid_t start_in_container(const char *cg, pid_t target, const char *name, const char *seconds,
				const char *errname)
{
	static const char script[] =
	    "cg=$1 target=$2 root=$3 prog=$4 name=$5 secs=$6\n"
	    "echo $$ > \"$cg/cgroup.procs\" || exit 97\n"
	    "exec nsenter --target \"$target\" --mount --pid sh -c '\n"
	    "  cp \"$2\" \"$1/opt/bin/$3\" || exit 98\n"
	    "  LD_LIBRARY_PATH=/opt/lib exec chroot \"$1\" \"/opt/bin/$3\" \"$4\"\n"
	    "' sh \"$root\" \"$prog\" \"$name\" \"$secs\"\n";
	char tstr[32], err[PATHBUF];
	char *argv[] = {"sh",  "-c",	     (char *)script,  "sh", (char *)cg, tstr, rootdir,
			chain, (char *)name, (char *)seconds, NULL};

	snprintf(tstr, sizeof(tstr), "%d", (int)target);
	return spawn_child(argv, NULL, NULL, tpath(err, sizeof(err), errname));
}

static bool read_comm(pid_t pid, char *out, size_t len)
{
	char path[64], *s;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	s = slurp(path);
	s[strcspn(s, "\n")] = '\0';
	snprintf(out, len, "%s", s);
	free(s);
	return out[0] != '\0';
}

/*
 * The host pid of the process called comm in cgroup cg, once it has mapped
 * its libc (the dynamic loader is done); 0 if none within timeout s.
 */
static pid_t find_workload(const char *cg, const char *comm, double timeout)
{
	double t0 = mono_sec();

	while (mono_sec() - t0 < timeout) {
		uint32_t *pids = NULL;
		int n = cgroup_pids(cg, &pids);

		for (int i = 0; i < n; i++) {
			char c[64], maps[64], *m;
			bool ready;

			if (!read_comm((pid_t)pids[i], c, sizeof(c)) || strcmp(c, comm))
				continue;
			snprintf(maps, sizeof(maps), "/proc/%u/maps", pids[i]);
			m = slurp(maps);
			ready = strstr(m, "libc.so") != NULL;
			free(m);
			if (ready) {
				pid_t pid = (pid_t)pids[i];

				free(pids);
				usleep(50000); /* let it reach the leaf */
				return pid;
			}
		}
		free(pids);
		usleep(20000);
	}
	return 0;
}

/* The pid in the innermost PID namespace (last NSpid field), 0 if unknown. */
static unsigned ns_pid_of(pid_t pid)
{
	char path[64], *s, *l;
	unsigned ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	s = slurp(path);
	l = strstr(s, "\nNSpid:");
	if (l) {
		char *end = strchr(l + 1, '\n'), *tok, *save = NULL;

		if (end)
			*end = '\0';
		for (tok = strtok_r(l + 7, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			ns = (unsigned)strtoul(tok, NULL, 10);
	}
	free(s);
	return ns;
}

/*
 * The container's files are invisible on the host: every file mapping of pid
 * (as /proc/PID/maps names it, seen from the host) does not exist, and the
 * program (from ROOT/opt/bin/NAME), its libc (ROOT/opt/lib) and ld.so are
 * mapped, and /proc/PID/map_files opens the program (an ELF).
 */
static void check_invisible(pid_t pid, const char *name)
{
	char path[64], want[PATHBUF], *s, *save = NULL, *line;
	int files = 0, visible = 0, prog = 0, libc = 0, ld = 0, mapfile_ok = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	snprintf(want, sizeof(want), "%s/opt/bin/%s", rootdir, name);
	s = slurp(path);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long start, end;
		char perms[8], *p = strchr(line, '/');
		struct stat st;

		if (!p || sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3)
			continue;
		files++;
		if (!stat(p, &st) || errno != ENOENT) {
			if (visible++ < 3)
				fprintf(stderr, "  %s (mapped by %s) exists on the host\n", p,
					name);
		}
		if (!strcmp(p, want)) {
			char mf[128], magic[4] = {0};
			int fd;

			prog++;
			snprintf(mf, sizeof(mf), "/proc/%d/map_files/%lx-%lx", (int)pid, start,
				 end);
			fd = open(mf, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4))
				mapfile_ok++;
			if (fd >= 0)
				close(fd);
		}
		if (!strncmp(p, rootdir, strlen(rootdir)) && strstr(p, "/opt/lib/libc.so"))
			libc++;
		if (!strncmp(p, rootdir, strlen(rootdir)) && strstr(p, "/ld-linux"))
			ld++;
	}
	free(s);
	CHECK(files > 0 && visible == 0,
	      "%s: %d of %d file mappings in /proc/%d/maps exist on the host (want none: the "
	      "container's files must only exist in its mount namespace)",
	      name, visible, files, (int)pid);
	CHECK(prog > 0 && libc > 0 && ld > 0,
	      "%s: mapped from %s: %d mappings, ROOT/opt/lib/libc: %d, ROOT ld.so: %d (want all)",
	      name, want, prog, libc, ld);
	CHECK(mapfile_ok > 0, "%s: /proc/%d/map_files of the program is not a readable ELF", name,
	      (int)pid);
}

/* ---- folded output ---- */

struct fstats {
	unsigned long total, comm, other, noisy, complete, chain, group_ok;
	unsigned long pending, bad_incomplete; /* [incomplete: tables-pending / in-execve], others */
	char reasons[512], other_line[512];
};

/*
 * Folded lines (comm first, or with group: the group then the comm):
 * samples of comm, of others, with recurse frames, complete (no
 * [incomplete: ...], reaching _start / __libc_start_call_main and main) and
 * with main;a;b;c;d;leaf in order.
 */
static void folded_stats(const char *path, const char *comm, const char *group, struct fstats *st)
{
	char *text = slurp(path), *save = NULL, *line;

	memset(st, 0, sizeof(*st));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *f, *fsave = NULL, *inc;
		unsigned long count;
		bool root = false, has_main = false;
		int k = 0;

		if (!sp || !isdigit((unsigned char)sp[1]))
			continue;
		count = strtoul(sp + 1, NULL, 10);
		*sp = '\0';
		st->total += count;
		if (strstr(line, ";rec;") || strstr(line, "recurse"))
			st->noisy += count;
		inc = strstr(line, "[incomplete: ");
		/* in-execve was tables-pending until it got its own reason: the same excuse */
		if (inc && (!strncmp(inc + 13, "tables-pending]", 15) ||
			    !strncmp(inc + 13, "in-execve]", 10)))
			st->pending += count;
		else if (inc)
			st->bad_incomplete += count;
		if (inc && strlen(st->reasons) + 64 < sizeof(st->reasons)) {
			size_t rl = strcspn(inc + 13, "]");

			snprintf(st->reasons + strlen(st->reasons), 64, "%s%.*s x%lu",
				 st->reasons[0] ? ", " : "", (int)(rl < 40 ? rl : 40), inc + 13,
				 count);
		}
		if (strstr(line, ";main;a;b;c;d;leaf") && !inc)
			st->chain += count;
		if (group) {
			size_t gl = strlen(group);

			if (!strncmp(line, group, gl) && line[gl] == ';')
				st->group_ok += count;
		}
		for (f = strtok_r(line, ";", &fsave); f; f = strtok_r(NULL, ";", &fsave), k++) {
			if (group && k == 0)
				continue;
			if (k == (group ? 1 : 0)) {
				if (strcmp(f, comm)) {
					st->other += count;
					if (!st->other_line[0])
						snprintf(st->other_line, sizeof(st->other_line),
							 "%.500s", f);
				} else {
					st->comm += count;
				}
				continue;
			}
			if (!strcmp(f, "_start") || !strcmp(f, "__libc_start_call_main"))
				root = true;
			if (!strcmp(f, "main"))
				has_main = true;
		}
		if (!inc && root && has_main)
			st->complete += count;
	}
	free(text);
}

/*
 * Complete stacks: no sample stops for any reason but tables-pending, and at
 * most `excused` of those (the samples that land before cfiprof has loaded a
 * process's tables: a fixed handful at its start, however loaded the machine
 * is, so a count and not a share); of the rest >= 99% complete and every
 * complete one names main;a;b;c;d;leaf (symbols read from inside the
 * container's root).
 */
#define PENDING_EXCUSED	     0 /* a process in the cgroup before record began: loaded first */
#define LATE_PENDING_EXCUSED 25 /* one that arrives later: exec, then ld.so maps libc */

static void check_complete(const char *what, const struct fstats *st, unsigned long excused)
{
	unsigned long counted = st->total - (st->pending < excused ? st->pending : excused);

	CHECK(st->bad_incomplete == 0,
	      "%s: %lu of %lu samples incomplete for other reasons than tables-pending: %s", what,
	      st->bad_incomplete, st->total, st->reasons);
	CHECK(st->pending <= excused,
	      "%s: %lu samples [incomplete: tables-pending] (want <= %lu, the first moments)", what,
	      st->pending, excused);
	CHECK(st->total && st->complete * 100 >= counted * 99,
	      "%s: %lu of %lu samples complete (want >= 99%% of the %lu not excused); incomplete: "
	      "%s",
	      what, st->complete, st->total, counted,
	      st->reasons[0] ? st->reasons : "(none marked)");
	CHECK(st->complete && st->chain * 100 >= st->complete * 99,
	      "%s: main;a;b;c;d;leaf symbolized in %lu of %lu complete samples (want >= 99%%: the "
	      "symbols are read from inside the container's root)",
	      what, st->chain, st->complete);
}

/* ---- go tool pprof -tags ---- */

static char *go_env[10];

/* go tool pprof -tags -sample_index=samples T/PB; the output (caller frees) or NULL. */
static char *pprof_tags(const char *pb)
{
	char in[PATHBUF], out[PATHBUF], err[PATHBUF], oname[128], ename[128];
	char *argv[] = {"go", "tool", "pprof", "-tags", "-sample_index=samples", in, NULL};
	int rc;

	tpath(in, sizeof(in), pb);
	snprintf(oname, sizeof(oname), "%s.tags", pb);
	snprintf(ename, sizeof(ename), "%s.tags.err", pb);
	rc = run_child(argv, go_env, tpath(out, sizeof(out), oname), tpath(err, sizeof(err), ename),
		     60);
	CHECK(rc == 0, "go tool pprof -tags %s: exit %d", pb, rc);
	if (rc) {
		dump_tail("pprof stderr", err);
		return NULL;
	}
	return slurp(out);
}

/*
 * In `pprof -tags` output ("KEY: Total N" then "  N (  P%): VALUE" lines):
 * the values of KEY, ';'-joined into out; the percentage of the one equal to
 * want (or the largest one if want is NULL) in *pct.
 */
static void tag_values(const char *tags, const char *key, const char *want, char *out, size_t len,
		       double *pct)
{
	char *text = strdup(tags), *save = NULL, *line;
	bool in_key = false;

	if (!text)
		abort();
	out[0] = '\0';
	*pct = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *colon, *open, *close;
		double v;

		while (*p == ' ' || *p == '\t')
			p++;
		colon = strstr(p, ": Total");
		if (colon) {
			in_key =
			    (size_t)(colon - p) == strlen(key) && !strncmp(p, key, strlen(key));
			continue;
		}
		open = strchr(p, '(');
		close = open ? strstr(open, "%):") : NULL;
		if (!in_key || !close)
			continue;
		v = strtod(open + 1, NULL);
		p = close + 3;
		while (*p == ' ')
			p++;
		if (strlen(out) + strlen(p) + 2 < len)
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? ";" : "",
				 p);
		if (want ? !strcmp(p, want) : v > *pct)
			*pct = v;
	}
	free(text);
}

/* ---- cfiprof ---- */

/* cfiprof ARGS... with stderr in T/ERRNAME; exit code. */
static int cfiprof(char **args, const char *out, const char *errname, double timeout)
{
	char *argv[24], err[PATHBUF];
	int n = 0, rc;

	argv[n++] = (char *)cfiprof_bin;
	while (*args && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	rc = run_child(argv, NULL, out, tpath(err, sizeof(err), errname), timeout);
	CHECK(rc == 0, "cfiprof %s ... (%s): exit %d", argv[1], errname, rc);
	if (rc)
		dump_tail("cfiprof stderr", err);
	return rc;
}

/*
 * The fewest samples a record of the spinning workload must have: what the
 * CPU time it had since cpu0 gives at 499 Hz (cpu_samples_floor), at most 50,
 * at least 1.  Beside CPU hogs a nested cgroup's share of the CPUs is small
 * (48 samples in 2 s once): a fixed 50 judged the scheduler.
 */
static double workload_floor(pid_t work, double cpu0)
{
	double cpu = proc_cpu_s(work),
	       floor = cpu0 >= 0 && cpu >= cpu0 ? cpu_samples_floor(cpu - cpu0, 499) : 50;

	return floor > 50 ? 50 : floor < 1 ? 1 : floor;
}

/* ---- 1. record --cgroup: only the container, complete, symbolized, labelled ---- */

static void test_cgroup(pid_t work)
{
	char folded[PATHBUF], rec[PATHBUF], pb[PATHBUF], ea[PATHBUF], eb[PATHBUF], grp[PATHBUF];
	char vals[1024], nsstr[32], *tags;
	char *rec_args[] = {(char *)cfiprof_bin,
			    "record", "-v",
			    "--cgroup",
			    cg_abs,
			    "-F",
			    "499",
			    "-d",
			    "3",
			    "-o",
			    tpath(folded, sizeof(folded), "ctr.folded"),
			    "--save",
			    tpath(rec, sizeof(rec), "ctr.rec"),
			    NULL};
	char *pb_args[] = {(char *)cfiprof_bin,
			   "record", "-v",
			   "--cgroup",
			   cg_abs,
			   "-F",
			   "499",
			   "-d",
			   "3",
			   "-o",
			   tpath(pb, sizeof(pb), "ctr.pb.gz"),
			   NULL};
	struct fstats st;
	unsigned ns = ns_pid_of(work);
	double pct, cpu0, floor;
	pid_t a, b;
	int ra, rb;

	if (ns != 1 && ns != 2)
		CHECK(0, "ctrwork: pid %u inside its PID namespace (want 1 or 2)", ns);
	/* the folded / saved run and the pprof run side by side */
	cpu0 = proc_cpu_s(work);
	a = spawn_child(rec_args, NULL, NULL, tpath(ea, sizeof(ea), "ctr.record.err"));
	b = spawn_child(pb_args, NULL, NULL, tpath(eb, sizeof(eb), "ctr.pb.record.err"));
	ra = a < 0 ? -1 : wait_child(a, 60);
	rb = b < 0 ? -1 : wait_child(b, 60);
	floor = workload_floor(work, cpu0);
	CHECK(ra == 0, "record --cgroup %s -o ctr.folded --save ctr.rec: exit %d", cg_abs, ra);
	if (ra)
		dump_tail("record stderr", ea);
	CHECK(rb == 0, "record --cgroup %s -o ctr.pb.gz: exit %d", cg_abs, rb);
	if (rb)
		dump_tail("record stderr", eb);

	if (!ra) {
		folded_stats(folded, "ctrwork", NULL, &st);
		printf("record --cgroup: %lu samples, %lu ctrwork, %lu complete, %lu with the "
		       "chain\n",
		       st.total, st.comm, st.complete, st.chain);
		CHECK(st.total >= floor,
		      "record --cgroup: %lu samples in 3 s at 499 Hz (want >= %.0f)", st.total,
		      floor);
		CHECK(st.comm == st.total && st.other == 0 && st.noisy == 0,
		      "record --cgroup: %lu of %lu samples are ctrwork's (want 100%%), %lu of "
		      "others (first: %s), %lu with recurse frames",
		      st.comm, st.total, st.other, st.other_line, st.noisy);
		check_complete("record --cgroup: ctrwork", &st, PENDING_EXCUSED);
		if (st.bad_incomplete || st.pending > PENDING_EXCUSED ||
		    st.chain * 100 < st.complete * 99) {
			dump_tail("ctr.folded", folded);
			dump_tail("record stderr", ea);
		}
		if (st.reasons[0])
			printf("  incomplete samples: %s\n", st.reasons);

		/* report --group-by container: no container id here, so the cgroup */
		char *rep_args[] = {"report", rec, "--group-by", "container", "-f", "folded", NULL};

		if (!cfiprof(rep_args, tpath(grp, sizeof(grp), "ctr.group.folded"), "ctr.group.err",
			     60)) {
			folded_stats(grp, "ctrwork", cg_rel, &st);
			CHECK(
			    st.total > 0 && st.group_ok == st.total && st.comm == st.total,
			    "report --group-by container: %lu of %lu samples have the first frame "
			    "'%s' then ctrwork (%lu)",
			    st.group_ok, st.total, cg_rel, st.comm);
			if (st.group_ok != st.total)
				dump_tail("ctr.group.folded", grp);
		}
	}

	if (!rb && (tags = pprof_tags("ctr.pb.gz"))) {
		tag_values(tags, "cgroup", cg_rel, vals, sizeof(vals), &pct);
		CHECK(!strcmp(vals, cg_rel) && pct >= 99.99,
		      "pprof label cgroup: '%s' (want '%s' on 100%% of the samples, got %.2f%%)",
		      vals, cg_rel, pct);
		snprintf(nsstr, sizeof(nsstr), "%u", ns);
		tag_values(tags, "ns_pid", nsstr, vals, sizeof(vals), &pct);
		CHECK(!strcmp(vals, nsstr) && pct >= 99.99,
		      "pprof label ns_pid: '%s' (want %s, ctrwork's pid in its namespace, on 100%% "
		      "of the samples, got %.2f%%)",
		      vals, nsstr, pct);
		tag_values(tags, "comm", "ctrwork", vals, sizeof(vals), &pct);
		CHECK(!strcmp(vals, "ctrwork") && pct >= 99.99,
		      "pprof label comm: '%s' (want only ctrwork)", vals);
		tag_values(tags, "container", NULL, vals, sizeof(vals), &pct);
		CHECK(!vals[0], "pprof label container: '%s' (want none: %s has no container id)",
		      vals, cg_rel);
		if (harness_failed)
			fprintf(stderr, "  --- pprof -tags:\n%s\n", tags);
		free(tags);
	}
}

/* ---- 1b. a docker-named sub-cgroup: --container PREFIX ---- */

static void test_container_id(void)
{
	char pb[PATHBUF], rec[PATHBUF], fold[PATHBUF], grp[PATHBUF], id12[13], vals[1024], *tags;
	unsigned char rnd[32];
	struct fstats st;
	double pct, cpu0, floor;
	pid_t sh, work;
	FILE *f = fopen("/dev/urandom", "re");

	if (!f || fread(rnd, 1, sizeof(rnd), f) != sizeof(rnd))
		CHECK(0, "reading /dev/urandom");
	if (f)
		fclose(f);
	for (int i = 0; i < 32; i++)
		snprintf(dock_id + 2 * i, 3, "%02x", rnd[i]);
	snprintf(id12, sizeof(id12), "%.12s", dock_id);
	snprintf(dock_abs, sizeof(dock_abs), "%s/docker-%s.scope", cg_abs, dock_id);
	snprintf(dock_rel, sizeof(dock_rel), "%s/docker-%s.scope", cg_rel, dock_id);
	if (mkdir(dock_abs, 0755))
		CHECK(0, "mkdir %s: %s", dock_abs, strerror(errno));
	if (access(dock_abs, F_OK)) {
		dock_abs[0] = '\0';
		return;
	}
	sh = start_container(dock_abs, "ctrdock", "30", "ctrdock.err");
	work = sh < 0 ? 0 : find_workload(dock_abs, "ctrdock", 10);
	if (!work) {
		CHECK(0, "the docker-named container's workload ctrdock did not start");
		tpath(fold, sizeof(fold), "ctrdock.err");
		dump_tail("container shell", fold);
		return;
	}
	check_invisible(work, "ctrdock");

	char *args[] = {"record", "-v",
			"--container",
			id12,
			"-F",
			"499",
			"-d",
			"2",
			"-o",
			tpath(pb, sizeof(pb), "dock.pb.gz"),
			"--save",
			tpath(rec, sizeof(rec), "dock.rec"),
			NULL};
	cpu0 = proc_cpu_s(work);
	if (cfiprof(args, NULL, "dock.record.err", 60))
		return;
	floor = workload_floor(work, cpu0);

	char *rep[] = {"report", rec, "-f", "folded", NULL};
	if (!cfiprof(rep, tpath(fold, sizeof(fold), "dock.folded"), "dock.report.err", 60)) {
		folded_stats(fold, "ctrdock", NULL, &st);
		printf("record --container %s: %lu samples, %lu ctrdock\n", id12, st.total,
		       st.comm);
		CHECK(st.total >= floor && st.comm == st.total && st.noisy == 0,
		      "record --container %s: %lu of %lu samples are ctrdock's (want 100%% of >= "
		      "%.0f; ctrwork in the parent cgroup and recurse are outside), others: %s",
		      id12, st.comm, st.total, floor, st.other_line);
	}
	char *rep2[] = {"report", rec, "--group-by", "container", "-f", "folded", NULL};
	if (!cfiprof(rep2, tpath(grp, sizeof(grp), "dock.group.folded"), "dock.group.err", 60)) {
		folded_stats(grp, "ctrdock", dock_id, &st);
		CHECK(st.total > 0 && st.group_ok == st.total,
		      "report --group-by container: %lu of %lu samples have the container id %s "
		      "as the first frame",
		      st.group_ok, st.total, dock_id);
		if (st.group_ok != st.total)
			dump_tail("dock.group.folded", grp);
	}
	if ((tags = pprof_tags("dock.pb.gz"))) {
		tag_values(tags, "container", dock_id, vals, sizeof(vals), &pct);
		CHECK(!strcmp(vals, dock_id) && pct >= 99.99,
		      "pprof label container: '%s' (want the full id %s on 100%%, got %.2f%%)",
		      vals, dock_id, pct);
		tag_values(tags, "cgroup", dock_rel, vals, sizeof(vals), &pct);
		CHECK(!strcmp(vals, dock_rel) && pct >= 99.99,
		      "pprof label cgroup: '%s' (want '%s' on 100%%)", vals, dock_rel);
		if (harness_failed)
			fprintf(stderr, "  --- pprof -tags dock.pb.gz:\n%s\n", tags);
		free(tags);
	}
	/* done with it: free the CPU for the rest */
	kill_cgroup(dock_abs);
	if (wait_child(sh, 10) < 0)
		fprintf(stderr, "  the docker-named container did not stop\n");
	if (!remove_cgroup(dock_abs))
		CHECK(0, "removing %s", dock_abs);
	dock_abs[0] = '\0';
}

/* ---- 2. symlinks planted in the root do not lead out of it ---- */

static bool same_file(int fd, const struct stat *st)
{
	struct stat fs;

	return fd >= 0 && !fstat(fd, &fs) && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino;
}

static void test_symlinks(pid_t work)
{
	static const char ctr_host[] = "cfiprof-container-hostname\n";
	/*
	 * want: 0 opens ROOT/etc/hostname; -ELOOP a symlink on the way, never
	 * followed (maps paths come resolved from the kernel, so a link there was
	 * planted); -ENOENT: ROOT has no such file.
	 */
	struct {
		const char *link, *target, *open; /* open: the path given to open_in_root */
		int want;
	} cases[] = {
	    {"lib/evil.so", "/etc/hostname", "lib/evil.so", -ELOOP},
	    {"lib/evil-rel.so", "../../../../../../../../etc/hostname", "lib/evil-rel.so", -ELOOP},
	    {"lib/evil-dotdot.so", "../etc/../../../../../../../../etc/hostname",
	     "lib/evil-dotdot.so", -ELOOP},
	    {"lib/up", "../../../../../../../..", "lib/up/etc/hostname", -ELOOP},
	    {"lib/evil-abs-dir.so", "/", "lib/evil-abs-dir.so/etc/hostname", -ELOOP},
	    {"lib/evil-passwd.so", "/etc/passwd", "lib/evil-passwd.so", -ELOOP},
	    {NULL, NULL, "../../../../../../etc/hostname", 0},
	    {NULL, NULL, "/etc/hostname", 0},
	    {NULL, NULL, "/etc/no-such-file", -ENOENT},
	};
	char path[PATHBUF], buf[256];
	struct stat host, inner, passwd;
	int rootfd;

	/* the fixture: its failures fail, its success asserts nothing of cfiprof */
	if (stat("/etc/hostname", &host))
		CHECK(0, "the host's /etc/hostname: %s", strerror(errno));
	if (stat("/etc/passwd", &passwd))
		CHECK(0, "the host's /etc/passwd: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/etc/hostname", rootdir);
	if (!write_file(path, ctr_host) || stat(path, &inner))
		CHECK(0, "writing %s", path);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!cases[i].link)
			continue;
		snprintf(path, sizeof(path), "%s/%s", rootdir, cases[i].link);
		if (symlink(cases[i].target, path))
			CHECK(0, "symlink %s -> %s: %s", path, cases[i].target, strerror(errno));
	}
	rootfd = open(rootdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		CHECK(0, "open %s: %s", rootdir, strerror(errno));
		return;
	}
	for (int via_proc = 0; via_proc < 2; via_proc++) {
		const char *how = via_proc ? "open_in_proc_root(ctrwork" : "open_in_root(ROOT";

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int fd = via_proc ? open_in_proc_root((uint32_t)work, cases[i].open)
					  : open_in_root(rootfd, cases[i].open);
			ssize_t n = 0;

			CHECK(!same_file(fd, &host) && !same_file(fd, &passwd),
			      "%s, \"%s\") opened the host's file", how, cases[i].open);
			if (cases[i].want == 0) {
				if (fd >= 0)
					n = pread(fd, buf, sizeof(buf) - 1, 0);
				buf[n > 0 ? n : 0] = '\0';
				CHECK(fd >= 0 && same_file(fd, &inner) && !strcmp(buf, ctr_host),
				      "%s, \"%s\"): %s, content '%.40s' (want ROOT/etc/hostname)",
				      how, cases[i].open, fd < 0 ? strerror(-fd) : "opened", buf);
			} else {
				CHECK(fd == cases[i].want, "%s, \"%s\"): %s (want %s)", how,
				      cases[i].open, fd < 0 ? strerror(-fd) : "opened a file",
				      strerror(-cases[i].want));
			}
			if (fd >= 0)
				close(fd);
		}
	}
	close(rootfd);
}

/* ---- 3. a process that enters the container after record began ---- */

static void test_late(pid_t work)
{
	char folded[PATHBUF], err[PATHBUF];
	char *args[] = {(char *)cfiprof_bin,
			"record", "-v",
			"--cgroup",
			cg_abs,
			"-F",
			"499",
			"-d",
			"4",
			"-o",
			tpath(folded, sizeof(folded), "late.folded"),
			NULL};
	struct fstats st;
	pid_t rec, sh, late = 0;
	double t0 = mono_sec(), cpu0 = -1, floor = 50;
	int rc;

	rec = spawn_child(args, NULL, NULL, tpath(err, sizeof(err), "late.record.err"));
	if (rec <= 0) {
		CHECK(0, "cannot start cfiprof record");
		return;
	}
	usleep(1000000);
	sh = start_in_container(cg_abs, work, "ctrlate", "30", "ctrlate.err");
	if (sh > 0)
		late = find_workload(cg_abs, "ctrlate", 2.5);
	if (late)
		cpu0 = proc_cpu_s(late);
	if (!late)
		CHECK(0, "ctrlate did not start inside the container");
	if (late) {
		unsigned ns = ns_pid_of(late);

		printf("ctrlate: host pid %d, pid %u in the container, started %.1f s after "
		       "record\n",
		       (int)late, ns, mono_sec() - t0);
		if (ns <= 1)
			CHECK(0, "ctrlate: pid %u in the container (want its PID namespace, > 1)",
			      ns);
		check_invisible(late, "ctrlate");
	} else {
		dump_tail("ctrlate shell", tpath(folded, sizeof(folded), "ctrlate.err"));
		tpath(folded, sizeof(folded), "late.folded");
	}
	rc = wait_child(rec, 60);
	if (late)
		floor = workload_floor(late, cpu0);
	CHECK(rc == 0, "record --cgroup %s (ctrlate started after it): exit %d", cg_abs, rc);
	if (rc) {
		dump_tail("record stderr", err);
		return;
	}
	folded_stats(folded, "ctrlate", NULL, &st);
	printf("record --cgroup, ctrlate entering: %lu of %lu samples ctrlate's, %lu complete, "
	       "%lu with the chain\n",
	       st.comm, st.total, st.complete, st.chain);
	/* the late one: its samples only (the others are ctrwork) */
	{
		char *text = slurp(folded), *save = NULL, *line, lpath[PATHBUF];
		FILE *f = fopen(tpath(lpath, sizeof(lpath), "late.only.folded"), "we");

		for (line = strtok_r(text, "\n", &save); f && line;
		     line = strtok_r(NULL, "\n", &save))
			if (!strncmp(line, "ctrlate;", 8))
				fprintf(f, "%s\n", line);
		if (f)
			fclose(f);
		free(text);
		folded_stats(lpath, "ctrlate", NULL, &st);
	}
	/* as many as its CPU time from when it was found gives (a nested cgroup's share is small)
	 */
	CHECK(st.total >= floor,
	      "record --cgroup: %lu samples of ctrlate, which entered the container 1 s after "
	      "record began (want >= %.0f from its CPU time at 499 Hz)",
	      st.total, floor);
	check_complete("ctrlate", &st, LATE_PENDING_EXCUSED);
	if (st.reasons[0])
		printf("  ctrlate incomplete samples: %s\n", st.reasons);
	if (st.total < floor || st.bad_incomplete || st.pending > LATE_PENDING_EXCUSED) {
		dump_tail("late.folded", folded);
		dump_tail("record stderr", err);
	}
}

/* ---- 4. debug files are looked for inside the process's root, never in ours ---- */

static char droot[512], dbuild[512];

/*
 * ROOT2 (plain directories; the workloads chroot into it) holds four stripped
 * copies of progs/chain, each with its debug file somewhere else:
 *   dbgwork  build-id: ROOT2/usr/lib/debug/.build-id/xx/rest.debug; cfiprof's
 *            own /usr/lib/debug has a DIFFERENT file there (same build-id,
 *            main and leaf renamed host_*)
 *   dbglink  no build-id, .gnu_debuglink found in ROOT2/usr/lib/debug/opt/bin/
 *   dbgsym   the same, but there ROOT2 has an absolute symlink to the right
 *            file on the host
 *   dbgdots  a .gnu_debuglink that is a path, ../../.. up to the right file on
 *            the host
 */
static bool make_debug_root(char *host_dbg, char *bid, size_t bid_len)
{
	static const char script[] =
	    "set -e; D=$1 B=$2 chain=$3 interp=$4; shift 4\n"
	    "idir=$(dirname \"$interp\")\n"
	    "mkdir -p \"$D/opt/bin\" \"$D/opt/lib\" \"$D$idir\" \"$D/usr/lib/debug/opt/bin\" "
	    "\"$B\"\n"
	    "cp -L \"$interp\" \"$D$idir/\"; cp -L \"$@\" \"$D/opt/lib/\"\n"
	    "cd \"$B\"\n"
	    "objcopy --only-keep-debug \"$chain\" dbgwork.debug\n"
	    "objcopy --strip-all \"$chain\" \"$D/opt/bin/dbgwork\"\n"
	    "objcopy --redefine-sym leaf=host_leaf --redefine-sym main=host_main dbgwork.debug "
	    "host.debug\n"
	    "objcopy --remove-section .note.gnu.build-id \"$chain\" nb\n"
	    "objcopy --only-keep-debug nb dbglink.debug\n"
	    "cp dbglink.debug dbgsym.debug; cp dbglink.debug dbgdots.debug\n"
	    "objcopy --strip-all --add-gnu-debuglink=dbglink.debug nb \"$D/opt/bin/dbglink\"\n"
	    "cp dbglink.debug \"$D/usr/lib/debug/opt/bin/\"\n"
	    "objcopy --strip-all --add-gnu-debuglink=dbgsym.debug nb \"$D/opt/bin/dbgsym\"\n"
	    "ln -s \"$B/dbgsym.debug\" \"$D/usr/lib/debug/opt/bin/dbgsym.debug\"\n"
	    "objcopy --strip-all --add-gnu-debuglink=dbgdots.debug nb dbgdots.tmp\n"
	    "objcopy --dump-section .gnu_debuglink=link.bin dbgdots.tmp\n";
	char *argv[8 + MAX_LIBS + 1] = {"sh",  "-c",   (char *)script, "sh",
					droot, dbuild, chain,	       interp};
	char blob[PATHBUF], path[PATHBUF];
	size_t len = 0, off;
	char *orig;
	int fd, n = 8;

	for (int i = 0; i < nr_libs; i++)
		argv[n++] = libs[i];
	argv[n] = NULL;
	if (run_child(argv, NULL, NULL, tpath(path, sizeof(path), "dbgroot.err"), 60)) {
		dump_tail("building the debug root", path);
		return false;
	}
	/* dbgdots: the same CRC, after a name that climbs out of the object's directory */
	snprintf(path, sizeof(path), "%s/link.bin", dbuild);
	orig = slurp_len(path, &len);
	memset(blob, 0, sizeof(blob));
	off = (size_t)snprintf(blob, sizeof(blob), "../../../../../../../../..%s/dbgdots.debug",
			       dbuild);
	off = (off + 1 + 3) & ~(size_t)3;
	if (len < 8 || off + 4 > sizeof(blob))
		return free(orig), false;
	memcpy(blob + off, orig + len - 4, 4);
	free(orig);
	snprintf(path, sizeof(path), "%s/dots.bin", dbuild);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, blob, off + 4) != (ssize_t)(off + 4) || close(fd))
		return false;
	if (!shell_ok(
		"cd %s && objcopy --remove-section .gnu_debuglink dbgdots.tmp dbgdots.nolink && "
		"objcopy --add-section .gnu_debuglink=dots.bin dbgdots.nolink %s/opt/bin/dbgdots",
		dbuild, droot))
		return false;
	snprintf(path, sizeof(path), "%s/opt/bin/dbgwork", droot);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elf_build_id_hex_fd(fd, bid, bid_len) || strlen(bid) < 3)
		bid[0] = '\0';
	if (fd >= 0)
		close(fd);
	snprintf(host_dbg, PATHBUF, "%s/host.debug", dbuild);
	return bid[0] && shell_ok("mkdir -p %s/usr/lib/debug/.build-id/%.2s && cp %s/dbgwork.debug "
				  "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
				  droot, bid, dbuild, droot, bid, bid + 2);
}

struct dbg_stats {
	unsigned long total, chain, host_named, leaf_named;
};

static struct dbg_stats dbg_stats(const char *text, const char *comm)
{
	struct dbg_stats st = {0};
	char *copy = strdup(text), *save = NULL, *line, pfx[32];

	snprintf(pfx, sizeof(pfx), "%s;", comm);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		unsigned long n = sp ? strtoul(sp + 1, NULL, 10) : 0;

		if (strncmp(line, pfx, strlen(pfx)))
			continue;
		st.total += n;
		if (strstr(line, ";main;a;b;c;d;leaf") && !strstr(line, "[incomplete"))
			st.chain += n;
		if (strstr(line, "host_"))
			st.host_named += n;
		if (strstr(line, ";leaf"))
			st.leaf_named += n;
	}
	free(copy);
	return st;
}

/*
 * A JIT inside the container (progs/jit_spin) writes its perf map to its own
 * /tmp (a tmpfs in the container's mount namespace: nothing on the host) under
 * its pid in the container: the JIT frame is named from that map.
 */
static void test_jit_map_in_root(pid_t work)
{
	static const char script[] =
	    "cg=$1 target=$2 root=$3 prog=$4\n"
	    "echo $$ > \"$cg/cgroup.procs\" || exit 97\n"
	    "exec nsenter --target \"$target\" --mount --pid sh -c '\n"
	    "  mkdir -p \"$1/tmp\" && mount -t tmpfs cfiprof-ctr \"$1/tmp\" &&\n"
	    "  cp \"$2\" \"$1/opt/bin/ctrjit\" || exit 98\n"
	    "  LD_LIBRARY_PATH=/opt/lib exec chroot \"$1\" /opt/bin/ctrjit 8 ctr_jit_code\n"
	    "' sh \"$root\" \"$prog\"\n";
	char prog[PATHBUF], tstr[32], err[PATHBUF], folded[PATHBUF], rerr[PATHBUF], hostmap[64];
	char *argv[] = {"sh", "-c", (char *)script, "sh", cg_abs, tstr, rootdir, prog, NULL};
	char *args[] = {(char *)cfiprof_bin,
			"record", "-v",
			"--cgroup",
			cg_abs,
			"-F",
			"499",
			"-d",
			"2",
			"-o",
			tpath(folded, sizeof(folded), "jit.folded"),
			NULL};
	char *text, *line, *save = NULL;
	unsigned long samples = 0, named = 0, n;
	double cpu0, floor;
	pid_t sh, jit = 0;
	unsigned ns = 0;
	int rc;

	snprintf(prog, sizeof(prog), "%s/jit_spin", progs_dir);
	snprintf(tstr, sizeof(tstr), "%d", (int)work);
	sh = spawn_child(argv, NULL, NULL, tpath(err, sizeof(err), "ctrjit.err"));
	if (sh > 0)
		jit = find_workload(cg_abs, "ctrjit", 5);
	CHECK(jit > 0, "ctrjit did not start inside the container");
	if (!jit) {
		dump_tail("ctrjit shell", err);
		return;
	}
	ns = ns_pid_of(jit);
	/* its map is in the container's /tmp only, under the pid it has there */
	snprintf(hostmap, sizeof(hostmap), "/tmp/perf-%d.map", (int)jit);
	CHECK(ns > 1 && access(hostmap, F_OK), "ctrjit: pid %u inside, %s on the host", ns,
	      hostmap);
	cpu0 = proc_cpu_s(jit);
	rc = run(args, NULL, tpath(rerr, sizeof(rerr), "jit.record.err"), 60);
	floor = workload_floor(jit, cpu0);
	CHECK(rc == 0, "record --cgroup %s (ctrjit): exit %d", cg_abs, rc);
	text = slurp(folded);
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		if (strncmp(line, "ctrjit;", 7) || !sp)
			continue;
		n = strtoul(sp + 1, NULL, 10);
		samples += n;
		if (strstr(line, ";ctr_jit_code"))
			named += n;
	}
	free(text);
	printf("ctrjit (pid %d, %u inside): %lu samples, %lu with the JIT frame named from the "
	       "container's perf map (at least %.0f from its CPU time)\n",
	       (int)jit, ns, samples, named, floor);
	/* as many samples as its CPU time in the window gives (a nested cgroup's share is small) */
	CHECK(samples >= floor && named * 100 >= samples * 99,
	      "ctrjit: %lu of %lu samples name the JIT code from ROOT/tmp/perf-%u.map (want >= "
	      "%.0f)",
	      named, samples, ns, floor);
	if (samples < floor || named * 100 < samples * 99)
		dump_tail("jit.folded", folded);
	kill(jit, SIGKILL);
	wait_child(sh, 10);
}

static void test_debug_in_root(void)
{
	static const char *const names[] = {"dbgwork", "dbglink", "dbgsym", "dbgdots"};
	static const char record_in_ns[] =
	    "mount -t tmpfs cfiprof-dbg /usr/lib/debug && mkdir -p /usr/lib/debug/.build-id/$1 && "
	    "cp \"$2\" \"/usr/lib/debug/.build-id/$1/$3.debug\" && shift 3 && exec \"$@\"";
	char host_dbg[PATHBUF], bid[ELF_BUILD_ID_HEX_LEN], dir2[3], pids[128] = "";
	char prog[64], folded[PATHBUF], err[PATHBUF], perr[PATHBUF];
	pid_t work[4];
	char *env[] = {"LD_LIBRARY_PATH=/opt/lib", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	char *text, *errs;
	int rc;

	snprintf(droot, sizeof(droot), "%s/dbgroot", tmpdir);
	snprintf(dbuild, sizeof(dbuild), "%s/dbgbuild", tmpdir);
	if (!make_debug_root(host_dbg, bid, sizeof(bid))) {
		CHECK(0, "building the stripped programs and their debug files in %s", droot);
		return;
	}
	snprintf(dir2, sizeof(dir2), "%.2s", bid);
	for (int i = 0; i < 4; i++) {
		char *argv[] = {"chroot", droot, prog, "60", NULL};

		snprintf(prog, sizeof(prog), "/opt/bin/%s", names[i]);
		work[i] = spawn_child(argv, env, NULL, tpath(perr, sizeof(perr), "dbg.err"));
		snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), "%s%d", i ? "," : "",
			 (int)work[i]);
	}
	sleep_s(0.3);
	{
		char *argv[] = {"unshare",
				"--mount",
				"--propagation",
				"private",
				"sh",
				"-c",
				(char *)record_in_ns,
				"sh",
				dir2,
				host_dbg,
				bid + 2,
				(char *)cfiprof_bin,
				"record", "-v",
				"-p",
				pids,
				"-F",
				"499",
				"-d",
				"2.5",
				"-o",
				tpath(folded, sizeof(folded), "dbg.folded"),
				NULL};

		rc = run_child(argv, NULL, NULL, tpath(err, sizeof(err), "dbg.record.err"), 60);
	}
	CHECK(rc == 0,
	      "record -p %s (with another debug file for build-id %s in its own "
	      "/usr/lib/debug): exit %d",
	      pids, bid, rc);
	text = slurp(folded);
	errs = slurp(err);
	{
		struct dbg_stats w = dbg_stats(text, "dbgwork"), l = dbg_stats(text, "dbglink");
		struct dbg_stats sy = dbg_stats(text, "dbgsym"), d = dbg_stats(text, "dbgdots");

		printf(
		    "dbgwork: %lu samples, %lu main;a;b;c;d;leaf, %lu named from the host's file; "
		    "dbglink: %lu, %lu; dbgsym: %lu, %lu named; dbgdots: %lu, %lu named\n",
		    w.total, w.chain, w.host_named, l.total, l.chain, sy.total, sy.leaf_named,
		    d.total, d.leaf_named);
		CHECK(
		    w.total > 0 && w.host_named == 0 && w.chain * 100 >= w.total * 95,
		    "dbgwork (build-id): %lu of %lu samples main;a;b;c;d;leaf from the debug file "
		    "in its root, %lu named from cfiprof's own /usr/lib/debug (want >= 95%%, 0)",
		    w.chain, w.total, w.host_named);
		CHECK(l.total > 0 && l.chain * 100 >= l.total * 95,
		      "dbglink (.gnu_debuglink in ROOT/usr/lib/debug/opt/bin): %lu of %lu samples "
		      "main;a;b;c;d;leaf (want >= 95%%)",
		      l.chain, l.total);
		CHECK(sy.total > 0 && sy.leaf_named == 0,
		      "dbgsym: %lu of %lu samples named through a symlink out of its root",
		      sy.leaf_named, sy.total);
		CHECK(d.total > 0 && d.leaf_named == 0,
		      "dbgdots: %lu of %lu samples named through a .gnu_debuglink path out of its "
		      "root",
		      d.leaf_named, d.total);
	}
	CHECK(strstr(errs, "dbgsym.debug is a symbolic link out of the process's root"),
	      "the symlink out of the root is refused (and said so)");
	CHECK(strstr(errs, "dbgdots.debug is a path, not a file name"),
	      "the .gnu_debuglink path is refused (and said so)");
	if (harness_failed) {
		dump_tail("dbg.folded", folded);
		dump_tail("record stderr", err);
	}
	free(text);
	free(errs);
	for (int i = 0; i < 4; i++) {
		kill(work[i], SIGKILL);
		wait_child(work[i], 5);
	}
}

int main(int argc, char **argv)
{
	char path[PATHBUF], nerr[PATHBUF];
	static const char *const tools[] = {"go", "unshare", "nsenter", "chroot", "mount", "ldd"};
	static const char *const dirs[] = {"", "/opt", "/lib", "/etc"};
	pid_t sh = -1, work = 0, noisy = -1;
	struct sigaction sa;

	harness_init(argc, argv);
	if (!e2e_setup("ctr"))
		return HARNESS_DONE();
	chmod(tmpdir, 0755);
	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	snprintf(recurse, sizeof(recurse), "%s/recurse", progs_dir);
	CHECK(geteuid() == 0, "must run as root (cgroups, namespaces, BPF)");
	CHECK(access(chain, X_OK) == 0, "%s is missing (make %s)", chain, chain);
	CHECK(access(recurse, X_OK) == 0, "%s is missing (make %s)", recurse, recurse);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing", tools[i]);
	CHECK(find_libs(chain), "ldd %s: no interpreter or libraries", chain);
	CHECK(interp[0] == '/' && strncmp(interp, "/opt/", 5) && strrchr(interp, '/') != interp,
	      "the interpreter '%s' must sit in a directory of its own, not / or /opt", interp);
	go_env_setup(tmpdir, go_env);

	/* the cgroup */
	CHECK(!cgroup_mount(cg_mnt, sizeof(cg_mnt)), "no cgroup2 mount");
	if (harness_failed)
		goto done;
	snprintf(cg_rel, sizeof(cg_rel), "/cfiprof-test-%d", (int)getpid());
	snprintf(cg_abs, sizeof(cg_abs), "%s%s", cg_mnt, cg_rel);
	/* orphans of the containers (their init once unshare is gone) come back to us */
	CHECK(!prctl(PR_SET_CHILD_SUBREAPER, 1), "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(cleanup);
	CHECK(!mkdir(cg_abs, 0755), "mkdir %s: %s", cg_abs, strerror(errno));
	if (access(cg_abs, F_OK)) {
		cg_abs[0] = '\0';
		goto done;
	}

	/* the root: ROOT/opt and ROOT/<interp dir> stay empty on the host */
	snprintf(rootdir, sizeof(rootdir), "%s/root", tmpdir);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", rootdir, dirs[i]);
		CHECK(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof(path), "%s%.*s", rootdir, (int)(strrchr(interp, '/') - interp),
		 interp);
	CHECK(!mkdir(path, 0755) || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));

	/* the noisy neighbour, outside the cgroup */
	char *nargv[] = {recurse, "60", "200", NULL};
	noisy = spawn_child(nargv, NULL, NULL, tpath(nerr, sizeof(nerr), "recurse.err"));
	CHECK(noisy > 0, "cannot start %s", recurse);

	sh = start_container(cg_abs, "ctrwork", "60", "ctrwork.err");
	work = sh < 0 ? 0 : find_workload(cg_abs, "ctrwork", 10);
	CHECK(work > 0, "the container's workload ctrwork did not start");
	if (!work) {
		dump_tail("container shell", tpath(path, sizeof(path), "ctrwork.err"));
		goto done;
	}
	printf("container: ctrwork host pid %d, pid %u inside, cgroup %s\n", (int)work,
	       ns_pid_of(work), cg_abs);
	check_invisible(work, "ctrwork");
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)noisy);
	{
		char *s = slurp(path);

		CHECK(s[0] && !strstr(s, cg_rel), "the noisy neighbour is in the test cgroup: %s",
		      s);
		free(s);
	}

	RUN_TEST_AS("symlinks", test_symlinks(work));
	RUN_TEST_AS("cgroup", test_cgroup(work));
	RUN_TEST(test_container_id);
	RUN_TEST_AS("late", test_late(work));
	RUN_TEST_AS("jit_map_in_root", test_jit_map_in_root(work));
	RUN_TEST(test_debug_in_root);

done:
	cleanup();
	CHECK(!cg_abs[0] || access(cg_abs, F_OK), "cgroup %s is still there", cg_abs);
	e2e_finish();
	return HARNESS_DONE();
}
