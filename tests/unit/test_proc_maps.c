// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc/PID/maps: lines parsed field by field (odd paths, huge numbers, every
 * malformed shape refused) and the maps of this very process read back.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "user/track/proc_maps.h"

/* The parser cuts the path in place: literals are parsed from a copy (the entry points into it). */
static int parse_maps_line(const char *line, struct maps_entry *e)
{
	static char copy[4096];

	snprintf(copy, sizeof(copy), "%s", line);
	return proc_maps_parse_line(copy, e);
}

static void test_proc_maps_parse(void)
{
	struct maps_entry e;
	char *line;
	size_t i;
	int r;

	r = parse_maps_line(
	    "00400000-00452000 r-xp 00001000 08:02 173521 /usr/bin/dbus-daemon\n", &e);
	CHECK(r == 0 && e.start == 0x400000 && e.end == 0x452000 && e.offset == 0x1000 &&
		  e.dev_major == 8 && e.dev_minor == 2 && e.inode == 173521,
	      "file mapping numbers: r=%d %" PRIx64 "-%" PRIx64 " off %" PRIx64 " %x:%x %" PRIu64,
	      r, e.start, e.end, e.offset, e.dev_major, e.dev_minor, e.inode);
	CHECK(e.read && !e.write && e.exec && e.priv && !e.deleted, "file mapping perms");
	CHECK(streq(e.path, "/usr/bin/dbus-daemon"), "file mapping path '%s'", e.path);

	/* the kernel pads anonymous lines with spaces after the inode */
	r = parse_maps_line("7f1c2a000000-7f1c2a021000 rw-s 00000000 00:00 0 \n", &e);
	CHECK(r == 0 && e.path[0] == 0 && e.read && e.write && !e.exec && !e.priv && !e.deleted,
	      "anonymous: r=%d path '%s'", r, e.path);
	r = parse_maps_line("7f1c2a000000-7f1c2a021000 ---p 00000000 00:00 0", &e);
	CHECK(r == 0 && e.path[0] == 0 && !e.read && !e.write && !e.exec && e.priv,
	      "anonymous without newline: r=%d", r);

	r = parse_maps_line("7ffd5a3e0000-7ffd5a3e2000 r-xp 00000000 00:00 0"
				 "                          [vdso]\n",
				 &e);
	CHECK(r == 0 && streq(e.path, "[vdso]") && e.exec, "[vdso]: r=%d path '%s'", r, e.path);
	r = parse_maps_line("7ffd5a2c1000-7ffd5a2e2000 rw-p 00000000 00:00 0"
				 "                          [stack]\n",
				 &e);
	CHECK(r == 0 && streq(e.path, "[stack]") && e.start == 0x7ffd5a2c1000ull,
	      "[stack]: r=%d path '%s'", r, e.path);

	r = parse_maps_line(
	    "7f00000000-7f00001000 r-xp 00000000 fd:01 42   /opt/my app/lib x.so  \n", &e);
	CHECK(r == 0 && streq(e.path, "/opt/my app/lib x.so  "),
	      "path with spaces kept verbatim: r=%d '%s'", r, e.path);

	r = parse_maps_line(
	    "7f00000000-7f00001000 r-xp 00002000 00:01 7 /memfd:jit (deleted)\n", &e);
	CHECK(r == 0 && e.deleted && streq(e.path, "/memfd:jit") && e.offset == 0x2000,
	      "deleted: r=%d deleted=%d '%s'", r, e.deleted, e.path);
	r = parse_maps_line("7f00000000-7f00001000 r-xp 0 00:01 7 /a (deleted) b\n", &e);
	CHECK(r == 0 && !e.deleted && streq(e.path, "/a (deleted) b"),
	      "' (deleted)' only as a suffix: deleted=%d '%s'", e.deleted, e.path);

	r = parse_maps_line("1000-2000 r--p 00000000 103:1a2b3 99 /dev/x\n", &e);
	CHECK(r == 0 && e.dev_major == 0x103 && e.dev_minor == 0x1a2b3, "5-digit minor: r=%d %x:%x",
	      r, e.dev_major, e.dev_minor);
	r = parse_maps_line("1000-2000 r--p 00000000 fffff:fffff 99 /dev/x\n", &e);
	CHECK(r == 0 && e.dev_major == 0xfffff && e.dev_minor == 0xfffff,
	      "5-digit major and minor: r=%d %x:%x", r, e.dev_major, e.dev_minor);

	r = parse_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				 "                  [vsyscall]\n",
				 &e);
	CHECK(r == 0 && e.start == 0xffffffffff600000ull && e.end == 0xffffffffff601000ull &&
		  streq(e.path, "[vsyscall]") && e.exec && !e.read,
	      "vsyscall: r=%d %" PRIx64 "-%" PRIx64, r, e.start, e.end);
	r = parse_maps_line("7ffffffff000-fffffffffffff000 r-xp fffffffffffff000 00:00 "
				 "18446744073709551615 /x\n",
				 &e);
	CHECK(r == 0 && e.end == 0xfffffffffffff000ull && e.offset == 0xfffffffffffff000ull &&
		  e.inode == UINT64_MAX,
	      "huge numbers: r=%d end %" PRIx64 " inode %" PRIu64, r, e.end, e.inode);

	{
		static const char *const bad[] = {
		    "",
		    "\n",
		    "garbage\n",
		    "00400000-00452000 r-xp 00000000 08:02\n",	     /* no inode */
		    "00400000-00452000 r-xp 00000000\n",	     /* no device */
		    "00400000 r-xp 00000000 08:02 1 /x\n",	     /* no end */
		    "00400000-00452000 00000000 08:02 1 /x\n",	     /* no perms */
		    "00452000-00400000 r-xp 00000000 08:02 1 /x\n",  /* end < start */
		    "00400000-00400000 r-xp 00000000 08:02 1 /x\n",  /* empty */
		    "00400000-00452000 r-x 00000000 08:02 1 /x\n",   /* 3 perms */
		    "00400000-00452000 r-xpp 00000000 08:02 1 /x\n", /* 5 perms */
		    "00400000-00452000 r-xp zz 08:02 1 /x\n",
		    "00400000-00452000 r-xp 00000000 08-02 1 /x\n",
		    "00400000-00452000 r-xp 00000000 08:02 x /x\n",
		};

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = parse_maps_line(bad[i], &e);
			CHECK(r == -1, "malformed line %zu accepted: '%s'", i, bad[i]);
		}
	}

	/* the longest path that fits is accepted, one more byte is rejected */
	line = malloc(PATH_MAX + 128);
	if (line) {
		int n = snprintf(line, 128, "1000-2000 r-xp 00000000 08:02 1 /");

		memset(line + n, 'a', PATH_MAX - 2);
		line[n + PATH_MAX - 2] = '\n';
		line[n + PATH_MAX - 1] = 0;
		r = proc_maps_parse_line(line, &e);
		CHECK(r == 0 && strlen(e.path) == PATH_MAX - 1, "path of PATH_MAX-1: r=%d len %zu",
		      r, strlen(e.path));
		line[n + PATH_MAX - 2] = 'a';
		line[n + PATH_MAX - 1] = '\n';
		line[n + PATH_MAX] = 0;
		r = proc_maps_parse_line(line, &e);
		CHECK(r == -1, "overlong path accepted: r=%d", r);
		free(line);
	}
}

static void test_proc_maps_read(void)
{
	static struct maps_entry dummy;
	struct maps_entry *v = NULL, *all = NULL;
	char exe[PATH_MAX];
	uint64_t here = (uint64_t)(uintptr_t)&test_proc_maps_read;
	bool found_exe = false, found_libc = false, here_in_exe = false, all_exec = true;
	bool found_stack = false;
	ssize_t elen;
	int n, nall, i;

	elen = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[elen > 0 ? elen : 0] = 0;
	n = proc_maps_read(getpid(), true, &v);
	CHECK(n > 0 && v, "proc_maps_read(self, exec_only) = %d", n);
	for (i = 0; i < n; i++) {
		const char *base = strrchr(v[i].path, '/');

		all_exec &= v[i].exec;
		if (streq(v[i].path, exe)) {
			found_exe = true;
			if (here >= v[i].start && here < v[i].end)
				here_in_exe = true;
		}
		if (base && (!strncmp(base, "/libc.so", 8) || !strncmp(base, "/libc-", 6)))
			found_libc = true;
	}
	CHECK(all_exec, "exec_only returned a non-executable mapping");
	CHECK(found_exe && here_in_exe, "own executable mapping %s (found %d, pc inside %d)", exe,
	      found_exe, here_in_exe);
	CHECK(found_libc, "libc executable mapping not found");

	nall = proc_maps_read(getpid(), false, &all);
	for (i = 0; i < nall; i++)
		found_stack |= streq(all[i].path, "[stack]");
	CHECK(nall > n && found_stack, "all mappings: %d (exec %d), [stack] %d", nall, n,
	      found_stack);
	free(v);
	free(all);

	v = &dummy; /* must be reset on failure */
	n = proc_maps_read(0x7ffffff0, true, &v);
	CHECK(n == -ENOENT && v == NULL, "nonexistent pid: %d", n);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_proc_maps_parse);
	RUN_TEST(test_proc_maps_read);
	return HARNESS_DONE();
}
