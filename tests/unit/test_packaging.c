// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a packager or a new user gets (no kernel needed):
 *  1. install: `make install DESTDIR=D PREFIX=/usr` puts the binary (0755), a
 *     man page per command, the bash completion, the systemd unit (pointing at
 *     the installed binary, Type=notify, no devices, systemd-analyze's
 *     exposure at most 3.5), the example config (0644), README.md and the
 *     pages of docs/ where they belong, and a second install keeps an edited
 *     config;
 *  2. man: every page renders with `man -l` (and groff -ww) without a warning;
 *  3. version: `cfiprof --version` and `cfiprof COMMAND --version` print one
 *     string;
 *  4. completion: the installed completion completes subcommands and options.
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

#define PATHBUF (PATH_MAX + 256)

static const char *const commands[] = {"record", "report", "top", "tables", "agent", "list"};
static const char *bin, *out_dir;
static char dest[64];

/* sh -c SCRIPT, its stdout into buf (NUL-terminated); the exit code. */
static int sh_out(const char *script, char *buf, size_t len)
{
	char path[PATHBUF], *argv[] = {"sh", "-c", (char *)script, NULL};
	int rc;
	char *s;

	snprintf(path, sizeof(path), "%s/sh.out", dest);
	rc = run(argv, path, "-", 300);
	s = slurp(path);
	snprintf(buf, len, "%s", s ? s : "");
	free(s);
	return rc;
}

static bool has_mode(const char *rel, mode_t mode)
{
	char path[PATHBUF];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", dest, rel);
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		CHECK(0, "%s was not installed", rel);
		return false;
	}
	CHECK((st.st_mode & 07777) == mode, "%s: mode %o, not %o", rel, st.st_mode & 07777, mode);
	return true;
}

static void test_install(void)
{
	char script[4 * PATHBUF], buf[8192], path[PATHBUF], *unit;
	int rc;

	snprintf(script, sizeof(script),
		 "make -s --no-print-directory OUT=%s install DESTDIR=%s PREFIX=/usr >/dev/null",
		 out_dir, dest);
	rc = sh_out(script, buf, sizeof(buf));
	CHECK(rc == 0, "make install DESTDIR=%s: exit %d", dest, rc);
	has_mode("/usr/bin/cfiprof", 0755);
	has_mode("/usr/share/man/man1/cfiprof.1", 0644);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		snprintf(path, sizeof(path), "/usr/share/man/man1/cfiprof-%s.1", commands[i]);
		has_mode(path, 0644);
	}
	has_mode("/usr/share/bash-completion/completions/cfiprof", 0644);
	has_mode("/usr/share/doc/cfiprof/README.md", 0644);
	has_mode("/usr/share/doc/cfiprof/docs/record.md", 0644);
	has_mode("/usr/share/doc/cfiprof/docs/agent.md", 0644);
	has_mode("/etc/cfiprof/agent.conf", 0644);
	if (has_mode("/usr/lib/systemd/system/cfiprof-agent.service", 0644)) {
		snprintf(path, sizeof(path), "%s/usr/lib/systemd/system/cfiprof-agent.service",
			 dest);
		unit = slurp(path);
		CHECK(unit && strstr(unit, "\nExecStart=/usr/bin/cfiprof agent --config "
					   "/etc/cfiprof/agent.conf\n"),
		      "the unit does not run the installed binary with the installed config");
		CHECK(unit && strstr(unit, "\nType=notify\n"), "the unit is not Type=notify");
		CHECK(unit && strstr(unit, "\nPrivateDevices=yes\n") &&
			  strstr(unit, "\nDevicePolicy=closed\n"),
		      "the unit lets the agent open devices (issue 26)");
		free(unit);
		/* systemd ignores a misspelt directive with a warning only this shows */
		snprintf(script, sizeof(script),
			 "systemd-analyze verify %s 2>&1 | grep -v 'is not executable'", path);
		sh_out(script, buf, sizeof(buf));
		CHECK(!buf[0], "systemd-analyze verify: %.500s", buf);
		/* 3.1 with systemd 252 (4.9 before PrivateDevices= and the rest, issue 26) */
		snprintf(script, sizeof(script),
			 "systemd-analyze security --offline=yes --threshold=35 %s >/dev/null 2>&1",
			 path);
		CHECK(sh_out(script, buf, sizeof(buf)) == 0,
		      "systemd-analyze security: the unit's exposure is over 3.5");
	}
	/* an edited config survives the next install */
	snprintf(path, sizeof(path), "%s/etc/cfiprof/agent.conf", dest);
	snprintf(script, sizeof(script),
		 "echo 'freq = 7' > %s && make -s --no-print-directory OUT=%s install DESTDIR=%s "
		 "PREFIX=/usr >/dev/null && cat %s",
		 path, out_dir, dest, path);
	rc = sh_out(script, buf, sizeof(buf));
	CHECK(rc == 0 && !strcmp(buf, "freq = 7\n"), "a second install replaced the config: '%s'",
	      buf);
	/* bindir and mandir are honoured */
	snprintf(script, sizeof(script),
		 "make -s --no-print-directory OUT=%s install DESTDIR=%s/alt bindir=/opt/b "
		 "mandir=/opt/m >/dev/null && test -x %s/alt/opt/b/cfiprof && "
		 "test -f %s/alt/opt/m/man1/cfiprof-record.1",
		 out_dir, dest, dest, dest);
	rc = sh_out(script, buf, sizeof(buf));
	CHECK(rc == 0, "install with bindir=/opt/b mandir=/opt/m: exit %d", rc);
}

static void test_man(void)
{
	/* the rendered page whole: cfiprof-record(1) holds five docs pages, ~70 KB */
	static char buf[1 << 18];
	char script[4 * PATHBUF], page[PATHBUF];

	for (size_t i = 0; i <= sizeof(commands) / sizeof(commands[0]); i++) {
		if (i == sizeof(commands) / sizeof(commands[0]))
			snprintf(page, sizeof(page), "%s/usr/share/man/man1/cfiprof.1", dest);
		else
			snprintf(page, sizeof(page), "%s/usr/share/man/man1/cfiprof-%s.1", dest,
				 commands[i]);
		/* stderr into stdout: any warning fails the page */
		snprintf(script, sizeof(script),
			 "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l -Tutf8 %s 2>&1 >/dev/null; "
			 "groff -man -ww -z %s 2>&1",
			 page, page);
		CHECK(sh_out(script, buf, sizeof(buf)) == 0 && !buf[0], "%s: warnings: %.500s",
		      page, buf);
		snprintf(script, sizeof(script), "MANWIDTH=80 man -l %s 2>/dev/null | col -b",
			 page);
		sh_out(script, buf, sizeof(buf));
		CHECK(strstr(buf, "NAME") && strstr(buf, "SYNOPSIS") && strstr(buf, "SEE ALSO"),
		      "%s renders without NAME / SYNOPSIS / SEE ALSO:\n%.400s", page, buf);
		if (i < sizeof(commands) / sizeof(commands[0]))
			CHECK(strstr(buf, "OPTIONS") && strstr(buf, "--help") &&
				  strstr(buf, "--version"),
			      "%s has no OPTIONS section with --help and --version", page);
	}
}

static void test_version(void)
{
	char script[PATHBUF], first[256], buf[256];

	snprintf(script, sizeof(script), "%s --version", bin);
	CHECK(sh_out(script, first, sizeof(first)) == 0 && !strncmp(first, "cfiprof ", 8) &&
		  strlen(first) > 10,
	      "cfiprof --version: '%s'", first);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		snprintf(script, sizeof(script), "%s %s --version", bin, commands[i]);
		CHECK(sh_out(script, buf, sizeof(buf)) == 0 && !strcmp(buf, first),
		      "cfiprof %s --version: '%s', cfiprof --version: '%s'", commands[i], buf,
		      first);
	}
}

/*
 * A letter means one thing in every command, and perf's habits work: -g and
 * --call-graph are taken (with a note), -G is the cgroup, the agent's push
 * has no -p (record's pid) and record no -c (the agent's config).
 */
static void test_letters(void)
{
	static const struct {
		const char *args, *want; /* want: a piece of the output (stdout and stderr) */
		int status;
	} cases[] = {
	    {"record -g --help", "always recorded", 0},
	    {"record --call-graph=dwarf --help", "always recorded", 0},
	    {"top -g --help", "always recorded", 0},
	    {"record --help", "-G, --cgroup", 0},
	    {"record -c x -- true", "invalid option", 2},
	    {"record -k -- true", "invalid option", 2},
	    {"agent -p http://127.0.0.1:1 --help", "invalid option", 2},
	    {"agent --help", "--push=URL", 0},
	};
	char script[PATHBUF], buf[16384];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		snprintf(script, sizeof(script), "%s %s 2>&1", bin, cases[i].args);
		rc = sh_out(script, buf, sizeof(buf));
		CHECK(rc == cases[i].status && strstr(buf, cases[i].want),
		      "cfiprof %s: exit %d (want %d), output without '%s': %.300s", cases[i].args, rc,
		      cases[i].status, cases[i].want, buf);
	}
}

static void test_completion(void)
{
	char script[4 * PATHBUF], buf[4096];

	/* bash-completion's helpers (_init_completion, _parse_help) and ours, as bash loads them */
	snprintf(script, sizeof(script),
		 "PATH=%s/usr/bin:$PATH bash -c '. /usr/share/bash-completion/bash_completion; "
		 ". %s/usr/share/bash-completion/completions/cfiprof; "
		 "c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMP_LINE=\"$*\"; "
		 "COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _cfiprof cfiprof; echo "
		 "\"${COMPREPLY[*]}\"; }; "
		 "c cfiprof rec; c cfiprof record --max-f; c cfiprof record -f perf' 2>/dev/null",
		 dest, dest);
	CHECK(sh_out(script, buf, sizeof(buf)) == 0 &&
		  !strcmp(buf, "record\n--max-frames=\nperf-script\n"),
	      "completion: '%s'", buf);
}

int main(int argc, char **argv)
{
	static const char *const tools[] = {"make",  "help2man", "man",
					    "groff", "bash",	 "systemd-analyze"};

	harness_init(argc, argv);
	bin = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	out_dir = getenv("OUT") ? getenv("OUT") : "build";
	snprintf(dest, sizeof(dest), "/tmp/cfiprof-packaging.XXXXXX");
	CHECK(mkdtemp(dest) != NULL, "mkdtemp");
	CHECK(access("Makefile", R_OK) == 0, "run from the source tree (make install)");
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make deps)", tools[i]);
	CHECK(access("/usr/share/bash-completion/bash_completion", R_OK) == 0,
	      "bash-completion is missing (make test-deps)");

	RUN_TEST(test_install);
	RUN_TEST(test_man);
	RUN_TEST(test_version);
	RUN_TEST(test_completion);
	RUN_TEST(test_letters);

	tmpdir_done(dest, harness_failed);
	return HARNESS_DONE();
}
