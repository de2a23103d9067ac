// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent, run as its systemd unit runs it (nobody with CAP_BPF,
 * CAP_PERFMON, CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH: no CAP_SYS_ADMIN, so
 * libraries are opened through /proc/PID/root), beside an unprivileged
 * process that renames a FIFO over its mapped library and keeps changing its
 * mappings (tests/progs/hostile_fifo.c), and an ordinary process
 * (progs/chain).  Issue 12, item 1: the loader used to block in the FIFO's
 * open() holding the load lock: no interval file was written and SIGTERM
 * did not stop the agent.  Now every interval arrives, the ordinary process
 * unwinds completely, the refusal is counted in /metrics and the agent stops
 * on its own.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

#define UNIT_CAPS "+bpf,+perfmon,+sys_ptrace,+dac_read_search"
#define SECONDS	  "7"

static const char *cfiprof, *progs;
static char tmp[256];

/* argv run as nobody with the unit's capabilities (or none). */
static pid_t spawn_nobody(char **argv, bool caps, const char *out, const char *err)
{
	char *full[32] = {"setpriv",	     "--reuid=65534",	      "--regid=65534",
			  "--clear-groups", caps ? "--inh-caps=" UNIT_CAPS : "--inh-caps=-all",
			  caps ? "--ambient-caps=" UNIT_CAPS : "--bounding-set=-all"};
	int n = 6;

	for (int i = 0; argv[i] && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	return spawn(full, out, err);
}

static int count_profiles(const char *dir, char *last, size_t len)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	last[0] = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "cfiprof-", 8) && strstr(e->d_name, ".pb.gz")) {
			n++;
			if (strcmp(e->d_name, last) > 0)
				snprintf(last, len, "%s", e->d_name);
		}
	closedir(d);
	return n;
}

/* A metric's value from the agent's /metrics; -1 when absent. */
static double metric(const char *addr, const char *name)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	const char *colon = strrchr(addr, ':');
	char buf[65536], *p;
	size_t n = 0;
	ssize_t r;
	int fd;

	if (!colon)
		return -1;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25, MSG_NOSIGNAL) != 25) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (n + 1 < sizeof(buf) && (r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
	for (p = buf; (p = strstr(p, name)); p++)
		if ((p == buf || p[-1] == '\n') && p[strlen(name)] == ' ')
			return atof(p + strlen(name) + 1);
	return -1;
}

/*
 * Samples of comm in a profile, by go tool pprof -traces (an independent
 * reader): *complete gets those whose trace has no [incomplete: ...] frame.
 */
static int traces_of(const char *file, const char *comm, int *complete)
{
	char cmd[PATH_MAX + 1024], line[4096], want[80];
	bool in_block = false, bad = false;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "HOME=%s/go GOCACHE=%s/go/cache GOPATH=%s/go/gopath GOTOOLCHAIN=local "
		 "GOPROXY=off go tool pprof -traces %s 2>/dev/null",
		 tmp, tmp, tmp, file);
	snprintf(want, sizeof(want), " comm:  %s\n", comm);
	*complete = 0;
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "-----------+", 12)) {
			if (in_block && !bad)
				(*complete)++;
			in_block = bad = false;
			continue;
		}
		if (strstr(line, want)) { /* "      comm:  chain" */
			in_block = true;
			n++;
		}
		if (in_block && strstr(line, "[incomplete"))
			bad = true;
	}
	if (in_block && !bad)
		(*complete)++;
	return pclose(p) == 0 ? n : -1;
}

static void test_fifo_over_library(void)
{
	char out[PATH_MAX], victim[PATH_MAX], log[PATH_MAX], lib[PATH_MAX], chain[PATH_MAX];
	char hout[PATH_MAX], last[256], path[PATH_MAX * 2], addr[64] = "";
	char *agent[] = {(char *)cfiprof, "agent",    "--output-dir",	 out,	     "--interval",
			 "1",		  "-d",	      SECONDS,		 "--metrics-addr", "127.0.0.1:0",
			 "-F",		  "99",	      NULL};
	char *hostile[] = {path, lib, victim, "9", NULL};
	char *ordinary[] = {chain, "9", NULL};
	pid_t a, h, o;
	bool timed_out = false;
	int rc, files, n, complete = 0;
	double replaced = -1;
	char *text;

	snprintf(out, sizeof(out), "%s/profiles", tmp);
	snprintf(victim, sizeof(victim), "%s/victim", tmp);
	snprintf(log, sizeof(log), "%s/agent.log", tmp);
	snprintf(hout, sizeof(hout), "%s/hostile.out", tmp);
	snprintf(lib, sizeof(lib), "%s/libdl_target.so", progs);
	snprintf(chain, sizeof(chain), "%s/chain", progs);
	snprintf(path, sizeof(path), "%s/hostile_fifo", progs);
	CHECK(!mkdir(out, 0755) && !chown(out, 65534, 65534) && !mkdir(victim, 0755) &&
		  !chown(victim, 65534, 65534),
	      "directories for nobody: %s", strerror(errno));

	/* the attacker first: its library is a FIFO before the agent ever looks */
	h = spawn_nobody(hostile, false, hout, NULL);
	for (int i = 0; i < 100 && !strstr(slurp(hout), "ready"); i++)
		sleep_s(0.05);
	text = slurp(hout);
	CHECK(strstr(text, "ready"), "hostile_fifo did not get ready: '%s'", text);
	o = spawn_nobody(ordinary, false, NULL, NULL);
	a = spawn_nobody(agent, true, NULL, log);
	for (int i = 0; i < 100 && !addr[0]; i++) {
		char *l = slurp(log), *m = strstr(l, "metrics=");

		if (m)
			sscanf(m + 8, "%63[0-9.:]", addr);
		sleep_s(0.05);
	}
	sleep_s(atof(SECONDS) - 1.5);
	if (addr[0])
		replaced = metric(addr, "cfiprof_mapped_files_refused_total");
	rc = exit_code(wait_timeout(a, 8, &timed_out), timed_out);
	CHECK(!timed_out && rc == 0,
	      "the agent beside a FIFO over a mapped library stops on its own: exit %d%s", rc,
	      timed_out ? " (hung: killed after 8 s past its -d)" : "");
	files = count_profiles(out, last, sizeof(last));
	CHECK(files >= atoi(SECONDS) - 2, "%d interval files in %s s (want one a second)", files,
	      SECONDS);
	CHECK(replaced >= 1, "cfiprof_mapped_files_refused_total = %.0f (want >= 1: the FIFO "
			     "refused and counted)", replaced);
	snprintf(path, sizeof(path), "%s/%s", out, last);
	n = last[0] ? traces_of(path, "chain", &complete) : -1;
	CHECK(n > 0 && complete == n,
	      "the ordinary process in the last interval: %d of %d samples complete", complete, n);
	n = last[0] ? traces_of(path, "hostile_fifo", &complete) : -1;
	CHECK(n > 0, "the attacker itself is still profiled (%d samples)", n);
	kill(h, SIGKILL);
	kill(o, SIGKILL);
	wait_timeout(h, 2, NULL);
	wait_timeout(o, 2, NULL);
	if (harness_failed)
		dump_tail("agent log", log);
}

/* Runs a shell command; true when it exits 0. */
static bool sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/*
 * Issue 12, item 8: a fake library carrying a real library's build-id.  Two
 * copies of progs/dlopen load libdl_target.so from their own directory: the
 * fake one (-O0 with frame pointers, dl_leaf renamed poisoned_leaf) and the
 * real one (-O2 without), both linked with the same --build-id.  The fake's
 * process is loaded first; the real one must still get its own CFI and names.
 */
static void test_build_id_poisoning(void)
{
	static const char id[] = "0x600dbeef600dbeef600dbeef600dbeef600dbeef";
	char out[PATH_MAX], err[PATH_MAX], fake[PATH_MAX], real[PATH_MAX];
	char *fake_argv[] = {fake, "6", NULL}, *real_argv[] = {real, "6", NULL};
	char pids[64];
	char *rec[] = {(char *)cfiprof, "record", "-p", pids, "-d", "2.5", "-F", "499", "-o", out,
		       NULL};
	pid_t f, r, c;
	bool timed_out = false;
	int rc;
	char *text, *line, *save = NULL;
	int real_ok = 0, real_poisoned = 0, fake_named = 0;

	snprintf(out, sizeof(out), "%s/poison.folded", tmp);
	snprintf(err, sizeof(err), "%s/poison.err", tmp);
	snprintf(fake, sizeof(fake), "%s/fake/dlopen_fake", tmp);
	snprintf(real, sizeof(real), "%s/real/dlopen_real", tmp);
	CHECK(sh("mkdir -p %s/fake %s/real && cp %s/dlopen %s && cp %s/dlopen %s", tmp, tmp, progs,
		 fake, progs, real) &&
		  sh("gcc -O0 -fno-omit-frame-pointer -g -fPIC -shared -Ddl_leaf=poisoned_leaf "
		     "-Wl,--build-id=%s tests/progs/dl_target.c -o %s/fake/libdl_target.so",
		     id, tmp) &&
		  sh("gcc -O2 -fomit-frame-pointer -g -fPIC -shared -Wl,--build-id=%s "
		     "tests/progs/dl_target.c -o %s/real/libdl_target.so",
		     id, tmp),
	      "two libraries with build-id %s", id);
	f = spawn(fake_argv, NULL, NULL);
	sleep_s(0.3);
	r = spawn(real_argv, NULL, NULL);
	sleep_s(0.3);
	/* the fake first: its tables and names are the ones loaded under the shared id */
	snprintf(pids, sizeof(pids), "%d,%d", (int)f, (int)r);
	c = spawn(rec, NULL, err);
	rc = exit_code(wait_timeout(c, 20, &timed_out), timed_out);
	CHECK(rc == 0, "record -p fake,real exits %d", rc);
	text = slurp(out);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "dlopen_real;", 12)) {
			if (strstr(line, "poisoned_leaf"))
				real_poisoned++;
			else if (strstr(line, ";main;d_a;dl_entry;dl_leaf ") &&
				 !strstr(line, "[incomplete"))
				real_ok++;
		}
		if (!strncmp(line, "dlopen_fake;", 12) && strstr(line, "poisoned_leaf"))
			fake_named++;
	}
	CHECK(fake_named > 0, "the fake library's process is named from it (%d stacks)", fake_named);
	CHECK(real_poisoned == 0 && real_ok > 0,
	      "the real library's process: %d complete main;d_a;dl_entry;dl_leaf stacks, %d named "
	      "from the fake",
	      real_ok, real_poisoned);
	kill(f, SIGKILL);
	kill(r, SIGKILL);
	wait_timeout(f, 2, NULL);
	wait_timeout(r, 2, NULL);
}

/* Folded stacks of `record -p pid` for 1.5 s into out; the text, malloc'd. */
static char *record_pid(pid_t pid, const char *out)
{
	char pids[32];
	char *rec[] = {(char *)cfiprof, "record", "-p", pids, "-d", "1.5", "-F", "199", "-o",
		       (char *)out, NULL};
	bool timed_out = false;
	int rc;

	snprintf(pids, sizeof(pids), "%d", (int)pid);
	rc = exit_code(wait_timeout(spawn(rec, NULL, NULL), 20, &timed_out), timed_out);
	CHECK(rc == 0, "record -p %d exits %d", (int)pid, rc);
	return slurp(out);
}

/*
 * Issue 12, item 9: perf-PID.map names a JIT's code, and any user can write
 * /tmp/perf-PID.map for someone else's pid.  A map the JIT's own user wrote
 * names its frames; one planted by another user (here root, for a process
 * running as nobody) is refused and counted.
 */
static void test_perfmap_owner(void)
{
	char jit[PATH_MAX], out[PATH_MAX], map[64], outf[PATH_MAX];
	char *own[] = {jit, "4", "own_jit_code", NULL};
	pid_t p;
	char *text;
	FILE *f;

	snprintf(jit, sizeof(jit), "%s/jit_spin", progs);
	snprintf(outf, sizeof(outf), "%s/jit.out", tmp);
	/* its own map, written by the process itself (as nobody) */
	p = spawn_nobody(own, false, outf, NULL);
	for (int i = 0; i < 100 && !slurp(outf)[0]; i++)
		sleep_s(0.02);
	snprintf(out, sizeof(out), "%s/jit_own.folded", tmp);
	text = record_pid(p, out);
	CHECK(strstr(text, ";own_jit_code "), "a JIT's own perf map names its code:\n%.300s", text);
	kill(p, SIGKILL);
	wait_timeout(p, 2, NULL);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
	unlink(map);

	/* a map replaced by another user (root here): same address, another name */
	snprintf(outf, sizeof(outf), "%s/jit2.out", tmp);
	p = spawn_nobody((char *[]){jit, "4", "its_own_name", NULL}, false, outf, NULL);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
	for (int i = 0; i < 100 && !slurp(outf)[0]; i++)
		sleep_s(0.02);
	/* jit_spin printed its code address: plant a name for exactly it, in a file of root's */
	unlink(map);
	f = fopen(map, "wx");
	CHECK(f != NULL, "planting %s", map);
	if (f) {
		fprintf(f, "%s 2 planted_by_root\n", strtok(slurp(outf), "\n"));
		fclose(f);
	}
	snprintf(out, sizeof(out), "%s/jit_planted.folded", tmp);
	text = record_pid(p, out);
	CHECK(!strstr(text, "planted_by_root") && !strstr(text, "its_own_name") &&
		  strstr(text, "jit_spin;"),
	      "a perf map owned by another user than the process's is not used:\n%.300s", text);
	kill(p, SIGKILL);
	wait_timeout(p, 2, NULL);
	unlink(map);
}

int main(void)
{
	const char *outdir = getenv("OUT") ? getenv("OUT") : "build";
	static char progs_buf[PATH_MAX], rel[PATH_MAX], go[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	cfiprof = realpath(getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof", NULL);
	snprintf(rel, sizeof(rel), "%s/progs", outdir);
	progs = realpath(rel, progs_buf);
	snprintf(tmp, sizeof(tmp), "/tmp/cfiprof-hostile.XXXXXX");
	CHECK(cfiprof && progs && mkdtemp(tmp), "cfiprof, %s and a temporary directory", rel);
	if (!cfiprof || !progs || harness_failed)
		return HARNESS_DONE();
	chmod(tmp, 0755);
	snprintf(go, sizeof(go), "%s/go", tmp);
	mkdir(go, 0755);
	CHECK(tool_exists("setpriv") && tool_exists("go"), "setpriv and go are installed");
	test_fifo_over_library();
	test_build_id_poisoning();
	test_perfmap_owner();
	if (!harness_failed) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			fprintf(stderr, "cleaning %s failed\n", tmp);
	}
	return HARNESS_DONE();
}
