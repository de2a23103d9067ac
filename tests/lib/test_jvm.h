/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A JVM the HotSpot unit tests read (test_hotspot, test_hotspot_code,
 * test_hotspot_rows): a class of theirs written, compiled and run by the
 * JDK at home, its output in a file of its own directory, and where its
 * libjvm.so is mapped with the symbols it is read by.
 */
#ifndef CFIPROF_TESTS_TEST_JVM_H
#define CFIPROF_TESTS_TEST_JVM_H

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/javac.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"

/* the JDK the tests run: Debian's 17, or $CFIPROF_TEST_JAVA_HOME's (JDK 25 was tried so) */
#define TEST_JVM_HOME_DEFAULT "/usr/lib/jvm/java-17-openjdk-amd64"

/*
 * Methods of the classes whose compiled frames the row tests walk: leaf, a
 * loop (a safepoint poll, a volatile store); fib over it; tiny, a fib of no
 * other work (its prologues and epilogues a third of its instructions).
 */
#define TEST_JVM_FIB_METHODS                                                                       \
	"    static volatile int sink;\n"                                                          \
	"    static int leaf(int n, long reps) {\n"                                                \
	"        int s = n;\n"                                                                     \
	"        for (long r = 0; r < reps; r++) {\n"                                              \
	"            for (int i = 0; i < 50; i++) s = s * 31 + i;\n"                               \
	"            sink = s;\n"                                                                  \
	"        }\n"                                                                              \
	"        return s;\n"                                                                      \
	"    }\n"                                                                                  \
	"    static int fib(int n, long reps) {\n"                                                 \
	"        if (n < 2) return leaf(n, reps);\n"                                               \
	"        return fib(n - 1, reps) + fib(n - 2, reps);\n"                                    \
	"    }\n"                                                                                  \
	"    static int tiny(int n) { return n < 2 ? n : tiny(n - 1) + tiny(n - 2); }\n"

struct test_jvm {
	char home[PATH_MAX], dir[64], libjvm[PATH_MAX];
	int feature; /* the JDK's feature version (17), when the test reads it */
	pid_t pid;
	uint64_t bias; /* libjvm.so's load address (its first PT_LOAD is at 0) */
	struct hotspot_symbols syms;
};

/* j->home: $CFIPROF_TEST_JAVA_HOME, else Debian's JDK 17. */
static inline void test_jvm_home(struct test_jvm *j)
{
	const char *home = getenv("CFIPROF_TEST_JAVA_HOME");

	snprintf(j->home, sizeof(j->home), "%s", home && *home ? home : TEST_JVM_HOME_DEFAULT);
}

/* A shell command's output (malloc'ed, through a file of j->dir), NULL when it failed. */
static inline char *test_jvm_output(const struct test_jvm *j, const char *cmd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/cmd.txt", j->dir);
	return shell_ok("%s > %s 2>&1", cmd, path) ? slurp(path) : NULL;
}

/* Where path is mapped at offset 0 in pid, 0 if not. */
static inline uint64_t test_jvm_map_base(pid_t pid, const char *path)
{
	char maps[64], line[PATH_MAX + 128], file[PATH_MAX];
	unsigned long long start, off, base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && !base && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %4095s", &start, &off, file) == 3 &&
		    !off && !strcmp(file, path))
			base = start;
	if (f)
		fclose(f);
	return base;
}

/*
 * Writes class cls (its source src) into a new directory made from tmpl
 * ("/tmp/cfiprof-NAME.XXXXXX"), compiles it with j->home's javac and starts
 * java -cp DIR cls [DIR/file] (file NULL: no argument), its output in
 * DIR/out.txt, killed with the test: false (a failed check) when it could
 * not; j->pid 0 then.
 */
static inline bool test_jvm_start(struct test_jvm *j, const char *tmpl, const char *cls,
				  const char *src, const char *file)
{
	char path[PATH_MAX + 64], out[PATH_MAX + 64], arg[PATH_MAX + 64];
	FILE *f;
	int fd;

	snprintf(j->dir, sizeof(j->dir), "%s", tmpl);
	snprintf(path, sizeof(path), "%s/bin/java", j->home);
	CHECK(access(path, X_OK) == 0,
	      "%s missing: the tests need a JDK (make test-deps installs default-jdk-headless)",
	      path);
	if (access(path, X_OK) || !mkdtemp(j->dir))
		return false;
	snprintf(path, sizeof(path), "%s/%s.java", j->dir, cls);
	f = fopen(path, "w");
	CHECK(f && fputs(src, f) >= 0 && !fclose(f) &&
		  shell_ok("%s/bin/javac " JAVAC_FLAGS " -d %s %s", j->home, j->dir, path),
	      "cannot write or compile %s", path);
	snprintf(out, sizeof(out), "%s/out.txt", j->dir);
	snprintf(arg, sizeof(arg), "%s/%s", j->dir, file ? file : "");
	j->pid = fork();
	if (j->pid == 0) {
		/* the JVM goes with the test, even one that crashes */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(path, sizeof(path), "%s/bin/java", j->home);
		execl(path, "java", "-cp", j->dir, cls, file ? arg : NULL, (char *)NULL);
		_exit(127);
	}
	if (j->pid < 0)
		j->pid = 0;
	return j->pid > 0;
}

/* Whether the JVM printed what, waited for until deadline (mono_sec()). */
static inline bool test_jvm_printed(const struct test_jvm *j, const char *what, double deadline)
{
	char out[PATH_MAX + 64], *text = NULL;
	bool yes = false;

	snprintf(out, sizeof(out), "%s/out.txt", j->dir);
	while (j->pid > 0 && !yes && mono_sec() < deadline) {
		free(text);
		text = slurp(out);
		yes = text && strstr(text, what);
		if (!yes)
			sleep_s(0.2);
	}
	free(text);
	return yes;
}

/* Kills the JVM and removes its directory (kept when a check failed). */
static inline void test_jvm_stop(struct test_jvm *j)
{
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, NULL, 0);
	}
	if (j->dir[0] && !strstr(j->dir, "XXXXXX"))
		tmpdir_done(j->dir, harness_failed);
}

/* j->home's libjvm.so: its path, where j->pid maps it and its symbols (a failed check if not). */
static inline void test_jvm_libjvm(struct test_jvm *j)
{
	char lib[PATH_MAX + 32];
	int fd;

	snprintf(lib, sizeof(lib), "%s/lib/server/libjvm.so", j->home);
	CHECK(realpath(lib, j->libjvm) != NULL, "no %s", lib);
	j->bias = j->pid > 0 ? test_jvm_map_base(j->pid, j->libjvm) : 0;
	fd = open(j->libjvm, O_RDONLY | O_CLOEXEC);
	CHECK(j->bias && fd >= 0 && !hotspot_elf_symbols(fd, &j->syms),
	      "libjvm.so (%s) not mapped in %d, or its symbols not found", j->libjvm, (int)j->pid);
	if (fd >= 0)
		close(fd);
}

#endif
