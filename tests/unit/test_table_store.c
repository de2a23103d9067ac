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

#include "common/clock.h"
#include "common/map_window.h"
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

/* Global rule g is t's rule l: a pair's successor by its global id, the same rule. */
static bool rule_match(const struct table_store *ts, uint32_t g, const struct cfi_table *t,
		       uint32_t l)
{
	struct cfi_rule gr, lr;

	if (g >= ts->gr.nr || l >= t->nr_rules)
		return false;
	gr = ts->gr.rules[g];
	lr = t->rules[l];
	if (lr.next_at && !rule_match(ts, gr.next_rule, t, lr.next_rule))
		return false;
	gr.next_rule = lr.next_rule = 0;
	return !memcmp(&gr, &lr, sizeof(gr));
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

		if (g->off != t->rows[i].off || !rule_match(ts, g->rule, t, t->rows[i].rule))
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

/* A rule as a dictionary of its own holds it: a pair with its successor, not its id. */
struct whole_rule {
	struct cfi_rule r, next;
};

static int by_whole_rule(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct whole_rule));
}

/* Distinct rules of t and u together (and rule 0), as one dictionary would hold them. */
static uint32_t distinct_in_both(const struct cfi_table *t, const struct cfi_table *u)
{
	uint32_t n = 0, i, d = 0;
	struct whole_rule *v = calloc(t->nr_rules + u->nr_rules + 1, sizeof(*v));

	for (const struct cfi_table *x = t; v && x; x = x == t ? u : NULL) {
		for (i = 0; i < x->nr_rules; i++, n++) {
			v[n].r = x->rules[i];
			if (v[n].r.next_at)
				v[n].next = x->rules[v[n].r.next_rule];
			v[n].r.next_rule = 0;
		}
	}
	if (!v)
		return 0;
	n++; /* rule 0, zeroed */
	qsort(v, n, sizeof(*v), by_whole_rule);
	for (i = 0; i < n; i++)
		d += !i || memcmp(&v[i], &v[i - 1], sizeof(*v));
	free(v);
	return d;
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

	CHECK(table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, -1, 65536) == 0, "init");
	CHECK(ts.gr.nr == 1, "rule 0 reserved");
	o->id = 5;
	snprintf(o->name, sizeof(o->name), "libc");
	r = table_store_load_table(&ts, o, libc, NULL);
	CHECK(r < 0 && o->state == OBJ_FAILED, "page insert into fd -1 fails: r=%d state %d", r,
	      o->state);
	CHECK(ts.alloc.used == 0 && ts.alloc.nr_free == 1 && o->page_keys == NULL &&
		  ts.stats.objects_failed == 1 && ts.stats.objects_loaded == 0,
	      "failed load gave its rows back: used %u", ts.alloc.used);

	memset(o, 0, sizeof(*o));
	r = table_store_load_table(&ts, o, &empty, NULL);
	CHECK(r == 0 && o->state == OBJ_NO_CFI && ts.alloc.used == 0, "empty table: r=%d", r);
	free(o->page_keys);
	table_store_destroy(&ts);

	/* rows map too small */
	memset(o, 0, sizeof(*o));
	table_store_init(&ts, rows_mem, 10, rules_mem, RULES_MAX, -1, 65536);
	r = table_store_load_table(&ts, o, libc, NULL);
	CHECK(r == -ENOSPC && o->state == OBJ_FAILED && ts.stats.refused[REFUSED_ROWS_FULL] == 1 &&
		  ts.alloc.used == 0,
	      "rows full: r=%d", r);
	table_store_destroy(&ts);

	/* rule dictionary too small */
	memset(o, 0, sizeof(*o));
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, 4, -1, 65536);
	r = table_store_load_table(&ts, o, libc, NULL);
	CHECK(r == -ENOSPC && o->state == OBJ_FAILED && ts.alloc.used == 0 && ts.gr.nr == 1 &&
		  ts.stats.refused[REFUSED_DICTIONARY_FULL] == 1,
	      "rules full: r=%d, %u ids handed out (none: all or nothing)", r, ts.gr.nr);
	table_store_destroy(&ts);
	free(o);

	/* over the build budget: refused, counted apart from failures, frame pointers */
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, -1, 65536);
	o = table_store_acquire(&ts, "key-big", "big.so", build_over_budget, NULL, NULL);
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
		table_store_init(ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, fd, 65536);
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
				 (void *)LIBC_PATH, NULL);
	CHECK(o1 && o1->state == OBJ_LOADED && o1->refs == 1, "libc loaded: state %d",
	      o1 ? (int)o1->state : -1);
	CHECK(o1 && rows_match(&ts, o1, libc), "libc rows remapped into the global dictionary");
	CHECK(o1 && pages_match(fd, o1, libc), "libc page index");
	CHECK(map_entries(fd) == (int)libc->nr_pages, "%d page entries, want %u", map_entries(fd),
	      libc->nr_pages);
	CHECK(ts.alloc.used == libc->nr_rows && ts.stats.pages_used == libc->nr_pages, "used %u",
	      ts.alloc.used);

	o2 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH, NULL);
	CHECK(o2 == o1 && o1->refs == 2 && build_calls == 1, "same key shares one object");

	o3 = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path_counted,
				 (void *)LIBSTDCXX_PATH, NULL);
	CHECK(o3 && o3 != o1 && o3->state == OBJ_LOADED && o3->id != o1->id, "libstdc++ loaded");
	CHECK(o3 && rows_match(&ts, o3, cxx), "libstdc++ rows remapped");
	CHECK(o3 && pages_match(fd, o3, cxx), "libstdc++ page index");
	CHECK(o3 && (o3->first_row >= o1->first_row + o1->nr_rows ||
		     o1->first_row >= o3->first_row + o3->nr_rows),
	      "row ranges disjoint");
	CHECK(rows_match(&ts, o1, libc), "libc rows intact after libstdc++");

	/* the dictionary holds the union of both tables' rules, each once */
	all = malloc((libc->nr_rules + cxx->nr_rules + 1) * sizeof(*all));
	want = distinct_in_both(libc, cxx);
	CHECK(ts.gr.nr == want, "global rules %u, distinct in both tables %u", ts.gr.nr,
	      want);
	CHECK(want < libc->nr_rules + cxx->nr_rules, "the tables share rules (%u + %u -> %u)",
	      libc->nr_rules, cxx->nr_rules, want);
	memcpy(all, rules_mem, ts.gr.nr * sizeof(*all));
	CHECK(distinct_rules(all, ts.gr.nr) == ts.gr.nr, "no rule stored twice");
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
	rules_after = ts.gr.nr;
	build_calls = 0;
	o1 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH, NULL);
	CHECK(build_calls == 1 && o1->state == OBJ_LOADED && ts.gr.nr == rules_after &&
		  rows_match(&ts, o1, libc) && pages_match(fd, o1, libc),
	      "reload: rules %u -> %u", rules_after, ts.gr.nr);
	table_store_release(&ts, o1);

	/* a build failure is an object too, so it is not retried per mapping */
	o1 = table_store_acquire(&ts, "key-missing", "missing", build_path_counted,
				 (void *)"/nonexistent/lib.so", NULL);
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
	o = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path, (void *)LIBC_PATH, NULL);
	CHECK(o->state == OBJ_LOADED && rc.calls == 0, "libc without a cap");
	libc_bytes = table_store_bytes(&ts);
	CHECK(libc_bytes ==
		  ts.alloc.used * sizeof(struct cfi_row) + ts.gr.nr * sizeof(struct cfi_rule) +
		      o->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val)),
	      "table_store_bytes %" PRIu64 " counts rows, rules and pages", libc_bytes);
	rc.held[rc.nr_held++] = o;

	/* libstdc++ does not fit beside libc: libc goes, libstdc++ loads, the cap holds */
	ts.max_bytes = libc_bytes + libc_bytes / 2;
	o = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path,
				(void *)LIBSTDCXX_PATH, NULL);
	CHECK(o->state == OBJ_LOADED && rc.calls == 1 && rc.nr_held == 0,
	      "cap: state %d after %d reclaim calls", o->state, rc.calls);
	CHECK(table_store_bytes(&ts) <= ts.max_bytes && ts.stats.refused[REFUSED_BYTES_FULL] == 0,
	      "cap: %" PRIu64 " bytes in use, cap %" PRIu64, table_store_bytes(&ts), ts.max_bytes);
	rc.held[rc.nr_held++] = o;

	/* nothing else to unload: libc is refused, counted, and libstdc++ stays */
	ts.max_bytes = table_store_bytes(&ts) + libc_bytes / 2;
	rc.calls = 0;
	rc.ts = NULL; /* reclaim must not be asked: refuse before releasing anything */
	ts.reclaim_ctx = &(struct reclaim_ctx){0};
	o = table_store_acquire(&ts, "key-libc2", "libc.so.6", build_path, (void *)LIBC_PATH, NULL);
	CHECK(o->state == OBJ_FAILED && ts.stats.refused[REFUSED_BYTES_FULL] == 1 && rc.nr_held == 1,
	      "nothing to reclaim: state %d, bytes_full %" PRIu64, o->state, ts.stats.refused[REFUSED_BYTES_FULL]);
	table_store_release(&ts, o);

	/* a table larger than the cap itself never unloads others */
	ts.reclaim_ctx = &rc;
	rc.ts = &ts;
	ts.max_bytes = 65536;
	o = table_store_acquire(&ts, "key-libc3", "libc.so.6", build_path, (void *)LIBC_PATH, NULL);
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
				(void *)LIBC_PATH, NULL);
	bytes = table_store_bytes(&ts);
	table_store_release(&ts, o);
	CHECK(ts.stats.idle_now == 1 && table_store_bytes(&ts) == bytes &&
		  map_entries(fd) == (int)o->nr_pages,
	      "released: idle %" PRIu64 ", still loaded", ts.stats.idle_now);
	o2 = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path_counted,
				 (void *)LIBC_PATH, NULL);
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
	o = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path, (void *)LIBC_PATH, NULL);
	table_store_release(&ts, o);
	ts.max_bytes = table_store_bytes(&ts) + table_store_bytes(&ts) / 2;
	rc.calls = 0;
	o = table_store_acquire(&ts, "key-cxx", "libstdc++.so.6", build_path,
				(void *)LIBSTDCXX_PATH, NULL);
	CHECK(o->state == OBJ_LOADED && ts.stats.idle_evicted == 1 && rc.calls == 0 &&
		  ts.stats.idle_now == 0,
	      "idle evicted first: state %d, %d reclaim calls", o->state, rc.calls);
	table_store_release(&ts, o);
	table_store_destroy(&ts);
	close(fd);
}

/*
 * A made-up table: rules 1..nr_rules - 1 distinct (CFA = rsp + base + i),
 * one row per rule, spread over nr_pages pages.
 */
static struct cfi_table *synth_table(uint32_t nr_rules, uint32_t nr_pages, int32_t base)
{
	struct cfi_table *t = calloc(1, sizeof(*t));
	uint32_t i, per_page;

	t->nr_rules = nr_rules;
	t->nr_rows = nr_rules - 1 > nr_pages ? nr_rules - 1 : nr_pages;
	t->nr_pages = nr_pages;
	t->rules = calloc(nr_rules, sizeof(*t->rules));
	t->rows = calloc(t->nr_rows, sizeof(*t->rows));
	t->pages = calloc(nr_pages, sizeof(*t->pages));
	for (i = 1; i < nr_rules; i++)
		t->rules[i] = (struct cfi_rule){.cfa_kind = CFI_CFA_RSP,
						.ra_kind = CFI_REG_AT_CFA,
						.cfa_off = base + (int32_t)i,
						.ra_off = -8};
	per_page = (t->nr_rows + nr_pages - 1) / nr_pages;
	for (i = 0; i < t->nr_rows; i++)
		t->rows[i] = (struct cfi_row){.off = (uint16_t)(i % per_page),
					      .rule = (uint16_t)(1 + i % (nr_rules - 1))};
	for (i = 0; i < nr_pages; i++) {
		uint32_t first = i * per_page;

		t->pages[i] = (struct cfi_page){
		    .page = 0x1000 + i,
		    .first_row = first,
		    .nr_rows = first >= t->nr_rows		  ? 0
			       : t->nr_rows - first < per_page ? t->nr_rows - first
							       : per_page};
	}
	return t;
}

static struct cfi_table *build_synth(void *ctx, int *err)
{
	const uint32_t *spec = ctx; /* rules, pages, base */

	*err = 0;
	return synth_table(spec[0], spec[1], (int32_t)spec[2]);
}

/* Quotas per object and per process: refused, counted by cause, nothing else touched. */
static void test_table_store_quotas(struct cfi_table *libc)
{
	const struct table_quotas *q;
	struct table_charge c1, c2;
	struct obj_entry *o, *lib, *held[8];
	struct table_store ts;
	uint32_t big_rules[3], big_pages[3], small[3], i, n = 0, rules_before;
	char key[32];
	int fd;

	fd = store_with_pages_map(&ts);
	if (fd < 0)
		return;
	q = &ts.quotas;
	CHECK(q->obj_rules == RULES_MAX / 8 && q->proc_rules == RULES_MAX / 4 &&
		  q->obj_pages == 65536 / 16 && q->proc_rows == ROWS_MAX / 4 * 3,
	      "quotas from the capacities: %u rules, %u pages per object", q->obj_rules,
	      q->obj_pages);
	CHECK(libc->nr_rules < q->obj_rules / 4 && libc->nr_pages < q->obj_pages / 4,
	      "libc (%u rules, %u pages) is far below the per-object quotas", libc->nr_rules,
	      libc->nr_pages);
	lib = table_store_acquire(&ts, "key-libc", "libc.so.6", build_path, (void *)LIBC_PATH,
				  NULL);
	rules_before = ts.gr.live;

	/* one object over the rules quota, one over the pages quota: refused, logged, counted */
	big_rules[0] = q->obj_rules + 1, big_rules[1] = 1, big_rules[2] = 100000;
	big_pages[0] = 2, big_pages[1] = q->obj_pages + 1, big_pages[2] = 200000;
	o = table_store_acquire(&ts, "key-rules", "rules.so", build_synth, big_rules, NULL);
	CHECK(o && o->state == OBJ_FAILED && ts.stats.refused[REFUSED_RULES_QUOTA] == 1,
	      "over the rules quota: state %d", o ? (int)o->state : -1);
	table_store_release(&ts, o);
	o = table_store_acquire(&ts, "key-pages", "pages.so", build_synth, big_pages, NULL);
	CHECK(o && o->state == OBJ_FAILED && ts.stats.refused[REFUSED_PAGES_QUOTA] == 1,
	      "over the pages quota: state %d", o ? (int)o->state : -1);
	table_store_release(&ts, o);
	CHECK(ts.gr.live == rules_before && ts.alloc.used == lib->nr_rows &&
		  map_entries(fd) == (int)lib->nr_pages && rows_match(&ts, lib, libc),
	      "refused objects took nothing: %u rules, %u rows", ts.gr.live, ts.alloc.used);

	/* one process: objects each under the object quota, together over the process's */
	CHECK(table_charge_begin(&ts, &c1) == 0, "charge");
	small[0] = q->obj_rules - 1, small[1] = 4;
	for (i = 0; i < 8; i++) {
		small[2] = 300000 + i * 10000;
		snprintf(key, sizeof(key), "key-small-%u", i);
		o = table_store_acquire(&ts, key, key, build_synth, small, &c1);
		if (o)
			held[n++] = o;
	}
	CHECK(n == 2 && c1.refused == 6 && c1.cause == REFUSED_PROCESS_RULES &&
		  ts.stats.refused[REFUSED_PROCESS_RULES] == 6,
	      "process quota: %u of 8 objects loaded (want 2), %u refused", n, c1.refused);
	CHECK(c1.rules <= q->proc_rules && ts.gr.live - rules_before == 2 * (q->obj_rules - 2),
	      "the process holds %u dictionary ids (quota %u)", c1.rules, q->proc_rules);
	/* mapped again by the same process: counted once */
	o = table_store_acquire(&ts, "key-small-0", "again", build_synth, small, &c1);
	CHECK(o == held[0] && c1.refused == 6, "an object mapped twice is charged once");
	table_store_release(&ts, o);
	/* another process (with libc, kept from its last load) maps what the first was refused */
	table_charge_begin(&ts, &c2);
	table_charge_keep(&ts, &c2, lib);
	CHECK(c2.rules == libc->nr_rules && c2.rows == libc->nr_rows,
	      "a kept object is charged: %u rules", c2.rules);
	small[2] = 300000 + 7 * 10000;
	o = table_store_acquire(&ts, "key-small-7", "key-small-7", build_synth, small, &c2);
	CHECK(o && o->state == OBJ_LOADED && c2.refused == 0,
	      "another process loads what one was refused");
	table_store_release(&ts, o);
	/* a process already holding an object over its quota is refused it, with no reference */
	c2.rules = q->proc_rules;
	o = table_store_acquire(&ts, "key-small-1", "shared", build_synth, small, &c2);
	CHECK(!o && held[1]->refs == 1 && c2.refused == 1,
	      "a loaded object is refused to a process over its quota");
	table_charge_end(&c1);
	table_charge_end(&c2);
	while (n)
		table_store_release(&ts, held[--n]);
	table_store_release(&ts, lib);
	CHECK(ts.gr.live == 1 && ts.alloc.used == 0 && map_entries(fd) == 0,
	      "all released: %u rules in use, %u rows", ts.gr.live, ts.alloc.used);
	table_store_destroy(&ts);
	close(fd);
}

/*
 * Rule ids and rows no loaded table uses are reused, but only after their
 * quarantine: a walk may still read them.  A full map waits for it rather
 * than refusing a table that fits afterwards.
 */
static void test_table_store_quarantine(void)
{
	uint32_t a[3] = {1000, 4, 500000}, b[3] = {1000, 4, 700000};
	const uint64_t grace = 50ull * 1000 * 1000;
	struct obj_entry *o, *o2;
	struct table_store ts;
	struct cfi_table *tb;
	uint64_t t0, waited;
	uint32_t first;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pages", sizeof(struct cfi_page_key),
				sizeof(struct cfi_page_val), 65536, NULL);

	/* room for one such table: 1000 rules (id 0 included), 999 rows */
	CHECK(fd >= 0 && table_store_init(&ts, rows_mem, 1000, rules_mem, 1000, fd, 65536) == 0,
	      "store");
	ts.quotas = (struct table_quotas){0};
	ts.alloc.grace_ns = ts.gr.grace_ns = grace;
	o = table_store_acquire(&ts, "key-a", "a.so", build_synth, a, NULL);
	CHECK(o && o->state == OBJ_LOADED && ts.gr.live == 1000, "a loaded: %u rules",
	      ts.gr.live);
	first = o->first_row;
	/* from before the release: the quarantine starts inside it, however slow the machine */
	t0 = mono_ns();
	table_store_release(&ts, o);
	CHECK(ts.gr.live == 1 && ts.gr.nr_unused == 999 && ts.alloc.quarantined == 999 &&
		  ts.alloc.used == 0,
	      "released: %u ids unused, %u rows quarantined", ts.gr.nr_unused,
	      ts.alloc.quarantined);
	CHECK(row_alloc_get(&ts.alloc, 1) >= 999 || row_alloc_get(&ts.alloc, 1) == -1,
	      "quarantined rows are not handed out");

	/* the same rules again: their ids are taken back at once, the rows wait */
	o = table_store_acquire(&ts, "key-a2", "a2.so", build_synth, a, NULL);
	waited = mono_ns() - t0;
	CHECK(o && o->state == OBJ_LOADED && ts.gr.nr_unused == 0 && ts.stats.rules_reused == 0,
	      "a again: state %d, %u unused, %" PRIu64 " reused", o ? (int)o->state : -1,
	      ts.gr.nr_unused, ts.stats.rules_reused);
	CHECK(waited >= grace - grace / 10 && o && o->first_row == first,
	      "a again got the quarantined rows after %.1f ms (grace %.0f ms)", waited / 1e6,
	      grace / 1e6);
	t0 = mono_ns();
	table_store_release(&ts, o);

	/* other rules: the full dictionary waits for the quarantine, then reuses every id */
	o2 = table_store_acquire(&ts, "key-b", "b.so", build_synth, b, NULL);
	waited = mono_ns() - t0;
	CHECK(o2 && o2->state == OBJ_LOADED && ts.stats.rules_reused == 999 && ts.gr.nr == 1000 &&
		  ts.stats.refused[REFUSED_DICTIONARY_FULL] == 0 &&
		  ts.stats.refused[REFUSED_ROWS_FULL] == 0,
	      "b: state %d, %" PRIu64 " ids reused, refused %" PRIu64 " + %" PRIu64,
	      o2 ? (int)o2->state : -1, ts.stats.rules_reused,
	      ts.stats.refused[REFUSED_DICTIONARY_FULL], ts.stats.refused[REFUSED_ROWS_FULL]);
	/* the upper bound: it does not wait for ever (a slow machine stretches only the build) */
	CHECK(waited >= grace - grace / 10 && waited < 100 * grace,
	      "b waited %.1f ms for the quarantine (grace %.0f ms)", waited / 1e6, grace / 1e6);
	tb = synth_table(b[0], b[1], (int32_t)b[2]);
	CHECK(o2 && rows_match(&ts, o2, tb), "b's rows read b's rules through the reused ids");
	cfi_table_free(tb);
	/*
	 * A table that would not fit even after the quarantine is refused at
	 * once: with a grace of a minute, waiting for it would take that long.
	 */
	ts.alloc.grace_ns = ts.gr.grace_ns = 60 * 1000000000ull;
	t0 = mono_ns();
	o = table_store_acquire(&ts, "key-c", "c.so", build_synth, a, NULL);
	CHECK(o && o->state == OBJ_FAILED && ts.stats.refused[REFUSED_DICTIONARY_FULL] == 1 &&
		  mono_ns() - t0 < ts.gr.grace_ns / 2,
	      "c refused without waiting: state %d", o ? (int)o->state : -1);
	table_store_release(&ts, o);
	table_store_release(&ts, o2);
	table_store_destroy(&ts);
	close(fd);
}

/*
 * The rows map mapped as far as used (common/map_window): the store maps the
 * rows it is about to write.  A load that fails after that (its pages refused:
 * fd -1) still fails: the cover's success once made it return 0.
 */
static void test_table_store_window(struct cfi_table *libc)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ts_rows", 4, 8, ROWS_MAX / 2, &opts);
	struct obj_entry *o = calloc(1, sizeof(*o));
	struct map_window w;
	struct table_store ts;
	int r;

	if (fd < 0 || !o || map_window_init(&w, fd, (size_t)ROWS_MAX * sizeof(struct cfi_row))) {
		CHECK(0, "an mmap()able rows array and its window: %s (root?)", strerror(errno));
		goto out;
	}
	CHECK(table_store_init(&ts, w.base, ROWS_MAX, rules_mem, RULES_MAX, -1, 65536) == 0,
	      "init");
	ts.rows_window = &w;
	o->id = 5;
	r = table_store_load_table(&ts, o, libc, NULL);
	CHECK(r < 0 && o->state == OBJ_FAILED && ts.alloc.used == 0,
	      "page insert into fd -1 fails with the rows mapped: r=%d state %d", r, o->state);
	CHECK(w.mapped >= (size_t)libc->nr_rows * sizeof(struct cfi_row),
	      "%zu bytes mapped for %u rows", w.mapped, libc->nr_rows);
	free(o->page_keys);
	table_store_destroy(&ts);
	map_window_free(&w);
out:
	free(o);
	if (fd >= 0)
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
		RUN_TEST_AS("window", test_table_store_window(libc));
		RUN_TEST_AS("reclaim", test_table_store_reclaim());
		RUN_TEST_AS("idle", test_table_store_idle());
		RUN_TEST_AS("quotas", test_table_store_quotas(libc));
		RUN_TEST_AS("quarantine", test_table_store_quarantine());
	}
	cfi_table_free(libc);
	cfi_table_free(cxx);
	table_mem_free();
	return HARNESS_DONE();
}
