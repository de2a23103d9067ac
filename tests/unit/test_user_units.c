// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the user-space building blocks that need no BPF program:
 * /proc/PID/maps parsing, LPM prefixes, the row allocator, the stack table,
 * the folded and recording writers and the table store.  Each module is
 * checked against an independent model (a bitmap, a byte-wise LPM match, a
 * sorted union of rules) rather than against its own output.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "user/profile/aggregate.h"
#include "elf/build_id.h"
#include "user/output/folded.h"
#include "user/symbolize/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/sym_cache.h"
#include "user/track/mapping_keys.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_stat.h"
#include "user/track/proc_tracker.h"
#include "user/profile/recording.h"
#include "user/track/row_alloc.h"
#include "user/track/table_store.h"

#define LIBC_PATH      "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX_PATH "/lib/x86_64-linux-gnu/libstdc++.so.6"

/* pids far above any pid_max, so no /proc entry or perf map can exist for them */
#define FAKE_PID1 999990001u
#define FAKE_PID2 999990002u
#define FAKE_PID3 999990003u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64*: a fixed seed keeps failures reproducible */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* ---------------------------------------------------------------- proc_maps */

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

	r = parse_maps_line("00400000-00452000 r-xp 00001000 08:02 173521 /usr/bin/dbus-daemon\n",
			    &e);
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

	r = parse_maps_line("7f00000000-7f00001000 r-xp 00002000 00:01 7 /memfd:jit (deleted)\n",
			    &e);
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

/* ------------------------------------------------------------- mapping_keys */

struct block {
	unsigned __int128 base, size;
};

static int by_base(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

/*
 * Decodes the keys and checks they tile [start, end) with aligned blocks and
 * that no two neighbours could merge into one aligned block (minimality).
 * Returns NULL when fine, else what is wrong.
 */
static const char *check_tiling(uint32_t pid, uint64_t start, uint64_t end, int *nr)
{
	struct mapping_key keys[MAPPING_KEYS_MAX + 1];
	struct block b[MAPPING_KEYS_MAX + 1];
	unsigned __int128 pos = start;
	int n, i;

	memset(keys, 0xa5, sizeof(keys));
	n = mapping_keys_for_range(pid, start, end, keys);
	*nr = n;
	if (n < 0 || n > MAPPING_KEYS_MAX)
		return "count out of bounds";
	if (start >= end)
		return n == 0 ? NULL : "keys for an empty range";
	if (n == 0)
		return "no keys";
	for (i = 0; i < n; i++) {
		unsigned int bits;

		if (keys[i].pid != pid)
			return "pid not carried";
		if (keys[i].prefixlen < 32 || keys[i].prefixlen > 96)
			return "prefixlen outside [32, 96]";
		bits = 96 - keys[i].prefixlen;
		b[i].base = __builtin_bswap64(keys[i].addr_be);
		b[i].size = (unsigned __int128)1 << bits;
		if (b[i].base & (b[i].size - 1))
			return "block not aligned to its size";
	}
	qsort(b, (size_t)n, sizeof(b[0]), by_base);
	for (i = 0; i < n; i++) {
		if (b[i].base != pos)
			return b[i].base < pos ? "blocks overlap" : "gap between blocks";
		if (i > 0 && b[i].size == b[i - 1].size && !(b[i - 1].base & (2 * b[i].size - 1)))
			return "two blocks could merge: not minimal";
		pos += b[i].size;
	}
	return pos == end ? NULL : "blocks do not end at end";
}

/* Byte-wise longest-prefix match, as the kernel's LPM trie compares keys. */
static const struct mapping_key *lpm_lookup(const struct mapping_key *keys, int n, uint32_t pid,
					    uint64_t addr)
{
	struct mapping_key q = {.prefixlen = 96, .pid = pid, .addr_be = __builtin_bswap64(addr)};
	const unsigned char *qd = (const unsigned char *)&q.pid;
	const struct mapping_key *best = NULL;
	int i;

	for (i = 0; i < n; i++) {
		const unsigned char *kd = (const unsigned char *)&keys[i].pid;
		uint32_t full = keys[i].prefixlen / 8, rem = keys[i].prefixlen % 8;

		if (memcmp(kd, qd, full))
			continue;
		if (rem && ((kd[full] ^ qd[full]) & (0xff00 >> rem) & 0xff))
			continue;
		if (!best || keys[i].prefixlen > best->prefixlen)
			best = &keys[i];
	}
	return best;
}

static void test_mapping_keys(void)
{
	static const uint64_t special[][2] = {
	    {0, 1},
	    {0, 4096},
	    {0, 1ull << 47},
	    {0, UINT64_MAX},
	    {1, UINT64_MAX},
	    {1, 2},
	    {4095, 4097},
	    {(1ull << 47) - 4096, 1ull << 47},
	    {0x7ffff7fc1000ull, 0x7ffff7fc3000ull},
	    {(1ull << 47) - 1, (1ull << 47) + 1},
	    {(1ull << 47) + 12345, (1ull << 48) - 777},
	    {1ull << 63, UINT64_MAX},
	    {(1ull << 63) - 1, UINT64_MAX},
	    {UINT64_MAX - 1, UINT64_MAX},
	    {UINT64_MAX - 4096, UINT64_MAX},
	    {0xffffffffff600000ull, 0xffffffffff601000ull},
	    {5, 5},
	    {7, 3},
	};
	const char *why, *first_why = NULL;
	uint64_t bad_s = 0, bad_e = 0;
	int i, n, maxn = 0, bad = 0, lpm_bad = 0;

	for (i = 0; i < (int)(sizeof(special) / sizeof(special[0])); i++) {
		why = check_tiling(1234, special[i][0], special[i][1], &n);
		CHECK(!why, "range [%" PRIx64 ", %" PRIx64 "): %s (%d keys)", special[i][0],
		      special[i][1], why, n);
	}
	/* the worst case needs 2 * 63 blocks */
	check_tiling(7, 1, UINT64_MAX, &n);
	CHECK(n == 126, "[1, 2^64-1) needs 126 blocks, got %d", n);

	for (i = 0; i < 20000; i++) {
		unsigned int sbits = (unsigned int)rnd_below(65),
			     lbits = (unsigned int)rnd_below(65);
		uint64_t s = sbits == 64 ? rnd() : rnd() & ((1ull << sbits) - 1);
		uint64_t len = lbits == 64 ? rnd() : rnd() & ((1ull << lbits) - 1);
		uint64_t e;

		switch (i % 4) {
		case 0: /* page aligned, like real mappings */
			s &= ~0xfffull;
			len = (len | 0xfff) + 1;
			break;
		case 1: /* user space, below 2^47 */
			s &= (1ull << 47) - 1;
			break;
		case 2: /* near the top of the address space */
			s = UINT64_MAX - (len & 0xffffff) - 1;
			break;
		default:
			break;
		}
		if (!len)
			len = 1;
		e = s + len < s || s + len == 0 ? UINT64_MAX : s + len;
		if (e <= s)
			continue;
		why = check_tiling((uint32_t)rnd(), s, e, &n);
		if (n > maxn)
			maxn = n;
		if (why && !bad++) {
			first_why = why;
			bad_s = s;
			bad_e = e;
		}
	}
	CHECK(!bad, "%d random ranges badly tiled, first [%" PRIx64 ", %" PRIx64 "): %s", bad,
	      bad_s, bad_e, first_why);
	CHECK(maxn <= MAPPING_KEYS_MAX, "max keys %d", maxn);

	/* brute force: exactly the addresses of the range match a key of the pid */
	for (i = 0; i < 3000; i++) {
		struct mapping_key keys[MAPPING_KEYS_MAX];
		uint64_t base = i % 3 == 0 ? 0 : i % 3 == 1 ? (1ull << 47) - 256 : UINT64_MAX - 600;
		uint64_t s = base + rnd_below(300), e = s + 1 + rnd_below(300);
		uint64_t probes[4] = {s, e};
		int p;
		int64_t d;

		if (e < s)
			e = UINT64_MAX;
		n = mapping_keys_for_range(77, s, e, keys);
		for (p = 0; p < 2; p++) {
			for (d = -70; d <= 70; d++) {
				uint64_t a = probes[p] + (uint64_t)d;
				bool in = a >= s && a < e;
				bool wrapped = (d < 0 && a > probes[p]) || (d > 0 && a < probes[p]);

				if (wrapped)
					continue;
				if (!!lpm_lookup(keys, n, 77, a) != in && !lpm_bad++)
					fprintf(stderr,
						"lpm: [%" PRIx64 ", %" PRIx64 ") at %" PRIx64
						": expected %d\n",
						s, e, a, in);
				/* another pid never matches */
				if (lpm_lookup(keys, n, 78, a) && !lpm_bad++)
					fprintf(stderr, "lpm: pid 78 matched pid 77's key\n");
			}
		}
	}
	CHECK(!lpm_bad, "%d LPM mismatches", lpm_bad);
}

/* The same keys in the kernel's own LPM trie: the model above must agree with it. */
static void test_mapping_keys_kernel_lpm(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	struct mapping_key keys[MAPPING_KEYS_MAX];
	uint32_t pid;
	int fd, bad = 0, k, n;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_lpm", sizeof(struct mapping_key),
			    sizeof(struct mapping_val), 8192, &o);
	if (fd < 0) {
		CHECK(0, "LPM trie create: %s", strerror(errno));
		return;
	}
	/* one range per pid, so the ranges cannot overlap */
	for (pid = 1; pid <= 40; pid++) {
		uint64_t s = rnd() & ((1ull << 47) - 1);
		uint64_t e = s + 1 + rnd_below(pid < 20 ? 5000 : 1ull << 30);
		struct mapping_val val = {.obj_id = pid, .flags = 0, .bias = s};
		int64_t d;

		if (pid == 40) {
			s = UINT64_MAX - 5000;
			e = UINT64_MAX;
		}
		n = mapping_keys_for_range(pid, s, e, keys);
		for (k = 0; k < n; k++) {
			if (bpf_map_update_elem(fd, &keys[k], &val, BPF_ANY) && !bad++)
				fprintf(stderr, "lpm update: %s\n", strerror(errno));
		}
		for (d = -3; d <= 3; d++) {
			uint64_t probes[3] = {s + (uint64_t)d, e + (uint64_t)d, s + (e - s) / 2};
			int p;

			for (p = 0; p < 3; p++) {
				struct mapping_key q = {.prefixlen = 96,
							.pid = pid,
							.addr_be = __builtin_bswap64(probes[p])};
				struct mapping_val got;
				bool in = probes[p] >= s && probes[p] < e;
				bool hit = !bpf_map_lookup_elem(fd, &q, &got) && got.obj_id == pid;

				if (hit != in && !bad++)
					fprintf(stderr,
						"kernel lpm: pid %u [%" PRIx64 ", %" PRIx64
						") at %" PRIx64 ": hit %d\n",
						pid, s, e, probes[p], hit);
			}
		}
	}
	CHECK(!bad, "%d kernel LPM mismatches", bad);
	close(fd);
}

/* ---------------------------------------------------------------- row_alloc */

#define RA_TOTAL 4096

/* The free list must be exactly the maximal free runs of the model, in order. */
static bool ra_consistent(const struct row_alloc *ra, const bool *used, uint32_t total)
{
	uint32_t a = 0, nr_used = 0;
	size_t k = 0;

	for (a = 0; a < total; a++)
		nr_used += used[a];
	if (ra->used != nr_used)
		return false;
	a = 0;
	while (a < total) {
		uint32_t s;

		while (a < total && used[a])
			a++;
		if (a == total)
			break;
		s = a;
		while (a < total && !used[a])
			a++;
		if (k >= ra->nr_free || ra->free[k].start != s || ra->free[k].len != a - s)
			return false;
		k++;
	}
	return k == ra->nr_free;
}

static int64_t model_first_fit(const bool *used, uint32_t total, uint32_t len)
{
	uint32_t a = 0;

	while (a < total) {
		uint32_t s;

		while (a < total && used[a])
			a++;
		s = a;
		while (a < total && !used[a])
			a++;
		if (a > s && a - s >= len)
			return s;
	}
	return -1;
}

static void test_row_alloc(void)
{
	static bool used[RA_TOTAL];
	static struct row_range live[RA_TOTAL];
	struct row_alloc ra;
	int nlive = 0, op, bad_overlap = 0, bad_fit = 0, bad_state = 0, gets = 0, fails = 0;
	uint32_t a;

	CHECK(row_alloc_init(&ra, RA_TOTAL) == 0, "init");
	CHECK(row_alloc_get(&ra, 0) == -1, "get(0) must fail");
	CHECK(row_alloc_get(&ra, RA_TOTAL + 1) == -1, "get(total+1) must fail");
	CHECK(ra.used == 0 && ra.nr_free == 1, "failed gets changed state: used %u nr_free %zu",
	      ra.used, ra.nr_free);

	for (op = 0; op < 6000; op++) {
		bool do_get = nlive == 0 || (rnd_below(100) < 55 && nlive < RA_TOTAL);

		if (do_get) {
			uint32_t len =
			    (uint32_t)(rnd_below(4) ? 1 + rnd_below(16) : 1 + rnd_below(900));
			int64_t want = model_first_fit(used, RA_TOTAL, len);
			int64_t got = row_alloc_get(&ra, len);

			if (got != want && !bad_fit++)
				fprintf(stderr,
					"row_alloc op %d: get(%u) = %" PRId64
					", first fit is %" PRId64 "\n",
					op, len, got, want);
			if (got >= 0) {
				gets++;
				if ((uint64_t)got + len > RA_TOTAL) {
					bad_overlap++;
				} else {
					for (a = (uint32_t)got; a < (uint32_t)got + len; a++) {
						if (used[a])
							bad_overlap++;
						used[a] = true;
					}
					live[nlive++] = (struct row_range){(uint32_t)got, len};
				}
			} else {
				fails++;
			}
		} else {
			int k = (int)rnd_below((uint64_t)nlive);
			struct row_range r = live[k];

			live[k] = live[--nlive];
			for (a = r.start; a < r.start + r.len; a++)
				used[a] = false;
			row_alloc_put(&ra, r.start, r.len);
		}
		if (!ra_consistent(&ra, used, RA_TOTAL) && !bad_state++)
			fprintf(stderr, "row_alloc op %d: used %u, free list differs from model\n",
				op, ra.used);
	}
	CHECK(!bad_overlap, "%d overlapping rows", bad_overlap);
	CHECK(!bad_fit, "%d results differ from first fit", bad_fit);
	CHECK(!bad_state, "%d states differ from the model", bad_state);
	CHECK(gets > 1000 && fails > 10,
	      "the sequence must exercise both outcomes: %d gets, %d fails", gets, fails);

	while (nlive) {
		int k = (int)rnd_below((uint64_t)nlive);

		row_alloc_put(&ra, live[k].start, live[k].len);
		live[k] = live[--nlive];
	}
	CHECK(ra.used == 0 && ra.nr_free == 1, "after freeing all: used %u nr_free %zu", ra.used,
	      ra.nr_free);
	CHECK(row_alloc_get(&ra, RA_TOTAL) == 0, "all rows in one piece after coalescing");
	CHECK(ra.used == RA_TOTAL && ra.nr_free == 0 && row_alloc_get(&ra, 1) == -1,
	      "full: used %u nr_free %zu", ra.used, ra.nr_free);
	row_alloc_put(&ra, 0, RA_TOTAL);
	CHECK(ra.used == 0 && ra.nr_free == 1 && ra.free[0].len == RA_TOTAL, "empty again");
	row_alloc_destroy(&ra);

	CHECK(row_alloc_init(&ra, 0) == 0 && row_alloc_get(&ra, 1) == -1, "total 0");
	row_alloc_destroy(&ra);
}

/* --------------------------------------------------------------- aggregator */

/* Room for the largest legal record; uint64_t keeps pcs[] aligned. */
static union {
	struct sample_record r;
	uint64_t raw[(sizeof(struct sample_record) +
		      (MAX_KERNEL_FRAMES + 2 + MAX_USER_FRAMES_LIMIT + 2) * 8) /
			 8 +
		     1];
} recbuf;

static size_t mkrec(uint32_t pid, uint32_t tid, const char *comm, uint8_t reason, uint8_t flags,
		    unsigned int nk, const uint64_t *k, unsigned int nu, const uint64_t *u)
{
	struct sample_record *r = &recbuf.r;

	memset(&recbuf, 0, sizeof(recbuf));
	r->type = RECORD_SAMPLE;
	r->pid = pid;
	r->tid = tid;
	r->cpu = 1;
	r->time_ns = 123456789;
	memcpy(r->comm, comm, strnlen(comm, COMM_LEN - 1));
	r->reason = reason;
	r->flags = flags;
	r->nr_kernel = (uint16_t)nk;
	r->nr_user = (uint16_t)nu;
	if (nk)
		memcpy(r->pcs, k, nk * sizeof(uint64_t));
	if (nu)
		memcpy(r->pcs + nk, u, nu * sizeof(uint64_t));
	return sizeof(*r) + (nk + nu) * sizeof(uint64_t);
}

static const struct sample_record *rec(void)
{
	return &recbuf.r;
}

static const struct agg_stack *find_stack(struct aggregator *a, uint32_t pid, const char *comm,
					  uint8_t reason, unsigned int nk, unsigned int nu,
					  const uint64_t *pcs)
{
	uint32_t b;

	for (b = 0; b < a->nr_buckets; b++) {
		const struct agg_stack *s;

		for (s = a->buckets[b]; s; s = s->next) {
			if (s->pid == pid && streq(s->comm, comm) && s->reason == reason &&
			    s->nr_kernel == nk && s->nr_user == nu &&
			    !memcmp(s->pcs, pcs, (nk + nu) * sizeof(uint64_t)))
				return s;
		}
	}
	return NULL;
}

static void test_aggregate_basic(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	static const uint64_t u1[] = {0x401000, 0x402000, 0x403000};
	static const uint64_t u2[] = {0x401000, 0x402000, 0x403001};
	static const uint64_t all[] = {0xffffffff81000010ull, 0xffffffff81000020ull, 0x401000,
				       0x402000, 0x403000};
	const struct agg_stack *s;
	struct aggregator a;
	struct agg_stack **v;
	uint64_t nr, i;
	size_t sz;
	int r;

	CHECK(agg_init(&a, 100) == 0, "agg_init");
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	CHECK(agg_add(&a, rec(), sz) == 0, "add");
	CHECK(agg_add(&a, rec(), sz) == 0, "add");
	/* tid and flags describe the sample, not the stack */
	sz = mkrec(100, 102, "app", STOP_COMPLETE, SAMPLE_IN_KERNEL, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(a.nr_stacks == 1 && s && s->count == 3, "identical stacks: %" PRIu64 " stacks",
	      a.nr_stacks);
	CHECK(s && s->tid == 101, "first tid kept");

	/* each of these differs in exactly one key field */
	sz = mkrec(200, 201, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_TRUNCATED, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u2);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app2", STOP_COMPLETE, 0, 2, k1, 3, u1);
	agg_add(&a, rec(), sz);
	/* same PC sequence split differently between kernel and user */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 3, all, 2, all + 3);
	agg_add(&a, rec(), sz);
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 0, NULL, 5, all);
	agg_add(&a, rec(), sz);
	/* a shorter stack that is a prefix of another */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 2, u1);
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 8, "distinct keys: %" PRIu64 " stacks, want 8", a.nr_stacks);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 3, "original unchanged: %" PRIu64, s ? s->count : 0);
	s = find_stack(&a, 100, "app2", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 1, "comm is part of the key");
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 3, 2, all);
	CHECK(s && s->count == 1, "kernel/user split is part of the key");

	/* empty stacks (kernel thread) aggregate too */
	sz = mkrec(300, 300, "kworker/0:1", STOP_NO_USER, SAMPLE_IN_KERNEL, 1, k1, 0, NULL);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 9, "kernel thread stack: %" PRIu64, a.nr_stacks);

	CHECK(a.samples == 14 && a.malformed == 0 && a.overflow == 0,
	      "samples %" PRIu64 " malformed %" PRIu64, a.samples, a.malformed);
	CHECK(a.by_reason[STOP_COMPLETE] == 9 && a.by_reason[STOP_TRUNCATED] == 1 &&
		  a.by_reason[STOP_NO_USER] == 4,
	      "by_reason %" PRIu64 " %" PRIu64 " %" PRIu64, a.by_reason[STOP_COMPLETE],
	      a.by_reason[STOP_TRUNCATED], a.by_reason[STOP_NO_USER]);
	CHECK(a.in_kernel == 5, "in_kernel %" PRIu64, a.in_kernel);
	/* 3+3+3 (first three) +3+3+3+3 +2 +5 +2 = user frames of the 10 user samples */
	CHECK(a.user_samples == 10 && a.user_frames == 3 * 7 + 2 + 5 + 2,
	      "user_samples %" PRIu64 " user_frames %" PRIu64, a.user_samples, a.user_frames);

	v = agg_sorted(&a, &nr);
	CHECK(v && nr == 9, "agg_sorted nr %" PRIu64, nr);
	for (i = 1; v && i < nr; i++)
		CHECK(v[i - 1]->count >= v[i]->count, "sorted order at %" PRIu64, i);
	CHECK(v && nr == 9 && v[0]->count == 4 && v[0]->pid == 300 && v[1]->count == 3 &&
		  v[2]->count == 1,
	      "most samples first");
	free(v);

	/* malformed records are rejected and counted, never half-read */
	sz = mkrec(100, 101, "app", STOP_COMPLETE, 0, 2, k1, 3, u1);
	r = agg_add(&a, rec(), sizeof(struct sample_record) - 1);
	CHECK(r == -1, "shorter than the header");
	r = agg_add(&a, rec(), 0);
	CHECK(r == -1, "size 0");
	r = agg_add(&a, rec(), sz - 1);
	CHECK(r == -1, "one byte short of the PCs");
	r = agg_add(&a, rec(), sizeof(struct sample_record) + 4 * sizeof(uint64_t));
	CHECK(r == -1, "one PC short");
	recbuf.r.nr_user = MAX_USER_FRAMES_LIMIT + 1;
	r = agg_add(&a, rec(), sizeof(recbuf));
	CHECK(r == -1, "nr_user > MAX_USER_FRAMES_LIMIT");
	recbuf.r.nr_user = 0;
	recbuf.r.nr_kernel = MAX_KERNEL_FRAMES + 1;
	r = agg_add(&a, rec(), sizeof(recbuf));
	CHECK(r == -1, "nr_kernel > MAX_KERNEL_FRAMES");
	CHECK(a.malformed == 6 && a.samples == 14 && a.nr_stacks == 9,
	      "malformed %" PRIu64 " samples %" PRIu64, a.malformed, a.samples);
	s = find_stack(&a, 100, "app", STOP_COMPLETE, 2, 3, all);
	CHECK(s && s->count == 3, "malformed records did not count");

	/* the largest legal record is accepted */
	{
		static uint64_t big[MAX_USER_FRAMES_LIMIT];

		for (i = 0; i < MAX_USER_FRAMES_LIMIT; i++)
			big[i] = 0x400000 + i;
		sz = mkrec(100, 101, "big", STOP_TRUNCATED, 0, 0, NULL, MAX_USER_FRAMES_LIMIT, big);
		r = agg_add(&a, rec(), sz);
		s = find_stack(&a, 100, "big", STOP_TRUNCATED, 0, MAX_USER_FRAMES_LIMIT, big);
		CHECK(r == 0 && s && s->count == 1, "MAX_USER_FRAMES_LIMIT frames accepted");
	}
	agg_free(&a);
}

static void test_aggregate_cap(void)
{
	struct aggregator a;
	uint64_t pc;
	size_t sz;

	agg_init(&a, 3);
	for (pc = 1; pc <= 3; pc++) {
		sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
		agg_add(&a, rec(), sz);
	}
	pc = 4;
	sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
	CHECK(agg_add(&a, rec(), sz) == 0, "overflow is not an error");
	agg_add(&a, rec(), sz);
	CHECK(a.nr_stacks == 3 && a.overflow == 2, "cap: %" PRIu64 " stacks, overflow %" PRIu64,
	      a.nr_stacks, a.overflow);
	pc = 2;
	sz = mkrec(1, 1, "c", STOP_COMPLETE, 0, 0, NULL, 1, &pc);
	agg_add(&a, rec(), sz);
	CHECK(find_stack(&a, 1, "c", STOP_COMPLETE, 0, 1, &pc) &&
		  find_stack(&a, 1, "c", STOP_COMPLETE, 0, 1, &pc)->count == 2,
	      "existing stack still counts when full");
	CHECK(a.overflow == 2 && a.samples == 6, "overflow %" PRIu64 " samples %" PRIu64,
	      a.overflow, a.samples);
	agg_free(&a);
}

static void test_aggregate_growth(void)
{
	const uint32_t n = 45000;
	struct aggregator a;
	struct agg_stack **v;
	uint64_t nr, i, total = 0, want_total = 0;
	uint32_t initial, j;
	int bad = 0;
	uint8_t *seen = calloc(n, 1);

	agg_init(&a, 1000000);
	initial = a.nr_buckets;
	/* stack j gets (j % 3) + 1 samples, interleaved so counts grow across rehashes */
	for (j = 0; j < 3; j++) {
		uint32_t x;

		for (x = 0; x < n; x++) {
			uint64_t pcs[2] = {0x400000 + x, 0x500000 + (x & 7)};
			size_t sz;

			if (j > x % 3)
				continue;
			sz = mkrec(10 + (x & 1), 10, "grow", STOP_COMPLETE, 0, 1,
				   (uint64_t[]){0xffffffff81000000ull}, 2, pcs);
			agg_add(&a, rec(), sz);
		}
	}
	for (j = 0; j < n; j++)
		want_total += j % 3 + 1;
	CHECK(a.nr_stacks == n, "stacks %" PRIu64 " want %u", a.nr_stacks, n);
	CHECK(a.nr_buckets > initial, "table grew: %u buckets (initial %u)", a.nr_buckets, initial);
	v = agg_sorted(&a, &nr);
	CHECK(v && nr == n, "sorted nr %" PRIu64, nr);
	for (i = 0; v && seen && i < nr; i++) {
		uint64_t x = v[i]->pcs[1] - 0x400000;

		total += v[i]->count;
		if (x >= n || seen[x]++ || v[i]->count != x % 3 + 1 || v[i]->pid != 10 + (x & 1) ||
		    (i && v[i - 1]->count < v[i]->count))
			bad++;
	}
	CHECK(!bad && total == want_total,
	      "%d wrong stacks after growth, total %" PRIu64 "/%" PRIu64, bad, total, want_total);
	free(v);
	free(seen);
	agg_free(&a);
}

/* ------------------------------------------------------------------- folded */

struct parsed_line {
	char *text;
	uint64_t count;
};

/* Splits folded output into (text, count); a line without a numeric count is malformed. */
static int parse_folded(char *buf, struct parsed_line *out, int max, int *malformed)
{
	char *save = NULL, *line;
	int n = 0;

	*malformed = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *end;
		uint64_t c;

		if (!sp || !sp[1]) {
			(*malformed)++;
			continue;
		}
		c = strtoull(sp + 1, &end, 10);
		if (*end || c == 0) {
			(*malformed)++;
			continue;
		}
		*sp = 0;
		if (n < max)
			out[n++] = (struct parsed_line){line, c};
	}
	return n;
}

static uint64_t folded_count(struct parsed_line *l, int n, const char *text)
{
	int i;

	for (i = 0; i < n; i++) {
		if (streq(l[i].text, text))
			return l[i].count;
	}
	return 0;
}

static void add_n(struct aggregator *a, int times, uint32_t pid, const char *comm, uint8_t reason,
		  unsigned int nk, const uint64_t *k, unsigned int nu, const uint64_t *u)
{
	size_t sz = mkrec(pid, pid, comm, reason, 0, nk, k, nu, u);
	int i;

	for (i = 0; i < times; i++)
		agg_add(a, rec(), sz);
}

static void test_folded(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	static const uint64_t u1[] = {0x401000, 0x402000};
	static const uint64_t u2[] = {0x401234, 0x402345};
	struct parsed_line l[32];
	struct frame_namer fn;
	struct aggregator a;
	char *buf = NULL, *copy;
	size_t len = 0;
	int n, i, malformed, r;
	FILE *f;

	agg_init(&a, 7);
	/* A and B differ only in PCs that name the same frames: one folded line */
	add_n(&a, 5, FAKE_PID1, "my;app x", STOP_COMPLETE, 2, k1, 2, u1);
	add_n(&a, 2, FAKE_PID1, "my;app x", STOP_COMPLETE, 2, k1, 2, u2);
	add_n(&a, 3, FAKE_PID2, "worker", STOP_NO_RULE, 0, NULL, 1, u1);
	add_n(&a, 4, FAKE_PID3, "kworker/0:1", STOP_NO_USER, 1, k1 + 1, 0, NULL);
	add_n(&a, 1, FAKE_PID3, "", STOP_COMPLETE, 0, NULL, 1, u1);
	add_n(&a, 6, FAKE_PID2, "tr", STOP_TRUNCATED, 0, NULL, 2, u1);
	add_n(&a, 8, FAKE_PID2, "nl\nname", STOP_COMPLETE, 0, NULL, 1, u1);
	/* the table is full now: two more distinct stacks overflow */
	add_n(&a, 1, FAKE_PID2, "late", STOP_COMPLETE, 0, NULL, 1, u2);
	add_n(&a, 1, FAKE_PID2, "late2", STOP_COMPLETE, 0, NULL, 1, u2);
	CHECK(a.nr_stacks == 7 && a.overflow == 2, "setup: %" PRIu64 " stacks, overflow %" PRIu64,
	      a.nr_stacks, a.overflow);

	frame_namer_init(&fn, NULL, NULL);
	f = open_memstream(&buf, &len);
	r = folded_write(f, &a, &fn);
	fclose(f);
	CHECK(r == 0, "folded_write = %d", r);
	copy = strdup(buf ? buf : "");
	n = parse_folded(buf, l, 32, &malformed);
	if (malformed || n != 7)
		fprintf(stderr, "folded output:\n%s", copy);
	free(copy);
	CHECK(!malformed, "%d lines without a count (a comm or frame broke the format)", malformed);
	/* profile.h: the overflow is one sample, comm "[overflow]", sorted like any other */
	CHECK(n == 7, "%d lines, want 6 stacks + overflow", n);
	CHECK(folded_count(l, n,
			   "my_app_x;[unknown];[unknown];0xffffffff81000020_[k];"
			   "0xffffffff81000010_[k]") == 7,
	      "comm sanitized, root first, kernel frames leaf last, identical lines merged");
	CHECK(folded_count(l, n, "worker;[incomplete: no-rule];[unknown]") == 3,
	      "incomplete frame under the comm");
	CHECK(folded_count(l, n, "tr;[incomplete: truncated];[unknown];[unknown]") == 6,
	      "truncated stack");
	CHECK(folded_count(l, n, "kworker/0:1;0xffffffff81000020_[k]") == 4,
	      "kernel thread: no incomplete frame");
	CHECK(folded_count(l, n, "[unknown];[unknown]") == 1, "empty comm");
	CHECK(folded_count(l, n, "[overflow];[overflow: stack table full]") == 2,
	      "overflow sample");
	for (i = 1; i < n; i++)
		CHECK(l[i - 1].count >= l[i].count, "sorted by count at line %d", i);
	CHECK(folded_count(l, n, "nl_name;[unknown]") == 8 ||
		  folded_count(l, n, "nl name;[unknown]") == 8,
	      "comm with a newline stays on one line");
	frame_namer_free(&fn);
	free(buf);
	agg_free(&a);
}

/* Kernel names come from a kallsyms file here, so a ';' can reach the folded writer. */
static void test_folded_frame_names(void)
{
	static const uint64_t k[] = {0xffffffff81001010ull, 0xffffffff81000010ull};
	char path[] = "/tmp/cfiprof-kallsyms-XXXXXX", err[256] = "";
	struct parsed_line l[8];
	struct frame_namer fn;
	struct aggregator a;
	struct ksyms *ks;
	char *buf = NULL;
	size_t len = 0;
	int fd, n, malformed;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs("ffffffff81000000 T ns;evil\nffffffff81001000 T plain_func\n"
	      "ffffffff81002000 T end_marker\n",
	      f);
	fclose(f);
	ks = ksyms_load(path, err, sizeof(err));
	unlink(path);
	CHECK(ks, "ksyms_load: %s", err);
	if (!ks)
		return;
	agg_init(&a, 10);
	add_n(&a, 2, FAKE_PID1, "c", STOP_NO_USER, 2, k, 0, NULL);
	frame_namer_init(&fn, NULL, ks);
	f = open_memstream(&buf, &len);
	folded_write(f, &a, &fn);
	fclose(f);
	n = parse_folded(buf, l, 8, &malformed);
	CHECK(n == 1 && !malformed && streq(l[0].text, "c;ns:evil_[k];plain_func_[k]") &&
		  l[0].count == 2,
	      "';' in a frame name becomes ':' (got '%s')", n ? l[0].text : "");
	frame_namer_free(&fn);
	ksyms_free(ks);
	free(buf);
	agg_free(&a);
}

/* frame_name_user with no tracker falls back to perf-PID.map, then "[unknown]". */
static void test_frame_names_perfmap(void)
{
	char path[64], buf[256];
	struct frame_namer fn;
	const char *name;
	FILE *f;

	CHECK(streq(stop_reason_name(STOP_NO_RULE), "no-rule") &&
		  streq(stop_reason_name(STOP_REASON_MAX), "unknown") &&
		  streq(stop_reason_name(-1), "unknown"),
	      "stop_reason_name");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)FAKE_PID2);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs("7f0000001000 100 jit;func\n", f);
	fclose(f);
	frame_namer_init(&fn, NULL, NULL);
	name = frame_name_user(&fn, FAKE_PID1, 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "[unknown]"), "no tracker, no perf map: '%s'", name);
	name = frame_name_user(&fn, FAKE_PID2, 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "jit;func"), "perf-PID.map name expected, got '%s'", name);
	/* a return address is looked up at pc-1: the end of the symbol still belongs to it */
	name = frame_name_user(&fn, FAKE_PID2, 0, 0x7f0000001100ull, false, buf, sizeof(buf));
	CHECK(streq(name, "jit;func"), "return address at symbol end: '%s'", name);
	frame_namer_free(&fn);
	unlink(path);
}

/* ---------------------------------------------------------------- recording */

/* Distinct bodies keep identical-code folding from merging them into one symbol. */
__attribute__((noinline)) int cfiprof_test_leaf(int x);
__attribute__((noinline)) int cfiprof_test_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int cfiprof_test_caller(int x);
__attribute__((noinline)) int cfiprof_test_caller(int x)
{
	return cfiprof_test_leaf(x) ^ 0x55;
}

static struct cfi_row *rows_mem;
static struct cfi_rule *rules_mem;
#define ROWS_MAX  (1u << 22)
#define RULES_MAX 65536

static void test_recording(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81abcdefull};
	static const uint64_t u1[] = {0x401000, 0x7f00deadbeefull, 0x1};
	LIBBPF_OPTS(bpf_map_create_opts, lpm_opts, .map_flags = BPF_F_NO_PREALLOC);
	struct maps_entry *ents = NULL;
	int pages_fd, procs_fd, maps_fd, nents, i, map_lines = 0, stack_lines = 0, other = 0;
	int maps_matched = 0, libc_cfi = 0, libc_bid_ok = 0, bad_stack = 0;
	char libc_bid[ELF_BUILD_ID_HEX_LEN] = "", *buf = NULL, *line, *save = NULL;
	struct proc_tracker *pt;
	struct sym_cache *syms;
	struct aggregator a;
	struct table_store ts;
	bool overflow_ok = false, header_ok = false;
	int meta_ok = 0, gen_lines = 0;
	size_t len = 0;
	FILE *f;

	pages_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pages", sizeof(struct cfi_page_key),
				  sizeof(struct cfi_page_val), 65536, NULL);
	procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", sizeof(uint32_t),
				  sizeof(struct proc_val), 1024, NULL);
	maps_fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_maps", sizeof(struct mapping_key),
				 sizeof(struct mapping_val), 65536, &lpm_opts);
	if (pages_fd < 0 || procs_fd < 0 || maps_fd < 0)
		CHECK(0, "BPF maps: %d %d %d", pages_fd, procs_fd, maps_fd);
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, pages_fd);
	syms = sym_cache_new();
	pt = proc_tracker_new(&ts, syms, procs_fd, maps_fd);
	CHECK(pt && syms, "tracker");
	if (!pt || !syms)
		return;
	CHECK(proc_tracker_load_now(pt, (uint32_t)getpid()) == 0, "load self");
	{
		int fd = open(LIBC_PATH, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			elf_build_id_hex_fd(fd, libc_bid, sizeof(libc_bid));
			close(fd);
		}
	}

	agg_init(&a, 3);
	add_n(&a, 5, 4242, "my comm", STOP_COMPLETE, 2, k1, 3, u1);
	add_n(&a, 2, 4243, "", STOP_NO_RULE, 0, NULL, 1, u1);
	add_n(&a, 1, 4244, "kthread", STOP_NO_USER, 1, k1, 0, NULL);
	add_n(&a, 3, 4245, "over", STOP_COMPLETE, 0, NULL, 1, u1);

	f = open_memstream(&buf, &len);
	CHECK(recording_write(f, &a, pt, &(struct recording_meta){.freq = 499, .event = "cpu-clock"}, NULL) ==
		      0,
	      "recording_write");
	fclose(f);

	nents = proc_maps_read(getpid(), true, &ents);
	for (line = strtok_r(buf, "\n", &save), i = 0; line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		uint64_t start, end, off, bias, count;
		unsigned int pid, flags, tid, reason, sflags;
		char bid[128], path[512], comm[64], klist[512], ulist[512];
		int e;

		if (i == 0) {
			header_ok = streq(line, "# cfiprof recording v1");
			continue;
		}
		if (i == 1) {
			meta_ok = streq(line, "meta 499 cpu-clock 0 0");
			continue;
		}
		if (sscanf(line,
			   "map %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %u %127s %511s",
			   &pid, &start, &end, &off, &bias, &flags, bid, path) == 8) {
			map_lines++;
			for (e = 0; e < nents; e++) {
				if (pid == (unsigned int)getpid() && ents[e].start == start &&
				    ents[e].end == end && ents[e].offset == off &&
				    streq(ents[e].path, path)) {
					maps_matched++;
					break;
				}
			}
			if (streq(path, LIBC_PATH) || strstr(path, "/libc.so.6")) {
				libc_cfi += (flags & MAPPING_CFI) != 0;
				libc_bid_ok += libc_bid[0] && streq(bid, libc_bid);
			}
			continue;
		}
		if (sscanf(line, "stack %" SCNu64 " %u %u %u %u %63s k %511s u %511s", &count, &pid,
			   &tid, &reason, &sflags, comm, klist, ulist) == 8) {
			stack_lines++;
			if (pid == 4242)
				bad_stack += !(count == 5 && tid == 4242 && reason == 0 &&
					       sflags == 0 && streq(comm, "my_comm") &&
					       streq(klist, "ffffffff81000010,ffffffff81abcdef") &&
					       streq(ulist, "401000,7f00deadbeef,1"));
			else if (pid == 4243)
				bad_stack +=
				    !(count == 2 && reason == STOP_NO_RULE && streq(comm, "-") &&
				      streq(klist, "-") && streq(ulist, "401000"));
			else if (pid == 4244)
				bad_stack +=
				    !(count == 1 && reason == STOP_NO_USER &&
				      streq(comm, "kthread") && streq(klist, "ffffffff81000010") &&
				      streq(ulist, "-"));
			else
				bad_stack++;
			if (bad_stack)
				fprintf(stderr, "bad stack line: %s\n", line);
			continue;
		}
		if (!strncmp(line, "overflow ", 9)) {
			overflow_ok = streq(line, "overflow 3");
			continue;
		}
		/* the generation the following map lines belong to: our own pid, once */
		if (!strncmp(line, "gen ", 4)) {
			unsigned int gpid, gen;

			gen_lines += sscanf(line, "gen %u %u", &gpid, &gen) == 2 &&
				     gpid == (unsigned int)getpid() && gen > 0;
			continue;
		}
		other++;
		fprintf(stderr, "unexpected recording line: %s\n", line);
	}
	CHECK(meta_ok, "meta line");
	CHECK(gen_lines == 1, "%d gen lines for this process (want 1)", gen_lines);
	CHECK(header_ok, "header line");
	CHECK(nents > 0 && map_lines == nents && maps_matched == nents,
	      "map lines %d, matching /proc/self/maps %d of %d", map_lines, maps_matched, nents);
	CHECK(libc_cfi > 0, "libc mapping loaded with CFI");
	CHECK(libc_bid_ok > 0, "libc build-id %s", libc_bid);
	CHECK(stack_lines == 3 && !bad_stack, "stack lines %d, bad %d", stack_lines, bad_stack);
	CHECK(overflow_ok, "overflow line");
	CHECK(!other, "%d unexpected lines", other);

	/* with a tracker, user frames are named from the ELF symbols, root first */
	{
		uint64_t u[2] = {(uint64_t)(uintptr_t)&cfiprof_test_leaf,
				 (uint64_t)(uintptr_t)&cfiprof_test_caller + 1};
		struct parsed_line l[4];
		struct frame_namer fn;
		struct aggregator b;
		char *out = NULL;
		size_t olen = 0;
		int nl, malformed;

		CHECK(cfiprof_test_caller(1) == (4 ^ 0x55), "helper");
		agg_init(&b, 10);
		add_n(&b, 2, (uint32_t)getpid(), "self", STOP_COMPLETE, 0, NULL, 2, u);
		frame_namer_init(&fn, pt, NULL);
		f = open_memstream(&out, &olen);
		folded_write(f, &b, &fn);
		fclose(f);
		nl = parse_folded(out, l, 4, &malformed);
		CHECK(nl == 1 && !malformed &&
			  streq(l[0].text, "self;cfiprof_test_caller;cfiprof_test_leaf") &&
			  l[0].count == 2,
		      "symbolized folded line '%s'", nl ? l[0].text : "");
		frame_namer_free(&fn);
		free(out);
		agg_free(&b);
	}

	/* the tracker's LPM entries resolve our own code to the object it loaded */
	{
		uint64_t pc = (uint64_t)(uintptr_t)&printf;
		struct proc *p = proc_tracker_find(pt, (uint32_t)getpid());
		const struct proc_mapping *m = p ? proc_find_mapping(p, pc) : NULL;
		struct mapping_key q = {
		    .prefixlen = 96, .pid = (uint32_t)getpid(), .addr_be = __builtin_bswap64(pc)};
		struct mapping_val val = {0};
		int r = bpf_map_lookup_elem(maps_fd, &q, &val);

		CHECK(m && m->obj && r == 0 && val.obj_id == m->obj->id && val.bias == m->bias &&
			  val.flags == m->flags,
		      "LPM lookup of printf: r=%d obj %u flags %u", r, val.obj_id, val.flags);
	}
	free(ents);
	free(buf);
	agg_free(&a);
	proc_tracker_free(pt);
	sym_cache_free(syms);
	CHECK(ts.alloc.used == 0, "tracker released every object: %u rows still used",
	      ts.alloc.used);
	table_store_destroy(&ts);
	close(pages_fd);
	close(procs_fd);
	close(maps_fd);
}

/* An empty tracker writes only the header and the stacks. */
static void test_recording_no_procs(void)
{
	struct proc_tracker *pt = proc_tracker_new(NULL, NULL, -1, -1);
	static const uint64_t u[] = {0xabc};
	struct aggregator a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	agg_init(&a, 10);
	add_n(&a, 1, 7, "a b\nc", STOP_COMPLETE, 0, NULL, 1, u);
	f = open_memstream(&buf, &len);
	CHECK(pt && recording_write(f, &a, pt,
				    &(struct recording_meta){.freq = 99, .event = "cycles",
							     .start_unix_ns = 12,
							     .duration_ns = 34},
				    NULL) == 0,
	      "recording_write");
	fclose(f);
	CHECK(streq(buf, "# cfiprof recording v1\nmeta 99 cycles 12 34\n"
			 "stack 1 7 7 0 0 a_b_c k - u abc\n"),
	      "empty tracker output:\n%s", buf);
	/* and back: the reader rebuilds the same stack and meta */
	{
		struct recording_meta meta;
		struct aggregator back;
		struct sym_cache *sc = sym_cache_new();
		struct proc_tracker *pt2 = sc ? proc_tracker_new(NULL, sc, -1, -1) : NULL;
		struct agg_stack **v;
		uint64_t bad = 0, nr = 0;
		char err[128];
		FILE *in = fmemopen(buf, strlen(buf), "r");

		agg_init(&back, 10);
		CHECK(in && pt2 && recording_read(in, &back, pt2, &meta, NULL, &bad, err, sizeof(err)) == 0,
		      "recording_read: %s", err);
		v = agg_sorted(&back, &nr);
		CHECK(bad == 0 && nr == 1 && v && v[0]->count == 1 && v[0]->pid == 7 &&
			      streq(v[0]->comm, "a_b_c") && v[0]->nr_user == 1 && v[0]->pcs[0] == 0xabc,
		      "round trip: bad %" PRIu64 " stacks %" PRIu64, bad, nr);
		CHECK(meta.freq == 99 && streq(meta.event, "cycles") && meta.start_unix_ns == 12 &&
			      meta.duration_ns == 34,
		      "meta round trip");
		free(v);
		if (in)
			fclose(in);
		agg_free(&back);
		proc_tracker_free(pt2);
		sym_cache_free(sc);
	}
	free(buf);
	agg_free(&a);
	proc_tracker_free(pt);
}

/* BPF program frames keep the name they had when recorded (kname lines). */
static void test_recording_kernel_names(void)
{
	char kpath[] = "/tmp/cfiprof-kallsyms.XXXXXX", *buf = NULL, err[128], name[256];
	struct sample_record *r = calloc(1, sizeof(*r) + 3 * sizeof(uint64_t));
	struct recording_meta wmeta = {.freq = 99, .event = "cpu-clock"}, meta = {0};
	struct aggregator a, back;
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new(NULL, sc, -1, -1) : NULL;
	struct frame_namer fn;
	struct ksyms *ks;
	size_t len = 0;
	uint64_t bad = 0;
	FILE *f;
	int fd = mkstemp(kpath);

	if (fd < 0 || !r) {
		CHECK(0, "mkstemp");
		free(r);
		return;
	}
	f = fdopen(fd, "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000100 T do_exit\n"
	      "ffffffffa0000000 t bpf_prog_0123456789abcdef_on_exit\t[bpf]\n"
	      "ffffffffa0001000 t bpf_prog_fedcba9876543210_other\t[bpf]\n",
	      f);
	fclose(f);
	ks = ksyms_load(kpath, err, sizeof(err));
	CHECK(ks != NULL, "ksyms_load: %s", err);
	agg_init(&a, 10);
	r->type = RECORD_SAMPLE;
	r->pid = r->tid = 7;
	r->nr_kernel = 2;
	r->nr_user = 1;
	r->pcs[0] = 0xffffffffa0000010;
	r->pcs[1] = 0xffffffff81000110;
	r->pcs[2] = 0x401000;
	agg_add(&a, r, sizeof(*r) + 3 * sizeof(uint64_t));
	wmeta.ks = ks;
	f = open_memstream(&buf, &len);
	CHECK(pt && recording_write(f, &a, pt, &wmeta, NULL) == 0, "recording_write");
	fclose(f);
	CHECK(buf && strstr(buf, "kname ffffffffa0000010 bpf_prog_0123456789abcdef_on_exit [bpf]\n") &&
		  !strstr(buf, "kname ffffffff81000110"),
	      "only the BPF frame is saved by name:\n%s", buf ? buf : "");
	f = fmemopen(buf, len, "r");
	agg_init(&back, 10);
	CHECK(f && pt && recording_read(f, &back, pt, &meta, NULL, &bad, err, sizeof(err)) == 0 && !bad,
	      "read back: %s", err);
	if (f)
		fclose(f);
	/* report time: no kallsyms at all, the saved name still wins */
	frame_namer_init(&fn, NULL, NULL);
	fn.saved_kernel = &meta.knames;
	CHECK(streq(frame_name_kernel(&fn, 0xffffffffa0000010, name, sizeof(name)),
		    "bpf_prog_0123456789abcdef_on_exit [bpf]"),
	      "saved kernel name: %s", name);
	CHECK(streq(frame_name_kernel(&fn, 0xffffffff81000110, name, sizeof(name)),
		    "0xffffffff81000110"),
	      "other kernel pcs are not saved: %s", name);
	frame_namer_free(&fn);
	kernel_names_free(&meta.knames);
	agg_free(&back);
	agg_free(&a);
	ksyms_free(ks);
	proc_tracker_free(pt);
	sym_cache_free(sc);
	unlink(kpath);
	free(buf);
	free(r);
}

/* -------------------------------------------------------------- table_store */

static struct cfi_table *build_path(void *ctx, int *err)
{
	struct cfi_table *t = NULL;

	*err = cfi_table_build_file(ctx, NULL, &t, NULL);
	return t;
}

static int build_calls;

static struct cfi_table *build_path_counted(void *ctx, int *err)
{
	build_calls++;
	return build_path(ctx, err);
}

/* Rows of o in the global arrays say what t says, through the global dictionary. */
static bool rows_match(const struct table_store *ts, const struct obj_entry *o,
		       const struct cfi_table *t)
{
	uint32_t i;

	if (o->nr_rows != t->nr_rows)
		return false;
	for (i = 0; i < t->nr_rows; i++) {
		const struct cfi_row *g = &ts->rows[o->first_row + i];

		if (g->off != t->rows[i].off || g->rule >= ts->nr_rules ||
		    memcmp(&ts->rules[g->rule], &t->rules[t->rows[i].rule],
			   sizeof(struct cfi_rule)))
			return false;
	}
	return true;
}

static bool pages_match(int fd, const struct obj_entry *o, const struct cfi_table *t)
{
	uint32_t i;

	for (i = 0; i < t->nr_pages; i++) {
		struct cfi_page_key k = {.obj_id = o->id, .page = (uint32_t)t->pages[i].page};
		struct cfi_page_val v;

		if (bpf_map_lookup_elem(fd, &k, &v) ||
		    v.first_row != o->first_row + t->pages[i].first_row ||
		    v.nr_rows != t->pages[i].nr_rows)
			return false;
	}
	return true;
}

static int map_entries(int fd)
{
	struct cfi_page_key k, next;
	int n = 0;

	if (bpf_map_get_next_key(fd, NULL, &next))
		return 0;
	do {
		k = next;
		n++;
	} while (!bpf_map_get_next_key(fd, &k, &next));
	return n;
}

static int by_rule(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct cfi_rule));
}

static uint32_t distinct_rules(struct cfi_rule *v, uint32_t n)
{
	uint32_t i, d = 0;

	qsort(v, n, sizeof(*v), by_rule);
	for (i = 0; i < n; i++)
		d += !i || memcmp(&v[i], &v[i - 1], sizeof(*v));
	return d;
}

static struct cfi_table *build_over_budget(void *ctx, int *err)
{
	(void)ctx;
	*err = CFI_ERR_BUDGET;
	return NULL;
}

static void test_table_store_no_bpf(struct cfi_table *libc)
{
	struct table_store ts;
	struct obj_entry *o = calloc(1, sizeof(*o));
	struct cfi_table empty = {0};
	int r;

	CHECK(table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, -1) == 0, "init");
	CHECK(ts.nr_rules == 1, "rule 0 reserved");
	o->id = 5;
	snprintf(o->name, sizeof(o->name), "libc");
	r = table_store_load_table(&ts, o, libc);
	CHECK(r < 0 && o->state == OBJ_FAILED, "page insert into fd -1 fails: r=%d state %d", r,
	      o->state);
	CHECK(ts.alloc.used == 0 && ts.alloc.nr_free == 1 && o->page_keys == NULL &&
		  ts.stats.objects_failed == 1 && ts.stats.objects_loaded == 0,
	      "failed load gave its rows back: used %u", ts.alloc.used);

	memset(o, 0, sizeof(*o));
	r = table_store_load_table(&ts, o, &empty);
	CHECK(r == 0 && o->state == OBJ_NO_CFI && ts.alloc.used == 0, "empty table: r=%d", r);
	free(o->page_keys);
	table_store_destroy(&ts);

	/* rows map too small */
	memset(o, 0, sizeof(*o));
	table_store_init(&ts, rows_mem, 10, rules_mem, RULES_MAX, -1);
	r = table_store_load_table(&ts, o, libc);
	CHECK(r == -ENOSPC && o->state == OBJ_FAILED && ts.stats.rows_full == 1 &&
		  ts.alloc.used == 0,
	      "rows full: r=%d", r);
	table_store_destroy(&ts);

	/* rule dictionary too small */
	memset(o, 0, sizeof(*o));
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, 4, -1);
	r = table_store_load_table(&ts, o, libc);
	CHECK(r == -ENOSPC && o->state == OBJ_FAILED && ts.alloc.used == 0 && ts.nr_rules == 4,
	      "rules full: r=%d nr_rules %u", r, ts.nr_rules);
	table_store_destroy(&ts);
	free(o);

	/* over the build budget: refused, counted apart from failures, frame pointers */
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, -1);
	o = table_store_acquire(&ts, "key-big", "big.so", build_over_budget, NULL);
	CHECK(o && o->state == OBJ_FAILED && ts.stats.objects_over_budget == 1 &&
		  ts.stats.objects_failed == 0 && ts.alloc.used == 0,
	      "over budget: state %d, %" PRIu64 " over budget, %" PRIu64 " failed",
	      o ? (int)o->state : -1, ts.stats.objects_over_budget, ts.stats.objects_failed);
	table_store_release(&ts, o);
	table_store_destroy(&ts);
}

/* A table store over the test's arrays and a real pages map; the map's fd, or -1. */
static int store_with_pages_map(struct table_store *ts)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pages", sizeof(struct cfi_page_key),
				sizeof(struct cfi_page_val), 65536, NULL);

	if (fd < 0)
		CHECK(0, "pages map: %s", strerror(errno));
	else
		table_store_init(ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, fd);
	return fd;
}

static void test_table_store_bpf(struct cfi_table *libc, struct cfi_table *cxx)
{
	struct obj_entry *o1, *o2, *o3;
	struct table_store ts;
	struct cfi_rule *all;
	uint32_t want, rules_after;
	int fd;

	fd = store_with_pages_map(&ts);
	if (fd < 0)
		return;

	build_calls = 0;
	o1 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH);
	CHECK(o1 && o1->state == OBJ_LOADED && o1->refs == 1, "libc loaded: state %d",
	      o1 ? (int)o1->state : -1);
	CHECK(o1 && rows_match(&ts, o1, libc), "libc rows remapped into the global dictionary");
	CHECK(o1 && pages_match(fd, o1, libc), "libc page index");
	CHECK(map_entries(fd) == (int)libc->nr_pages, "%d page entries, want %u", map_entries(fd),
	      libc->nr_pages);
	CHECK(ts.alloc.used == libc->nr_rows && ts.stats.pages_used == libc->nr_pages, "used %u",
	      ts.alloc.used);

	o2 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH);
	CHECK(o2 == o1 && o1->refs == 2 && build_calls == 1, "same key shares one object");

	o3 = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path_counted,
				 (void *)LIBSTDCXX_PATH);
	CHECK(o3 && o3 != o1 && o3->state == OBJ_LOADED && o3->id != o1->id, "libstdc++ loaded");
	CHECK(o3 && rows_match(&ts, o3, cxx), "libstdc++ rows remapped");
	CHECK(o3 && pages_match(fd, o3, cxx), "libstdc++ page index");
	CHECK(o3 && (o3->first_row >= o1->first_row + o1->nr_rows ||
		     o1->first_row >= o3->first_row + o3->nr_rows),
	      "row ranges disjoint");
	CHECK(rows_match(&ts, o1, libc), "libc rows intact after libstdc++");

	/* the dictionary holds the union of both tables' rules, each once */
	all = malloc((libc->nr_rules + cxx->nr_rules + 1) * sizeof(*all));
	memcpy(all, libc->rules, libc->nr_rules * sizeof(*all));
	memcpy(all + libc->nr_rules, cxx->rules, cxx->nr_rules * sizeof(*all));
	memset(&all[libc->nr_rules + cxx->nr_rules], 0, sizeof(*all));
	want = distinct_rules(all, libc->nr_rules + cxx->nr_rules + 1);
	CHECK(ts.nr_rules == want, "global rules %u, distinct in both tables %u", ts.nr_rules,
	      want);
	CHECK(want < libc->nr_rules + cxx->nr_rules, "the tables share rules (%u + %u -> %u)",
	      libc->nr_rules, cxx->nr_rules, want);
	memcpy(all, rules_mem, ts.nr_rules * sizeof(*all));
	CHECK(distinct_rules(all, ts.nr_rules) == ts.nr_rules, "no rule stored twice");
	free(all);

	table_store_release(&ts, o1);
	CHECK(o1->refs == 1 && pages_match(fd, o1, libc), "first release keeps the object");
	table_store_release(&ts, o1);
	CHECK(map_entries(fd) == (int)cxx->nr_pages && ts.alloc.used == cxx->nr_rows,
	      "last release removes libc pages and rows: %d entries, used %u", map_entries(fd),
	      ts.alloc.used);
	CHECK(o3 && pages_match(fd, o3, cxx) && rows_match(&ts, o3, cxx), "libstdc++ untouched");
	table_store_release(&ts, o3);
	CHECK(map_entries(fd) == 0 && ts.alloc.used == 0 && ts.stats.objects_unloaded == 2,
	      "all released: %d entries, used %u", map_entries(fd), ts.alloc.used);

	/* loading again reuses the rules already in the dictionary */
	rules_after = ts.nr_rules;
	build_calls = 0;
	o1 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH);
	CHECK(build_calls == 1 && o1->state == OBJ_LOADED && ts.nr_rules == rules_after &&
		  rows_match(&ts, o1, libc) && pages_match(fd, o1, libc),
	      "reload: rules %u -> %u", rules_after, ts.nr_rules);
	table_store_release(&ts, o1);

	/* a build failure is an object too, so it is not retried per mapping */
	o1 = table_store_acquire(&ts, "key-missing", "missing", build_path_counted,
				 (void *)"/nonexistent/lib.so");
	CHECK(o1 && o1->state == OBJ_FAILED && ts.alloc.used == 0, "build failure");
	table_store_release(&ts, o1);
	table_store_destroy(&ts);
	close(fd);
}

/* The reclaim callback of the test: releases the held objects, oldest first. */
struct reclaim_ctx {
	struct table_store *ts;
	struct obj_entry *held[4];
	int nr_held, calls;
};

static bool reclaim_oldest(void *arg)
{
	struct reclaim_ctx *rc = arg;

	rc->calls++;
	if (!rc->nr_held)
		return false;
	table_store_release(rc->ts, rc->held[0]);
	memmove(&rc->held[0], &rc->held[1], (size_t)--rc->nr_held * sizeof(rc->held[0]));
	return true;
}

static void test_table_store_reclaim(void)
{
	struct reclaim_ctx rc = {0};
	struct obj_entry *o;
	struct table_store ts;
	uint64_t libc_bytes;
	int fd;

	fd = store_with_pages_map(&ts);
	if (fd < 0)
		return;
	rc.ts = &ts;
	ts.reclaim = reclaim_oldest;
	ts.reclaim_ctx = &rc;
	o = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path, (void *)LIBC_PATH);
	CHECK(o->state == OBJ_LOADED && rc.calls == 0, "libc without a cap");
	libc_bytes = table_store_bytes(&ts);
	CHECK(libc_bytes == ts.alloc.used * sizeof(struct cfi_row) +
				ts.nr_rules * sizeof(struct cfi_rule) +
				o->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val)),
	      "table_store_bytes %" PRIu64 " counts rows, rules and pages", libc_bytes);
	rc.held[rc.nr_held++] = o;

	/* libstdc++ does not fit beside libc: libc goes, libstdc++ loads, the cap holds */
	ts.max_bytes = libc_bytes + libc_bytes / 2;
	o = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path, (void *)LIBSTDCXX_PATH);
	CHECK(o->state == OBJ_LOADED && rc.calls == 1 && rc.nr_held == 0,
	      "cap: state %d after %d reclaim calls", o->state, rc.calls);
	CHECK(table_store_bytes(&ts) <= ts.max_bytes && ts.stats.bytes_full == 0,
	      "cap: %" PRIu64 " bytes in use, cap %" PRIu64, table_store_bytes(&ts), ts.max_bytes);
	rc.held[rc.nr_held++] = o;

	/* nothing else to unload: libc is refused, counted, and libstdc++ stays */
	ts.max_bytes = table_store_bytes(&ts) + libc_bytes / 2;
	rc.calls = 0;
	rc.ts = NULL; /* reclaim must not be asked: refuse before releasing anything */
	ts.reclaim_ctx = &(struct reclaim_ctx){0};
	o = table_store_acquire(&ts, "key-libc2", "libc.so.6", build_path, (void *)LIBC_PATH);
	CHECK(o->state == OBJ_FAILED && ts.stats.bytes_full == 1 && rc.nr_held == 1,
	      "nothing to reclaim: state %d, bytes_full %" PRIu64, o->state, ts.stats.bytes_full);
	table_store_release(&ts, o);

	/* a table larger than the cap itself never unloads others */
	ts.reclaim_ctx = &rc;
	rc.ts = &ts;
	ts.max_bytes = 65536;
	o = table_store_acquire(&ts, "key-libc3", "libc.so.6", build_path, (void *)LIBC_PATH);
	CHECK(o->state == OBJ_FAILED && rc.calls == 0 && rc.nr_held == 1,
	      "larger than the cap: state %d, %d reclaim calls", o->state, rc.calls);
	table_store_release(&ts, o);
	table_store_release(&ts, rc.held[0]);
	CHECK(ts.alloc.used == 0 && map_entries(fd) == 0, "all released");
	table_store_destroy(&ts);
	close(fd);
}

/* ---------------------------------------------------------------- proc_stat */

static void test_proc_stat(void)
{
	struct proc_stat_info st, self;
	int status;
	pid_t child;

	CHECK(!proc_stat_parse("1 (a) b) c) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
			       "123456 0 0",
			       &st) &&
		  st.state == 'S' && st.flags == 4194560 && st.start_time == 123456,
	      "comm with ') ' inside: state %c flags %u start %" PRIu64, st.state, st.flags,
	      st.start_time);
	CHECK(!proc_stat_dying(&st), "sleeping is not dying");
	CHECK(!proc_stat_parse("7 (x) R 0 1 1 0 -1 4194308 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) &&
		  proc_stat_dying(&st),
	      "PF_EXITING is dying");
	CHECK(!proc_stat_parse("7 (x) Z 0 1 1 0 -1 0 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) &&
		  proc_stat_dying(&st),
	      "a zombie is dying");
	CHECK(proc_stat_parse("7 (x) S 0 1 1", &st) == -1, "truncated");
	CHECK(proc_stat_parse("7 (x S 0 1 1 0 -1 0 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) == -1,
	      "no ')'");
	CHECK(proc_stat_parse("7 (x) S 0 1 1 0 -1 zz 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) == -1,
	      "not a number");
	CHECK(proc_stat_parse("", &st) == -1, "empty");

	CHECK(!proc_stat_read((uint32_t)getpid(), &self) && self.start_time > 0 &&
		  !proc_stat_dying(&self),
	      "self: start %" PRIu64 " state %c", self.start_time, self.state);
	child = fork();
	if (child == 0)
		_exit(0);
	/* the child is a zombie until reaped */
	for (int i = 0; i < 200; i++) {
		if (!proc_stat_read((uint32_t)child, &st) && st.state == 'Z')
			break;
		usleep(5000);
	}
	CHECK(!proc_stat_read((uint32_t)child, &st) && proc_stat_dying(&st) &&
		  st.start_time >= self.start_time,
	      "zombie child: state %c", st.state);
	waitpid(child, &status, 0);
	CHECK(proc_stat_read((uint32_t)child, &st) == -ENOENT, "reaped child is gone");
}

/* Idle objects: kept after the last release, reused without a rebuild, expired, evicted first. */
static void test_table_store_idle(void)
{
	struct reclaim_ctx rc = {0};
	struct obj_entry *o, *o2;
	struct table_store ts;
	uint64_t bytes;
	struct timespec now;
	int fd;

	fd = store_with_pages_map(&ts);
	if (fd < 0)
		return;
	ts.idle_ttl_ns = 3600ull * 1000000000ull;
	rc.ts = &ts;
	ts.reclaim = reclaim_oldest;
	ts.reclaim_ctx = &rc;
	build_calls = 0;
	o = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				(void *)LIBC_PATH);
	bytes = table_store_bytes(&ts);
	table_store_release(&ts, o);
	CHECK(ts.stats.idle_now == 1 && table_store_bytes(&ts) == bytes &&
		  map_entries(fd) == (int)o->nr_pages,
	      "released: idle %" PRIu64 ", still loaded", ts.stats.idle_now);
	o2 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH);
	CHECK(o2 == o && o->refs == 1 && build_calls == 1 && ts.stats.idle_reused == 1 &&
		  ts.stats.idle_now == 0,
	      "reused while idle: %d builds", build_calls);
	table_store_release(&ts, o);

	/* not yet expired, then expired */
	clock_gettime(CLOCK_MONOTONIC, &now);
	table_store_expire(&ts, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	CHECK(ts.stats.idle_now == 1 && ts.stats.idle_expired == 0, "kept within the ttl");
	table_store_expire(&ts, o->idle_since_ns + ts.idle_ttl_ns);
	CHECK(ts.stats.idle_now == 0 && ts.stats.idle_expired == 1 && ts.alloc.used == 0 &&
		  map_entries(fd) == 0,
	      "expired: used %u, %d page entries", ts.alloc.used, map_entries(fd));

	/* under a cap an idle object goes before any process is asked to */
	o = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path, (void *)LIBC_PATH);
	table_store_release(&ts, o);
	ts.max_bytes = table_store_bytes(&ts) + table_store_bytes(&ts) / 2;
	rc.calls = 0;
	o = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path,
				(void *)LIBSTDCXX_PATH);
	CHECK(o->state == OBJ_LOADED && ts.stats.idle_evicted == 1 && rc.calls == 0 &&
		  ts.stats.idle_now == 0,
	      "idle evicted first: state %d, %d reclaim calls", o->state, rc.calls);
	table_store_release(&ts, o);
	table_store_destroy(&ts);
	close(fd);
}

static void test_table_store(void)
{
	struct cfi_table *libc = NULL, *cxx = NULL;
	int r1, r2;

	r1 = cfi_table_build_file(LIBC_PATH, NULL, &libc, NULL);
	r2 = cfi_table_build_file(LIBSTDCXX_PATH, NULL, &cxx, NULL);
	CHECK(r1 == 0 && r2 == 0 && libc && cxx && libc->nr_rows > 1000 && cxx->nr_rows > 1000,
	      "build libc %d, libstdc++ %d", r1, r2);
	if (!libc || !cxx)
		goto out;
	test_table_store_no_bpf(libc);
	test_table_store_bpf(libc, cxx);
	test_table_store_reclaim();
	test_table_store_idle();
out:
	cfi_table_free(libc);
	cfi_table_free(cxx);
}

int main(void)
{
	rows_mem = calloc(ROWS_MAX, sizeof(*rows_mem));
	rules_mem = calloc(RULES_MAX, sizeof(*rules_mem));
	if (!rows_mem || !rules_mem)
		return 2;
	test_proc_maps_parse();
	test_proc_maps_read();
	test_mapping_keys();
	test_mapping_keys_kernel_lpm();
	test_row_alloc();
	test_aggregate_basic();
	test_aggregate_cap();
	test_aggregate_growth();
	test_folded();
	test_folded_frame_names();
	test_frame_names_perfmap();
	test_recording();
	test_recording_no_procs();
	test_recording_kernel_names();
	test_table_store();
	test_proc_stat();
	free(rows_mem);
	free(rules_mem);
	return HARNESS_DONE();
}
