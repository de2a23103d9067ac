// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Paths and names from outside (issue 26, items 1 and 7):
 *  - refused_unopened: a FIFO, a device node, a symlink and another file than
 *    the one expected are refused by every opener of elf/safe_open.h without
 *    being opened (an inotify IN_OPEN watch on each, the kernel's word), and
 *    counted by cause; a regular file still opens, blocking reads again.
 *  - log_escaping: a name carrying "\n<0>", "\r" or an ESC reaches the
 *    agent's log and the table compiler's messages escaped, on one line.
 *  - output_links: -o through a symlink in a world-writable directory under
 *    /dev is refused; -o on a device node writes to it and leaves its mode.
 * Run as root (mknod).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/escape.h"
#include "elf/safe_open.h"
#include "tables/diag.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "user/agent/log.h"
#include "user/output/output_file.h"

/* An inotify fd watching path for IN_OPEN; -1 when it cannot. */
static int watch_opens(const char *path)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd >= 0 && inotify_add_watch(fd, path, IN_OPEN) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* IN_OPEN events queued on the watch since the last call. */
static int opens_seen(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t len;

	while ((len = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			n += (ev->mask & IN_OPEN) != 0;
			p += sizeof(*ev) + ev->len;
		}
	}
	return n;
}

struct counted {
	enum safe_open_refusal cause;
	uint64_t n;
};

/*
 * name (in tmpdir) refused by every opener of safe_open.h, watched (what it
 * leads to) never opened, the refusals counted as want[nr_want] says.
 */
static void check_refused(int rootfd, const char *name, const char *watched,
			  const struct counted *want, int nr_want)
{
	uint64_t before[SAFE_OPEN_REFUSAL_CAUSES];
	int ifd = watch_opens(tpath(watched)), r[5];

	CHECK(ifd >= 0, "%s: inotify watch: %s", watched, strerror(errno));
	for (int i = 0; i < SAFE_OPEN_REFUSAL_CAUSES; i++)
		before[i] = safe_open_refused(i);
	r[0] = open_regular(tpath(name));
	r[1] = open_regular_nofollow(tpath(name));
	r[2] = open_in_root(rootfd, name);
	r[3] = open_beneath_root(rootfd, name);
	r[4] = open_in_proc_root(getpid(), tpath(name));
	CHECK(r[0] < 0 && r[1] < 0 && r[2] < 0 && r[3] < 0 && r[4] < 0,
	      "%s: refused by every opener: %d %d %d %d %d", name, r[0], r[1], r[2], r[3], r[4]);
	CHECK(opens_seen(ifd) == 0, "%s: %s was opened (IN_OPEN) before being refused", name,
	      watched);
	for (int i = 0; i < nr_want; i++) {
		uint64_t n = safe_open_refused(want[i].cause) - before[want[i].cause];

		CHECK(n == want[i].n, "%s: %" PRIu64 " refusals counted as %s (want %" PRIu64 ")",
		      name, n, safe_open_refusal_name(want[i].cause), want[i].n);
	}
	for (int i = 0; i < 5; i++)
		if (r[i] >= 0)
			close(r[i]);
	if (ifd >= 0)
		close(ifd);
}

static void test_refused_unopened(void)
{
	struct stat st_a;
	struct file_id id_a;
	int rootfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd, ifd, flags, r[3];
	uint64_t before;
	char buf[8] = "";

	CHECK(!mkfifo(tpath("fifo"), 0666), "mkfifo: %s", strerror(errno));
	CHECK(!mknod(tpath("dev"), S_IFCHR | 0666, makedev(1, 3)), "mknod (run as root): %s",
	      strerror(errno));
	/* the oracle holds only where a device can be opened at all (no nodev mount) */
	fd = open(tpath("dev"), O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "the device node opens where it lies: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	CHECK(!symlink("dev", tpath("link_dev")) && !symlink("a", tpath("link_a")), "symlinks: %s",
	      strerror(errno));
	CHECK(shell_ok("echo aaaa > %s && echo bbbb > %s", tpath("a"), tpath("b")), "files a, b");
	CHECK(!stat(tpath("a"), &st_a), "stat a");
	id_a = (struct file_id){st_a.st_dev, st_a.st_ino};

	check_refused(rootfd, "fifo", "fifo", (struct counted[]){{SAFE_OPEN_FIFO, 5}}, 1);
	check_refused(rootfd, "dev", "dev", (struct counted[]){{SAFE_OPEN_DEVICE, 5}}, 1);
	/*
	 * nofollow and the in-root openers stop at the link; open_regular and
	 * the beneath opener follow it to the device
	 */
	check_refused(rootfd, "link_dev", "dev",
		      (struct counted[]){{SAFE_OPEN_SYMLINK, 3}, {SAFE_OPEN_DEVICE, 2}}, 2);
	/* b where a was expected: a mapped path renamed over */
	before = safe_open_refused(SAFE_OPEN_OTHER_FILE);
	ifd = watch_opens(tpath("b"));
	r[0] = open_regular_as(tpath("b"), &id_a);
	r[1] = open_in_root_as(rootfd, "b", &id_a);
	r[2] = open_in_proc_root_as(getpid(), tpath("b"), &id_a);
	CHECK(r[0] == -ESTALE && r[1] == -ESTALE && r[2] == -ESTALE,
	      "b for a's (dev, ino): %d %d %d (want -ESTALE)", r[0], r[1], r[2]);
	CHECK(opens_seen(ifd) == 0, "b was opened (IN_OPEN) before being refused");
	CHECK(safe_open_refused(SAFE_OPEN_OTHER_FILE) - before == 3,
	      "%" PRIu64 " refusals counted as other_file (want 3)",
	      safe_open_refused(SAFE_OPEN_OTHER_FILE) - before);
	close(ifd);

	/* the right file, by every way there is to reach it */
	fd = open_in_root_as(rootfd, "a", &id_a);
	flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	CHECK(fd >= 0 && read(fd, buf, 4) == 4 && !memcmp(buf, "aaaa", 4) &&
		  !(flags & O_NONBLOCK) && (flags & O_ACCMODE) == O_RDONLY,
	      "a opens read-only, blocking: fd %d flags %#x '%.4s'", fd, flags, buf);
	if (fd >= 0)
		close(fd);
	fd = open_regular(tpath("link_a"));
	CHECK(fd >= 0, "open_regular follows a link to a regular file: %d", fd);
	if (fd >= 0)
		close(fd);
	fd = open_in_root(rootfd, "../../../a");
	CHECK(fd >= 0, "'..' stays inside the root: %d", fd);
	if (fd >= 0)
		close(fd);
	close(rootfd);
}

/* The one line alog wrote for a name carrying a journal priority, a CR and an ESC. */
static void test_log_escaping(void)
{
	static const char hostile[] = "lib.so\n<0>fake entry\r\033[2Jx\x7f\x01 y";
	char esc[128], q[128], *log;
	struct diag_ctx dc;
	struct cfi_diag diag = {0};
	int lines = 0;

	str_escape(esc, sizeof(esc), hostile, NULL);
	CHECK(!strcmp(esc, "lib.so\\n<0>fake entry\\r\\e[2Jx\\x7f\\x01 y"), "str_escape: '%s'",
	      esc);
	str_escape(esc, 12, hostile, NULL);
	CHECK(!strcmp(esc, "lib.so\\n<0>"), "cut between escapes, never inside one: '%s'", esc);
	CHECK(!strcmp(alog_quote("a\r\"b\\", q, sizeof(q)), "\"a\\r\\\"b\\\\\""),
	      "alog_quote: '%s'", q);

	unsetenv("JOURNAL_STREAM");
	CHECK(!alog_open(tpath("agent.log")), "alog_open");
	alog(ALOG_WARN, "debug file refused", "path=%s name=%s", hostile,
	     alog_quote(hostile, q, sizeof(q)));
	alog_open(NULL);
	log = slurp(tpath("agent.log"));
	for (const char *p = log; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 1 && !strchr(log, '\r') && !strchr(log, '\033') && !strchr(log, '\x7f') &&
		  strstr(log, "path=lib.so\\n<0>fake entry\\r\\e[2Jx\\x7f\\x01 y") &&
		  strstr(log, "name=\"lib.so\\n<0>fake entry\\r\\e[2Jx\\x7f\\x01 y\""),
	      "one log line, the name escaped: '%s'", log);
	free(log);

	dc = (struct diag_ctx){&diag, "/lib\r/x.so"};
	diag_add(&dc, ".gnu_debuglink", 0, "%s is not a regular file: ignored", hostile);
	CHECK(diag.count == 1 && !strpbrk(diag.msg[0], "\n\r\033") &&
		  strstr(diag.msg[0], "/lib\\r/x.so: .gnu_debuglink+0x0: lib.so\\n<0>fake"),
	      "table compiler message escaped: '%s'", diag.msg[0]);
}

static bool file_is(const char *path, const char *text)
{
	char *s = slurp(path);
	bool same = s && !strcmp(s, text);

	free(s);
	return same;
}

/* -o: no symlink followed where anyone can plant one; a device keeps its mode. */
static void test_output_links(void)
{
	char ww[128], link[160];
	struct stat st;
	mode_t null_mode = 0;
	FILE *f;

	snprintf(ww, sizeof(ww), "%s", tpath("ww"));
	snprintf(link, sizeof(link), "%s/profile.svg", ww);
	CHECK(strncmp(ww, "/dev/", 5) == 0, "the world-writable directory is under /dev: %s", ww);
	CHECK(shell_ok("mkdir %s && chmod 1777 %s && echo keep > %s", ww, ww, tpath("victim")) &&
		  !symlink(tpath("victim"), link),
	      "%s -> victim", link);
	f = output_create(link, 0600);
	CHECK(!f && errno == ELOOP, "-o through a link in a world-writable dir under /dev: %s",
	      f ? "followed" : strerror(errno));
	if (f)
		fclose(f);
	CHECK(file_is(tpath("victim"), "keep\n"), "the link's target is untouched");

	/* a link only root could have made is followed (/dev/stdout's case) */
	CHECK(!symlink(tpath("target"), tpath("trusted")), "trusted link");
	f = output_create(tpath("trusted"), 0600);
	CHECK(f && fputs("out\n", f) >= 0, "-o through a link in a root-only dir: %s",
	      f ? "ok" : strerror(errno));
	if (f)
		fclose(f);
	CHECK(file_is(tpath("target"), "out\n"), "written through the trusted link");

	CHECK(!mknod(tpath("null"), S_IFCHR | 0666, makedev(1, 3)) && !chmod(tpath("null"), 0666),
	      "mknod null: %s", strerror(errno));
	f = output_create(tpath("null"), 0600);
	CHECK(f && fputs("x", f) >= 0 && !fclose(f), "-o on a device node: %s", strerror(errno));
	CHECK(!stat(tpath("null"), &st) && (st.st_mode & 07777) == 0666,
	      "the device keeps its mode: %o (want 666)", st.st_mode & 07777);
	if (!stat("/dev/null", &st))
		null_mode = st.st_mode & 07777;
	f = output_create("/dev/null", 0600);
	CHECK(f != NULL, "-o /dev/null: %s", strerror(errno));
	if (f)
		fclose(f);
	CHECK(!stat("/dev/null", &st) && (st.st_mode & 07777) == null_mode,
	      "/dev/null keeps mode %o: %o", null_mode, st.st_mode & 07777);
	/* a failure here must not leave the host's /dev/null unwritable for users */
	if (null_mode && (st.st_mode & 07777) != null_mode)
		chmod("/dev/null", null_mode);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	/* under /dev for output_links; /dev/shm is not mounted nodev here, for the device */
	snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/test_safe_open.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(test_refused_unopened);
	RUN_TEST(test_log_escaping);
	RUN_TEST(test_output_links);
	tmpdir_done(tmpdir, harness_failed);
	return HARNESS_DONE();
}
