/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind tables per object, shared by every process that maps the object:
 * keyed by build-id (or dev:inode:size:mtime), built once, reference-counted,
 * written into the BPF maps (rows, rules, pages) and removed with the last user.
 */
#ifndef CFIPROF_TABLE_STORE_H
#define CFIPROF_TABLE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/track/row_alloc.h"
#include "tables/cfi_table.h"

enum obj_state {
	OBJ_LOADED = 0, /* tables in the maps: walk with CFI */
	OBJ_NO_CFI,	/* no usable CFI: frame pointers */
	OBJ_FAILED,	/* build or load failed (logged): frame pointers */
};

struct obj_entry {
	char key[224]; /* the proc_mapping key: PROC_MAPPING_KEY_LEN */
	char name[256];
	uint32_t id;
	int refs;		/* 0: idle, kept for the next process that maps it */
	uint64_t idle_since_ns; /* CLOCK_MONOTONIC, while refs == 0 */
	enum obj_state state;
	uint32_t first_row, nr_rows, nr_pages;
	uint64_t bytes, build_ns;
	struct cfi_page_key *page_keys;
	struct obj_entry *next;
};

struct table_store_stats {
	uint64_t objects_loaded, objects_unloaded, objects_no_cfi, objects_failed;
	uint64_t rows_used, rows_total, rules_used, pages_used;
	uint64_t rows_peak, pages_peak; /* the most in use at once (a summary comes after exits) */
	uint64_t build_ns_total;
	uint64_t rows_full; /* objects that did not fit the rows map */
	uint64_t bytes_full; /* objects that did not fit max_bytes */
	uint64_t objects_over_budget; /* refused by the build budget (cfi_budget): frame pointers */
	uint64_t idle_reused;	/* acquired again while idle: no rebuild */
	uint64_t idle_expired;	/* idle longer than idle_ttl_ns: unloaded */
	uint64_t idle_evicted;	/* idle, unloaded early to make room */
	uint64_t idle_now;	/* idle objects held now */
};

/*
 * Makes room by unloading the least recently used tables' owners; returns
 * false when nothing is left to unload.
 */
typedef bool (*table_reclaim_fn)(void *ctx);

struct table_store {
	struct cfi_row *rows;	/* mmap of the rows map */
	struct cfi_rule *rules; /* mmap of the rules map */
	uint32_t rules_max;
	int pages_fd;
	struct row_alloc alloc;
	struct obj_entry **buckets;
	uint32_t nr_buckets;
	uint32_t next_id;
	/* global rule dictionary: open addressing over rules[], id+1 */
	uint32_t *rule_slots;
	uint32_t nr_rule_slots, nr_rules;
	struct table_store_stats stats;
	uint64_t max_bytes; /* bound of table_store_bytes (0: the maps' capacity only) */
	/*
	 * An object no process maps any more stays loaded this long (0: unloaded
	 * at once): the next short process of the same program (a compiler in a
	 * build, a shell script's commands) finds its tables ready.  Idle objects
	 * are the first to go when room is needed.
	 */
	uint64_t idle_ttl_ns;
	table_reclaim_fn reclaim;
	void *reclaim_ctx;
	bool verbose;
};

int table_store_init(struct table_store *ts, struct cfi_row *rows, uint32_t rows_max,
		     struct cfi_rule *rules, uint32_t rules_max, int pages_fd);
void table_store_destroy(struct table_store *ts);

/* Bytes of tables in the maps: rows, the rule dictionary and the page index. */
uint64_t table_store_bytes(const struct table_store *ts);

/* Build callback: returns a table or NULL (err set to a cfi_err). */
typedef struct cfi_table *(*table_build_fn)(void *ctx, int *err);

/* Takes a reference on the object for key, building and loading it if new. Never NULL. */
struct obj_entry *table_store_acquire(struct table_store *ts, const char *key, const char *name,
				      table_build_fn build, void *ctx);
void table_store_release(struct table_store *ts, struct obj_entry *o);
/* Unloads the objects idle since before now - idle_ttl_ns (now: CLOCK_MONOTONIC ns). */
void table_store_expire(struct table_store *ts, uint64_t now_ns);

/* Loads a built table into the maps (exposed for tests). */
int table_store_load_table(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t);

#endif
