/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bpf/walker.h built as ordinary C over in-memory copies of the BPF maps, so
 * captured (registers, stack bytes, mappings) snapshots and hand-built stacks
 * can be walked without a kernel.  The maps are filled exactly as the loader
 * fills the real ones: every table's rule ids are remapped into one global
 * rule dictionary, rows are appended to one global rows array, and the page
 * index points into it.
 */
#ifndef CFIPROF_REPLAY_H
#define CFIPROF_REPLAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cfiprof_abi.h"
#include "tables/cfi_table.h"
#include "user/unwind/walk_maps.h"

#define REPLAY_MAX_RULES 65536

struct replay_mapping {
	uint64_t start, end;
	struct cfi_mapping_val val;
};

struct replay_page {
	struct cfi_page_key key;
	struct cfi_page_val val;
};

/* One region of readable user memory (a captured stack, or a fake one). */
struct replay_mem {
	uint64_t addr;
	const uint8_t *bytes;
	size_t len;
};

struct replay_env {
	uint32_t pid;
	int proc_known;
	struct cfi_proc_val proc;

	struct replay_mapping *maps;
	size_t nr_maps;

	struct cfi_rule *rules; /* global dictionary, rules[0] = CFI_CFA_NONE */
	uint32_t nr_rules;
	struct cfi_row *rows; /* global rows array */
	uint32_t nr_rows;
	struct replay_page *pages;
	size_t nr_pages;

	struct replay_mem mem[4];
	int nr_mem;

	struct cfi_rule_cache_entry cache[RULE_CACHE_SLOTS];
	struct walker_window window;
	uint64_t counters[CNT_MAX];
	uint64_t reads; /* walker_read_user calls: what the stack window saves */
};

static struct replay_env *replay_cur;

static inline void replay_env_init(struct replay_env *env, uint32_t pid)
{
	memset(env, 0, sizeof(*env));
	env->pid = pid;
	env->proc_known = 1;
	env->proc.generation = 1;
	env->rules = calloc(REPLAY_MAX_RULES, sizeof(*env->rules));
	env->nr_rules = 1; /* global id 0 is "no information", as in every table */
}

static inline void replay_env_free(struct replay_env *env)
{
	free(env->maps);
	free(env->rules);
	free(env->rows);
	free(env->pages);
	memset(env, 0, sizeof(*env));
}

/* Global id of a rule, adding it to the dictionary if new; -1 when full. */
static inline int64_t replay_rule_id(struct replay_env *env, const struct cfi_rule *r)
{
	uint32_t i;

	if (r->cfa_kind == CFI_CFA_NONE)
		return CFI_RULE_NONE;
	for (i = 1; i < env->nr_rules; i++)
		if (!memcmp(&env->rules[i], r, sizeof(*r)))
			return i;
	if (env->nr_rules >= REPLAY_MAX_RULES)
		return -1;
	env->rules[env->nr_rules] = *r;
	return env->nr_rules++;
}

/*
 * Load one object's table as user space does: per-table rule ids become
 * global ids, rows go to the end of the global rows array, pages index them.
 * Returns 0 or -errno.
 */
static inline int replay_add_table(struct replay_env *env, uint32_t obj_id,
				   const struct cfi_table *t)
{
	uint32_t *remap, i, base = env->nr_rows;
	struct cfi_row *rows;
	struct replay_page *pages;

	remap = calloc(t->nr_rules ? t->nr_rules : 1, sizeof(*remap));
	rows = realloc(env->rows, (size_t)(env->nr_rows + t->nr_rows) * sizeof(*rows));
	pages = realloc(env->pages, (env->nr_pages + t->nr_pages) * sizeof(*pages));
	if (rows)
		env->rows = rows;
	if (pages)
		env->pages = pages;
	if (!remap || !rows || !pages) {
		free(remap);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_rules; i++) {
		struct cfi_rule r = t->rules[i];
		int64_t id;

		/* a pair's successor (older: remapped already) by its id here */
		if (r.next_at && r.next_rule < i)
			r.next_rule = (__u16)remap[r.next_rule];
		id = replay_rule_id(env, &r);

		if (id < 0) {
			free(remap);
			return -E2BIG;
		}
		remap[i] = id;
	}
	for (i = 0; i < t->nr_rows; i++) {
		env->rows[base + i].off = t->rows[i].off;
		env->rows[base + i].rule =
		    t->rows[i].rule < t->nr_rules ? remap[t->rows[i].rule] : 0;
	}
	env->nr_rows += t->nr_rows;
	for (i = 0; i < t->nr_pages; i++) {
		struct replay_page *p = &env->pages[env->nr_pages++];

		p->key.obj_id = obj_id;
		p->key.page = (uint32_t)t->pages[i].page;
		p->val.first_row = base + t->pages[i].first_row;
		p->val.nr_rows = t->pages[i].nr_rows;
	}
	free(remap);
	return 0;
}

static inline int replay_add_mapping(struct replay_env *env, uint64_t start, uint64_t end,
				     uint32_t obj_id, uint32_t flags, uint64_t bias)
{
	struct replay_mapping *m = realloc(env->maps, (env->nr_maps + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	env->maps = m;
	m = &env->maps[env->nr_maps++];
	m->start = start;
	m->end = end;
	m->val.obj_id = obj_id;
	m->val.flags = flags;
	m->val.bias = bias;
	return 0;
}

static inline void replay_add_mem(struct replay_env *env, uint64_t addr, const void *bytes,
				  size_t len)
{
	if (env->nr_mem < (int)(sizeof(env->mem) / sizeof(env->mem[0]))) {
		env->mem[env->nr_mem].addr = addr;
		env->mem[env->nr_mem].bytes = bytes;
		env->mem[env->nr_mem].len = len;
		env->nr_mem++;
	}
}

/* ---- the walker's environment, over replay_cur ---- */

static inline int walker_read_user(void *dst, __u32 size, __u64 addr)
{
	int i;

	replay_cur->reads++;
	for (i = 0; i < replay_cur->nr_mem; i++) {
		const struct replay_mem *m = &replay_cur->mem[i];

		if (addr >= m->addr && addr - m->addr <= m->len &&
		    m->len - (addr - m->addr) >= size) {
			memcpy(dst, m->bytes + (addr - m->addr), size);
			return 0;
		}
	}
	return -EFAULT;
}

static inline struct cfi_proc_val *walker_lookup_proc(__u32 pid)
{
	if (!replay_cur->proc_known || pid != replay_cur->pid)
		return NULL;
	return &replay_cur->proc;
}

static inline struct cfi_mapping_val *replay_find_mapping(struct replay_env *env, __u32 pid,
							  __u64 pc)
{
	size_t i;

	if (pid != env->pid)
		return NULL;
	for (i = 0; i < env->nr_maps; i++)
		if (pc >= env->maps[i].start && pc < env->maps[i].end)
			return &env->maps[i].val;
	return NULL;
}

static inline struct cfi_page_val *replay_find_page(struct replay_env *env, __u32 obj_id,
						    __u32 page)
{
	size_t i;

	for (i = 0; i < env->nr_pages; i++)
		if (env->pages[i].key.obj_id == obj_id && env->pages[i].key.page == page)
			return &env->pages[i].val;
	return NULL;
}

static inline struct cfi_mapping_val *walker_lookup_mapping(__u32 pid, __u64 pc)
{
	return replay_find_mapping(replay_cur, pid, pc);
}

static inline struct cfi_page_val *walker_lookup_page(__u32 obj_id, __u32 page)
{
	return replay_find_page(replay_cur, obj_id, page);
}

static inline struct cfi_row *walker_row(__u32 idx)
{
	return idx < replay_cur->nr_rows ? &replay_cur->rows[idx] : NULL;
}

static inline struct cfi_rule *walker_rule(__u32 id)
{
	return id < REPLAY_MAX_RULES ? &replay_cur->rules[id] : NULL;
}

static inline struct cfi_rule_cache_entry *walker_cache_slot(__u32 idx)
{
	return idx < RULE_CACHE_SLOTS ? &replay_cur->cache[idx] : NULL;
}

static inline struct walker_window *walker_window(void)
{
	return &replay_cur->window;
}

static inline void walker_count(__u32 counter_id, __u64 n)
{
	if (counter_id < CNT_MAX)
		replay_cur->counters[counter_id] += n;
}

#include "bpf/walker.h"

/* The frames of a walk set up by walker_init, as the BPF program drives them. */
static inline unsigned int replay_run(struct walker_state *st, __u64 *out, unsigned int max)
{
	unsigned int i;

	for (i = 0; i <= max; i++)
		if (walker_frame(st, out, max))
			break;
	if (!st->done)
		walker_stop(st, STOP_TRUNCATED);
	walker_count(CNT_CACHE_HIT, st->cache_hits);
	walker_count(CNT_CACHE_MISS, st->cache_misses);
	walker_count(CNT_FRAMES, st->nr);
	walker_count(CNT_FP_FRAMES, st->nr_fp);
	walker_count(CNT_STOP_BASE + st->reason, 1);
	if (st->reason == STOP_UNSUPPORTED)
		walker_count(CNT_UNSUP_BASE + st->unsup, 1);
	return st->nr;
}

/*
 * The whole walk as the BPF program drives it; returns the number of user pcs.
 * regs: the sample's other registers by DWARF number (CFI_DW_NR_REGS), or
 * NULL for a walk that only knows rip, rsp and rbp.
 */
static inline unsigned int replay_walk_regs(struct replay_env *env, const __u64 *regs, uint64_t ip,
					    uint64_t sp, uint64_t bp, __u64 *out, unsigned int max,
					    struct walker_state *st)
{
	replay_cur = env;
	walker_init(st, env->pid, ip, sp, bp);
	if (regs) {
		memcpy(st->leaf, regs, sizeof(st->leaf));
		walker_leaf_regs(st);
	}
	return replay_run(st, out, max);
}

/* An arm64 walk: pc, sp, x29 and the link register x30. */
static inline unsigned int replay_walk_lr(struct replay_env *env, uint64_t ip, uint64_t sp,
					  uint64_t fp, uint64_t lr, __u64 *out, unsigned int max,
					  struct walker_state *st)
{
	replay_cur = env;
	walker_init(st, env->pid, ip, sp, fp);
	walker_link_register(st, lr);
	return replay_run(st, out, max);
}

static inline unsigned int replay_walk(struct replay_env *env, uint64_t ip, uint64_t sp,
				       uint64_t bp, __u64 *out, unsigned int max,
				       struct walker_state *st)
{
	return replay_walk_regs(env, NULL, ip, sp, bp, out, max, st);
}

/* ---- the same maps for the profiler's own user-space walks (user/unwind) ---- */

static inline bool replay_ops_proc(void *ctx, uint32_t pid, struct cfi_proc_val *out)
{
	struct replay_env *env = ctx;

	if (!env->proc_known || pid != env->pid)
		return false;
	*out = env->proc;
	return true;
}

static inline bool replay_ops_mapping(void *ctx, uint32_t pid, uint64_t pc,
				      struct cfi_mapping_val *out)
{
	struct cfi_mapping_val *v = replay_find_mapping(ctx, pid, pc);

	if (v)
		*out = *v;
	return v != NULL;
}

static inline bool replay_ops_page(void *ctx, uint32_t obj_id, uint32_t page,
				   struct cfi_page_val *out)
{
	struct cfi_page_val *v = replay_find_page(ctx, obj_id, page);

	if (v)
		*out = *v;
	return v != NULL;
}

static const struct walk_maps_ops replay_walk_ops = {
    .proc = replay_ops_proc,
    .mapping = replay_ops_mapping,
    .page = replay_ops_page,
};

static inline void replay_walk_maps(struct replay_env *env, struct walk_maps *m)
{
	m->ops = &replay_walk_ops;
	m->ctx = env;
	m->rows = env->rows;
	m->nr_rows = env->nr_rows;
	m->rules = env->rules;
	m->nr_rules = REPLAY_MAX_RULES;
}

#endif /* CFIPROF_REPLAY_H */
