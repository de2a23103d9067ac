// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Least privilege: cfiprof runs with CAP_BPF + CAP_PERFMON instead of root,
 * names the capability that is missing, creates its files 0600 unless --mode
 * says otherwise, and the agent's metrics listen on loopback by default.
 */
/* run.sh: beside others (its agent's checks read exit codes and addresses only) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

static char tmp[256];
static const char *cfiprof;
static char chain[PATH_MAX];

static void test_capabilities_only(void)
{
	char out[PATH_MAX + 32], log[PATH_MAX + 32];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			"--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon", (char *)cfiprof,
			"record", "-v", "-F", "499", "-o", out, "--", chain, "1", NULL};
	char *text;

	snprintf(out, sizeof(out), "%s/nobody.folded", tmp);
	snprintf(log, sizeof(log), "%s/nobody.log", tmp);
	CHECK(run(argv, log, log, 60) == 0, "record as nobody with CAP_BPF+CAP_PERFMON failed:\n%s",
	      slurp(log));
	text = slurp(out);
	CHECK(strstr(text, "main;a;b;c;d;leaf") != NULL,
	      "as nobody with two capabilities, the chain is not there:\n%.500s", text);
	free(text);
}

/*
 * Issue 12, item 11: a copy installed for one group with the capabilities
 * permitted only (+p, not +ep) works for a member: cfiprof raises them itself.
 */
static void test_permitted_install(void)
{
	char bin[300], out[300], log[300], cmd[3 * PATH_MAX];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin,
			"record", "-v",  "-F",	    "499",	     "-o",	       out,
			"--",	   chain,	    "1",	     NULL};

	snprintf(bin, sizeof(bin), "%s/cfiprof-p", tmp);
	snprintf(out, sizeof(out), "%s/permitted.folded", tmp);
	snprintf(log, sizeof(log), "%s/permitted.log", tmp);
	snprintf(cmd, sizeof(cmd),
		 "cp %s %s && chgrp 65534 %s && chmod 0750 %s && setcap cap_bpf,cap_perfmon+p %s",
		 cfiprof, bin, bin, bin, bin);
	if (system(cmd)) {
		CHECK(0, "installing %s with +p (setcap from libcap2-bin)", bin);
		return;
	}
	CHECK(run(argv, log, log, 60) == 0, "record as nobody from a +p copy failed:\n%s", slurp(log));
	CHECK(strstr(slurp(out), "main;a;b;c;d;leaf") != NULL,
	      "a +p copy run by nobody gives the chain:\n%.500s", slurp(out));
}

/* report and tables read untrusted files and need nothing: every capability is dropped */
static void test_tables_drops_capabilities(void)
{
	char file[300], log[300], cmd[3 * PATH_MAX];
	char *argv[] = {(char *)cfiprof, "tables", file, NULL};

	snprintf(file, sizeof(file), "%s/nobodys.elf", tmp);
	snprintf(log, sizeof(log), "%s/tables.log", tmp);
	snprintf(cmd, sizeof(cmd), "cp %s %s && chown 65534 %s && chmod 0600 %s", chain, file, file,
		 file);
	if (system(cmd)) {
		CHECK(0, "a file only nobody may read: %s", file);
		return;
	}
	/* as root, but without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH once they are dropped */
	CHECK(run(argv, log, log, 60) != 0 && strstr(slurp(log), "Permission denied"),
	      "cfiprof tables, run by root, read a file of nobody's with mode 0600:\n%s",
	      slurp(log));
}

static void test_missing_capabilities(void)
{
	char log[PATH_MAX + 32];
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			"--inh-caps=-all", (char *)cfiprof, "record", "-v", "-d", "1", "--", chain, "1",
			NULL};
	char *text;
	int rc;

	snprintf(log, sizeof(log), "%s/nocaps.log", tmp);
	rc = run(argv, log, log, 60);
	text = slurp(log);
	CHECK(rc != 0, "record without capabilities succeeded");
	CHECK(strstr(text, "CAP_BPF") && strstr(text, "CAP_PERFMON"),
	      "the error does not name CAP_BPF and CAP_PERFMON:\n%s", text);
	free(text);
}

static void test_modes(void)
{
	char out[PATH_MAX + 32], log[PATH_MAX + 32];
	char *def[] = {(char *)cfiprof, "record", "-v", "-F", "99", "-o", out, "--", chain, "0.3", NULL};
	char *wide[] = {(char *)cfiprof, "record", "-v", "-F", "99", "--mode", "0644", "-o", out, "--",
			chain, "0.3", NULL};
	struct stat st;

	snprintf(out, sizeof(out), "%s/mode.folded", tmp);
	snprintf(log, sizeof(log), "%s/mode.log", tmp);
	umask(022);
	CHECK(run(def, log, log, 60) == 0, "record failed: %s", slurp(log));
	CHECK(!stat(out, &st) && (st.st_mode & 07777) == 0600, "default mode %o, want 600",
	      st.st_mode & 07777);
	CHECK(run(wide, log, log, 60) == 0, "record --mode failed: %s", slurp(log));
	CHECK(!stat(out, &st) && (st.st_mode & 07777) == 0644, "--mode 0644 gave %o",
	      st.st_mode & 07777);
}

/* Whether the kernel shows nobody kernel addresses (the first /proc/kallsyms line not zero). */
static bool nobody_sees_kernel_addresses(void)
{
	char log[PATH_MAX + 32], *text;
	char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			"head",	   "-n1",	    "/proc/kallsyms", NULL};
	bool seen;

	snprintf(log, sizeof(log), "%s/kallsyms.head", tmp);
	run(argv, log, NULL, 10);
	text = slurp(log);
	seen = *text && strncmp(text, "0000000000000000 ", 17);
	free(text);
	return seen;
}

/*
 * report, run by a user the kernel hides its addresses from, says so once
 * and gives advice that would help: not "set kernel.kptr_restrict=0" when it
 * is 0 already (perf_event_paranoid > 1 hides them then).
 */
static void test_report_kernel_symbols_message(void)
{
	char rec[PATH_MAX + 32], log[PATH_MAX + 32], *text, *kptr;
	char *record[] = {(char *)cfiprof, "record", "-F", "99", "--save", rec, "-o", "/dev/null",
			  "--", chain, "0.2", NULL};
	char *report[] = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			  (char *)cfiprof, "report", rec, NULL};
	bool hidden = !nobody_sees_kernel_addresses();

	snprintf(rec, sizeof(rec), "%s/ksyms.rec", tmp);
	snprintf(log, sizeof(log), "%s/ksyms.log", tmp);
	CHECK(run(record, NULL, log, 60) == 0, "record: %s", slurp(log));
	chmod(rec, 0644);
	CHECK(run(report, NULL, log, 60) == 0, "report as nobody: %s", slurp(log));
	text = slurp(log);
	kptr = slurp("/proc/sys/kernel/kptr_restrict");
	printf("  kernel addresses %s nobody, kptr_restrict=%.1s\n",
	       hidden ? "hidden from" : "shown to", kptr);
	CHECK(!strstr(text, "unavailable (kernel symbols unavailable"),
	      "report's message says it twice:\n%s", text);
	CHECK(hidden == (strstr(text, "kernel symbols unavailable") != NULL),
	      "addresses %s nobody, yet report says:\n%s", hidden ? "hidden from" : "shown to",
	      text);
	CHECK(kptr[0] != '0' || !strstr(text, "set kernel.kptr_restrict=0"),
	      "kernel.kptr_restrict is 0, yet report advises setting it to 0:\n%s", text);
	free(kptr);
	free(text);
}

static void test_metrics_loopback(void)
{
	char dir[PATH_MAX + 32], log[PATH_MAX + 32];
	char *argv[] = {(char *)cfiprof, "agent", "--interval", "1", "--duration", "2",
			"--output-dir", dir, NULL};
	char *text, *m;

	snprintf(dir, sizeof(dir), "%s/agent", tmp);
	snprintf(log, sizeof(log), "%s/agent.log", tmp);
	CHECK(run(argv, log, log, 60) == 0, "agent failed: %s", slurp(log));
	text = slurp(log);
	m = strstr(text, "metrics=");
	CHECK(m && !strncmp(m, "metrics=127.0.0.1:", 18),
	      "the metrics endpoint does not default to loopback:\n%.800s", text);
	free(text);
}

int main(int argc, char **argv)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char cmd[2 * PATH_MAX + 300];

	harness_init(argc, argv);
	cfiprof = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	snprintf(chain, sizeof(chain), "%s/progs/chain", out);
	if (!realpath(cfiprof, cmd) || access(chain, X_OK)) {
		CHECK(0, "%s or %s missing (run make first)", cfiprof, chain);
		return HARNESS_DONE();
	}
	cfiprof = strdup(cmd);
	{
		char real[PATH_MAX];

		if (realpath(chain, real))
			memcpy(chain, real, sizeof(chain));
	}
	snprintf(tmp, sizeof(tmp), "/tmp/cfiprof-priv.XXXXXX");
	CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
	/* nobody must write the output and reach the binaries, wherever the tree is cloned */
	chmod(tmp, 0777);
	snprintf(cmd, sizeof(cmd), "cp %s %s %s/", cfiprof, chain, tmp);
	CHECK(system(cmd) == 0, "cannot copy the binaries to %s", tmp);
	snprintf(cmd, sizeof(cmd), "%s/cfiprof", tmp);
	cfiprof = strdup(cmd);
	snprintf(chain, sizeof(chain), "%s/chain", tmp);
	RUN_TEST(test_capabilities_only);
	RUN_TEST(test_permitted_install);
	RUN_TEST(test_tables_drops_capabilities);
	RUN_TEST(test_missing_capabilities);
	RUN_TEST(test_modes);
	RUN_TEST(test_report_kernel_symbols_message);
	RUN_TEST(test_metrics_loopback);
	if (!harness_failed) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmp);
	}
	return HARNESS_DONE();
}
