// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table store: objects shared by key, rows and pages in the global arrays
 * and the BPF map equal to each table's own, one rule dictionary, reclaim
 * when over the cap, idle objects kept, reused, expired and evicted first.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/table_mem.h"
#include "user/track/table_store.h"

#define LIBC_PATH      "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX_PATH "/lib/x86_64-linux-gnu/libstdc++.so.6"

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
	CHECK(libc_bytes ==
		  ts.alloc.used * sizeof(struct cfi_row) + ts.nr_rules * sizeof(struct cfi_rule) +
		      o->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val)),
	      "table_store_bytes %" PRIu64 " counts rows, rules and pages", libc_bytes);
	rc.held[rc.nr_held++] = o;

	/* libstdc++ does not fit beside libc: libc goes, libstdc++ loads, the cap holds */
	ts.max_bytes = libc_bytes + libc_bytes / 2;
	o = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path,
				(void *)LIBSTDCXX_PATH);
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

int main(int argc, char **argv)
{
	struct cfi_table *libc = NULL, *cxx = NULL;
	int r1, r2;

	harness_init(argc, argv);
	if (!table_mem_alloc())
		return 2;
	/* built once, compared with in every test */
	r1 = cfi_table_build_file(LIBC_PATH, NULL, &libc, NULL);
	r2 = cfi_table_build_file(LIBSTDCXX_PATH, NULL, &cxx, NULL);
	CHECK(r1 == 0 && r2 == 0 && libc && cxx && libc->nr_rows > 1000 && cxx->nr_rows > 1000,
	      "build libc %d, libstdc++ %d", r1, r2);
	if (libc && cxx) {
		RUN_TEST_AS("no_bpf", test_table_store_no_bpf(libc));
		RUN_TEST_AS("bpf", test_table_store_bpf(libc, cxx));
		RUN_TEST_AS("reclaim", test_table_store_reclaim());
		RUN_TEST_AS("idle", test_table_store_idle());
	}
	cfi_table_free(libc);
	cfi_table_free(cxx);
	table_mem_free();
	return HARNESS_DONE();
}
