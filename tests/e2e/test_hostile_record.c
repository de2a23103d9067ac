// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile processes (issue 12) against `cfiprof record -p`: each named test is
 * one attack on the processes it records, nothing else on the host judged.
 *  - build_id_poisoning: a fake library carrying a real library's build-id
 *    must not lend the real one its CFI or names.
 *  - perfmap_owner: a JIT's own perf-PID.map names its code; one replaced by
 *    another user is refused.
 *  - quota_no_reload_loop: a process over its share of mapping keys is not
 *    reloaded again and again.
 * Programs that run as nobody are copied to a directory nobody can reach,
 * wherever the tree is cloned.  The attacks on an agent sampling the whole
 * host are test_hostile.
 *
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
/* run.sh: beside others (record -p of its own processes only) */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
#include "tests/lib/http_client.h"
#include "tests/lib/nobody.h"
#include "tests/lib/pprof_read.h"

#define PATHBUF (PATH_MAX + 64)
/*
 * A record that has not exited by then hung: its start verified its
 * programs for 11 s and its stop named frames for 12 s once, beside a busy
 * host, for a 2.5 s recording
 */
#define HANG_S 120

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
	char *rec[] = {(char *)cfiprof, "record", "-v", "-p", pids, "-d", "2.5", "-F", "499", "-o", out,
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
	CHECK(shell_ok("mkdir -p %s/fake %s/real && cp %s/dlopen %s && cp %s/dlopen %s", tmp, tmp, progs,
		 fake, progs, real) &&
		  shell_ok("gcc -O0 -fno-omit-frame-pointer -g -fPIC -shared -Ddl_leaf=poisoned_leaf "
		     "-Wl,--build-id=%s tests/progs/dl_target.c -o %s/fake/libdl_target.so",
		     id, tmp) &&
		  shell_ok("gcc -O2 -fomit-frame-pointer -g -fPIC -shared -Wl,--build-id=%s "
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
	rc = exit_code(wait_timeout(c, HANG_S, &timed_out), timed_out);
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

/* record -p pid into out; its profile, and its summary (-v) in *log when log is not NULL. */
static char *record_pid(pid_t pid, const char *out, char **log)
{
	char pids[32], err[PATH_MAX + 8];
	char *rec[] = {(char *)cfiprof, "record", "-v", "-p", pids, "-d", "1.5", "-F", "199", "-o",
		       (char *)out, NULL};
	bool timed_out = false;
	int rc;

	snprintf(pids, sizeof(pids), "%d", (int)pid);
	snprintf(err, sizeof(err), "%s.err", out);
	rc = exit_code(wait_timeout(spawn(rec, NULL, err), HANG_S, &timed_out), timed_out);
	CHECK(rc == 0, "record -p %d exits %d", (int)pid, rc);
	if (log)
		*log = slurp(err);
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
	char *own[] = {jit, "30", "own_jit_code", NULL};
	char *text, *addr, *log = NULL;
	pid_t p;
	FILE *f;

	snprintf(jit, sizeof(jit), "%s/jit_spin", nprogs);
	snprintf(outf, sizeof(outf), "%s/jit.out", tmp);
	/*
	 * Its own map, written by the process itself (as nobody).  A map left by
	 * an earlier process with the same pid (pids wrap) is kept by jit_spin and
	 * rightly refused: start another one then.
	 */
	for (int tries = 0; tries < 5; tries++) {
		struct stat st;

		p = spawn_as_nobody(own, false, outf, NULL);
		for (int i = 0; i < 100 && !slurp(outf)[0]; i++)
			sleep_s(0.02);
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
		if (!stat(map, &st) && st.st_uid == 65534)
			break;
		kill(p, SIGKILL);
		wait_timeout(p, 2, NULL);
		unlink(outf);
	}
	snprintf(out, sizeof(out), "%s/jit_own.folded", tmp);
	text = record_pid(p, out, NULL);
	CHECK(strstr(text, ";own_jit_code "), "a JIT's own perf map names its code:\n%.300s", text);
	kill(p, SIGKILL);
	wait_timeout(p, 2, NULL);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
	unlink(map);

	/* a map replaced by another user (root here): same address, another name */
	snprintf(outf, sizeof(outf), "%s/jit2.out", tmp);
	p = spawn_as_nobody((char *[]){jit, "30", "its_own_name", NULL}, false, outf, NULL);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)p);
	for (int i = 0; i < 100 && !slurp(outf)[0]; i++)
		sleep_s(0.02);
	/*
	 * jit_spin printed its code address: plant a name for exactly it, in a
	 * file of root's (no address printed: nothing to plant, and the check
	 * below would pass for the wrong reason)
	 */
	unlink(map);
	addr = strtok(slurp(outf), "\n");
	CHECK(addr && strtoull(addr, NULL, 16) != 0, "jit_spin printed no code address");
	f = addr ? fopen(map, "wx") : NULL;
	CHECK(f != NULL, "planting %s", map);
	if (f) {
		fprintf(f, "%s 2 planted_by_root\n", addr);
		fclose(f);
	}
	snprintf(out, sizeof(out), "%s/jit_planted.folded", tmp);
	text = record_pid(p, out, &log);
	CHECK(!strstr(text, "planted_by_root") && !strstr(text, "its_own_name") &&
		  strstr(text, "jit_spin;"),
	      "a perf map owned by another user than the process's is not used:\n%.300s", text);
	/* and the refusal is counted, not silent */
	CHECK(log && strstr(log, "perf maps refused: "),
	      "the planted map's refusal is not in the summary:\n%s", log ? log : "");
	free(log);
	kill(p, SIGKILL);
	wait_timeout(p, 2, NULL);
	unlink(map);
}

/*
 * A process over its share of mapping keys: the pcs whose keys were refused
 * stop every walk at no-mapping, and each such walk asked for the process's
 * maps again (once per 100 ms): 46 reloads in 3 s of `record -p` on a file
 * mapped 18,000 times, each a read of 18,000 lines that changed nothing
 * (~40 ms idle, most of a second on a loaded host).  Once user space says
 * its keys were refused by the quota, only a change of its mappings asks.
 * A load cut short by its time (a busy machine: each of its lines says so)
 * may be followed by one that goes on with the rest; those make progress,
 * the loop did not: at most 3 reloads find nothing changed, and at most 3
 * more than the cut loads happen at all.
 */
static void test_quota_no_reload_loop(void)
{
	char hog[PATHBUF], mout[PATHBUF], pid[16], err[PATHBUF], cut_line[64];
	char *mmap_argv[] = {hog, "10", "mmap", hog, "18000", NULL};
	char *rec[] = {(char *)cfiprof, "record", "-v", "-p", pid, "-d", "3", "-o", "/dev/null", NULL};
	unsigned long loaded = 0, reloaded = ~0ul, exited, vanished, unchanged = ~0ul;
	pid_t hm;
	char *text, *m;
	int cut;

	snprintf(hog, sizeof(hog), "%s/quota_hog", progs);
	snprintf(mout, sizeof(mout), "%s/hog_loop.out", tmp);
	snprintf(err, sizeof(err), "%s/hog_loop.err", tmp);
	hm = spawn(mmap_argv, mout, NULL);
	CHECK(wait_ready(mout), "quota_hog did not get ready: '%s'", slurp(mout));
	snprintf(pid, sizeof(pid), "%d", (int)hm);
	CHECK(run(rec, NULL, err, HANG_S) == 0, "record -p %s failed: %s", pid, slurp(err));
	text = slurp(err);
	m = strstr(text, "processes: ");
	if (m)
		sscanf(m,
		       "processes: %lu loaded, %lu reloaded, %lu exited, %lu vanished, %lu reloads "
		       "finding nothing changed",
		       &loaded, &reloaded, &exited, &vanished, &unchanged);
	snprintf(cut_line, sizeof(cut_line), "cfiprof: pid %d: ", (int)hm);
	cut = 0;
	for (m = text; m && *m; m = strchr(m, '\n') ? strchr(m, '\n') + 1 : NULL) {
		const char *end = strchr(m, '\n'), *took = strstr(m, "its load took over");

		cut += !strncmp(m, cut_line, strlen(cut_line)) && took && (!end || took < end);
	}
	printf("quota hog under record -p for 3 s: %lu loaded, %lu reloaded (%lu finding nothing "
	       "changed), %d loads cut by their time\n",
	       loaded, reloaded, unchanged, cut);
	CHECK(strstr(text, "process_quota") != NULL, "its keys were not refused: %s", text);
	CHECK(loaded == 1 && unchanged <= 3 && reloaded <= 3 + (unsigned long)cut,
	      "%lu loads, %lu reloads in 3 s, %lu finding nothing changed, %d loads cut (want 1 "
	      "load, at most 3 unchanged reloads and 3 more reloads than cut loads)",
	      loaded, reloaded, unchanged, cut);
	kill(hm, SIGKILL);
	wait_timeout(hm, 2, NULL);
}

int main(int argc, char **argv)
{
	static const char *const copied[] = {"jit_spin"};
	static const char *const tools[] = {"setpriv", NULL};

	harness_init(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!nobody_setup("hostile-record", copied, sizeof(copied) / sizeof(copied[0]), tools))
		return HARNESS_DONE();
	RUN_TEST(test_build_id_poisoning);
	RUN_TEST(test_perfmap_owner);
	RUN_TEST(test_quota_no_reload_loop);
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
