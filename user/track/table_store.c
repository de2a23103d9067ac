// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writes compiled tables into the BPF maps.  Rows and rules go straight into
 * the mmap()ed arrays (no syscall per row); each table's local rule ids are
 * remapped into one global dictionary (global_rules) so rows stay 4 bytes.
 * Rows are written before the page index that makes them reachable, and the
 * page index is removed before the rows are retired, so the walker never sees
 * half a table; retired rows and rule ids are reused only after a quarantine.
 *
 * Every process on the host may be hostile, and these maps are shared by all
 * of them: an object, and a process's objects together, may hold only a share
 * of each (table_quotas); what is refused is counted by cause and walked with
 * frame pointers, and everything else keeps its tables.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/escape.h"
#include "common/hash.h"
#include "common/map_window.h"
#include "user/track/table_store.h"

static const char *const refusal_names[REFUSED_MAX] = {
    [REFUSED_RULES_QUOTA] = "rules_quota",
    [REFUSED_PAGES_QUOTA] = "pages_quota",
    [REFUSED_ROWS_QUOTA] = "rows_quota",
    [REFUSED_PROCESS_RULES] = "process_rules_quota",
    [REFUSED_PROCESS_PAGES] = "process_pages_quota",
    [REFUSED_PROCESS_ROWS] = "process_rows_quota",
    [REFUSED_DICTIONARY_FULL] = "dictionary_full",
    [REFUSED_PAGES_FULL] = "pages_full",
    [REFUSED_ROWS_FULL] = "rows_full",
    [REFUSED_BYTES_FULL] = "bytes_full",
};

const char *table_refusal_name(enum table_refusal r)
{
	return r < REFUSED_MAX ? refusal_names[r] : "unknown";
}

static bool is_process_refusal(enum table_refusal r)
{
	return r == REFUSED_PROCESS_RULES || r == REFUSED_PROCESS_PAGES ||
	       r == REFUSED_PROCESS_ROWS;
}

/*
 * Quotas, measured on Debian 12: every ELF in /usr/lib/x86_64-linux-gnu and
 * /usr/bin (cfiprof tables --json): the most distinct rules in one object
 * is 2,758 (libLLVM-15), the most pages 809 (libLLVM-15), the most rows
 * 909,530 (libclang-cpp-14); clang-14 maps libclang-cpp and libLLVM, 1.8M
 * rows and ~6k distinct rules together.  An object may take 1/8 of the
 * dictionary (8,192 of 65,536: 3x the largest), 1/16 of the page index
 * (4,096 of the default 65,536 pages, 256 MiB of code: 5x) and half the rows
 * map (2M of the default 4M: 2.2x); a process's objects together 1/4 of the dictionary and
 * of the page index and 3/4 of the rows: whatever one process holds, the
 * others keep at least a quarter of every map.
 */
static void set_quotas(struct table_store *ts, uint32_t rows_max, uint32_t rules_max,
		       uint32_t pages_max)
{
	ts->quotas = (struct table_quotas){
	    .obj_rules = rules_max / 8,
	    .obj_pages = pages_max / 16,
	    .obj_rows = rows_max / 2,
	    .proc_rules = rules_max / 4,
	    .proc_pages = pages_max / 4,
	    .proc_rows = rows_max / 4 * 3,
	};
}

int table_store_init(struct table_store *ts, struct cfi_row *rows, uint32_t rows_max,
		     struct cfi_rule *rules, uint32_t rules_max, int pages_fd, uint32_t pages_max)
{
	memset(ts, 0, sizeof(*ts));
	ts->rows = rows;
	ts->pages_fd = pages_fd;
	ts->pages_max = pages_max;
	ts->nr_buckets = 1024;
	ts->buckets = calloc(ts->nr_buckets, sizeof(*ts->buckets));
	if (!ts->buckets || row_alloc_init(&ts->alloc, rows_max) ||
	    global_rules_init(&ts->gr, rules, rules_max)) {
		table_store_destroy(ts);
		return -ENOMEM;
	}
	ts->alloc.grace_ns = ts->gr.grace_ns = TABLE_QUARANTINE_NS;
	set_quotas(ts, rows_max, rules_max, pages_max);
	ts->stats.rows_total = rows_max;
	ts->stats.rules_total = rules_max;
	ts->stats.pages_total = pages_max;
	ts->stats.rules_used = ts->gr.live;
	ts->next_id = 1;
	return 0;
}

static void free_obj(struct obj_entry *o)
{
	free(o->page_keys);
	free(o->rule_ids);
	free(o);
}

void table_store_destroy(struct table_store *ts)
{
	uint32_t i;

	for (i = 0; ts->buckets && i < ts->nr_buckets; i++) {
		struct obj_entry *o = ts->buckets[i], *n;

		for (; o; o = n) {
			n = o->next;
			free_obj(o);
		}
	}
	free(ts->buckets);
	global_rules_destroy(&ts->gr);
	row_alloc_destroy(&ts->alloc);
	memset(ts, 0, sizeof(*ts));
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

static void update_usage(struct table_store *ts)
{
	ts->stats.rows_used = ts->alloc.used;
	ts->stats.rows_quarantined = ts->alloc.quarantined;
	ts->stats.rules_used = ts->gr.live;
	ts->stats.rules_reused = ts->gr.reused;
	if (ts->stats.rows_used > ts->stats.rows_peak)
		ts->stats.rows_peak = ts->stats.rows_used;
	if (ts->stats.pages_used > ts->stats.pages_peak)
		ts->stats.pages_peak = ts->stats.pages_used;
}

/* ---- what a process's objects hold together ---- */

int table_charge_begin(struct table_store *ts, struct table_charge *c)
{
	memset(c, 0, sizeof(*c));
	c->serial = ++ts->charge_serial;
	c->cause = REFUSED_MAX;
	c->rule_bits = calloc((ts->gr.max + 63) / 64, sizeof(*c->rule_bits));
	return c->rule_bits ? 0 : -ENOMEM;
}

void table_charge_end(struct table_charge *c)
{
	free(c->rule_bits);
	c->rule_bits = NULL;
}

static bool charged_id(const struct table_charge *c, uint32_t id)
{
	return id != GLOBAL_RULE_NONE && (c->rule_bits[id / 64] >> (id % 64) & 1);
}

/* The process quota an object of these rows, pages and rule ids would break; REFUSED_MAX if none.
 */
static enum table_refusal charge_check(const struct table_store *ts, const struct table_charge *c,
				       uint32_t rows, uint32_t pages, const uint32_t *ids,
				       uint32_t nr_ids)
{
	const struct table_quotas *q = &ts->quotas;
	uint32_t i, rules = 0;

	if (!c)
		return REFUSED_MAX;
	for (i = 0; i < nr_ids; i++)
		rules += !charged_id(c, ids[i]);
	if (q->proc_rules && c->rules + rules > q->proc_rules)
		return REFUSED_PROCESS_RULES;
	if (q->proc_pages && (uint64_t)c->pages + pages > q->proc_pages)
		return REFUSED_PROCESS_PAGES;
	if (q->proc_rows && (uint64_t)c->rows + rows > q->proc_rows)
		return REFUSED_PROCESS_ROWS;
	return REFUSED_MAX;
}

static void charge_add(struct table_charge *c, struct obj_entry *o)
{
	uint32_t i;

	if (!c || o->state != OBJ_LOADED || o->charge_serial == c->serial)
		return;
	o->charge_serial = c->serial;
	c->rows += o->nr_rows;
	c->pages += o->nr_pages;
	for (i = 0; i < o->nr_rule_ids; i++) {
		uint32_t id = o->rule_ids[i];

		if (!charged_id(c, id)) {
			c->rule_bits[id / 64] |= 1ull << (id % 64);
			c->rules++;
		}
	}
}

void table_charge_keep(struct table_store *ts, struct table_charge *c, struct obj_entry *o)
{
	(void)ts;
	if (o)
		charge_add(c, o);
}

static void refuse_for_process(struct table_store *ts, struct table_charge *c,
			       enum table_refusal why)
{
	ts->stats.refused[why]++;
	if (!c->refused++)
		c->cause = why;
}

/* ---- loading ---- */

/* An object quota t breaks, or a map it could never fit even empty; REFUSED_MAX if none. */
static enum table_refusal object_quota(const struct table_store *ts, const struct cfi_table *t)
{
	const struct table_quotas *q = &ts->quotas;

	if (t->nr_rows > ts->alloc.total)
		return REFUSED_ROWS_FULL;
	if (ts->max_bytes && table_bytes(t->nr_rows, 0, t->nr_pages) > ts->max_bytes)
		return REFUSED_BYTES_FULL;
	if (q->obj_rules && t->nr_rules > q->obj_rules)
		return REFUSED_RULES_QUOTA;
	if (q->obj_pages && t->nr_pages > q->obj_pages)
		return REFUSED_PAGES_QUOTA;
	if (q->obj_rows && t->nr_rows > q->obj_rows)
		return REFUSED_ROWS_QUOTA;
	if (t->nr_rules > ts->gr.max)
		return REFUSED_DICTIONARY_FULL;
	if (ts->pages_max && t->nr_pages > ts->pages_max)
		return REFUSED_PAGES_FULL;
	return REFUSED_MAX;
}

/*
 * t's rule i as the global dictionary holds it, a pair's successor (an older
 * rule of t: ids[] has it already) by its global id; false while that
 * successor is not in the dictionary (then neither is the pair).
 */
static bool global_form(const struct cfi_table *t, const uint32_t *ids, uint32_t i,
			struct cfi_rule *out)
{
	*out = t->rules[i];
	if (!out->next_at)
		return true;
	if (ids[out->next_rule] == GLOBAL_RULE_NONE)
		return false;
	out->next_rule = (uint16_t)ids[out->next_rule];
	return true;
}

/*
 * Finds t's rules in the dictionary (ids[i], GLOBAL_RULE_NONE for new ones)
 * and rows for it, unloading idle tables, then the least recently used
 * tables' owners, while the dictionary, the page index, max_bytes or the rows
 * map have no room; retired rows that would make room are waited for instead.
 * REFUSED_MAX when *first holds its rows, else why not.
 */
static enum table_refusal make_room(struct table_store *ts, const struct cfi_table *t,
				    uint32_t *ids, struct table_charge *charge, int64_t *first)
{
	uint64_t need = table_bytes(t->nr_rows, 0, t->nr_pages), due;
	struct obj_entry *idle;
	enum table_refusal why;
	uint32_t i, fresh, revived;
	struct cfi_rule r;

	for (;;) {
		row_alloc_expire(&ts->alloc, mono_ns());
		update_usage(ts);
		for (i = fresh = revived = 0; i < t->nr_rules; i++) {
			ids[i] = global_form(t, ids, i, &r) ? global_rules_find(&ts->gr, &r)
							    : GLOBAL_RULE_NONE;
			if (ids[i] == GLOBAL_RULE_NONE)
				fresh++;
			else if (!ts->gr.refs[ids[i]])
				revived++;
		}
		/* a process over its share never makes others unload anything */
		why = charge_check(ts, charge, t->nr_rows, t->nr_pages, ids, t->nr_rules);
		if (why != REFUSED_MAX)
			return why;
		if (fresh + revived > global_rules_room(&ts->gr)) {
			why = REFUSED_DICTIONARY_FULL;
		} else if (ts->pages_max && ts->stats.pages_used + t->nr_pages > ts->pages_max) {
			why = REFUSED_PAGES_FULL;
		} else if (ts->max_bytes && table_store_bytes(ts) + need > ts->max_bytes) {
			why = REFUSED_BYTES_FULL;
		} else {
			*first = row_alloc_get(&ts->alloc, t->nr_rows);
			if (*first >= 0)
				return REFUSED_MAX;
			due = row_alloc_fits_after(&ts->alloc, t->nr_rows);
			if (due) {
				mono_sleep_until(due);
				continue;
			}
			why = REFUSED_ROWS_FULL;
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
			return why;
	}
}

/* References the rules make_room found and adds the new ones (room is there, maybe quarantined). */
static void take_rules(struct table_store *ts, const struct cfi_table *t, uint32_t *ids)
{
	uint64_t wait_until;
	struct cfi_rule r;
	uint32_t i;

	/* found ones first: a new rule must not take the id of one this table uses */
	for (i = 0; i < t->nr_rules; i++) {
		if (ids[i] != GLOBAL_RULE_NONE)
			global_rules_ref(&ts->gr, ids[i]);
	}
	for (i = 0; i < t->nr_rules; i++) {
		while (ids[i] == GLOBAL_RULE_NONE) {
			/* a pair's successor is older: added, its global id known */
			global_form(t, ids, i, &r);
			ids[i] = global_rules_add(&ts->gr, &r, mono_ns(), &wait_until);
			if (ids[i] == GLOBAL_RULE_NONE)
				mono_sleep_until(wait_until);
		}
	}
}

static void drop_rules(struct table_store *ts, const uint32_t *ids, uint32_t n)
{
	uint64_t now = mono_ns();
	uint32_t i;

	for (i = 0; i < n; i++)
		global_rules_unref(&ts->gr, ids[i], now);
}

static void unload_pages(struct table_store *ts, struct obj_entry *o, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		bpf_map_delete_elem(ts->pages_fd, &o->page_keys[i]);
}

static void log_refusal(const struct table_store *ts, const struct obj_entry *o,
			const struct cfi_table *t, enum table_refusal why)
{
	const struct table_quotas *q = &ts->quotas;
	char name[512];

	/* the object's path is the process's to choose */
	str_escape(name, sizeof(name), o->name, NULL);

	switch (why) {
	case REFUSED_ROWS_FULL:
		fprintf(stderr, "cfiprof: %s: rows map full (%u rows needed, %u of %u in use)\n",
			name, t->nr_rows, ts->alloc.used, ts->alloc.total);
		break;
	case REFUSED_BYTES_FULL:
		fprintf(stderr,
			"cfiprof: %s: table bytes cap reached (%llu bytes needed, %llu of %llu in "
			"use)\n",
			name, (unsigned long long)table_bytes(t->nr_rows, 0, t->nr_pages),
			(unsigned long long)table_store_bytes(ts),
			(unsigned long long)ts->max_bytes);
		break;
	case REFUSED_DICTIONARY_FULL:
		fprintf(stderr, "cfiprof: %s: rule dictionary full (%u rules)\n", name, ts->gr.max);
		break;
	case REFUSED_PAGES_FULL:
		fprintf(stderr, "cfiprof: %s: page index map full (%u pages needed)\n", name,
			t->nr_pages);
		break;
	default:
		fprintf(stderr,
			"cfiprof: %s: over the per-object quota (%s: %u rules, %u pages, %u rows; "
			"quotas %u, %u, %u): using frame pointers\n",
			name, table_refusal_name(why), t->nr_rules, t->nr_pages, t->nr_rows,
			q->obj_rules, q->obj_pages, q->obj_rows);
	}
}

/* Inserts o's page index entries; false (none left behind) when the map refuses one. */
static bool insert_pages(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t,
			 uint32_t first)
{
	uint32_t i;

	for (i = 0; i < t->nr_pages; i++) {
		struct cfi_page_val v = {.first_row = first + t->pages[i].first_row,
					 .nr_rows = t->pages[i].nr_rows};

		o->page_keys[i].obj_id = o->id;
		o->page_keys[i].page = (uint32_t)t->pages[i].page;
		if (bpf_map_update_elem(ts->pages_fd, &o->page_keys[i], &v, BPF_ANY)) {
			unload_pages(ts, o, i);
			return false;
		}
	}
	return true;
}

int table_store_load_table(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t,
			   struct table_charge *charge)
{
	enum table_refusal why;
	uint32_t *ids = NULL;
	int64_t first = -1;
	uint32_t i;
	int err = -ENOSPC;

	if (!t->nr_rows) {
		o->state = OBJ_NO_CFI;
		return 0;
	}
	why = object_quota(ts, t);
	if (why != REFUSED_MAX)
		goto refused;
	ids = malloc(t->nr_rules * sizeof(*ids));
	o->page_keys = calloc(t->nr_pages, sizeof(*o->page_keys));
	if (!ids || !o->page_keys) {
		err = -ENOMEM;
		goto fail;
	}
	why = make_room(ts, t, ids, charge, &first);
	if (why != REFUSED_MAX)
		goto refused;
	/* the rows map is mapped as far as rows are written */
	if (ts->rows_window) {
		int mapped = map_window_cover(ts->rows_window,
					      ((size_t)first + t->nr_rows) * sizeof(*ts->rows));

		if (mapped) {
			row_alloc_put(&ts->alloc, (uint32_t)first, t->nr_rows);
			err = mapped;
			goto fail;
		}
	}
	take_rules(ts, t, ids);
	for (i = 0; i < t->nr_rows; i++) {
		ts->rows[first + i].off = t->rows[i].off;
		ts->rows[first + i].rule = (uint16_t)ids[t->rows[i].rule];
	}
	if (!insert_pages(ts, o, t, (uint32_t)first)) {
		why = REFUSED_PAGES_FULL;
		drop_rules(ts, ids, t->nr_rules);
		/* a walk may have found a page inserted before the failure */
		row_alloc_retire(&ts->alloc, (uint32_t)first, t->nr_rows, mono_ns());
		goto refused;
	}
	o->first_row = (uint32_t)first;
	o->nr_rows = t->nr_rows;
	o->nr_pages = t->nr_pages;
	o->rule_ids = ids;
	o->nr_rule_ids = t->nr_rules;
	o->bytes = t->stats.bytes_total;
	o->build_ns = t->stats.build_ns;
	o->state = OBJ_LOADED;
	ts->stats.objects_loaded++;
	ts->stats.pages_used += t->nr_pages;
	ts->stats.build_ns_total += t->stats.build_ns;
	update_usage(ts);
	charge_add(charge, o);
	return 0;
refused:
	if (is_process_refusal(why)) {
		refuse_for_process(ts, charge, why);
		err = -EDQUOT;
	} else {
		ts->stats.refused[why]++;
		log_refusal(ts, o, t, why);
	}
fail:
	update_usage(ts);
	free(ids);
	free(o->page_keys);
	o->page_keys = NULL;
	o->nr_rows = 0;
	o->state = OBJ_FAILED;
	if (err != -EDQUOT)
		ts->stats.objects_failed++;
	return err;
}

/* The object held for key (NULL if none). */
static struct obj_entry *find_obj(struct table_store *ts, const char *key, uint32_t b)
{
	struct obj_entry *o;

	for (o = ts->buckets[b]; o; o = o->next) {
		if (!strcmp(o->key, key))
			return o;
	}
	return NULL;
}

bool table_store_has(struct table_store *ts, const char *key)
{
	return find_obj(ts, key, hash_str(key) & (ts->nr_buckets - 1)) != NULL;
}

struct obj_entry *table_store_acquire(struct table_store *ts, const char *key, const char *name,
				      table_build_fn build, void *ctx, struct table_charge *charge)
{
	uint32_t b = hash_str(key) & (ts->nr_buckets - 1);
	enum table_refusal why;
	struct obj_entry *o = find_obj(ts, key, b);
	struct cfi_table *t;
	int err = 0;

	if (o) {
		if (charge && o->state == OBJ_LOADED && o->charge_serial != charge->serial) {
			why = charge_check(ts, charge, o->nr_rows, o->nr_pages, o->rule_ids,
					   o->nr_rule_ids);
			if (why != REFUSED_MAX) {
				refuse_for_process(ts, charge, why);
				return NULL;
			}
			charge_add(charge, o);
		}
		if (!o->refs++) {
			ts->stats.idle_now--;
			ts->stats.idle_reused++;
		}
		return o;
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
			fprintf(stderr, "cfiprof: %s: %s: using frame pointers\n",
				str_escape((char[512]){0}, 512, name, NULL), cfi_strerror(err));
	} else {
		err = table_store_load_table(ts, o, t, charge);
		cfi_table_free(t);
		/* refused for this process only: another one that maps it builds it again */
		if (err == -EDQUOT) {
			free_obj(o);
			return NULL;
		}
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
		row_alloc_retire(&ts->alloc, o->first_row, o->nr_rows, mono_ns());
		drop_rules(ts, o->rule_ids, o->nr_rule_ids);
		ts->stats.pages_used -= o->nr_pages;
		ts->stats.objects_unloaded++;
		update_usage(ts);
	}
	free_obj(o);
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
	/* a runtime's JIT rows ("jit:" keys) are its process's alone and never wanted again */
	if (ts->idle_ttl_ns && strncmp(o->key, "jit:", 4)) {
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

	row_alloc_expire(&ts->alloc, mono_ns());
	update_usage(ts);
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
