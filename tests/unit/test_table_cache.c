// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table cache on disk (tables/table_cache.c): a stored table comes back
 * identical; entries that are damaged, truncated, of another format version,
 * structurally invalid behind a correct checksum, symlinks or FIFOs are never
 * used (refused and removed, or a miss, without blocking); a directory others
 * can write is refused; the byte bound evicts the least recently used.  A
 * file's key (cfi_file_key) changes with what its owner cannot set back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hash.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tables/table_cache.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"
#define LLVM_PATH "/usr/lib/llvm-14/lib/libLLVM-14.so"
#define LIBC_KEY  "libc-key@1:2:3:4"

static char dir[64];

static struct cfi_table *build(const char *path)
{
	struct cfi_table *t = NULL;
	int err = cfi_table_build_file(path, NULL, &t, NULL);

	CHECK(err == 0 && t, "building %s: %s", path, cfi_strerror(err));
	return t;
}

static bool same_table(const struct cfi_table *a, const struct cfi_table *b)
{
	return a->nr_rules == b->nr_rules && a->nr_rows == b->nr_rows &&
	       a->nr_pages == b->nr_pages && a->min_addr == b->min_addr &&
	       a->max_addr == b->max_addr && !strcmp(a->build_id, b->build_id) &&
	       !memcmp(a->rules, b->rules, a->nr_rules * sizeof(*a->rules)) &&
	       !memcmp(a->rows, b->rows, a->nr_rows * sizeof(*a->rows)) &&
	       !memcmp(a->pages, b->pages, a->nr_pages * sizeof(*a->pages));
}

/* The file an entry lives in (the cache names it by the key's hash). */
static void entry_path(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%016llx.cfitable", dir, (unsigned long long)hash_str(key));
}

static struct cfi_table_cache *fresh(uint64_t max_bytes)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "rm");
	return cfi_table_cache_open(dir, max_bytes);
}

static void test_round_trip(void)
{
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table *t = build(LIBC_PATH), *back = NULL;
	struct cfi_table_cache_stats st;
	struct stat sb;

	CHECK(c != NULL, "cannot open a fresh cache in %s", dir);
	if (!c || !t)
		return;
	CHECK(stat(dir, &sb) == 0 && (sb.st_mode & 0777) == 0700, "cache dir mode %o",
	      sb.st_mode & 0777);
	CHECK(cfi_table_cache_load(c, LIBC_KEY, &back) == -1 && !back, "hit in an empty cache");
	cfi_table_cache_store(c, LIBC_KEY, t);
	CHECK(cfi_table_cache_load(c, LIBC_KEY, &back) == 0 && back, "miss after a store");
	CHECK(back && same_table(t, back), "the table read back differs from the one stored");
	{
		struct cfi_table *other = NULL;

		CHECK(cfi_table_cache_load(c, "libc-key@1:2:3:5", &other) == -1 && !other,
		      "another file identity hits libc's entry");
	}
	cfi_table_cache_stats(c, &st);
	CHECK(st.hits == 1 && st.misses == 2 && st.stores == 1 && st.refused == 0 && st.bytes > 0,
	      "stats: %lu hits %lu misses %lu stores %lu refused", (unsigned long)st.hits,
	      (unsigned long)st.misses, (unsigned long)st.stores, (unsigned long)st.refused);
	cfi_table_free(back);
	cfi_table_free(t);
	cfi_table_cache_close(c);
}

/* Rewrites byte off of key's entry (from the end if off < 0) to its complement. */
static void damage(const char *key, long off)
{
	char path[128];
	unsigned char b;
	int fd;

	entry_path(key, path, sizeof(path));
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open %s", path);
	if (fd < 0)
		return;
	if (off < 0)
		off += lseek(fd, 0, SEEK_END);
	CHECK(pread(fd, &b, 1, off) == 1, "read");
	b = (unsigned char)~b;
	CHECK(pwrite(fd, &b, 1, off) == 1, "write");
	close(fd);
}

static void expect_refused(struct cfi_table_cache *c, const char *what)
{
	struct cfi_table_cache_stats before, after;
	struct cfi_table *back = NULL;
	char path[128];

	cfi_table_cache_stats(c, &before);
	CHECK(cfi_table_cache_load(c, LIBC_KEY, &back) == -1 && !back, "%s: entry used", what);
	cfi_table_cache_stats(c, &after);
	CHECK(after.refused == before.refused + 1, "%s: not counted as refused", what);
	entry_path(LIBC_KEY, path, sizeof(path));
	CHECK(access(path, F_OK) != 0, "%s: refused entry left in place", what);
	cfi_table_free(back);
}

static void test_refuses_bad_entries(void)
{
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table *t = build(LIBC_PATH), *bad;
	char path[128], real[160];

	if (!c || !t)
		return;
	entry_path(LIBC_KEY, path, sizeof(path));
	/* a row flipped: the checksum catches it */
	cfi_table_cache_store(c, LIBC_KEY, t);
	damage(LIBC_KEY, -100);
	expect_refused(c, "damaged row");
	/* the format version (first field after the magic) */
	cfi_table_cache_store(c, LIBC_KEY, t);
	damage(LIBC_KEY, 8);
	expect_refused(c, "other version");
	/* cut short */
	cfi_table_cache_store(c, LIBC_KEY, t);
	CHECK(truncate(path, 4000) == 0, "truncate");
	expect_refused(c, "truncated");
	/* a correct checksum over nonsense: a row naming a rule that does not exist */
	bad = build(LIBC_PATH);
	if (bad) {
		bad->rows[bad->nr_rows / 2].rule = (uint16_t)bad->nr_rules;
		cfi_table_cache_store(c, LIBC_KEY, bad);
		expect_refused(c, "rule id out of range");
		bad->rows[bad->nr_rows / 2] = t->rows[t->nr_rows / 2];
		bad->pages[0].nr_rows++;
		cfi_table_cache_store(c, LIBC_KEY, bad);
		expect_refused(c, "pages overlapping");
		cfi_table_free(bad);
	}
	/* a pair (struct cfi_rule) whose successor is not an older rule: a lookup would loop */
	bad = build(LIBC_PATH);
	if (bad) {
		uint32_t i, pairs = 0;

		for (i = 0; i < bad->nr_rules; i++)
			pairs += bad->rules[i].next_at != 0;
		CHECK(pairs > 0, "libc's table pairs no rows: the check below tests nothing");
		for (i = 0; i < bad->nr_rules && !bad->rules[i].next_at; i++)
			;
		if (i < bad->nr_rules) {
			bad->rules[i].next_rule = (uint16_t)i;
			cfi_table_cache_store(c, LIBC_KEY, bad);
			expect_refused(c, "a pair its own successor");
		}
		cfi_table_free(bad);
	}
	/*
	 * A symlink where the entry should be, to a valid entry: only the refusal
	 * to follow it keeps it out (the same file under its own name loads, the
	 * control below).  Then a FIFO: a miss, at once.
	 */
	cfi_table_cache_store(c, LIBC_KEY, t);
	snprintf(real, sizeof(real), "%s.real", path);
	CHECK(rename(path, real) == 0 && symlink(real, path) == 0, "symlink to a valid entry");
	bad = NULL;
	CHECK(cfi_table_cache_load(c, LIBC_KEY, &bad) == -1, "entry read through a symlink");
	cfi_table_free(bad);
	unlink(path);
	bad = NULL;
	CHECK(rename(real, path) == 0 && cfi_table_cache_load(c, LIBC_KEY, &bad) == 0 && bad,
	      "the symlink's target, as the entry itself, does not load: the check tests nothing");
	cfi_table_free(bad);
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0, "mkfifo");
	{
		double t0 = mono_sec();

		CHECK(cfi_table_cache_load(c, LIBC_KEY, &bad) == -1 && mono_sec() - t0 < 1.0,
		      "a FIFO entry was used or blocked");
	}
	unlink(path);
	cfi_table_free(t);
	cfi_table_cache_close(c);
}

static void test_refuses_shared_dir(void)
{
	struct cfi_table_cache *c;
	char link[80];

	c = fresh(1 << 20);
	cfi_table_cache_close(c);
	CHECK(chmod(dir, 0777) == 0, "chmod");
	c = cfi_table_cache_open(dir, 1 << 20);
	CHECK(c == NULL, "a directory everyone can write is used as a table cache");
	cfi_table_cache_close(c);
	CHECK(chmod(dir, 0700) == 0, "chmod");
	snprintf(link, sizeof(link), "%s.link", dir);
	unlink(link);
	CHECK(symlink(dir, link) == 0, "symlink");
	c = cfi_table_cache_open(link, 1 << 20);
	CHECK(c == NULL, "a table cache reached through a symlink is used");
	cfi_table_cache_close(c);
	unlink(link);
}

static void test_byte_bound(void)
{
	struct cfi_table *t = build(LIBC_PATH);
	struct cfi_table_cache_stats st;
	struct cfi_table_cache *c;
	struct cfi_table *back = NULL;
	char key[32];
	uint64_t one;
	int i;

	if (!t)
		return;
	c = fresh(1ull << 30);
	cfi_table_cache_store(c, "k0", t);
	cfi_table_cache_stats(c, &st);
	one = st.bytes;
	cfi_table_cache_close(c);
	/* room for two and a half entries */
	c = cfi_table_cache_open(dir, one * 5 / 2);
	for (i = 1; i < 5; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		cfi_table_cache_store(c, key, t);
		/* file times tick in jiffies: keep the store and the use apart */
		usleep(20 * 1000);
		/* k1 is used after each store: the others go first */
		if (i > 1)
			CHECK(cfi_table_cache_load(c, "k1", &back) == 0,
			      "k1 evicted though in use");
		cfi_table_free(back);
		back = NULL;
		/* mtimes are the order: keep them apart */
		usleep(20 * 1000);
	}
	cfi_table_cache_stats(c, &st);
	CHECK(st.bytes <= one * 5 / 2 && st.evicted >= 3,
	      "bound: %lu bytes (bound %lu), %lu evicted", (unsigned long)st.bytes,
	      (unsigned long)(one * 5 / 2), (unsigned long)st.evicted);
	CHECK(cfi_table_cache_load(c, "k4", &back) == 0, "the newest entry was evicted");
	cfi_table_free(back);
	cfi_table_cache_close(c);
	cfi_table_free(t);
}

/*
 * A small table is not kept: a process mapping 2,000 small files left 2,000
 * entries in the agent's cache (one disk block each), and every lookup and
 * eviction scan of the directory grew slower.
 */
static void test_cheap_not_kept(void)
{
	struct cfi_table *small = build("/bin/true"), *t = build(LIBC_PATH), *back = NULL;
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table_cache_stats st;

	if (!small || !t || !c)
		return;
	/* a miss, then the build: a cheap one, not a miss */
	CHECK(cfi_table_cache_load(c, "cheap", &back) == -1, "hit in an empty cache");
	cfi_table_cache_store(c, "cheap", small);
	CHECK(cfi_table_cache_load(c, "cheap", &back) == -1 && !back,
	      "/bin/true's table (%u rows) was kept", small->nr_rows);
	cfi_table_cache_store(c, "dear", t);
	CHECK(cfi_table_cache_load(c, "dear", &back) == 0 && back, "libc's table was not kept");
	cfi_table_free(back);
	cfi_table_cache_stats(c, &st);
	CHECK(st.cheap == 1 && st.misses == 1 && st.stores == 1 && st.entries == 1,
	      "stats: %lu cheap, %lu misses, %lu stores, %lu entries", (unsigned long)st.cheap,
	      (unsigned long)st.misses, (unsigned long)st.stores, (unsigned long)st.entries);
	cfi_table_cache_close(c);
	cfi_table_free(small);
	cfi_table_free(t);
}

/* However small the entries, their number is bounded: the oldest go. */
static void test_entry_bound(void)
{
	struct cfi_table *t = build("/bin/true"), *back = NULL;
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table_cache_stats st;
	char key[32];
	int i;

	if (!t || !c)
		return;
	cfi_table_cache_set_limits(c, 0, 8);
	for (i = 0; i < 12; i++) {
		snprintf(key, sizeof(key), "e%d", i);
		cfi_table_cache_store(c, key, t);
		/* mtimes are the order: keep them apart */
		usleep(10 * 1000);
	}
	cfi_table_cache_stats(c, &st);
	CHECK(st.entries <= 8 && st.evicted >= 4, "%lu entries (bound 8), %lu evicted",
	      (unsigned long)st.entries, (unsigned long)st.evicted);
	CHECK(cfi_table_cache_load(c, "e11", &back) == 0, "the newest entry was evicted");
	cfi_table_free(back);
	back = NULL;
	CHECK(cfi_table_cache_load(c, "e0", &back) == -1, "the oldest entry was kept");
	cfi_table_cache_close(c);
	/* a cache reopened counts what is there */
	c = cfi_table_cache_open(dir, 1ull << 30);
	cfi_table_cache_stats(c, &st);
	CHECK(st.entries <= 8 && st.entries >= 7, "reopened: %lu entries",
	      (unsigned long)st.entries);
	cfi_table_cache_close(c);
	cfi_table_free(t);
}

/* The figure the cache is for: libLLVM's tables built vs read back. */
static void test_llvm_figure(void)
{
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table *t, *back = NULL;
	double t0, build_ms, load_ms;

	t0 = mono_sec();
	t = build(LLVM_PATH);
	build_ms = (mono_sec() - t0) * 1e3;
	if (!c || !t)
		return;
	cfi_table_cache_store(c, "llvm", t);
	t0 = mono_sec();
	CHECK(cfi_table_cache_load(c, "llvm", &back) == 0 && same_table(t, back),
	      "libLLVM's table does not come back identical");
	load_ms = (mono_sec() - t0) * 1e3;
	printf("FIGURE: libLLVM-14 tables (%u rows): built in %.1f ms, read from the cache in %.1f "
	       "ms\n",
	       t->nr_rows, build_ms, load_ms);
	cfi_table_free(back);
	cfi_table_free(t);
	cfi_table_cache_close(c);
}

/* Waits until a change made now gets a later ctime than t, whatever the clock's grain. */
static void after_ctime(const struct timespec *t)
{
	struct timespec now;

	for (;;) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec > t->tv_nsec))
			return;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
}

/*
 * A file's owner can give another file (or the same one, rewritten) the
 * dev:inode:size:mtime of a cached one: utimes sets mtime, and a tmpfs
 * mounted again numbers its inodes from the start.  Not its ctime.
 */
static void test_file_key(void)
{
	const struct timespec mtime[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	char path[96], k1[CFI_FILE_KEY_LEN], k2[CFI_FILE_KEY_LEN], again[CFI_FILE_KEY_LEN];
	char buf[4096];
	struct stat s1, s2;
	int fd;

	snprintf(path, sizeof(path), "%s.file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0, "create %s", path);
	if (fd < 0)
		return;
	memset(buf, 'a', sizeof(buf));
	CHECK(pwrite(fd, buf, sizeof(buf), 0) == sizeof(buf), "write");
	CHECK(futimens(fd, mtime) == 0 && fstat(fd, &s1) == 0, "futimens");
	CHECK(cfi_file_key(fd, "abcd", k1, sizeof(k1)) == 0, "no key for %s", path);
	CHECK(cfi_file_key(fd, "abcd", again, sizeof(again)) == 0 && !strcmp(k1, again),
	      "the same file, unchanged, keyed %s then %s", k1, again);
	CHECK(!strncmp(k1, "abcd@", 5), "the key %s does not start with the build-id", k1);
	/* other contents, the same size, the mtime set back */
	after_ctime(&s1.st_ctim);
	memset(buf, 'b', sizeof(buf));
	CHECK(pwrite(fd, buf, sizeof(buf), 0) == sizeof(buf), "write");
	CHECK(futimens(fd, mtime) == 0 && fstat(fd, &s2) == 0, "futimens");
	/* the kernel's view: the identity the old key had repeats, the ctime does not */
	CHECK(s1.st_dev == s2.st_dev && s1.st_ino == s2.st_ino && s1.st_size == s2.st_size &&
		  s1.st_mtim.tv_sec == s2.st_mtim.tv_sec &&
		  (s1.st_ctim.tv_sec != s2.st_ctim.tv_sec ||
		   s1.st_ctim.tv_nsec != s2.st_ctim.tv_nsec),
	      "the rewrite did not repeat dev:inode:size:mtime with another ctime");
	CHECK(cfi_file_key(fd, "abcd", k2, sizeof(k2)) == 0, "no key for %s", path);
	CHECK(strcmp(k1, k2) != 0, "rewritten, its mtime set back, the file keeps its key %s", k1);
	/* a build-id of the largest size leaves room for the whole identity */
	memset(buf, 'f', 128);
	buf[128] = 0;
	CHECK(cfi_file_key(fd, buf, k2, sizeof(k2)) == 0, "a 64-byte build-id's key is cut");
	CHECK(cfi_file_key(fd, buf, k2, 64) == -ENAMETOOLONG, "a key cut short is given");
	close(fd);
	unlink(path);
}

/*
 * An object's key from the file itself goes in and out; an entry an older
 * version stored under the old key format (no ctime, no mount) is a miss,
 * not refused and not read as this one.
 */
static void test_file_key_round_trip(void)
{
	struct cfi_table_cache *c = fresh(1ull << 30);
	struct cfi_table *t = build(LIBC_PATH), *back = NULL;
	struct cfi_table_cache_stats before, after;
	char key[CFI_FILE_KEY_LEN], old[CFI_FILE_KEY_LEN];
	struct stat st;
	int fd = open(LIBC_PATH, O_RDONLY);

	CHECK(fd >= 0 && c && t, "setup");
	if (fd < 0 || !c || !t)
		goto out;
	CHECK(cfi_file_key(fd, t->build_id, key, sizeof(key)) == 0 && fstat(fd, &st) == 0,
	      "no key for %s", LIBC_PATH);
	snprintf(old, sizeof(old), "%s@%lu:%lu:%ld:%ld", t->build_id, (unsigned long)st.st_dev,
		 (unsigned long)st.st_ino, (long)st.st_size, (long)st.st_mtime);
	cfi_table_cache_store(c, old, t);
	cfi_table_cache_stats(c, &before);
	CHECK(cfi_table_cache_load(c, key, &back) == -1 && !back,
	      "an entry of the old key format is used under %s", key);
	cfi_table_cache_stats(c, &after);
	CHECK(after.refused == before.refused && after.misses == before.misses + 1,
	      "the old format's entry: %lu refused, %lu misses (want a miss)",
	      (unsigned long)(after.refused - before.refused),
	      (unsigned long)(after.misses - before.misses));
	cfi_table_cache_store(c, key, t);
	CHECK(cfi_table_cache_load(c, key, &back) == 0 && back && same_table(t, back),
	      "the table stored under %s does not come back", key);
out:
	if (fd >= 0)
		close(fd);
	cfi_table_free(back);
	cfi_table_free(t);
	cfi_table_cache_close(c);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(dir, sizeof(dir), "/tmp/cfiprof-tcache.%d", getpid());
	RUN_TEST(test_round_trip);
	RUN_TEST(test_file_key);
	RUN_TEST(test_file_key_round_trip);
	RUN_TEST(test_refuses_bad_entries);
	RUN_TEST(test_refuses_shared_dir);
	RUN_TEST(test_byte_bound);
	RUN_TEST(test_cheap_not_kept);
	RUN_TEST(test_entry_bound);
	RUN_TEST(test_llvm_figure);
	{
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return HARNESS_DONE();
}
