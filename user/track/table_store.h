/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind tables per object, shared by every process that maps the object:
 * keyed by build-id and file identity (cfi_file_key), built once, reference-counted,
 * written into the BPF maps (rows, rules, pages) and removed with the last user.
 */
#ifndef CFIPROF_TABLE_STORE_H
#define CFIPROF_TABLE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/track/global_rules.h"
#include "user/track/row_alloc.h"
#include "tables/cfi_table.h"
#include "tables/table_cache.h"

struct map_window;

enum obj_state {
	OBJ_LOADED = 0, /* tables in the maps: walk with CFI */
	OBJ_NO_CFI,	/* no usable CFI: frame pointers */
	OBJ_FAILED,	/* build or load failed (logged): frame pointers */
};

struct obj_entry {
	char key[CFI_FILE_KEY_LEN]; /* the proc_mapping key: PROC_MAPPING_KEY_LEN */
	char name[256];
	uint32_t id;
	int refs;		/* 0: idle, kept for the next process that maps it */
	uint64_t idle_since_ns; /* CLOCK_MONOTONIC, while refs == 0 */
	enum obj_state state;
	uint32_t first_row, nr_rows, nr_pages;
	uint64_t bytes, build_ns;
	struct cfi_page_key *page_keys;
	uint32_t *rule_ids; /* the global ids its rows use, one reference each */
	uint32_t nr_rule_ids;
	uint64_t charge_serial; /* the process charge that counted it last */
	struct obj_entry *next;
};

/* Why an object's tables are not in the maps (its mappings use frame pointers). */
enum table_refusal {
	REFUSED_RULES_QUOTA,	 /* more distinct rules than one object may bring */
	REFUSED_PAGES_QUOTA,	 /* more page index entries than one object may take */
	REFUSED_ROWS_QUOTA,	 /* more rows than one object may take */
	REFUSED_PROCESS_RULES,	 /* its process's objects would use too much of the dictionary */
	REFUSED_PROCESS_PAGES,	 /* ... of the page index */
	REFUSED_PROCESS_ROWS,	 /* ... of the rows map */
	REFUSED_DICTIONARY_FULL, /* no rule id left, even after unloading idle tables */
	REFUSED_PAGES_FULL,	 /* the page index has no room */
	REFUSED_ROWS_FULL,	 /* the rows map has no room */
	REFUSED_BYTES_FULL,	 /* --max-table-bytes */
	REFUSED_MAX
};

/* The metric label of a refusal: "rules_quota", "process_rows_quota", "dictionary_full"... */
const char *table_refusal_name(enum table_refusal r);

/*
 * What one object, and one process's objects together, may hold of each
 * shared map.  Set from the maps' capacities by table_store_init; see there
 * for the measurements behind them.
 */
struct table_quotas {
	uint32_t obj_rules, obj_pages, obj_rows;
	uint32_t proc_rules, proc_pages, proc_rows;
};

/*
 * One load of a process counts what its objects hold: the rows and page
 * index entries of each distinct object, and the distinct dictionary ids
 * they use together.  That is the share of the maps it needs to be unwound
 * at all; an object shared with other processes is charged to each of them,
 * since sharing does not make any of them cheaper to unwind (and charging
 * only the first would let another process pre-load objects for free).
 */
struct table_charge {
	uint64_t serial;
	uint32_t rows, pages, rules;
	uint64_t *rule_bits; /* the dictionary ids counted */
	uint32_t refused;    /* objects refused by its quota */
	enum table_refusal cause; /* of the first refusal */
};

struct table_store_stats {
	uint64_t objects_loaded, objects_unloaded, objects_no_cfi, objects_failed;
	uint64_t rows_used, rows_total, rules_used, pages_used;
	uint64_t rows_quarantined, rules_total, pages_total;
	uint64_t rows_peak, pages_peak; /* the most in use at once (a summary comes after exits) */
	uint64_t build_ns_total;
	uint64_t refused[REFUSED_MAX]; /* objects (or, for the process quotas, mappings) */
	uint64_t rules_reused;	       /* dictionary ids reused after their quarantine */
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

/*
 * Freed rows and rule ids wait this long before they are reused: a walk on
 * another CPU may have found them just before their page index entries went.
 * A walk is one BPF program run (at most 1024 frames, well under a
 * millisecond), so 100 ms is a hundred times more than it needs, and short
 * enough that a full map waits for it rather than refusing a table.
 */
#define TABLE_QUARANTINE_NS (100ull * 1000 * 1000)

struct table_store {
	struct cfi_row *rows; /* mmap of the rows map */
	/* its mapping, extended before rows past it are written (NULL: all mapped) */
	struct map_window *rows_window;
	int pages_fd;
	uint32_t pages_max;
	struct row_alloc alloc;
	struct global_rules gr; /* over the mmap of the rules map */
	struct table_quotas quotas;
	struct obj_entry **buckets;
	uint32_t nr_buckets;
	uint32_t next_id;
	uint64_t charge_serial;
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
		     struct cfi_rule *rules, uint32_t rules_max, int pages_fd, uint32_t pages_max);
void table_store_destroy(struct table_store *ts);

/* Bytes of tables in the maps: rows, the rule dictionary and the page index. */
uint64_t table_store_bytes(const struct table_store *ts);

/* Build callback: returns a table or NULL (err set to a cfi_err). */
typedef struct cfi_table *(*table_build_fn)(void *ctx, int *err);

/*
 * Takes a reference on the object for key, building and loading it if new.
 * With a charge (a process being loaded), an object that would take the
 * process past its quotas is refused for it: NULL, no reference, counted in
 * the charge.  NULL also when out of memory.
 */
struct obj_entry *table_store_acquire(struct table_store *ts, const char *key, const char *name,
				      table_build_fn build, void *ctx, struct table_charge *charge);
/* Whether key has an entry (loaded, idle, or without usable CFI): acquiring it builds nothing. */
bool table_store_has(struct table_store *ts, const char *key);
/* A charge for one load of a process (0, or -ENOMEM). */
int table_charge_begin(struct table_store *ts, struct table_charge *c);
void table_charge_end(struct table_charge *c);
/* Counts an object the process keeps from its previous load (never refused). */
void table_charge_keep(struct table_store *ts, struct table_charge *c, struct obj_entry *o);
void table_store_release(struct table_store *ts, struct obj_entry *o);
/* Unloads the objects idle since before now - idle_ttl_ns (now: CLOCK_MONOTONIC ns). */
void table_store_expire(struct table_store *ts, uint64_t now_ns);

/* Loads a built table into the maps (exposed for tests); charge may be NULL. */
int table_store_load_table(struct table_store *ts, struct obj_entry *o, const struct cfi_table *t,
			   struct table_charge *charge);

#endif
