// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writes compiled tables into the BPF maps.  Rows and rules go straight into
 * the mmap()ed arrays (no syscall per row); each table's local rule ids are
 * remapped into one global dictionary so rows stay 4 bytes.  Rows are written
 * before the page index that makes them reachable, and the page index is
 * removed before the rows are freed, so the walker never sees half a table.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hash.h"
#include "user/track/table_store.h"

static uint32_t hash_rule(const struct cfi_rule *r)
{
	uint64_t a, b;

	memcpy(&a, r, 8);
	memcpy(&b, (const char *)r + 8, 8);
	a = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(a >> 32);
}

int table_store_init(struct table_store *ts, struct cfi_row *rows, uint32_t rows_max,
		     struct cfi_rule *rules, uint32_t rules_max, int pages_fd)
{
	memset(ts, 0, sizeof(*ts));
	ts->rows = rows;
	ts->rules = rules;
	ts->rules_max = rules_max;
	ts->pages_fd = pages_fd;
	ts->nr_buckets = 1024;
	ts->buckets = calloc(ts->nr_buckets, sizeof(*ts->buckets));
	ts->nr_rule_slots = 1;
	while (ts->nr_rule_slots < rules_max * 2)
		ts->nr_rule_slots <<= 1;
	ts->rule_slots = calloc(ts->nr_rule_slots, sizeof(*ts->rule_slots));
	if (!ts->buckets || !ts->rule_slots || row_alloc_init(&ts->alloc, rows_max)) {
		table_store_destroy(ts);
		return -ENOMEM;
	}
	ts->stats.rows_total = rows_max;
	ts->next_id = 1;
	/* global id 0 is "no information", as in every table */
	memset(&ts->rules[0], 0, sizeof(ts->rules[0]));
	ts->rule_slots[hash_rule(&ts->rules[0]) & (ts->nr_rule_slots - 1)] = 1;
	ts->nr_rules = 1;
	return 0;
}

void table_store_destroy(struct table_store *ts)
{
	uint32_t i;

	for (i = 0; ts->buckets && i < ts->nr_buckets; i++) {
		struct obj_entry *o = ts->buckets[i], *n;

		for (; o; o = n) {
			n = o->next;
			free(o->page_keys);
			free(o);
		}
	}
	free(ts->buckets);
	free(ts->rule_slots);
	row_alloc_destroy(&ts->alloc);
	memset(ts, 0, sizeof(*ts));
}

/* Global id of a rule, adding it to the rules map if new; -1 when the map is full. */
static int global_rule(struct table_store *ts, const struct cfi_rule *r)
{
	uint32_t mask = ts->nr_rule_slots - 1, h;

	for (h = hash_rule(r) & mask; ts->rule_slots[h]; h = (h + 1) & mask) {
		if (!memcmp(&ts->rules[ts->rule_slots[h] - 1], r, sizeof(*r)))
			return (int)ts->rule_slots[h] - 1;
	}
	if (ts->nr_rules >= ts->rules_max)
		return -1;
	ts->rules[ts->nr_rules] = *r;
	ts->rule_slots[h] = ++ts->nr_rules;
	ts->stats.rules_used = ts->nr_rules;
	return (int)ts->nr_rules - 1;
}

static struct obj_entry *oldest_idle(struct table_store *ts);
static void unload_free(struct table_store *ts, struct obj_entry *o);

static uint64_t table_bytes(uint64_t rows, uint64_t rules, uint64_t pages)
{
	return rows * sizeof(struct cfi_row) + rules * sizeof(struct cfi_rule) +
	       pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
}

uint64_t table_store_bytes(const struct table_store *ts)
{
	return table_bytes(ts->stats.rows_used, ts->stats.rules_used, ts->stats.pages_used);
}

/*
 * Rows for t, unloading the least recently used tables while they do not fit
 * (max_bytes, or no free range in the rows map); -1 when they cannot.
 */
static int64_t alloc_rows(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t)
{
	uint64_t need = table_bytes(t->nr_rows, 0, t->nr_pages);
	struct obj_entry *idle;
	int64_t first;

	/* never unload others for a table that could not fit an empty store */
	if (t->nr_rows > ts->alloc.total || (ts->max_bytes && need > ts->max_bytes))
		goto full;
	for (;;) {
		if (!ts->max_bytes || table_store_bytes(ts) + need <= ts->max_bytes) {
			first = row_alloc_get(&ts->alloc, t->nr_rows);
			if (first >= 0)
				return first;
		}
		/* idle tables go before any process loses its own */
		idle = oldest_idle(ts);
		if (idle) {
			ts->stats.idle_now--;
			ts->stats.idle_evicted++;
			unload_free(ts, idle);
			continue;
		}
		if (!ts->reclaim || !ts->reclaim(ts->reclaim_ctx))
			break;
	}
full:
	if (ts->max_bytes && table_store_bytes(ts) + need > ts->max_bytes) {
		ts->stats.bytes_full++;
		fprintf(stderr, "cfiprof: %s: table bytes cap reached (%llu bytes needed, %llu of %llu in use)\n",
			o->name, (unsigned long long)need, (unsigned long long)table_store_bytes(ts),
			(unsigned long long)ts->max_bytes);
	} else {
		ts->stats.rows_full++;
		fprintf(stderr, "cfiprof: %s: rows map full (%u rows needed, %u of %u in use)\n",
			o->name, t->nr_rows, ts->alloc.used, ts->alloc.total);
	}
	return -1;
}

static void unload_pages(struct table_store *ts, struct obj_entry *o, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		bpf_map_delete_elem(ts->pages_fd, &o->page_keys[i]);
}

int table_store_load_table(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t)
{
	uint16_t *remap = NULL;
	int64_t first;
	uint32_t i;
	int err = 0, id;

	if (!t->nr_rows) {
		o->state = OBJ_NO_CFI;
		return 0;
	}
	remap = malloc(t->nr_rules * sizeof(*remap));
	o->page_keys = calloc(t->nr_pages, sizeof(*o->page_keys));
	if (!remap || !o->page_keys) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < t->nr_rules; i++) {
		id = global_rule(ts, &t->rules[i]);
		if (id < 0) {
			fprintf(stderr, "cfiprof: %s: rule dictionary full (%u rules)\n", o->name,
				ts->rules_max);
			err = -ENOSPC;
			goto fail;
		}
		remap[i] = (uint16_t)id;
	}
	first = alloc_rows(ts, o, t);
	if (first < 0) {
		err = -ENOSPC;
		goto fail;
	}
	for (i = 0; i < t->nr_rows; i++) {
		ts->rows[first + i].off = t->rows[i].off;
		ts->rows[first + i].rule = remap[t->rows[i].rule];
	}
	o->first_row = (uint32_t)first;
	o->nr_rows = t->nr_rows;
	for (i = 0; i < t->nr_pages; i++) {
		struct cfi_page_val v = {.first_row = (uint32_t)first + t->pages[i].first_row,
					 .nr_rows = t->pages[i].nr_rows};

		o->page_keys[i].obj_id = o->id;
		o->page_keys[i].page = (uint32_t)t->pages[i].page;
		if (bpf_map_update_elem(ts->pages_fd, &o->page_keys[i], &v, BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "cfiprof: %s: page index map full: %s\n", o->name,
				strerror(errno));
			unload_pages(ts, o, i);
			row_alloc_put(&ts->alloc, o->first_row, o->nr_rows);
			goto fail;
		}
	}
	o->nr_pages = t->nr_pages;
	o->bytes = t->stats.bytes_total;
	o->build_ns = t->stats.build_ns;
	o->state = OBJ_LOADED;
	ts->stats.objects_loaded++;
	ts->stats.rows_used = ts->alloc.used;
	ts->stats.pages_used += t->nr_pages;
	if (ts->stats.rows_used > ts->stats.rows_peak)
		ts->stats.rows_peak = ts->stats.rows_used;
	if (ts->stats.pages_used > ts->stats.pages_peak)
		ts->stats.pages_peak = ts->stats.pages_used;
	ts->stats.build_ns_total += t->stats.build_ns;
	free(remap);
	return 0;
fail:
	free(remap);
	free(o->page_keys);
	o->page_keys = NULL;
	o->nr_rows = 0;
	o->state = OBJ_FAILED;
	ts->stats.objects_failed++;
	return err;
}

struct obj_entry *table_store_acquire(struct table_store *ts, const char *key, const char *name,
				      table_build_fn build, void *ctx)
{
	uint32_t b = hash_str(key) & (ts->nr_buckets - 1);
	struct obj_entry *o;
	struct cfi_table *t;
	int err = 0;

	for (o = ts->buckets[b]; o; o = o->next) {
		if (!strcmp(o->key, key)) {
			if (!o->refs++) {
				ts->stats.idle_now--;
				ts->stats.idle_reused++;
			}
			return o;
		}
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	snprintf(o->key, sizeof(o->key), "%s", key);
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->id = ts->next_id++;
	o->refs = 1;
	t = build(ctx, &err);
	if (!t) {
		o->state = err == CFI_ERR_NO_CFI ? OBJ_NO_CFI : OBJ_FAILED;
		if (o->state == OBJ_NO_CFI)
			ts->stats.objects_no_cfi++;
		else if (err == CFI_ERR_BUDGET)
			ts->stats.objects_over_budget++;
		else
			ts->stats.objects_failed++;
		if (o->state == OBJ_FAILED || ts->verbose)
			fprintf(stderr, "cfiprof: %s: %s: using frame pointers\n", name,
				cfi_strerror(err));
	} else {
		table_store_load_table(ts, o, t);
		cfi_table_free(t);
	}
	o->next = ts->buckets[b];
	ts->buckets[b] = o;
	return o;
}

/* Takes an object already unlinked from its bucket out of the maps and frees it. */
static void drop_obj(struct table_store *ts, struct obj_entry *o)
{
	if (o->state == OBJ_LOADED) {
		unload_pages(ts, o, o->nr_pages);
		row_alloc_put(&ts->alloc, o->first_row, o->nr_rows);
		ts->stats.rows_used = ts->alloc.used;
		ts->stats.pages_used -= o->nr_pages;
		ts->stats.objects_unloaded++;
	}
	free(o->page_keys);
	free(o);
}

static void unload_free(struct table_store *ts, struct obj_entry *o)
{
	struct obj_entry **pp = &ts->buckets[hash_str(o->key) & (ts->nr_buckets - 1)];

	while (*pp && *pp != o)
		pp = &(*pp)->next;
	if (*pp)
		*pp = o->next;
	drop_obj(ts, o);
}

void table_store_release(struct table_store *ts, struct obj_entry *o)
{
	if (!o || --o->refs > 0)
		return;
	if (ts->idle_ttl_ns) {
		o->idle_since_ns = mono_ns();
		ts->stats.idle_now++;
		return;
	}
	unload_free(ts, o);
}

/* The object idle the longest, NULL if none is idle. */
static struct obj_entry *oldest_idle(struct table_store *ts)
{
	struct obj_entry *o, *best = NULL;
	uint32_t b;

	if (!ts->stats.idle_now)
		return NULL;
	for (b = 0; b < ts->nr_buckets; b++) {
		for (o = ts->buckets[b]; o; o = o->next) {
			if (!o->refs && (!best || o->idle_since_ns < best->idle_since_ns))
				best = o;
		}
	}
	return best;
}

void table_store_expire(struct table_store *ts, uint64_t now_ns)
{
	uint32_t b;

	for (b = 0; ts->stats.idle_now && b < ts->nr_buckets; b++) {
		struct obj_entry **pp = &ts->buckets[b];

		while (*pp) {
			struct obj_entry *o = *pp;

			if (o->refs || now_ns - o->idle_since_ns < ts->idle_ttl_ns) {
				pp = &o->next;
				continue;
			}
			*pp = o->next;
			ts->stats.idle_now--;
			ts->stats.idle_expired++;
			drop_obj(ts, o);
		}
	}
}
