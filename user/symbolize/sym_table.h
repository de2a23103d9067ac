/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sorted address ranges with names: the lookup structure shared by the ELF,
 * kallsyms and perf-PID.map symbol sources. Private to the symbolizer.
 */
#ifndef CFIPROF_SYM_TABLE_H
#define CFIPROF_SYM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_range {
	uint64_t start;
	uint64_t end; /* exclusive */
	/* Largest end of this and every earlier range: stops the backward scan. */
	uint64_t max_end;
	uint32_t name; /* offset into sym_table.str */
	uint32_t rank; /* lower wins when ranges overlap and the table is ranked */
};

struct sym_table {
	struct sym_range *r;
	size_t n, cap;
	char *str;
	size_t str_len, str_cap;
	/*
	 * false: an address inside nested ranges resolves to the innermost
	 * (latest starting) one, as for a label inside a function.
	 * true: to the covering range of lowest rank, as for perf-PID.map,
	 * where a later line describes code that replaced an earlier one.
	 */
	bool ranked;
};

/*
 * Allocates room for exactly @n ranges and @str_bytes of names (NULs
 * included), so a table whose size is known first never grows past it.
 * Returns 0 or -1 (ENOMEM). On an empty table only.
 */
int sym_table_reserve(struct sym_table *t, size_t n, size_t str_bytes);

/*
 * Makes room for one more range and @str_bytes more of names without the
 * allocations going past @max_bytes in all (sym_table_bytes). Returns 1 when
 * there is room, 0 when the bound leaves none, -1 on ENOMEM.
 */
int sym_table_room(struct sym_table *t, size_t str_bytes, size_t max_bytes);

/* Bytes the table holds (allocated, not used). */
static inline size_t sym_table_bytes(const struct sym_table *t)
{
	return t->cap * sizeof(*t->r) + t->str_cap;
}

/* Appends a NUL-terminated copy of @s (@len bytes) to the arena; returns its offset or -1. */
int64_t sym_table_intern(struct sym_table *t, const char *s, size_t len);

/* Adds [start, end) named by arena offset @name. Returns 0 or -1 (ENOMEM). */
int sym_table_add(struct sym_table *t, uint64_t start, uint64_t end, uint32_t name, uint32_t rank);

/* The order of a finished table: start, rank, end, name (a total order, for qsort). */
int sym_range_cmp(const void *a, const void *b);

/*
 * Sorts and indexes the ranges; call once after the last add, before lookups.
 * Its scratch is at most twice SYM_SORT_SCRATCH_MAX ranges: a longer unsorted
 * tail is sorted in place.
 */
#define SYM_SORT_SCRATCH_MAX (64u << 10)
void sym_table_finish(struct sym_table *t);

/* Returns the index of the range covering @addr, or -1. */
long sym_table_find(const struct sym_table *t, uint64_t addr);

static inline const char *sym_table_name(const struct sym_table *t, long i)
{
	return t->str + t->r[i].name;
}

void sym_table_release(struct sym_table *t);

#endif
