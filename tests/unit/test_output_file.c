// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Output files replaced only when complete (user/output/output_file.c): the
 * previous file stays through a failed write, a recording's is kept as
 * NAME.old, no temporary file is left, paths are checked before anything is
 * written, and two names of one file are seen as one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/output/output_file.h"

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][128];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && !fclose(f), "cannot write %s", path);
}

/* Entries of dir other than . and ..; the temporary files would be among them. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static void test_commit_and_abort(void)
{
	struct output_file o;
	struct stat st;
	char *s;

	put(at("p.folded"), "old\n");
	CHECK(!output_open(&o, at("p.folded"), 0640, NULL), "open: %s", strerror(errno));
	fputs("new\n", o.f);
	s = slurp(at("p.folded"));
	CHECK(!strcmp(s, "old\n"), "the file changed before the commit: '%s'", s);
	free(s);
	CHECK(entries() == 2, "a temporary file beside it while it is written: %d", entries());
	CHECK(!output_commit(&o, false), "commit: %s", strerror(errno));
	s = slurp(at("p.folded"));
	CHECK(!strcmp(s, "new\n"), "after the commit: '%s'", s);
	free(s);
	CHECK(!stat(at("p.folded"), &st) && (st.st_mode & 07777) == 0640, "mode %o, want 640",
	      st.st_mode & 07777);
	CHECK(entries() == 1, "%d files after the commit (want 1: no temporary, no .old)",
	      entries());

	CHECK(!output_open(&o, at("p.folded"), 0600, NULL), "open again: %s", strerror(errno));
	fputs("half", o.f);
	output_abort(&o);
	s = slurp(at("p.folded"));
	CHECK(!strcmp(s, "new\n"), "an aborted write changed the file: '%s'", s);
	free(s);
	CHECK(entries() == 1, "%d files after the abort (want 1)", entries());
	unlink(at("p.folded"));
}

/*
 * report writes in a child, its parent renames: the child finishes the file
 * and forgets the temporary's name.  Under ASan + UBSan the child's exit
 * reported the name leaked (report's child did) before it was freed there.
 */
static void test_child_writes(void)
{
	struct output_file o;
	pid_t child;
	int st = -1;
	char *s;

	CHECK(!output_open(&o, at("c.folded"), 0600, NULL), "open: %s", strerror(errno));
	child = fork();
	if (child == 0) {
		int r;

		fputs("from the child\n", o.f);
		r = output_finish_for_parent(&o) || o.tmp;
		/* the child's last reference gone, as when report's child returns */
		memset(&o, 0, sizeof(o));
		exit(r);
	}
	CHECK(child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st),
	      "the child's finish: status %#x (23: a leak)", st);
	/* the parent's copy of the stream holds nothing: closed and renamed, as report does */
	CHECK(!output_commit(&o, false), "the parent's commit: %s", strerror(errno));
	s = slurp(at("c.folded"));
	CHECK(!strcmp(s, "from the child\n"), "after the commit: '%s'", s);
	free(s);
	CHECK(entries() == 1, "%d files after the commit (want 1)", entries());
	unlink(at("c.folded"));
}

static void test_keep_old(void)
{
	struct output_file o;
	char *s;

	put(at("r.rec"), "first\n");
	CHECK(!output_open(&o, at("r.rec"), 0600, NULL), "open: %s", strerror(errno));
	fputs("second\n", o.f);
	CHECK(!output_commit(&o, true), "commit: %s", strerror(errno));
	s = slurp(at("r.rec.old"));
	CHECK(!strcmp(s, "first\n"), "NAME.old: '%s'", s);
	free(s);
	s = slurp(at("r.rec"));
	CHECK(!strcmp(s, "second\n"), "NAME: '%s'", s);
	free(s);
	unlink(at("r.rec"));
	unlink(at("r.rec.old"));
}

static void test_checks(void)
{
	struct output_file o;
	struct stat st;

	put(at("target"), "keep\n");
	CHECK(!symlink(at("target"), at("planted.svg")), "symlink");
	errno = 0;
	CHECK(output_check(at("planted.svg")) && errno == ELOOP, "a planted symlink: %s",
	      strerror(errno));
	errno = 0;
	CHECK(output_check(dir) && errno == EISDIR, "a directory: %s", strerror(errno));
	errno = 0;
	CHECK(output_check(at("nodir/x.svg")) && errno == ENOENT, "a missing directory: %s",
	      strerror(errno));
	CHECK(!output_check(at("new.svg")), "a new file: %s", strerror(errno));
	/* a device is written where it is: renaming over /dev/null would replace it */
	CHECK(!output_open(&o, "/dev/null", 0600, NULL) && o.tmp == NULL, "/dev/null: %s",
	      strerror(errno));
	if (o.f)
		CHECK(!output_commit(&o, true), "/dev/null commit: %s", strerror(errno));
	CHECK(!stat("/dev/null", &st) && S_ISCHR(st.st_mode), "/dev/null is still a device");
	unlink(at("planted.svg"));
	unlink(at("target"));
}

static void test_same_path(void)
{
	char dotted[160], up[160];

	snprintf(dotted, sizeof(dotted), "%s/./x.rec", dir);
	snprintf(up, sizeof(up), "%s/../%s/x.rec", dir, strrchr(dir, '/') + 1);
	CHECK(output_same_path(at("x.rec"), dotted), "%s and %s", at("x.rec"), dotted);
	CHECK(output_same_path(at("x.rec"), up), "%s and %s", at("x.rec"), up);
	CHECK(!output_same_path(at("x.rec"), at("y.rec")), "x.rec and y.rec are two");
	put(at("x.rec"), "x");
	CHECK(!link(at("x.rec"), at("hard.rec")) && output_same_path(at("x.rec"), at("hard.rec")),
	      "a hard link is the same file");
	unlink(at("x.rec"));
	unlink(at("hard.rec"));
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(dir, sizeof(dir), "/tmp/cfiprof-outfile.XXXXXX");
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return HARNESS_DONE();
	}
	RUN_TEST(test_commit_and_abort);
	RUN_TEST(test_keep_old);
	RUN_TEST(test_child_writes);
	RUN_TEST(test_checks);
	RUN_TEST(test_same_path);
	tmpdir_done(dir, harness_failed);
	return HARNESS_DONE();
}
